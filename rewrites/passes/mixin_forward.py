"""MS219: ``self.forward`` in a class that is no Module -> ``_torch_forward(self)``.

A class mixed into Modules (transformers' ``GenerationMixin``, a base of every model
beside ``nn.Module``) reads ``self.forward`` as a value: ``inspect.signature(self.forward)``
to learn which arguments the model takes. Its file defines no Module, so MS101 has no
reason to say ``construct``; the converted model, a Cell, has no ``forward`` and the read
raises AttributeError. The helper (runtime/layer_terms.py) gives ``forward`` where the
object has one and the Cell's ``construct`` otherwise. Only on ``self``, in a method of a
class of the file that is no Module (as far as the tree's index tells) and neither
defines nor sets ``forward`` itself.

A function's parameter is handled alike where MS101 leaves its ``.forward`` (a function
written before the file's first Module class, which wraps a module handed to it:
torchnlp's ``_weight_drop(module, ...)``): the read is ``_torch_forward(module)``, and
replacing it, ``setattr(module, "forward", f)`` or ``module.forward = f``, is
``_torch_set_forward(module, f)``, which replaces a Cell's ``construct`` (what a Cell's
call runs) and any other object's ``forward``.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..analysis.layer_types import Instance, index_place
from ..runtime.registry import runtime_helper
from ..syntax import code

HELPER = "_torch_forward"
SETTER = "_torch_set_forward"


class MixinForward(Pass):
    id = "MS219"
    name = "mixin-forward"
    reads = frozenset({"layer_types"})
    summary = "self.forward in a class mixed into Modules -> _torch_forward(self) (a Cell's forward is construct)."
    runs_after = {
        "MS101": "a forward MS101 renames construct (a Module class's, a parameter annotated type[nn.Module]) is left",
    }
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

    def __init__(self, ctx):
        super().__init__(ctx)
        self._written: set[int] = set()  # ids of attributes assigned to or deleted

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._written.add(id(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        self._written.add(id(node.target))

    def _parameter(self, receiver: cst.BaseExpression) -> bool:
        """``receiver`` is a parameter (not ``self``/``cls``) of the innermost open function."""
        if type(receiver) is not cst.Name or receiver.value in ("self", "cls"):
            return False
        for scope in reversed(self.ctx.open_scopes):
            if type(scope) is cst.FunctionDef:
                params = scope.params
                return any(p.name.value == receiver.value
                           for p in (*params.posonly_params, *params.params, *params.kwonly_params))
        return False

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        """``module.forward = f`` on a function's parameter -> ``_torch_set_forward(module, f)``."""
        if len(original.targets) != 1:
            return updated
        target, new = original.targets[0].target, updated.targets[0].target
        if not (type(target) is cst.Attribute and target.attr.value == "forward" and type(new) is cst.Attribute
                and new.attr.value == "forward" and self._parameter(target.value)):
            return updated
        return cst.Expr(self._setter(original, new.value, updated.value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        """``setattr(module, "forward", f)`` on a function's parameter -> ``_torch_set_forward(module, f)``."""
        func, args = original.func, original.args
        if not (type(func) is cst.Name and func.value == "setattr" and func.value not in self.ctx.imports.bindings
                and len(args) == 3 and not any(a.keyword or a.star for a in args)
                and type(args[1].value) is cst.SimpleString and args[1].value.evaluated_value == "forward"
                and self._parameter(args[0].value)):
            return updated
        return self._setter(original, updated.args[0].value, updated.args[2].value)

    def _setter(self, original: cst.CSTNode, receiver: cst.BaseExpression, value: cst.BaseExpression) -> cst.Call:
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{code(receiver)}.forward replaced: a Cell runs its construct; "
                        f"{SETTER} replaces that on a Cell, forward on anything else", Severity.INFO)
        return cst.Call(runtime_helper(self.ctx, SETTER), [cst.Arg(receiver), cst.Arg(value)])

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value != "forward" or type(updated) is not cst.Attribute or updated.attr.value != "forward":
            return updated  # (MS101 renamed it construct)
        if id(original) not in self._written and self._parameter(original.value):
            self.ctx.count_converted()
            self.ctx.report(original, self.id, f"{code(original.value)}.forward of a function's parameter: a Cell has "
                            f"construct instead ({HELPER})", Severity.INFO)
            return cst.Call(runtime_helper(self.ctx, HELPER), [cst.Arg(updated.value)])
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
