"""Apply one table entry to one call: the shared core of the table-driven passes."""
from __future__ import annotations

import functools
from typing import Any
from pathlib import Path

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.tables import ApiEntry, Tables, load_tables

from .runtime.registry import runtime_helper
from .syntax import NOT_LITERAL, Unconvertible, bind, code, keyword_call, literal, literal_value, pack_varargs
from .hooks import HOOKS
from .value_transforms import TRANSFORMS

TABLE_DIR = Path(__file__).parent / "tables"

# Source packages the passes lower rather than map (rewrites/__init__.py and the imports pass
# add them to the tables' source roots): einops and einx's elementwise functions (MS208). Not in
# tables/modules.toml: neither has a MindSpore module to map to, and a source module there
# would make MS201 report every call as a torch API with no mapping.
LOWERED_ROOTS = frozenset({"einops", "einx"})


@functools.lru_cache(maxsize=1)
def tables() -> Tables:
    return load_tables(TABLE_DIR)


def reference_refusal(entry: ApiEntry | None) -> str | None:
    """Why a reference to the entry's symbol (a value, not a call) cannot name its target
    instead; None when it can."""
    if entry is None:
        return "no MindSpore mapping yet"
    if entry.unsupported:
        return entry.unsupported
    if entry.hook and HOOKS[entry.hook].not_a_value:
        return HOOKS[entry.hook].not_a_value
    if not entry.target or entry.target.startswith("."):
        return "no MindSpore mapping yet"
    return None


def reference_value(ctx, entry: ApiEntry | None) -> cst.BaseExpression | None:
    """What a reference to the entry's symbol becomes when its hook makes one (a run-time
    helper taking torch's arguments), else None."""
    if entry is None or entry.unsupported or not entry.hook or HOOKS[entry.hook].as_value is None:
        return None
    return HOOKS[entry.hook].as_value(ctx, entry)


def _unwrapped(value: cst.BaseExpression) -> cst.BaseExpression:
    """``value`` without parentheses of its own (a tuple's are its syntax): a marker quotes
    a replaced operand the same before and after a later run put it in parentheses."""
    if type(value) in (cst.Tuple, cst.GeneratorExp) or not getattr(value, "lpar", None):
        return value
    return value.with_changes(lpar=[], rpar=[])


def convert_args(ctx, entry: ApiEntry, call: cst.Call, pass_id: str, skip: int = 0, original: cst.Call | None = None) -> dict:
    """Source arguments -> target keyword arguments, as the entry says (reports name
    ``original``, the call as the file has it, when ``call`` is a rewritten copy)."""
    bound = bind(call, entry.params, entry.kwonly, skip)
    if "size_average" in entry.source_args():  # a loss (scatter_reduce's reduce= is no flag)
        bound = _legacy_reduction(ctx, bound)
    out: dict[str, cst.BaseExpression] = {}
    for name, value in bound.items():
        if entry.rename.get(name) == "*":  # varargs stay positional: x.view(2, 3)
            out["*"] = value if isinstance(value, list) else [value]  # also x.view(shape=s)
            continue
        if isinstance(value, list):
            value = pack_varargs(value)
        if name in entry.unsupported_args:
            if _allowed(entry, name, value):
                continue
            raise Unconvertible(f"{name}={code(_unwrapped(value))}: {entry.unsupported_args[name]}")
        if name in entry.drop:
            if _allowed(entry, name, value):
                continue
            ctx.report(original or call, pass_id, f"{entry.source}: argument {name!r} dropped (no MindSpore equivalent)", Severity.INFO)
            continue
        if name in entry.transform:
            value = TRANSFORMS[entry.transform[name]].function(value, ctx)
        out[entry.rename.get(name, name)] = value
    for name, default in entry.defaults.items():
        target_name = entry.rename.get(name, name)
        if target_name not in out:
            value = literal(default)
            if name in entry.transform:
                value = TRANSFORMS[entry.transform[name]].function(value, ctx)
            out[target_name] = value
    for name, value in entry.set.items():
        out[name] = literal(value)
    return out


# torch.nn._reduction.legacy_get_string: None counts as True; given, they decide
LEGACY_REDUCTION_ARGS = ("size_average", "reduce")
_LEGACY_REDUCTION = {(True, True): "mean", (False, True): "sum", (True, False): "none", (False, False): "none"}


