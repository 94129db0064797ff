"""MS312: ``del`` in construct: GRAPH_MODE compiles no del statement.

MindSpore 2.10 refuses the whole construct ("Unsupported statement 'Delete'"), as in the
U-Nets of denoising-diffusion that free a skip tensor with ``del h``. A ``del`` of local
names only unbinds them: a program that runs never reads them again, and a graph frees
what it no longer uses, so the statement goes (a block it empties, or a line with a
comment, keeps a ``pass``). ``del xs[i]`` on a list of the function is ``xs.pop(i)``
(MONAI's VQ-VAE drops an axis from a shape list so). A ``del`` of an attribute or another
item (``del self.cache``, ``del d[k]``) changes state the graph cannot change: it stays,
with a warning on its line. Applies in forward/construct
and what it calls (compiled code); elsewhere ``del`` runs as Python.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass


class GraphDel(Pass):
    id = "MS312"
    name = "graph-del"
    reads = frozenset({"list_names"})
    summary = "del of local names in construct is removed (GRAPH_MODE compiles no del statement); any other del is a warning."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        h = x + 1\n        y = h * 2\n        del h\n        return y\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        h = x + 1\n        y = h * 2\n        return y\n",
        ),
    )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        if not self.ctx.compiled or not isinstance(updated, cst.SimpleStatementLine) \
                or len(updated.body) != len(original.body):
            return updated
        kept, popped = [], False
        lists = self.facts.list_names(self.ctx.current_function)
        for before, after in zip(original.body, updated.body):
            if type(before) is not cst.Del:
                kept.append(after)
            elif _list_item(before.target, lists) and type(after) is cst.Del:
                self.ctx.report(before, self.id, "del of a list's item in construct is the list's pop: GRAPH_MODE "
                                "compiles no del statement", Severity.INFO)
                target = after.target
                pop = cst.Call(func=cst.Attribute(value=target.value, attr=cst.Name("pop")),
                               args=[cst.Arg(target.slice[0].slice.value)])
                kept.append(cst.Expr(value=pop, semicolon=after.semicolon))
                popped = True
            elif _names_only(before.target):
                self.ctx.report(before, self.id, "del of local names removed from construct: GRAPH_MODE compiles "
                                "no del statement (a graph frees what it no longer uses)", Severity.INFO)
            else:
                self.ctx.report(before, self.id, "del of an attribute or an item in construct: GRAPH_MODE compiles "
                                "no del statement (\"Unsupported statement 'Delete'\"); do it outside construct",
                                Severity.WARNING)
                kept.append(after)
        if len(kept) == len(updated.body):
            return updated.with_changes(body=kept) if popped else updated
        if kept:
            kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(body=kept)
        if updated.trailing_whitespace.comment is None and all(line.comment is None for line in updated.leading_lines):
            return cst.RemovalSentinel.REMOVE
        return updated.with_changes(body=[cst.Pass()])  # the line's comments stay, on a ``pass``

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated):
        if original.body and not updated.body:  # every line of it was a del
            return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
        return updated


def _list_item(target: cst.BaseExpression, lists) -> bool:
    """``xs[i]`` (one index, no slice) on a name that holds a list in the function."""
    return (type(target) is cst.Subscript and type(target.value) is cst.Name and target.value.value in lists
            and len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index
            and target.slice[0].slice.star is None)


def _names_only(target: cst.BaseExpression) -> bool:
    """``a``, ``a, b``, ``(a, [b, c])``: names only."""
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return bool(target.elements) and all(
            isinstance(e, cst.Element) and _names_only(e.value) for e in target.elements)
    return False
