"""Calls of a torch function whose hook builds the converted expression
(``F.scaled_dot_product_attention``) made with ``*args``/``**kwargs``: where the call is
written its arguments cannot be matched to parameters, so the hook is applied to the
function's own parameters instead, inside an emitted function with torch's signature,
and the call passes its arguments to that function as they are (MS201).

Torch's signature is the entry's ``params``/``kwonly``. Which parameters are required is
asked of the hook itself: the fewest leading parameters it converts without a missing
argument (a hook reads the arguments the signature requires: ``build_call``). Every other
parameter defaults to its ``defaults`` value in the table (torch's default, written out
where the target's differs), else to None (torch's default for an optional tensor or
setting). Parameters are plain names in the emitted body, so whatever the hook decides
from a value it decides at run time there (a mask's dtype, a flag, ``scale=None``).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.formatting import black_layout

from ..hooks import HOOKS
from ..runtime.registry import helper_names, runtime_helper
from ..syntax import Unconvertible, code, literal
from ..table_calls import convert_call


def run_time_bound(entry, call: cst.Call) -> bool:
    """A function call this module converts: a hooked function entry with a plain
    signature, called with ``*``/``**`` arguments."""
    return _hooked_function(entry) and any(a.star for a in call.args)


def _hooked_function(entry) -> bool:
    """A function entry whose hook converts its arguments, with a plain signature."""
    if entry is None or entry.kind != "function" or not entry.hook or entry.unsupported:
        return False
    return HOOKS[entry.hook].kind == "arguments" and not any(p.startswith("*") for p in entry.params)


def function_value(ctx, entry, reference: cst.BaseExpression, pass_id: str) -> cst.Name | None:
    """What a torch function used as a value (``{"normal_": torch.nn.init.normal_}``, a
    function passed on) becomes when its calls need their arguments converted by a hook:
    a function taking torch's arguments (a run-time helper written for it, else one
    emitted here where the table gives the default of every optional parameter); None
    when there is none (the reference is then renamed, with a warning)."""
    if not _hooked_function(entry) or (entry.hook and HOOKS[entry.hook].not_a_value):
        return None
    if run_time_name(entry) not in helper_names():
        # an emitted function gives an optional parameter without a table default None, which is
        # torch's default only for some (F.conv1d's stride is 1; torch.device is a type, tested
        # with isinstance): only where the table gives every optional parameter's default
        try:
            required = _required(ctx, entry, reference, pass_id)
        except Unconvertible:
            return None
        if any(name not in entry.defaults and name != "out"  # (out=None is torch's: no out)
               for name in [*entry.params, *entry.kwonly][required:]):
            return None
    try:
        return run_time_function(ctx, entry, reference, pass_id, reference, "used as a value")
    except Unconvertible:
        return None


def _keyword_call(func: cst.BaseExpression, names: list[str]) -> cst.Call:
    return cst.Call(func=func, args=[cst.Arg(keyword=cst.Name(n), value=cst.Name(n)) for n in names])


def _required(ctx, entry, func, pass_id: str) -> int:
    """How many leading parameters the hook cannot do without (tried with nothing kept)."""
    params = list(entry.params)
    for count in range(len(params) + 1):
        snap = ctx.snapshot()
        try:
            convert_call(ctx, entry, _keyword_call(func, params[:count]), pass_id)
        except Unconvertible:
            continue
        finally:
            ctx.restore(snap)
        return count
    raise Unconvertible("its conversion needs arguments the call does not name")


def bound_at_run_time(ctx, entry, original: cst.Call, updated: cst.Call, pass_id: str) -> cst.Call:
    """``updated`` calling the emitted function that converts ``entry`` with its arguments
    bound when the call runs (raises Unconvertible where the hook cannot convert it)."""
    function = run_time_function(ctx, entry, original.func, pass_id, original, "the call passes * or ** arguments")
    return updated.with_changes(func=function)


def run_time_function(ctx, entry, func: cst.BaseExpression, pass_id: str, where: cst.CSTNode, why: str) -> cst.Name:
    """The emitted function with torch's signature whose body is ``entry``'s conversion of
    its own parameters (``func`` is the reference to the torch function; reports name
    ``where``; ``why`` is said in its docstring). A run-time helper written for the entry
    (rewrites/runtime/, named as ``run_time_name`` says) is that function where there is
    one. Raises Unconvertible where the entry cannot convert plain names."""
    if run_time_name(entry) in helper_names():
        return runtime_helper(ctx, run_time_name(entry))
    names = [*entry.params, *entry.kwonly]
    # torch's out=None is no out: the conversion of a call passing out writes into it
    given = [n for n in names if n != "out"]
    body = convert_call(ctx, entry, _keyword_call(func, given), pass_id, original=where)
    returned = f"return {code(body)}"
    if len(given) < len(names):
        into_out = convert_call(ctx, entry, _keyword_call(func, names), pass_id, original=where)
        returned = f"if out is None:\n        {returned}\n    return {code(into_out)}"
    required = _required(ctx, entry, func, pass_id)

    def param(i: int, name: str) -> str:
        if i < required:
            return name
        default = entry.defaults.get(name)
        return f"{name}={code(literal(default)) if default is not None else 'None'}"

    signature = [param(i, n) for i, n in enumerate(entry.params)]
    if entry.kwonly:
        signature += ["*", *(param(len(entry.params) + i, n) for i, n in enumerate(entry.kwonly))]
    name = run_time_name(entry)
    doc = f'"""{entry.source} with its arguments bound when the call runs ({why}; transpile MS201)."""'
    ctx.define(name, black_layout(f"def {name}({', '.join(signature)}):\n    {doc}\n    {returned}\n"))
    return cst.Name(name)


def run_time_name(entry) -> str:
    """``torch.nn.init.normal_`` -> ``_torch_nn_init_normal_``: the emitted function's name,
    and that of a run-time helper written for the entry (rewrites/runtime/)."""
    return "_torch_" + entry.source.replace(".", "_").removeprefix("torch_")
