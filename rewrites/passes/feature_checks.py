"""MS216: feature detection on torch modules, answered as torch answers it.

Model code tests what its torch offers before it uses it::

    self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
    if not self.flash:
        self.register_buffer("bias", torch.tril(torch.ones(n, n)))

Once the module is converted, the question is asked of MindSpore's module
(``hasattr(ops, "scaled_dot_product_attention")`` is False in 2.10): the converted model
silently takes the other branch, with other parameters and buffers than torch's. The
torch model took the branch of a torch that has the name, so where the tables convert
``module.name`` (a function, a class or a module), ``hasattr(module, "name")`` becomes
``True``: the converted code keeps torch's branch, whose calls are converted. Where they
do not (no entry, or one that is unsupported), the check is left and marked: MindSpore's
module answers it, maybe otherwise than torch. ``getattr(module, "name", default)`` is
marked too: it hands back MindSpore's object (or the default), whose arguments may differ
from torch's. (``getattr(module, "name")`` without a default is the name used as a value:
MS205 converts it.)

Packages ask the same of the installed torch by name before they import it
(``importlib.util.find_spec("torch")``, ``importlib.metadata.version(name)`` in a helper its
``is_torch_available()`` calls with ``"torch"``). Asked as written, the converted package finds
no torch where MindSpore alone is installed and hides the code the conversion made
(transformers' GenerationMixin), or, beside a torch, answers for a framework its converted code
does not run on. A call of such a query (``feature_checks.toml``) whose name is ``"torch"``
or not a literal goes to a run-time helper (``runtime/packages.py``) that answers for torch
with MindSpore: its spec, and as its version the torch whose API the tables map. A call
naming another package as a literal is left.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..runtime.registry import runtime_helper
from ..syntax import code, literal_value
from ..table_calls import tables

CHECKS = ("hasattr", "getattr")
# a query of an installed package by name -> the run-time helper answering it for the converted code
PACKAGE_QUERIES: dict[str, str] = tomllib.loads(
    Path(__file__).with_suffix(".toml").read_text(encoding="utf-8"))["package_queries"]


class FeatureChecks(Pass):
    id = "MS216"
    name = "feature-checks"
    summary = ("hasattr(torch module, 'name') is True where the tables convert the name (torch's branch kept); "
               "other feature checks of torch modules are marked.")
    examples = (
        Example(
            "import torch.nn.functional as F\nflash = hasattr(F, 'scaled_dot_product_attention')\n",
            "flash = True\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()

    def _check(self, call: cst.Call):
        """(check, qualified torch name) of ``hasattr(torch_module, "name")`` or
        ``getattr(torch_module, "name", default)``; else None."""
        func = call.func
        if not (isinstance(func, cst.Name) and func.value in CHECKS and func.value not in self.ctx.imports.bindings):
            return None
        args = call.args
        if len(args) != (2 if func.value == "hasattr" else 3) or any(a.keyword or a.star for a in args):
            return None
        module = self.ctx.imports.qualify(args[0].value)
        name = literal_value(args[1].value)
        if module is None or module.split(".")[0] not in self.ctx.source_roots or not isinstance(name, str):
            return None
        return func.value, f"{module}.{name}"

    def _converted(self, qualname: str) -> bool:
        """Whether the tables convert ``qualname``: its entry, or (a module: ``torch.fft``)
        an entry of a name in it."""
        if qualname in self.tables.modules:
            return True
        entry = self.tables.lookup(qualname)
        if entry is not None:
            return not entry.unsupported
        inside = qualname + "."
        return any(k.startswith(inside) and not e.unsupported for k, e in self.tables.entries.items())

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        found = self._check(original)
        if found is None:
            return self._package_query(original, updated)
        check, qualname = found
        if check == "hasattr" and self._converted(qualname):
            self.ctx.report(original, self.id, f"{code(original)}: True, as in torch ({qualname} is converted): "
                            "the converted code keeps torch's branch", Severity.INFO)
            return cst.Name("True")
        why = (f"{qualname} has no MindSpore conversion" if not self._converted(qualname)
               else "it hands back MindSpore's object (or the default), whose arguments may differ from torch's")
        self.ctx.mark(original, self.id, f"{check}() of a torch module, now asked of MindSpore's: {why}")
        return updated

    def _package_query(self, original: cst.Call, updated: cst.Call):
        """``find_spec(name)`` / ``version(name)`` whose name may be torch's -> the helper
        that answers for torch with MindSpore (the package named by another literal: left)."""
        if not original.args or original.args[0].star or original.args[0].keyword:
            return updated
        qual = self.ctx.imports.qualify(original.func)
        helper = PACKAGE_QUERIES.get(qual) if qual is not None else None
        if helper is None:
            return updated
        name = literal_value(original.args[0].value)
        if isinstance(name, str) and name not in self.ctx.source_roots:
            return updated
        if isinstance(name, str):
            self.ctx.count_converted()
        if helper not in self.ctx.definitions:
            self.ctx.report(original, self.id, f"{qual}() may ask about torch: {helper} answers for it with "
                            "MindSpore, which the converted code runs on", Severity.INFO)
        return updated.with_changes(func=runtime_helper(self.ctx, helper))
