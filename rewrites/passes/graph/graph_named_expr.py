"""MS317: an assignment expression (``:=``) evaluated first in its statement -> an
assignment of its own just before the statement.

GRAPH_MODE (MindSpore 2.10) compiles no assignment expression ("Unsupported expression
'NamedExpr'"): transformers' ``prepare_padding_mask``, which every attention mask goes
through from forward, tests ``if (padding_length := kv_length + kv_offset -
attention_mask.shape[-1]) > 0:``. Where the walrus is what its statement evaluates first
(the test or value itself, or the left operand of a comparison, ``and``/``or``, an
arithmetic or ``not``, the receiver of an attribute or subscript, the first argument of a
call of a name), the statement runs exactly as before with the value bound first::

    if (n := k - x.shape[-1]) > 0:       ->   n = k - x.shape[-1]
        ...                                   if n > 0:

Taken from ``if`` tests (not ``elif``: its test runs only when the tests before it fail)
and from simple statements (assignments, ``return``, expression statements), in every
function: which functions forward reaches, from another file too, is not known here (as
MS305). Elsewhere (``while`` tests, comprehensions, the right of ``and``, ``elif``) the
walrus is left.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

_STATEMENTS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)
_LEFT_OPERAND = {cst.Comparison: "left", cst.BooleanOperation: "left", cst.BinaryOperation: "left",
                 cst.UnaryOperation: "expression", cst.Attribute: "value", cst.Subscript: "value"}


def first_walrus(expr: cst.BaseExpression | None) -> cst.NamedExpr | None:
    """The assignment expression ``expr`` evaluates before anything else that may have an
    effect, if there is one."""
    while expr is not None:
        kind = type(expr)
        if kind is cst.NamedExpr:
            return expr if type(expr.target) is cst.Name else None
        if kind in _LEFT_OPERAND:
            expr = getattr(expr, _LEFT_OPERAND[kind])
        elif (kind is cst.Call and expr.args and expr.args[0].keyword is None and not expr.args[0].star
              and _dotted(expr.func)):
            expr = expr.args[0].value
        else:
            return None
    return None


def _dotted(expr: cst.BaseExpression) -> bool:
    while type(expr) is cst.Attribute:
        expr = expr.value
    return type(expr) is cst.Name


class GraphNamedExpr(Pass):
    id = "MS317"
    name = "graph-named-expr"
    summary = "if (n := e) > 0: -> n = e; if n > 0: (GRAPH_MODE compiles no assignment expression)."
    examples = (
        Example(
            "import torch\nimport torch.nn.functional as F\n"
            "def pad_to(x, n):\n    if (missing := n - x.shape[-1]) > 0:\n        x = F.pad(x, (0, missing))\n"
            "    return x\n",
            "import mindspore.ops as F\n"
            "def pad_to(x, n):\n    missing = n - x.shape[-1]\n    if missing > 0:\n"
            "        x = F.pad(input_x=x, padding=(0, missing))\n    return x\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._open: list[bool] = []  # per open statement: whether its first walrus is taken out
        self._elifs: set[int] = set()  # ids of the If nodes that are elif clauses

    def _enter(self, expr: cst.BaseExpression | None) -> None:
        walrus = first_walrus(expr) if self.ctx.current_function is not None else None
        self._open.append(walrus is not None)
        if walrus is not None:
            self.ctx.report(walrus, self.id, f"{walrus.target.value} := ... is assigned before its statement "
                            "(GRAPH_MODE compiles no assignment expression)", Severity.INFO)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._enter(_value(node))

    def leave_SimpleStatementLine(self, original, updated):
        if not self._open.pop() or type(updated) is not cst.SimpleStatementLine:
            return updated
        return self._hoisted(updated, _value(updated))

    def visit_If(self, node: cst.If) -> None:
        if type(node.orelse) is cst.If:
            self._elifs.add(id(node.orelse))
        self._enter(None if id(node) in self._elifs else node.test)

    def leave_If(self, original: cst.If, updated: cst.If):
        self._elifs.discard(id(original))
        if not self._open.pop() or type(updated) is not cst.If:
            return updated
        return self._hoisted(updated, updated.test)

    @staticmethod
    def _hoisted(statement, expr):
        """``name = value`` of the statement's first walrus, then the statement reading ``name``
        in its place (found again in the converted statement: its value converted)."""
        walrus = first_walrus(expr)
        if walrus is None:  # another pass rewrote that part
            return statement
        name = walrus.target.value
        bound = cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=walrus.value)],
                                        leading_lines=statement.leading_lines)
        rest = statement.with_changes(leading_lines=()).deep_replace(walrus, cst.Name(name))
        return cst.FlattenSentinel([bound, rest])


def _value(line: cst.SimpleStatementLine) -> cst.BaseExpression | None:
    """The expression a one-statement line evaluates first (an assignment's value, ...)."""
    if len(line.body) == 1 and type(line.body[0]) in _STATEMENTS:
        return line.body[0].value
    return None
