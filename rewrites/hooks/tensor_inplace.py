"""Hooks of tables/tensor_inplace.toml: Tensor in-place methods.

Most are ``arithmetic_`` (shared with tensor_methods.toml): the out-of-place entry's
conversion copied into the receiver. The others compute the new values themselves and
copy them in the same way.
"""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible, code, keyword_call, literal, literal_value, module_spellings, name_chain, operand_code
from .registry import hook
from .tensor_methods import is_temporary, copy_into, arithmetic_  # noqa: F401
from .torch_inplace import copied  # noqa: F401  (Tensor.narrow_copy: torch.narrow_copy's)


@hook()
def reshaped_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.t_()`` -> ``x.assign_value(ops.t(input=x).contiguous())``: the out-of-place
    entry, and the receiver takes its shape (``copy_`` keeps the receiver's shape).

    MindSpore's ops.t / swapaxes return a strided view of ``x``; a tensor assigned a
    non-contiguous view ignores later ``copy_`` on CPU, hence ``contiguous()``."""
    from ..table_calls import build_call, tables  # (table_calls imports the hooks)

    out_of_place = tables().methods[entry.source.rsplit(".", 1)[-1].rstrip("_")]
    value = keyword_call(cst.Attribute(value=build_call(ctx, out_of_place, args, receiver), attr=cst.Name("contiguous")), {})
    return _assigned(receiver, value)


def _assigned(receiver, value: cst.BaseExpression) -> cst.BaseExpression:
    """``x.assign_value(value)``: ``x`` takes the value's shape too (``copy_`` keeps x's)."""
    if is_temporary(receiver):
        return value  # torch.zeros(3).unsqueeze_(0): nobody else holds the tensor
    if receiver is None or not name_chain(receiver):
        raise Unconvertible("the tensor is used twice: give it a name first")
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        raise Unconvertible("the shape of a parameter changes through .data: use set_data on the parameter")
    return keyword_call(cst.Attribute(value=receiver, attr=cst.Name("assign_value")), {"value": value})


@hook()
def resized_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.resize_(2, 3)`` -> ``x.assign_value(_torch_resized(x, (2, 3)))``, ``x.resize_as_(y)``
    with ``y.shape`` (the function emitted beside the code)."""
    shape = args["shape"] if "shape" in args else cst.Attribute(value=args["the_template"], attr=cst.Name("shape"))
    resized = runtime_helper(ctx, "_torch_resized")
    return _assigned(receiver, keyword_call(resized, {"input": receiver, "shape": shape}))


@hook()
def fill_diagonal_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.fill_diagonal_(v, wrap)`` -> ``x.copy_(_torch_filled_diagonal(input=x, fill_value=v, wrap=wrap))``,
    the function emitted beside the code (MindSpore's fill_diagonal_ has no CPU kernel)."""
    filled = runtime_helper(ctx, "_torch_filled_diagonal")
    return copy_into(ctx, receiver, keyword_call(filled, {"input": receiver, **args}))


# x.<method>(...) draws x's new values from the inverse of the distribution's CDF at
# U = ops.rand_like(x) (uniform on [0, 1)), or from N = ops.randn_like(x); each drawn once
# (MindSpore's in-place random kernels are missing on CPU: InplaceRandom, InplaceExponential)
_DRAWS = {
    "exponential_": "-{OPS}.log1p(-{U}) / {lambd}",
    "cauchy_": "{median} + {sigma} * {OPS}.tan({math}.pi * ({U} - 0.5))",
    "log_normal_": "{OPS}.exp({N} * {std} + {mean})",
    "geometric_": "{OPS}.floor({OPS}.log1p(-{U}) / {math}.log1p(-{p})) + 1",
}


@hook()
def drawn_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.exponential_(2.0)`` -> ``x.copy_(-ops.log1p(-ops.rand_like(x)) / 2.0)``."""
    _, ops_, _ = module_spellings(ctx)
    draws = {"U": "mindspore.ops.rand_like", "N": "mindspore.ops.randn_like"}
    template = _DRAWS[entry.source.rsplit(".", 1)[-1]]
    names = {k: code(keyword_call(ctx.reference(fn), {"input": receiver})) for k, fn in draws.items() if "{" + k + "}" in template}
    if "{math}" in template:
        names["math"] = code(ctx.reference("math.pi")).rsplit(".", 1)[0]
    try:
        value = template.format(OPS=ops_, **names, **{k: operand_code(v) for k, v in args.items()})
    except KeyError as missing:
        raise Unconvertible(f"{missing.args[0]} is required") from None
    return copy_into(ctx, receiver, cst.parse_expression(value))


@hook()
def random_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.random_(lo, hi)`` / ``x.random_(hi)`` (torch's overload: one number is the end)
    -> ``x.copy_(ops.randint_like(x, lo, hi, dtype=mindspore.int64))``; without an end
    torch draws over the dtype's whole range: refused."""
    low, high = args.get("from"), args.get("to")
    if high is None:
        low, high = None, low
    low = literal(0) if low is None else low
    if high is None or literal_value(high) is None:
        raise Unconvertible("random_ without an end draws over the whole range of the dtype")
    draw = keyword_call(ctx.reference("mindspore.ops.randint_like"),
                        {"input": receiver, "low": low, "high": high, "dtype": ctx.reference("mindspore.int64")})
    return copy_into(ctx, receiver, draw)


@hook()
def applied_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.map2_(a, b, f)`` -> ``x.copy_(_torch_applied(x, f, a, b))`` (``apply_(f)``, ``map_(a, f)``
    likewise; the function emitted beside the code: Python calls per element, as torch's)."""
    applied = runtime_helper(ctx, "_torch_applied")
    others = [args[name] for name in ("other", "x", "y") if name in args]
    call = cst.Call(func=applied, args=[cst.Arg(v) for v in (receiver, args["callable"], *others)])
    return copy_into(ctx, receiver, call)
