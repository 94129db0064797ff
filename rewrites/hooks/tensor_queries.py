"""Hooks of tables/tensor_queries.toml: questions about a tensor's type and size."""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import code, mindspore_ref, operand_code
from .registry import hook

# dtypes torch calls unsigned (Tensor.is_signed is False); MindSpore's is_signed also says
# False for float16, which torch calls signed
_UNSIGNED = ("uint8", "uint16", "uint32", "uint64", "bool_")


@hook()
def element_size(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.element_size()`` -> ``x.itemsize`` (bytes per element)."""
    return cst.Attribute(value=receiver, attr=cst.Name("itemsize"))


@hook()
def is_same_size(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.is_same_size(y)`` -> ``x.shape == y.shape``."""
    return cst.parse_expression(f"{operand_code(receiver)}.shape == {operand_code(args['other'])}.shape")


@hook()
def is_signed(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.is_signed()`` -> ``x.dtype not in (mindspore.uint8, ..., mindspore.bool_)``."""
    unsigned = ", ".join(code(mindspore_ref(ctx, d)) for d in _UNSIGNED)
    return cst.parse_expression(f"{operand_code(receiver)}.dtype not in ({unsigned})")


@hook()
def get_device(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.get_device()`` -> ``_torch_device_index(x.device)``."""
    return cst.Call(func=runtime_helper(ctx, "_torch_device_index"),
                    args=[cst.Arg(cst.Attribute(value=receiver, attr=cst.Name("device")))])
