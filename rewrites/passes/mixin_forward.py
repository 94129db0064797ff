"""MS219: ``self.forward`` in a class that is no Module -> ``_torch_forward(self)``.

A class mixed into Modules (transformers' ``GenerationMixin``, a base of every model
beside ``nn.Module``) reads ``self.forward`` as a value: ``inspect.signature(self.forward)``
to learn which arguments the model takes. Its file defines no Module, so MS101 has no
reason to say ``construct``; the converted model, a Cell, has no ``forward`` and the read
raises AttributeError. The helper (runtime/layer_terms.py) gives ``forward`` where the
object has one and the Cell's ``construct`` otherwise. Only on ``self``, in a method of a
class of the file that is no Module (as far as the tree's index tells) and neither
defines nor sets ``forward`` itself.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..analysis.layer_types import Instance, index_place
from ..runtime.registry import runtime_helper

HELPER = "_torch_forward"


class MixinForward(Pass):
    id = "MS219"
    name = "mixin-forward"
    reads = frozenset({"layer_types"})
    summary = "self.forward in a class mixed into Modules -> _torch_forward(self) (a Cell's forward is construct)."
    examples = (
        Example(
            "import inspect\nimport torch\nclass GenerationMixin:\n    def accepts(self, name):\n"
            "        return name in inspect.signature(self.forward).parameters\n",
            "import inspect\n\n\ndef _torch_forward(obj):\n"
            '    """``obj.forward`` as torch code reads it in a class mixed into Modules (transformers\'\n'
            "    GenerationMixin: ``inspect.signature(self.forward)``): a converted Cell has no forward,\n"
            '    its construct is that method (transpile MS219)."""\n'
            '    forward = getattr(obj, "forward", None)\n    return forward if forward is not None else obj.construct\n\n\n'
            "class GenerationMixin:\n    def accepts(self, name):\n"
            "        return name in inspect.signature(_torch_forward(self)).parameters\n",
        ),
    )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value != "forward" or type(updated) is not cst.Attribute or updated.attr.value != "forward":
            return updated  # (MS101 renamed it construct)
        if type(original.value) is not cst.Name or original.value.value != "self":
            return updated
        types = self.facts.layer_types()
        owner = index_place(self.ctx.open_scopes, types.index)[1]
        info = types.index.classes.get(owner) if owner is not None else None
        if info is None or "forward" in info.methods or "forward" in info.attributes or types.module_value(Instance(owner)):
            return updated
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, "self.forward in a class that is no Module: a Cell mixing it in has "
                            f"construct instead ({HELPER})", Severity.INFO)
        return cst.Call(runtime_helper(self.ctx, HELPER), [cst.Arg(updated.value)])
