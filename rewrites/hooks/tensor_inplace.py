"""Hooks of tables/tensor_inplace.toml: Tensor in-place methods.

Most are ``arithmetic_`` (shared with tensor_methods.toml): the out-of-place entry's
conversion copied into the receiver.
"""
from __future__ import annotations

import libcst as cst

from ..syntax import Unconvertible, keyword_call, name_chain
from .registry import hook
from .tensor_methods import _fresh, arithmetic_  # noqa: F401


@hook()
def reshaped_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.t_()`` -> ``x.assign_value(ops.t(input=x).contiguous())``: the out-of-place
    entry, and the receiver takes its shape (``copy_`` keeps the receiver's shape).

    MindSpore's ops.t / swapaxes return a strided view of ``x``; a tensor assigned a
    non-contiguous view ignores later ``copy_`` on CPU, hence ``contiguous()``."""
    from ..table_calls import build_call, tables  # (table_calls imports the hooks)

    out_of_place = tables().methods[entry.source.rsplit(".", 1)[-1].rstrip("_")]
    value = keyword_call(cst.Attribute(value=build_call(ctx, out_of_place, args, receiver), attr=cst.Name("contiguous")), {})
    if receiver is not None and _fresh(receiver):
        return value  # torch.zeros(3).unsqueeze_(0): nobody else holds the tensor
    if receiver is None or not name_chain(receiver):
        raise Unconvertible("the tensor is used twice: give it a name first")
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        raise Unconvertible("the shape of a parameter changes through .data: use set_data on the parameter")
    return keyword_call(cst.Attribute(value=receiver, attr=cst.Name("assign_value")), {"value": value})
