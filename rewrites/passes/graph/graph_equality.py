"""MS334: ``self.<...> == <number or string>`` (and ``!=``) in compiled code ->
``_py_equal(self.<...>, literal)``, which GRAPH_MODE folds to the constant Python gives.

Python's ``[1] == 1`` is False; GRAPH_MODE (MindSpore 2.10, CPU) computes the same value, but
only when the graph runs: a list (or dict) compared with a value of another kind is no
constant, so an ``if`` on it compiles both arms, and the arm Python never takes must compile
too. efficientnet_pytorch keeps a block's stride as a list (``BlockArgs(stride=[1])``) and
tests ``if self.id_skip and self._block_args.stride == 1 and input_filters == output_filters``:
GRAPH_MODE compiled the skip connection of a block whose channels differ and failed ("For
'Add', input1.shape and input2.shape need to broadcast"). Measured as constants on 2.10:
``[1] == 1``, ``1 == [1]``, ``[1] == (1,)``, ``{1: 2} == 1`` (and their ``!=``) are not folded;
numbers, strings, None, tuples and lists of the same kind are.

The values a class keeps on ``self`` (configuration read in construct) are the operands
that may be lists; compared with a number or a string literal, Python's answer is known
from the value's kind alone, which a graph knows when it compiles::

    def _py_equal(value, literal):
        if isinstance(value, (list, dict)):
            return False
        return value == literal

It gives what ``==`` gives for every value (a tensor compared elementwise as before), so the
rewrite needs no type: ``!=`` is ``not _py_equal(...)``. Other comparisons (a local, two
attributes, chained comparisons) are left.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...runtime.registry import runtime_helper
from ...syntax import self_chain

HELPER = "_py_equal"
LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


class GraphEquality(Pass):
    id = "MS334"
    name = "graph-equality"
    summary = ("self.<attribute> == <number or string> in compiled code -> _py_equal(...): GRAPH_MODE "
               "compares a list with a number only at run time and compiles both arms of an if.")
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        if self.args.stride == 1:\n            x = x * 2\n        return x\n",
            'import mindspore.nn as nn\n\n\ndef _py_equal(value, literal):\n'
            '    """value == literal, a number or string (transpile MS334): a list or dict never equals\n'
            '    one, which GRAPH_MODE knows only at run time (``[1] == 1``), compiling both arms of an if.\n'
            '    """\n'
            "    if isinstance(value, (list, dict)):\n        return False\n    return value == literal\n\n\n"
            "class M(nn.Cell):\n    def construct(self, x):\n"
            "        if _py_equal(self.args.stride, 1):\n            x = x * 2\n        return x\n",
        ),
    )

    def leave_Comparison(self, original: cst.Comparison, updated):
        if not self.ctx.compiled or not isinstance(updated, cst.Comparison) or len(updated.comparisons) != 1:
            return updated
        operator = updated.comparisons[0].operator
        if not isinstance(operator, (cst.Equal, cst.NotEqual)):
            return updated
        left, right = updated.left, updated.comparisons[0].comparator
        if _literal(right) and self_chain(left):
            value, literal = left, right
        elif _literal(left) and self_chain(right):
            value, literal = right, left
        else:
            return updated
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, f"== between an attribute of self and a literal is {HELPER}(...): "
                            "GRAPH_MODE compares a list with a number only at run time, compiling both arms of an if",
                            Severity.INFO)
        call = cst.Call(func=runtime_helper(self.ctx, HELPER), args=[cst.Arg(value), cst.Arg(literal)])
        result = call if isinstance(operator, cst.Equal) else cst.UnaryOperation(cst.Not(), call)
        return result.with_changes(lpar=updated.lpar, rpar=updated.rpar)


def _literal(expr: cst.BaseExpression) -> bool:
    """A number or a string written out (``1``, ``-0.5``, ``'relu'``)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, LITERALS)

