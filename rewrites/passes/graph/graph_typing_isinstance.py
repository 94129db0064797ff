"""MS327: ``isinstance(x, Tuple)`` of ``typing.Tuple`` in compiled code -> ``isinstance(x, tuple)``.

GRAPH_MODE (MindSpore 2.10) folds ``isinstance`` on builtin types and refuses a ``typing``
alias: "TypeError: isinstance() arg 2 must be a type or tuple of types" (prosper-nn's ECNN
cell: ``if isinstance(state, Tuple):`` to tell an LSTM's (h, c) from a tensor). Python
answers ``isinstance(x, typing.Tuple)`` as ``isinstance(x, tuple)``, so the builtin the
alias stands for (Tuple, List, Dict, Set, FrozenSet, Type) is written instead, in every
mode, in compiled code (forward, construct, what they call on ``self``) and in the module's
functions those call by name; also inside a tuple of types (``isinstance(x, (List, Tuple))``).
A subscripted alias (``Tuple[int, int]``) is refused by Python itself and left.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from .called_by_compiled import CompiledOrCalled

BUILTINS = {"typing.Tuple": "tuple", "typing.List": "list", "typing.Dict": "dict", "typing.Set": "set",
            "typing.FrozenSet": "frozenset", "typing.Type": "type"}


class GraphTypingIsinstance(CompiledOrCalled, Pass):
    id = "MS327"
    name = "graph-isinstance"
    reads = frozenset({"compiled_callees", "forward_helpers", "submodule_helpers"})
    summary = "isinstance(x, typing.Tuple) in compiled code -> isinstance(x, tuple) (GRAPH_MODE refuses a typing alias there)."
    examples = (
        Example(
            "from typing import Tuple\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, state):\n"
            "        if isinstance(state, Tuple):\n            state = state[0]\n        return state\n",
            "from typing import Tuple\nimport mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, state):\n"
            "        if isinstance(state, tuple):\n            state = state[0]\n        return state\n",
        ),
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not (type(original.func) is cst.Name and original.func.value == "isinstance" and len(updated.args) == 2):
            return updated
        if not self._compiled():
            return updated
        kinds = updated.args[1].value
        if isinstance(kinds, cst.Tuple):
            elements = [e.with_changes(value=self._builtin(e.value) or e.value) if isinstance(e, cst.Element) else e
                        for e in kinds.elements]
            if all(a is b for a, b in zip(elements, kinds.elements)):
                return updated
            new = kinds.with_changes(elements=elements)
        else:
            new = self._builtin(kinds)
            if new is None:
                return updated
        self.ctx.report(original, self.id, "isinstance() of a typing alias is isinstance() of the builtin it stands "
                        "for: GRAPH_MODE refuses the alias", Severity.INFO)
        return updated.with_changes(args=[updated.args[0], updated.args[1].with_changes(value=new)])

    def _builtin(self, node: cst.BaseExpression) -> cst.Name | None:
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        builtin = BUILTINS.get(self.ctx.imports.qualify(node) or "")
        return cst.Name(builtin) if builtin else None
