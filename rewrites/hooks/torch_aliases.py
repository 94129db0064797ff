"""Hooks of tables/torch_aliases.toml: torch.range and the sym_* helpers."""
from __future__ import annotations

import math

import libcst as cst

from ..syntax import Unconvertible, code, keyword_call, literal, literal_value, operand_code, is_number
from .registry import hook


@hook(consumes=("start", "end", "step", "dtype"))
def inclusive_range(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.range(1, 4)`` -> ``ops.arange(0, 4, dtype=ms.float32) + 1``: the end is
    included and torch counts ``floor((end - start) / step) + 1`` values ``start + i * step``
    (``arange(start, end + step)`` would take one more when the span is not a multiple
    of the step); the default dtype is torch's float32 whatever the arguments."""
    start, end, step = args.get("start", literal(0)), args["end"], args.get("step", literal(1))
    values = [literal_value(v) for v in (start, end, step)]
    if all(is_number(v) for v in values):
        count: cst.BaseExpression = literal(math.floor((values[1] - values[0]) / values[2]) + 1)
    else:
        count = cst.parse_expression(
            f"int(({operand_code(end)} - {operand_code(start)}) // {operand_code(step)}) + 1")
    dtype = args.get("dtype") or ctx.reference("mindspore.float32")
    if literal_value(dtype) is None:
        dtype = ctx.reference("mindspore.float32")
    indices = code(keyword_call(ctx.reference("mindspore.ops.arange"),
                                {"start": literal(0), "end": count, "dtype": dtype}))
    out = indices if values[2] == 1 else f"{indices} * {operand_code(step)}"
    return cst.parse_expression(out if values[0] == 0 else f"{out} + {operand_code(start)}")


# torch.sym_* on plain numbers are these Python expressions ({name}: argument source)
_BUILTINS = {
    "sym_max": "max({a}, {b})", "sym_min": "min({a}, {b})", "sym_int": "int({a})", "sym_float": "float({a})",
    "sym_not": "not {a}", "sym_sqrt": "{sqrt}({a})", "sym_ite": "{t} if {b} else {f}",
}


@hook(consumes=("a", "b", "t", "f", "args"))
def python_builtin(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.sym_max(a, b)`` -> ``max(a, b)``: outside tracing they compute exactly this
    on Python numbers (``sym_sum(a, b)``/``sym_sum([a, b])`` -> ``sum(...)``)."""
    name = entry.source.rsplit(".", 1)[1]
    if name == "sym_sum":  # several arguments arrive packed as a tuple
        items = args["args"]
        if not isinstance(items, (cst.List, cst.Tuple)):
            raise Unconvertible("sym_sum of one value that may or may not be a sequence")
        return cst.parse_expression(f"sum({code(items)})")
    parts = {k: operand_code(v) for k, v in args.items()}
    if name == "sym_sqrt":
        parts["sqrt"] = code(ctx.reference("math.sqrt"))
    return cst.parse_expression(_BUILTINS[name].format(**parts))
