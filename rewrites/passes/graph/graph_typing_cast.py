"""MS331: ``typing.cast(T, v)`` in compiled code -> ``v``.

``typing.cast`` returns its second argument unchanged: it only tells a type checker what
the value is. GRAPH_MODE (MindSpore 2.10) does not know the function and runs it in Python
while it compiles construct (its JIT fallback), evaluating the call's source text without
the module's names: openelm's ``layer = cast(TransformerDecoderLayer, layer)`` over its
layers failed with "NameError: name 'TransformerDecoderLayer' is not defined". The value
itself is what the call gives, in every mode::

    layer = cast(TransformerDecoderLayer, layer)   ->   layer = layer

Only calls of a name the file's imports bind to ``typing.cast`` (``from typing import
cast``, ``typing.cast``, ``import typing as t``) with two arguments by position, in
compiled code (forward, construct, what they call on ``self``) and in the module's
functions those call by name. The type argument is dropped unevaluated: a type expression
has no effect a program relies on.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from .called_by_compiled import CompiledOrCalled

ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer, cst.Float)


class GraphTypingCast(CompiledOrCalled, Pass):
    id = "MS331"
    name = "graph-typing-cast"
    reads = frozenset({"compiled_callees", "forward_helpers", "submodule_helpers"})
    summary = "typing.cast(T, v) in compiled code -> v (GRAPH_MODE runs cast in Python without the module's names)."
    examples = (
        Example(
            "from typing import cast\nimport torch.nn as nn\nclass M(nn.Module):\n"
            "    def forward(self, x):\n        return cast(nn.Module, self.f)(x)\n",
            "from typing import cast\nimport mindspore.nn as nn\nclass M(nn.Cell):\n"
            "    def construct(self, x):\n        return self.f(x)\n",
        ),
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if type(original.func) not in (cst.Name, cst.Attribute) or self.ctx.imports.qualify(original.func) != "typing.cast":
            return updated
        if len(updated.args) != 2 or any(a.keyword is not None or a.star for a in updated.args):
            return updated
        if not self._compiled():
            return updated
        self.ctx.report(original, self.id, "typing.cast(T, v) is v: GRAPH_MODE runs cast in Python while compiling, "
                        "without the module's names", Severity.INFO)
        value = updated.args[1].value
        if not value.lpar and not isinstance(value, ATOMS):  # cast(T, a + b) * 2 -> (a + b) * 2
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return value
