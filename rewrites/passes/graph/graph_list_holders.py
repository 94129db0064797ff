"""MS333: a list that holds lists changed after it is made is made again after their last
change, in forward and what it calls.

Python's ``masks = [a, b]`` holds the lists ``a`` and ``b`` themselves: ``a.append(m)`` later
shows in ``masks``. GRAPH_MODE copies a list into another when the holder is made, so the
holder keeps them as they were, without an error when they held items already (measured on
MindSpore 2.10; torchaudio's Emformer makes ``masks_to_concat = [rc_mask, query_mask]`` in an
``if``/``else`` and fills the lists in a loop after it: GRAPH_MODE concatenated nothing, "the
elements size must be greater than 0").

The rewrite, in the function's own body: after the top-level statement that holds the
lists' last change, the holder is made again from the same names (``masks = [a, b]``): the
same objects Python's holder has, now with their changes. With several assignments of the
holder (one per branch), each notes which one ran (``masks, _masks_made = [a, b], 1``) and the
holder is made again by that one (``if _masks_made == 1: masks = [a, b]``; a Python int,
folded when the graph is compiled). Done only where it is sure to give what Python has:
between the first assignment and the last change the holder is not read nor bound another
way, and no listed name is bound again; a holder assigned in the statement of the last
change itself (or after it) stays as it is and MS509 reports it.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.names import identifiers
from transpile.engine.passes import Example, Pass

from ...syntax import free_name
from ...analysis.list_holders import remade_holders, stale_list_holders


class GraphListHolders(Pass):
    id = "MS333"
    name = "graph-list-holders"
    summary = ("A list holding lists changed after it is made is made again after their last change "
               "(GRAPH_MODE copies a list into another when it is made).")
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        a = []\n        held = [a]\n        for i in range(2):\n            a.append(x * i)\n"
            "        return torch.cat(held[0])\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\nclass M(nn.Cell):\n"
            "    def construct(self, x):\n        a = []\n        held = [a]\n        for i in range(2):\n"
            "            a.append(x * i)\n        held = [a]\n        return ops.cat(tensors=held[0])\n",
        ),
    )

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        if not self.ctx.compiled or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        stale = stale_list_holders(updated)
        plans = remade_holders(updated, stale) if stale else {}
        if not any(plans.values()):
            return updated
        where = {name: assign for name, assign, _ in reversed(stale_list_holders(original))}  # reported on its first
        body = list(updated.body.body)
        taken = identifiers(updated)
        after: dict[int, list[cst.BaseStatement]] = {}  # top-level index -> statements to put after it
        before: dict[int, list[cst.BaseStatement]] = {}
        marks: dict[int, tuple[str, int]] = {}  # id(an assignment of a holder) -> (its mark, its number)
        for holder, plan in plans.items():
            if plan is None:  # made again after the changes already
                continue
            first, last, sites = plan
            if len(sites) == 1:
                remade = [_assign(holder, sites[0].value)]
            else:
                mark = free_name(taken, f"_{holder}_made")
                taken.add(mark)
                for number, site in enumerate(sites):
                    marks[id(site)] = (mark, number)
                before.setdefault(first, []).append(_assign(mark, cst.Name("None")))
                remade = [_remade_by_mark(holder, mark, sites)]
            after.setdefault(last, []).extend(remade)
            self.ctx.count_converted()
            self.ctx.report(where.get(holder, original), self.id, f"{holder} holds lists changed after it is made: made again after "
                            "their last change (GRAPH_MODE copies a list into another when it is made)",
                            Severity.INFO)
        new_body: list[cst.BaseStatement] = []
        for index, statement in enumerate(body):
            new_body.extend(before.get(index, ()))
            new_body.append(statement.visit(_MarkSites(marks)) if marks else statement)
            new_body.extend(after.get(index, ()))
        return updated.with_changes(body=updated.body.with_changes(body=new_body))


def _assign(name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))],
                                                    value=value.deep_clone())])


def _remade_by_mark(holder: str, mark: str, sites: list[cst.Assign]) -> cst.If:
    """``if mark == 0: holder = [...] elif mark == 1: holder = [...]``, one branch per assignment."""
    chain = None
    for number in reversed(range(len(sites))):
        test = cst.Comparison(cst.Name(mark), [cst.ComparisonTarget(cst.Equal(), cst.Integer(str(number)))])
        block = cst.IndentedBlock(body=[_assign(holder, sites[number].value)])
        chain = cst.If(test=test, body=block, orelse=chain)
    return chain


class _MarkSites(cst.CSTTransformer):
    """``holder = [a, b]`` -> ``holder, mark = [a, b], number`` at each marked assignment."""

    def __init__(self, marks: dict[int, tuple[str, int]]) -> None:
        self.marks = marks

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if id(original) not in self.marks:
            return updated
        mark, number = self.marks[id(original)]
        target = cst.Tuple([cst.Element(updated.targets[0].target), cst.Element(cst.Name(mark))], lpar=[], rpar=[])
        value = cst.Tuple([cst.Element(updated.value), cst.Element(cst.Integer(str(number)))], lpar=[], rpar=[])
        return updated.with_changes(targets=[cst.AssignTarget(target)], value=value)
