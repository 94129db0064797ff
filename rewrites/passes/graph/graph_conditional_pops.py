"""MS318: ``y = xs.pop(0) if xs else None`` in compiled code -> an if statement.

GRAPH_MODE (MindSpore 2.10) compiles a pop in a branch of a conditional expression into
the pair (the list after the pop, the item): ``y = mems.pop(0) if mems else None`` binds
``y`` to ``([None], None)``, not ``None``, without an error. x-transformers' layer loop does
so for its memories; the tuple then fails far from the cause ("'Tuple' object has no
attribute 'mean'"), or is used as a value. The same pop as a statement of its own compiles
to what Python computes, so an assignment or a return whose value is such an expression
becomes the if statement Python runs::

    y = xs.pop(0) if xs else None   ->   if xs:
                                             y = xs.pop(0)
                                         else:
                                             y = None

The condition is evaluated once and first, then one branch, as before, and the targets are
bound after the value, as before: the same in every mode. A branch that is itself such an
expression becomes an if statement in its turn. Only statements of their own (one on the
line); a conditional expression deeper in a larger one stays, and the lint reports it (MS512).
Applies in compiled code.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass


class GraphConditionalPops(Pass):
    id = "MS318"
    name = "graph-ifexp-pops"
    summary = ("y = xs.pop() if c else d in compiled code -> an if statement (GRAPH_MODE gives the branch's pop "
               "as a pair (list, item)).")
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x, mems):\n"
            "        m = mems.pop(0) if mems else None\n        return x, m\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x, mems):\n"
            "        if mems:\n            m = mems.pop(0)\n        else:\n            m = None\n        return x, m\n",
        ),
    )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        if not self.ctx.compiled or not isinstance(updated, cst.SimpleStatementLine) \
                or len(original.body) != 1 or len(updated.body) != 1:
            return updated
        statement = updated.body[0]
        if type(statement) not in (cst.Assign, cst.Return) or not pops_in_branch(statement.value):
            return updated
        self.ctx.report(original, self.id, "a pop in a branch of a conditional expression: GRAPH_MODE gives it as "
                        "the pair (list, item); written as an if statement", Severity.INFO)
        branch = _as_if(statement)
        # the line's comment goes after ``if c:``
        return branch.with_changes(leading_lines=updated.leading_lines,
                                   body=branch.body.with_changes(header=updated.trailing_whitespace))


def rewritten_conditionals(line: cst.SimpleStatementLine) -> list[cst.IfExp]:
    """The conditional expressions of ``line`` this pass writes as if statements: the value
    of a lone assignment or return, and the branches of it that are such expressions in
    their turn (the lint reports a pop in any other one: MS512)."""
    if len(line.body) != 1 or type(line.body[0]) not in (cst.Assign, cst.Return):
        return []
    found, value = [], line.body[0].value
    pending = [value] if pops_in_branch(value) else []
    while pending:
        value = pending.pop()
        found.append(value)
        pending.extend(v for v in (value.body, value.orelse) if pops_in_branch(v))
    return found


def pops_in_branch(value) -> bool:
    """``value`` is ``a if c else b`` with a ``.pop(...)`` call in ``a`` or ``b``."""
    return type(value) is cst.IfExp and (_has_pop(value.body) or _has_pop(value.orelse))


def _has_pop(node: cst.CSTNode) -> bool:
    finder = _PopCalls()
    node.visit(finder)
    return finder.found


class _PopCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        if type(node.func) is cst.Attribute and node.func.attr.value == "pop":
            self.found = True
        return not self.found


def _with_value(statement, value):
    return statement.with_changes(value=value, semicolon=cst.MaybeSentinel.DEFAULT)


def _as_if(statement) -> cst.If:
    """``statement`` (an Assign or a Return of ``a if c else b``) as ``if c: <a> else: <b>``,
    a branch that is such an expression with a pop nested in its turn."""
    value = statement.value

    def arm(branch_value):
        inner = _with_value(statement, branch_value)
        if pops_in_branch(branch_value):
            return cst.IndentedBlock(body=[_as_if(inner)])
        return cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[inner])])

    test = value.test
    if test.lpar and test.rpar:  # if (c): reads as if c:
        test = test.with_changes(lpar=[], rpar=[])
    return cst.If(test=test, body=arm(value.body), orelse=cst.Else(body=arm(value.orelse)))

