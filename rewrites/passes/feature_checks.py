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
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..syntax import code, literal_value
from ..table_calls import tables

CHECKS = ("hasattr", "getattr")


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
            return updated
        check, qualname = found
        if check == "hasattr" and self._converted(qualname):
            self.ctx.report(original, self.id, f"{code(original)}: True, as in torch ({qualname} is converted): "
                            "the converted code keeps torch's branch", Severity.INFO)
            return cst.Name("True")
        why = (f"{qualname} has no MindSpore conversion" if not self._converted(qualname)
               else "it hands back MindSpore's object (or the default), whose arguments may differ from torch's")
        self.ctx.mark(original, self.id, f"{check}() of a torch module, now asked of MindSpore's: {why}")
        return updated
