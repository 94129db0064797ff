"""MS309: ``x in {a, b}`` in construct -> ``x in (a, b)`` for a set of literals.

GRAPH_MODE compiles no set expression: ``assert condition.ndim in {2, 3}`` in
x-transformers' forward fails with "Unsupported syntax 'Set'" ("a set expression in
construct"). Only the right operand of ``in`` / ``not in`` is rewritten, and only when
every element is a literal (numbers, strings, True/False/None, a negated number): for
those, membership in the tuple and in the set are the same for every left operand
whose hash agrees with its equality (a tuple also accepts an unhashable left operand,
where the set raises TypeError). The rule applies in forward/construct, the methods it
calls on ``self`` and functions nested in them; other code keeps its sets.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass



class GraphSetLiterals(Pass):
    id = "MS309"
    name = "graph-set-literals"
    summary = "x in {literals} in construct -> x in (literals) (GRAPH_MODE compiles no set expression)."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        assert x.ndim in {2, 3}\n        return x\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        assert x.ndim in (2, 3)\n        return x\n",
        ),
    )

    def leave_ComparisonTarget(self, original: cst.ComparisonTarget, updated):
        if not self.ctx.compiled or not isinstance(original.operator, (cst.In, cst.NotIn)):
            return updated
        if not isinstance(updated, cst.ComparisonTarget):
            return updated
        value = updated.comparator
        if not (isinstance(value, cst.Set) and value.elements and all(_literal(e) for e in value.elements)):
            return updated
        self.ctx.report(original, self.id, "x in {...} in construct is x in (...): GRAPH_MODE compiles no set "
                        "expression", Severity.INFO)
        elements = list(value.elements)
        if len(elements) == 1:
            elements[0] = elements[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace("")))
        lpar = value.lpar[0] if value.lpar else cst.LeftParen()
        rpar = value.rpar[-1] if value.rpar else cst.RightParen()
        return updated.with_changes(comparator=cst.Tuple(elements=elements, lpar=[lpar], rpar=[rpar]))


def _literal(element: cst.BaseElement) -> bool:
    if not isinstance(element, cst.Element):  # *starred
        return False
    value = element.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
        return isinstance(value, (cst.Integer, cst.Float, cst.Imaginary))
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None")
    return isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString))
