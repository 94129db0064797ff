"""How a derived module-path case spells an entry: the re-exporting path it calls the entry
by (rewrites/tables/reexports.toml), and a case's code respelled through it. Shared by
test_generated_forms (the Suites' and layer lists' cases) and test_optim (its builders)."""
from __future__ import annotations

import ast
import re

from transpile.rewrites.table_calls import tables

from . import form_coverage


def module_paths() -> dict[str, str]:
    """entry -> the re-exporting spelling its derived case calls it by: one of the same last
    name, reached by attributes from ``torch`` where one is (a dotted call), else imported
    (``torch.optim`` deletes its submodules' names, ``torch.nn.utils.weight_norm`` is the
    function: ``from torch.optim.adam import Adam``); then the defining module's, then the
    longest (``torch.nn.modules.loss.L1Loss`` rather than ``torch.nn.modules.L1Loss``)."""
    chosen: dict[str, str] = {}
    for private, public in tables().reexports.items():
        if private.rsplit(".", 1)[1] != public.rsplit(".", 1)[1]:
            continue
        if public not in chosen or _rank(private) > _rank(chosen[public]):
            chosen[public] = private
    return chosen


def _rank(private: str) -> tuple:
    """Reached by attributes first, then the module torch defines the object in
    (``torch.optim.adam.Adam``, not ``torch.optim.adamw.Adam``, which imports it), then
    the longest."""
    return (_reached(private), _defined_in(private), len(private), private)


def _defined_in(dotted: str) -> bool:
    """The object the path names says it is defined in the path's module."""
    import importlib

    module, name = dotted.rsplit(".", 1)
    try:
        value = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return False
    return getattr(value, "__module__", None) == module


def _reached(dotted: str) -> bool:
    import torch

    value = torch
    for part in dotted.split(".")[1:]:
        value = getattr(value, part, None)
    return value is not None


def _spellings(api: str, header: str) -> list[str]:
    """How a case's code may spell the entry: its name, through the header's module aliases,
    or the bare name the header imports from the entry's module."""
    out = [api]
    for alias, module in form_coverage.HEADER_ALIASES.items():
        if api.startswith(module + ".") and alias != module:
            out.append(alias + api[len(module):])
    module, name = api.rsplit(".", 1)
    out += [alias.asname or alias.name for node in ast.walk(ast.parse(header)) if isinstance(node, ast.ImportFrom)
            and node.module == module for alias in node.names if alias.name == name]
    return out


def respelled(code: str, api: str, private: str, header: str = "") -> str | None:
    """``code`` with every call of ``api`` by its public spelling, and every class statement
    deriving from it (``class Squares(Dataset):``), made through ``private`` (dotted where
    attributes reach it, else by the name ``from`` imports: the caller puts the import
    before the code); None when the code uses it no such way."""
    spelled = private if _reached(private) else private.rsplit(".", 1)[1]
    pattern = "|".join(re.escape(s) for s in sorted(_spellings(api, header), key=len, reverse=True))
    new, calls = re.subn(rf"(?<![\w.])(?:{pattern})(?=\s*\()", spelled, code)
    new, bases = re.subn(rf"(\bclass\s+\w+\s*\((?:[^()]*,\s*)?)(?:{pattern})(?=\s*[,)])",
                         lambda m: m.group(1) + spelled, new)
    return new if calls or bases else None


def import_of(private: str) -> str:
    """The statement a respelled code needs first ('' for a dotted spelling)."""
    module, name = private.rsplit(".", 1)
    return "" if _reached(private) else f"from {module} import {name}"


def with_import(code: str, statement: str) -> str:
    """A case's code (an expression, or statements) with ``statement`` run first."""
    if not statement:
        return code
    text = code.strip("\n")
    statements = "\n" in text or re.match(r"\s*(return|raise)\b", text)
    return f"{statement}\n    " + (text if statements else f"return {text}")
