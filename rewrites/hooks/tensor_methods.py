"""Hooks of tables/tensor_methods.toml: Tensor methods.

Every composition here is exact: where it would not be, the hook refuses.
"""
from __future__ import annotations

import re

import libcst as cst

from ..syntax import NOT_LITERAL, Unconvertible, code, first_param, keyword_call, literal, literal_value, mindspore_ref, operand_code, name_chain, repeatable
from transpile.engine.diagnostics import Severity

from ..runtime.registry import runtime_helper
from .registry import hook
from .torch_indexing import run_time_helper  # noqa: F401  (scatter, unique: composed beside the code)
# hooks shared with torch_functions.toml (torch.where and Tensor.where are one conversion)
from .torch_functions import (  # noqa: F401
    add_alpha,
    allclose,
    bernoulli,
    bincount,
    cast_input_dtype,
    softmax_cast_rows,
    float_input,
    integer_coefficients,
    integer_via_float,
    bool_via_float,
    bool_as_int64,
    diag,
    diff_n,
    equal,
    int64_dtype,
    int64_result,
    max_min,
    narrow_start,
    round_decimals,
    median,
    nonzero,
    norm,
    select,
    take,
    where,
)


@hook()
def tensor_size(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.size()`` -> ``x.shape``; ``x.size(d)`` -> ``x.shape[d]`` (Tensor.size is numel)."""
    shape = cst.Attribute(value=receiver, attr=cst.Name("shape"))
    dim = args.get("dim")
    if dim is None:
        return shape
    return cst.Subscript(value=shape, slice=[cst.SubscriptElement(cst.Index(dim))])


@hook()
def tensor_dim(ctx, entry, args, receiver) -> cst.BaseExpression:
    return cst.Attribute(value=receiver, attr=cst.Name("ndim"))


@hook()
def astype(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.float()`` / ``x.type(dt)`` / ``x.type_as(y)`` -> ``x.astype(dtype)``.

    The table gives a fixed dtype as ``set = { dtype = "float32" }`` (a MindSpore name).
    """
    x = receiver if receiver is not None else args.pop(first_param(entry))
    dtype = args.get("dtype")
    if dtype is not None:
        v = literal_value(dtype)
        if isinstance(v, str):
            dtype = mindspore_ref(ctx, v)
        elif v is None:
            raise Unconvertible("without a dtype, .type() returns the type's name (a string)")
    elif "other" in args:
        dtype = cst.Attribute(value=args["other"], attr=cst.Name("dtype"))
    else:
        raise Unconvertible("without a dtype, .type() returns the type's name (a string)")
    return keyword_call(cst.Attribute(value=x, attr=cst.Name("astype")), {"dtype": dtype})


# torch dtype spellings (after the API pass renamed them) -> MindSpore dtype names
_DTYPE_NAMES = {
    "float16", "half", "float32", "float", "float64", "double", "bfloat16", "int8", "int16",
    "short", "int32", "int", "int64", "long", "uint8", "bool", "bool_", "complex64", "cfloat",
    "complex128", "cdouble",
}


def looks_like_dtype(node: cst.BaseExpression) -> bool:
    src = code(node)
    last = src.rsplit(".", 1)[-1]
    if last in _DTYPE_NAMES and "." in src:
        return True
    if isinstance(node, (cst.Name, cst.Attribute)) and re.search(r"dtype$", last):
        return True
    return bool(isinstance(node, cst.Attribute) and node.attr.value == "dtype")


def looks_like_device(node: cst.BaseExpression) -> bool:
    v = literal_value(node)
    if isinstance(v, str):
        return bool(re.match(r"^(cpu|cuda|mps|xpu|meta)(:\d+)?$", v))
    if isinstance(v, int) and not isinstance(v, bool):
        return True  # x.to(0): a CUDA device index
    if isinstance(node, (cst.Name, cst.Attribute)):
        last = code(node).rsplit(".", 1)[-1]
        return "device" in last.lower()
    if isinstance(node, cst.Call):
        return code(node.func).rsplit(".", 1)[-1] == "device"
    return False


@hook()
def tensor_to(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.to(...)``: devices go (MindSpore places tensors by ``set_device``), dtypes stay.

    ``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(dtype=...)`` -> ``x.astype(dtype)``;
    ``x.to(device)`` -> ``x``. An argument that may be a tensor (whose dtype torch takes),
    a dtype or a device (``x.to(other)``): ``_torch_tensor_member(x, "to")(other)`` decides
    when it runs, with a note.
    """
    dtype = args.pop("dtype", None)
    given = args.pop("*", [])
    for value in given:
        if looks_like_dtype(value):
            if dtype is not None:
                raise Unconvertible("two dtypes given")
            dtype = value
        elif not (looks_like_device(value) or (isinstance(value, cst.Name) and value.value in ctx.facts.device_names())):
            # a tensor (its dtype), a dtype or a device: decided when it runs
            ctx.report(value, "MS202", f"Tensor.to({code(value)}): a device, a dtype or a tensor; "
                       "_torch_tensor_member decides when it runs", Severity.INFO)
            resolved = cst.Call(func=runtime_helper(ctx, "_torch_tensor_member"),
                                args=[cst.Arg(receiver), cst.Arg(cst.SimpleString('"to"'))])
            values = [cst.Arg(v.value, star="*") if type(v) is cst.StarredElement else cst.Arg(v) for v in given] + ([cst.Arg(dtype, keyword=cst.Name("dtype"))] if dtype is not None else [])
            return cst.Call(func=resolved, args=values)
    if dtype is None:
        return receiver
    return keyword_call(cst.Attribute(value=receiver, attr=cst.Name("astype")), {"dtype": dtype})


@hook()
def receiver_only(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.contiguous()``, ``x.cpu()``, ``x.cuda()`` -> ``x``."""
    return receiver


@hook()
def new_full(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.new_full(size, v)`` -> ``ops.full(size, v, dtype=x.dtype)`` (new_full is Ascend only)."""
    if "dtype" not in args or literal_value(args["dtype"]) is None:
        args["dtype"] = cst.Attribute(value=receiver, attr=cst.Name("dtype"))
    return keyword_call(ctx.reference("mindspore.ops.full"), args)


@hook()
def expand_as(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.expand_as(y)`` -> ``ops.broadcast_to(x, y.shape)``."""
    shape = cst.Attribute(value=args.pop("other"), attr=cst.Name("shape"))
    return keyword_call(ctx.reference("mindspore.ops.broadcast_to"), {"input": receiver, "shape": shape})


@hook()
def view_as(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.view_as(y)`` / ``x.reshape_as(y)`` -> ``ops.reshape(x, y.shape)``."""
    shape = cst.Attribute(value=args.pop("other"), attr=cst.Name("shape"))
    return keyword_call(ctx.reference("mindspore.ops.reshape"), {"input": receiver, "shape": shape})


FRESH = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
                    "new_zeros", "new_ones", "new_empty", "new_full", "_torch_new", "_torch_new_tensor"})


def is_fresh_tensor(node: cst.BaseExpression) -> bool:
    """A call creating a new tensor (``ops.zeros(...)``): an in-place op on it may work on a
    copy, and writing the creation twice only costs its computation."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in FRESH and all(_plain(a.value) for a in node.args)


def _plain(node: cst.BaseExpression) -> bool:
    """An argument of a fresh tensor's creation: names, literals, shapes, ``-np.inf``,
    Python's number of a literal (``float("-inf")``), and other fresh tensors
    (``full_like(zeros(n, n), -inf)``: whisper's causal mask)."""
    if isinstance(node, cst.UnaryOperation):
        return _plain(node.expression)
    if (type(node) is cst.Call and type(node.func) is cst.Name and node.func.value in ("float", "int", "bool")
            and all(literal_value(a.value) is not NOT_LITERAL for a in node.args)):
        return True
    return (name_chain(node) or literal_value(node) is not NOT_LITERAL or isinstance(node, cst.Tuple)
            or is_fresh_tensor(node))


def is_temporary(node: cst.BaseExpression | None) -> bool:
    """A tensor nobody else holds: a fresh creation, or the result of arithmetic
    (``(scores * scale).tril_()``): an in-place op on it is its out-of-place value."""
    return node is not None and (is_fresh_tensor(node) or (
        isinstance(node, cst.BinaryOperation)
        or isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)))


def copy_into(ctx, receiver, value: cst.BaseExpression) -> cst.BaseExpression:
    """``x.copy_(value)``: MindSpore's in-place kernels for these ops are missing on CPU.

    ``w.data.fill_(v)`` writes into ``w`` itself: MindSpore's ``Parameter.data`` is another
    tensor object, and a parameter written through it can be saved stale by save_checkpoint.
    An item (``w.data[i].zero_()``) is a copy in MindSpore, so the new value is stored into
    the indexed tensor (``_torch_write_item``); a receiver that is itself an in-place call
    (``o.mul_(a).add_(b)``: torch returns ``o``) writes ``o`` again, its new value read from
    ``o`` after the receiver has run (Python evaluates the receiver before the arguments)."""
    if is_temporary(receiver):
        return value  # torch.empty(n).normal_(): nobody else holds the tensor, its new value is the result
    written = inplace_written(receiver)
    if written is not None:
        return keyword_call(cst.Attribute(value=receiver, attr=cst.Name("copy_")),
                            {"src": value.deep_replace(receiver, written)})
    if type(receiver) is cst.Subscript and _stored_item(receiver):
        holder = receiver.value
        if isinstance(holder, cst.Attribute) and holder.attr.value == "data":
            holder = holder.value
        return keyword_call(runtime_helper(ctx, "_torch_write_item"),
                            {"tensor": holder, "index": item_index(receiver), "value": value})
    if receiver is None or not (name_chain(receiver) or _resolved_chain(receiver)):
        raise Unconvertible("the tensor is used twice: give it a name first")
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        receiver = receiver.value
    return keyword_call(cst.Attribute(value=receiver, attr=cst.Name("copy_")), {"src": value})


# run-time lookups of a layer's attribute (MS204): they read a stored value, so they may be
# written twice, as a name chain may
RESOLVERS = frozenset({"_torch_layer_attribute", "_torch_attribute"})


def _resolved_chain(node: cst.BaseExpression) -> bool:
    """``_torch_layer_attribute(m.conv, "bias", (...)).data``: an attribute chain on a
    run-time lookup of a layer's attribute whose arguments may be written twice."""
    while type(node) is cst.Attribute:
        node = node.value
    return (type(node) is cst.Call and type(node.func) is cst.Name and node.func.value in RESOLVERS
            and all(not a.star and (repeatable(a.value) or type(a.value) in (cst.SimpleString, cst.Tuple))
                    for a in node.args))


def inplace_written(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The tensor an in-place call writes and returns (``o`` of ``o.copy_(src=...)``, of
    ``o.mul_(a)``), when it is a stored name or attribute chain; else None."""
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "_torch_write_view" and node.args:
        return node.args[0].value if name_chain(node.args[0].value) else inplace_written(node.args[0].value)
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
        return None
    method = node.func.attr.value
    if not (method.endswith("_") and not method.endswith("__")):
        return None
    if name_chain(node.func.value):
        return node.func.value
    return inplace_written(node.func.value)  # o.mul_(a).masked_fill_(m, 0): o as well


def item_index(item: cst.Subscript) -> cst.BaseExpression:
    """The index of ``x[a, 1:n]`` as an expression: ``(a, slice(1, n))``."""
    parts = [e.slice.value if type(e.slice) is cst.Index else _slice_call(e.slice) for e in item.slice]
    return parts[0] if len(parts) == 1 else cst.Tuple([cst.Element(p) for p in parts])


def _slice_call(part: cst.Slice) -> cst.Call:
    """``a:b:c`` as the expression ``slice(a, b, c)`` (an index held in a tuple)."""
    none = cst.Name("None")
    if part.lower is None and part.upper is None and part.step is None:
        return cst.Call(func=cst.Name("slice"), args=[cst.Arg(none)])
    bounds = [part.lower or none, part.upper or none] + ([part.step] if part.step is not None else [])
    return cst.Call(func=cst.Name("slice"), args=[cst.Arg(b) for b in bounds])


def _stored_item(node: cst.Subscript) -> bool:
    """``x[i]``, ``w.data[:, 0]``: an item of a stored tensor, by an index that may be
    written twice (the value reads it, the write stores it)."""
    return name_chain(node.value) and all(
        repeatable(e.slice) if type(e.slice) is cst.Slice else repeatable(e.slice.value) for e in node.slice)


@hook()
def masked_fill_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.masked_fill_(m, v)`` -> ``x.copy_(x.masked_fill(m, v))``."""
    return copy_into(ctx, receiver, keyword_call(cst.Attribute(value=receiver, attr=cst.Name("masked_fill")), args))


@hook()
def arithmetic_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.add_(y, alpha=2)`` -> ``x.copy_(ops.add(x, y * 2))``: any in-place method as its
    out-of-place entry, copied into the receiver (``erfinv_``, ``exp_``, ``pow_``, ...).

    MindSpore 2.10's ``add_``/``sub_``/``mul_``/``div_`` on CPU in PYNATIVE mode return
    the result but leave ``x`` unchanged, and several in-place kernels do not exist on
    CPU at all (``InplaceErfinv``)."""
    from ..table_calls import build_call, tables  # (table_calls imports the hooks)

    # the out-of-place method converted as the table says (x.add(y) -> ops.add(x, y)), so
    # that converting the output again leaves it as it is
    out_of_place = tables().methods[entry.source.rsplit(".", 1)[-1].rstrip("_")]
    return copy_into(ctx, receiver, build_call(ctx, out_of_place, args, receiver))


@hook()
def fill_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.fill_(v)`` -> ``x.copy_(ops.full_like(x, v))``."""
    full = keyword_call(ctx.reference("mindspore.ops.full_like"), {"input": receiver, "fill_value": args["value"]})
    return copy_into(ctx, receiver, full)


@hook()
def zero_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.zero_()`` -> ``x.copy_(ops.zeros_like(x))``."""
    return copy_into(ctx, receiver, keyword_call(ctx.reference("mindspore.ops.zeros_like"), {"input": receiver}))


@hook()
def clamp_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.clamp_(lo, hi)`` -> ``x.copy_(ops.clamp(x, lo, hi))``."""
    return copy_into(ctx, receiver, keyword_call(ctx.reference("mindspore.ops.clamp"), {"input": receiver, **args}))


@hook()
def uniform_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.uniform_(a, b)`` -> ``x.copy_(ops.rand_like(x) * (b - a) + a)``."""
    low = args.get("from", literal(0))
    high = args.get("to", literal(1))
    rand = code(keyword_call(ctx.reference("mindspore.ops.rand_like"), {"input": receiver}))
    lv, hv = literal_value(low), literal_value(high)
    if isinstance(lv, (int, float)) and isinstance(hv, (int, float)):
        span, start = literal(hv - lv), literal(lv)
    else:
        span, start = cst.parse_expression(f"{operand_code(high)} - {operand_code(low)}"), low
    return copy_into(ctx, receiver, cst.parse_expression(f"{rand} * {operand_code(span)} + {operand_code(start)}"))


@hook()
def normal_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.normal_(m, s)`` -> ``x.copy_(ops.randn_like(x) * s + m)``."""
    mean = args.get("mean", literal(0.0))
    std = args.get("std", literal(1.0))
    randn = code(keyword_call(ctx.reference("mindspore.ops.randn_like"), {"input": receiver}))
    return copy_into(ctx, receiver, cst.parse_expression(f"{randn} * {operand_code(std)} + {operand_code(mean)}"))
