"""Hooks of tables/training_script.toml: a training script's devices, seeds and loss scaler."""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity

from ..syntax import NOT_LITERAL, code, keyword_call, literal, literal_value, is_number
from .module_methods import no_op  # noqa: F401 - CUDA housekeeping: nothing to do
from .registry import hook

# calls that seed every device in torch (-> mindspore.set_seed)
GLOBAL_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})


@hook()
def cpu_answer(ctx, entry, args, receiver) -> cst.BaseExpression:
    """The answer on MindSpore's CPU build, the entry's ``value`` (``torch.cuda.is_available()`` -> False)."""
    return args["value"]


@hook()
def no_accelerator(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.accelerator.current_accelerator()`` -> ``None``: torch's answer without one."""
    return cst.Name("None")


@hook()
def device_name(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.device(kind)`` -> its name, a string: a literal or a choice of literals stays as
    written (``"cuda" if ... else "cpu"``), another value is ``str()``-ed (a device is one
    too); ``torch.device("cuda", 0)`` -> ``"cuda:0"``."""
    kind = args["type"]
    index = args.get("index")
    if index is None or literal_value(index) is None:
        return kind if _names_a_device(kind) else cst.Call(func=cst.Name("str"), args=[cst.Arg(kind)])
    kind_value, index_value = literal_value(kind), literal_value(index)
    if isinstance(kind_value, str) and isinstance(index_value, int):
        return literal(f"{kind_value}:{index_value}")
    return cst.parse_expression(f'f"{{{code(kind)}}}:{{{code(index)}}}"')


def _names_a_device(value: cst.BaseExpression) -> bool:
    """A string literal, or a conditional choosing between such."""
    if isinstance(value, cst.IfExp):
        return _names_a_device(value.body) and _names_a_device(value.orelse)
    return isinstance(literal_value(value), str)


@hook()
def cuda_manual_seed(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.cuda.manual_seed(s)``: where the file also calls ``torch.manual_seed`` (which
    becomes ``mindspore.set_seed``, seeding everything) it has nothing left to do (None; as a
    statement MS214 removes it); else it is the script's seed: ``mindspore.set_seed(s)``."""
    if ctx.facts.qualified_calls() & GLOBAL_SEEDS:
        return cst.Name("None")
    return keyword_call(ctx.reference(entry.target), args)


@hook(consumes=("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
      adds=("scale_value", "scale_factor", "scale_window"))
def grad_scaler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``GradScaler(init_scale, growth_factor, backoff_factor, growth_interval, enabled)`` ->
    ``DynamicLossScaler(scale_value, scale_factor, scale_window)``. MindSpore's one factor
    grows and backs off: with ``growth_factor != 1 / backoff_factor`` the backoff differs
    (reported). A scaler built disabled scales by 1: ``StaticLossScaler(1.0)``."""
    growth, backoff = args["growth_factor"], args["backoff_factor"]
    growth_value, backoff_value = literal_value(growth), literal_value(backoff)
    if is_number(growth_value):
        factor = literal(int(growth_value)) if growth_value == int(growth_value) else None
        if factor is None:
            ctx.report(growth, "MS201", f"GradScaler: growth_factor {growth_value} is not an integer: "
                            "MindSpore's DynamicLossScaler takes an integer scale_factor (rounded down)",
                            Severity.WARNING)
            factor = literal(int(growth_value))
    else:
        factor = cst.Call(func=cst.Name("int"), args=[cst.Arg(growth)])
    if growth_value is NOT_LITERAL or backoff_value is NOT_LITERAL or growth_value * backoff_value != 1:
        ctx.report(backoff, "MS201", "GradScaler: MindSpore backs off by 1/scale_factor "
                        f"({code(backoff)} given) and keeps the scale at 1 or more", Severity.WARNING)
    scaler = keyword_call(ctx.reference(entry.target), {
        "scale_value": args["init_scale"], "scale_factor": factor, "scale_window": args["growth_interval"]})
    enabled = args.get("enabled")
    if enabled is None or literal_value(enabled) is True:
        return scaler
    unscaled = keyword_call(ctx.reference("mindspore.amp.StaticLossScaler"), {"scale_value": literal(1.0)})
    if literal_value(enabled) is False:
        return unscaled
    return cst.IfExp(test=enabled, body=scaler, orelse=unscaled)
