"""MS321: ``callable(v)`` in compiled code -> ``not isinstance(v, Tensor) and callable(v)``.

GRAPH_MODE (MindSpore 2.10) computes ``callable(tensor)`` as False, but only when the graph
runs: the branch that calls the value is compiled all the same, and a tensor cannot be
called ("The object is not callable"). x-transformers' ``default(val, d)``, ``d() if
callable(d) else d``, is given tensors so in every attention layer. ``isinstance`` is known
when the graph is compiled, so ``not isinstance(v, Tensor) and callable(v)`` drops the call
of a tensor there; a MindSpore tensor is never callable, so the value is the same in every
mode. ``inspect.isfunction(v)`` is the same question (alphadev's x-transformers copy: ``d() if
isfunction(d) else d``): no tensor is a function (GRAPH_MODE still asks isfunction of a
lambda in Python, without the function's locals: "KeyError: 'd'"). Only of a plain name
(read twice: a name has no side effect), ``callable`` the builtin (not a local or an import
of that name), in compiled code and in the module's functions compiled methods call by name
(``default`` is one).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...syntax import code
from .called_by_compiled import CompiledOrCalled

# functions of the inspect module that answer False on a tensor, like callable() on a MindSpore tensor
QUESTIONS = frozenset({"inspect.isfunction"})


class GraphCallable(CompiledOrCalled, Pass):
    id = "MS321"
    name = "graph-callable"
    reads = frozenset({"compiled_callees", "forward_helpers", "submodule_helpers", "names"})
    summary = "callable(v) in compiled code -> not isinstance(v, Tensor) and callable(v) (GRAPH_MODE compiles the call of a tensor)."
    examples = (
        Example(
            "import torch.nn as nn\ndef default(v, d):\n    return d() if callable(d) else d\n"
            "class M(nn.Module):\n    def forward(self, x):\n        return default(None, x)\n",
            "import mindspore.nn as nn\nimport mindspore as ms\ndef default(v, d):\n"
            "    return d() if (not isinstance(d, ms.Tensor) and callable(d)) else d\n"
            "class M(nn.Cell):\n    def construct(self, x):\n        return default(None, x)\n",
        ),
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not (len(original.args) == 1 and type(original.args[0].value) is cst.Name and not original.args[0].star
                and original.args[0].keyword is None and self._question(original.func)):
            return updated
        fn = self.ctx.current_function
        if fn is None or not self._compiled():
            return updated
        if type(original.func) is cst.Name and original.func.value == "callable" and "callable" in self.facts.names.stored(fn):
            return updated
        value = updated.args[0].value
        self.ctx.report(original, self.id, f"{code(original.func)}({value.value}) is known when the graph runs, too late "
                        "to drop the call of a tensor: isinstance of Tensor first (GRAPH_MODE)", Severity.INFO)
        tensor = cst.Call(func=cst.Name("isinstance"), args=[cst.Arg(value), cst.Arg(self.ctx.reference("mindspore.Tensor"))])
        return cst.BooleanOperation(
            left=cst.UnaryOperation(operator=cst.Not(), expression=tensor), operator=cst.And(), right=updated,
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    def _question(self, func: cst.BaseExpression) -> bool:
        """The builtin ``callable`` (not a local or an import of that name), or
        ``inspect.isfunction`` however imported."""
        if type(func) is cst.Name and func.value == "callable":
            return "callable" not in self.ctx.imports.bindings
        return type(func) in (cst.Name, cst.Attribute) and self.ctx.imports.qualify(func) in QUESTIONS