def _legacy_reduction(ctx, bound: dict) -> dict:
    """``size_average=``/``reduce=`` (deprecated, still common) -> ``reduction=`` by torch's
    rule: when either is given (not None) it decides the reduction, whatever ``reduction``
    says. Every torch loss taking the three follows it."""
    if not any(k in bound for k in LEGACY_REDUCTION_ARGS):
        return bound
    given = {k: bound.get(k) for k in LEGACY_REDUCTION_ARGS}
    values = {k: None if v is None else literal_value(v) for k, v in given.items()}
    if all(v is None for v in values.values()):
        return {k: v for k, v in bound.items() if k not in given}
    rest = {k: v for k, v in bound.items() if k not in given}
    if all(v is None or isinstance(v, bool) for v in values.values()):
        key = tuple(True if values[k] is None else values[k] for k in LEGACY_REDUCTION_ARGS)
        rest["reduction"] = literal(_LEGACY_REDUCTION[key])
    else:  # a variable: the rule at run time
        fn = runtime_helper(ctx, "_legacy_reduction")
        rest["reduction"] = keyword_call(fn, {k: v if v is not None else literal(None) for k, v in given.items()})
    return rest


def accepts_arguments(entry: ApiEntry, call: cst.Call) -> bool:
    """Whether the entry converts the call's arguments (checked without converting):
    not when the symbol is unsupported, an argument does not bind to its signature, or
    an argument it cannot convert has a value other than the harmless one."""
    if entry.unsupported:
        return False
    try:
        bound = bind(call, entry.params, entry.kwonly)
    except Unconvertible:
        return False
    return all(_allowed(entry, name, value) for name, value in bound.items() if name in entry.unsupported_args)


def _allowed(entry: ApiEntry, name: str, value) -> bool:
    """The argument has the value the table says is harmless ("None" stands for None)."""
    if name not in entry.allowed:
        return False
    expected = entry.allowed[name]
    return literal_value(value) == (None if expected == "None" else expected)


