"""Which torch layers and functions MS205 can convert when their arguments are known only
at run time (a class passed as a value, ``**kwargs`` at a call): MS201 leaves those calls
to it."""
from __future__ import annotations

import libcst as cst

from ..hooks import HOOKS
from ..syntax import Unconvertible, bind, code
from ..value_transforms import TRANSFORMS


def factory_possible(entry, functions: bool = False) -> bool:
    """Layers (with ``functions``, also functions) whose arguments need converting and
    can be converted at run time."""
    kinds = ("class", "function") if functions else ("class",)
    if entry is None or entry.kind not in kinds or entry.unsupported or not entry.target:
        return False
    if not entry.source.startswith("torch.nn." if entry.kind == "class" else "torch.") or entry.target.startswith("."):
        return False
    if not (entry.params or entry.kwonly):
        return False  # a pure rename: the class itself takes the same arguments
    varargs = [p for p in entry.params if p.startswith("*")]
    if varargs and (entry.kind == "class" or len(varargs) > 1) or ("*" in entry.rename.values() and entry.kind == "class"):
        return False
    if entry.hook and HOOKS[entry.hook].at_run_time is None:
        return False
    try:
        transform_lines(entry)
    except Unconvertible:
        return False
    return True


def converted_at_run_time(entry, call: cst.Call) -> bool:
    """A torch function called with ``*args``/``**kwargs`` that cannot be matched to its
    parameters here, whose arguments MS205 converts when the call runs."""
    if entry is None or entry.kind != "function" or not factory_possible(entry, functions=True):
        return False
    try:
        bind(call, entry.params, entry.kwonly)
    except Unconvertible:
        return True
    return False  # converted where it stands (f(*sizes) fills a varargs parameter)


def transform_lines(entry) -> list[str]:
    """The statements that apply ``entry``'s value transforms to ``kwargs`` when the converted
    arguments are built at run time (raises Unconvertible when one cannot be written)."""
    lines = []
    at_run_time: dict[str, list[str]] = {}  # transform -> the arguments it applies to
    for name, transform in entry.transform.items():
        if TRANSFORMS[transform].at_run_time is not None:
            at_run_time.setdefault(transform, []).append(name)
            continue
        expr = TRANSFORMS[transform].function(cst.parse_expression(f"kwargs[{name!r}]"))
        lines += [f"if {name!r} in kwargs:", f"    kwargs[{name!r}] = {code(expr)}"]
    for transform, names in at_run_time.items():
        lines += [f"for key in {tuple(names)!r}:", "    if key in kwargs:"]
        lines += ["        " + line for line in TRANSFORMS[transform].at_run_time("kwargs[key]")]
    return lines
