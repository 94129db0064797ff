"""Hooks of tables/torch_foreach.toml: torch._foreach_<op> through one emitted helper."""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible, code, literal_value, operand_code, spelled
from .registry import hook


# the element function over the tensor t and the other arguments' items a, b, c
# (OPS.: mindspore.ops as the file spells it; ALPHA, VALUE: the scalar keyword's value)
_BINARY = {
    "add": "t + a * ALPHA", "sub": "t - a * ALPHA", "mul": "t * a", "div": "t / a",
    "maximum": "OPS.maximum(t, a)", "minimum": "OPS.minimum(t, a)", "pow": "OPS.pow(t, a)",
    "clamp_min": "OPS.maximum(t, a)", "clamp_max": "OPS.minimum(t, a)",
}
# torch computes an integer tensor's float-only math in float32 (FLOAT: _torch_float_input),
# and its floor and ceil in its own dtype (VIA: _torch_via_float); MindSpore's CPU kernels
# take floats only
FLOAT_ONLY = "acos asin atan cos cosh erf erfc exp expm1 lgamma log log10 log1p log2 rsqrt sigmoid sin sinh tan tanh"
ELEMENT = {
    **{op: f"OPS.{op}(t)" for op in "abs frac neg reciprocal round sign sqrt trunc".split()},
    **{op: f"OPS.{op}(FLOAT(t))" for op in FLOAT_ONLY.split()},
    **{op: f"VIA(op=OPS.{op}, input=t)" for op in ("ceil", "floor")},
    **_BINARY,
    "addcmul": "t + VALUE * a * b", "addcdiv": "t + VALUE * (a / b)", "lerp": "OPS.lerp(t, a, b)",
    "zero_": "OPS.zeros_like(t)", "copy_": "a.astype(t.dtype)", "clone": "t.copy()",
    # the vector norm written out: ops.norm(x, 1) left the CPU in flush-to-zero mode for
    # the rest of the process (a later subnormal input then read as 0)
    "norm": "(OPS.abs(t) ** ORD).sum() ** (1 / ORD)",
}
ARITY = {"addcmul": 2, "addcdiv": 2, "lerp": 2, "copy_": 1, **{op: 1 for op in _BINARY}}


def _factor(ctx, value: cst.BaseExpression) -> str:
    """addcmul's and addcdiv's ``value``: torch truncates a float one for an integer tensor
    (``_foreach_addcmul(ts, a, b, value=0.3)`` leaves int64 ``ts`` as they are), so one not
    an integer literal goes through ``_torch_coefficient(t, ...)`` (a float ``alpha`` with
    integer tensors is refused by torch: it is passed as it is)."""
    if isinstance(literal_value(value), int):
        return operand_code(value)
    return f"{runtime_helper(ctx, '_torch_coefficient').value}(t, {code(value)})"


@hook(consumes=("self", "other", "exponent", "tensor1", "tensor2", "value", "tensors1", "weight", "src",
                "non_blocking", "alpha", "ord", "dtype"))
def foreach(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch._foreach_add_(ps, gs, alpha=-lr)`` ->
    ``_foreach(lambda t, a: t + a * -lr, ps, gs, inplace=True)``."""
    op = entry.source.rsplit("._foreach_", 1)[1]
    inplace = op.endswith("_") and op not in ELEMENT
    base = op[:-1] if inplace else op
    others = [n for n in entry.params[1:] if n not in ("value", "non_blocking", "ord", "dtype")][: ARITY.get(base, 0)]
    if any(n not in args for n in others):
        raise Unconvertible("an argument given by a keyword of another overload")
    if "dtype" in args and literal_value(args["dtype"]) is not None:
        raise Unconvertible("dtype= of _foreach_norm")
    body = spelled(ctx, ELEMENT[base])
    for placeholder, name in (("FLOAT", "_torch_float_input"), ("VIA", "_torch_via_float")):
        if placeholder + "(" in body:
            body = body.replace(placeholder + "(", runtime_helper(ctx, name).value + "(")
    # a factor of one (absent, 1 or 1.0) is left out whole: a textual " * 1" cut made
    # "a * 1.0" into "a.0"
    for name, placeholder in (("alpha", "ALPHA"), ("value", "VALUE")):
        if name not in args or literal_value(args[name]) == 1:
            body = body.replace(f" * {placeholder}", "").replace(f"{placeholder} * ", "")
    body = (body.replace("ALPHA", operand_code(args.get("alpha", cst.Integer("1"))))
            .replace("VALUE", _factor(ctx, args.get("value", cst.Integer("1"))))
            .replace("ORD", operand_code(args.get("ord", cst.Integer("2")))))
    if base == "norm" and literal_value(args.get("ord", cst.Integer("2"))) in (float("inf"), 0):
        raise Unconvertible("_foreach_norm with ord inf or 0")
    params = ", ".join(["t", *"ab"[: len(others)]])
    helper = runtime_helper(ctx, "_foreach").value
    call = f"{helper}(lambda {params}: {body}, {code(args['self'])}"
    call += "".join(f", {code(args[n])}" for n in others)
    return cst.parse_expression(call + (", inplace=True)" if inplace or op in ("zero_", "copy_") else ")"))