def convert_call(ctx, entry: ApiEntry, call: cst.Call, pass_id: str, receiver=None,
                 original: cst.Call | None = None) -> cst.BaseExpression:
    """The converted call (raises Unconvertible); ``original`` as for convert_args."""
    if entry.unsupported:
        raise Unconvertible(entry.unsupported)
    call, out = _without_out(ctx, entry, call, pass_id, original or call)
    if out is not None:
        converted = convert_call(ctx, entry, call, pass_id, receiver, original)
        return keyword_call(runtime_helper(ctx, "_torch_out"), {"result": converted, "out": out})
    call, unknown = _without_unknown_none_args(ctx, entry, call)
    if unknown:
        converted = convert_call(ctx, entry, call, pass_id, receiver, original)
        test = " and ".join(f"{code(value)} is None" for _, value in unknown)
        names = ", ".join(f"{name}={code(value)}" for name, value in unknown)
        ctx.report(original or call, pass_id, f"{entry.source}: {names} is known only at run time; the converted "
                   "call runs when it is None and raises otherwise "
                   f"({'; '.join(entry.unsupported_args[name] for name, _ in unknown)})", Severity.INFO)
        refused = keyword_call(runtime_helper(ctx, "_torch_refused_argument"),
                               {"message": literal(f"{names}: " + "; ".join(entry.unsupported_args[n] for n, _ in unknown))})
        return cst.IfExp(test=cst.parse_expression(test), body=converted, orelse=refused,
                         lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if not entry.params and not entry.kwonly and not entry.hook and (receiver is None or entry.target.startswith(".")):
        # a pure rename: the arguments pass as they are (nn.Sequential(a, b));
        # a method that becomes a function (x.abs() -> ops.abs(input=x)) takes the receiver below
        if entry.target.startswith("."):
            return call.with_changes(func=cst.Attribute(value=receiver, attr=cst.Name(entry.target[1:])))
        return call.with_changes(func=ctx.reference(entry.target))
    return build_call(ctx, entry, convert_args(ctx, entry, call, pass_id, original=original), receiver)


def _without_unknown_none_args(ctx, entry: ApiEntry, call: cst.Call):
    """The arguments MindSpore has no counterpart for, harmless only as None
    (``generator=``), given as a name or attribute whose value is known only at run time
    (a function's ``generator=None`` passed on): (the call with None for them, [(name, value)]).
    The caller converts the rest and refuses another value when the call runs."""
    guarded = [name for name in entry.unsupported_args if entry.allowed.get(name) == "None"]
    if not guarded:
        return call, []
    try:
        bound = bind(call, entry.params, entry.kwonly)
    except Unconvertible:
        return call, []
    unknown = [(name, bound[name]) for name in guarded
               if name in bound and type(bound[name]) in (cst.Name, cst.Attribute)
               and literal_value(bound[name]) is NOT_LITERAL and not _names_a_module_member(ctx, bound[name])]
    if not unknown:
        return call, []
    values = {id(value) for _, value in unknown}
    # None in their place: a positional one keeps the others where they are
    return call.with_changes(args=[a.with_changes(value=cst.Name("None")) if id(a.value) in values else a
                                   for a in call.args]), unknown


def _names_a_module_member(ctx, value: cst.BaseExpression) -> bool:
    """``torch.float64``, ``ms.float64``: a module's constant (an import of the file, or one
    a conversion added), not a value the code holds."""
    head = value
    while type(head) is cst.Attribute:
        head = head.value
    return type(head) is cst.Name and head is not value and (
        ctx.imports.qualify(value) is not None or head.value in ctx.new_imports)


OUT_ARG = "out"
# what the run-time converter of a function passed as a value (MS205) says to a non-None out=
OUT_REFUSED_AT_RUN_TIME = "out: out= is not supported; assign the result"


def _without_out(ctx, entry: ApiEntry, call: cst.Call, pass_id: str, where: cst.Call):
    """torch's ``out=`` taken off the call, one rule for every entry that takes it: (the
    call without it, the out expression, or None when there is none or it is None). The
    caller writes the result into it (runtime ``_torch_out``)."""
    if OUT_ARG not in entry.kwonly and OUT_ARG not in entry.params:
        return call, None
    value = bind(call, entry.params, entry.kwonly).get(OUT_ARG)
    if value is None:
        return call, None
    rest = call.with_changes(args=[a for a in call.args if a.value is not value])
    if literal_value(value) is None:
        return rest, None
    parts = [e.value for e in value.elements] if type(value) in (cst.Tuple, cst.List) else [value]
    if any(type(part) not in (cst.Name, cst.Attribute) for part in parts):
        # torch's x[0], x.narrow(...), x.view(...) share x's memory; MindSpore's are copies
        ctx.report(where, pass_id, f"{entry.source}: out= is an expression (a slice or view in torch); in MindSpore "
                   "it is a copy, so the tensor it was taken from is not written: assign the result into it",
                   Severity.WARNING)
    if ctx.compiled:
        ctx.report(where, pass_id, f"{entry.source}: out= is written with Tensor.assign_value, which GRAPH mode "
                   "does not compile: in a Cell run in GRAPH_MODE, assign the result instead", Severity.WARNING)
    return rest, value


def build_call(ctx, entry: ApiEntry, args: dict[str, Any], receiver=None) -> cst.BaseExpression:
    """The entry's conversion from arguments already converted (target names): its hook,
    then ``target(**args)`` or ``receiver.method(**args)``."""
    if entry.hook:
        given = set(args)
        try:
            result = HOOKS[entry.hook].function(ctx, entry, args, receiver)
        except KeyError as missing:
            # A hook reads the arguments the signature requires; a call that leaves one
            # out (a TypeError in torch too) stays as it is, reported.
            if missing.args and missing.args[0] not in given:
                raise Unconvertible(f"required argument {missing.args[0]!r} is missing") from None
            raise
        if isinstance(result, cst.BaseExpression):
            return result
        args = result
    target = entry.target or ""
    if target.startswith("."):  # a method on the receiver: x.view(...)
        func = cst.Attribute(value=receiver, attr=cst.Name(target[1:]))
    else:
        func = ctx.reference(target)
        if receiver is not None:
            args = {entry.receiver or "input": receiver, **args}
    return keyword_call(func, args)
