"""MS307: ``lst.pop()`` inside a larger expression in construct gets a statement of its own.

GRAPH_MODE (MindSpore 2.10) compiles ``y = h.pop()`` but not a pop nested in an
expression: ``ops.cat((x, h.pop()), axis=1)`` hands Concat the pair (list, item)
("Failed calling Concat with tensors=Tuple[Tensor, Tuple[List[Tensor*3], Tensor]]"),
the U-Net skip connections of denoising-diffusion. The pop is taken out, in order,
into a name assigned just before the statement::

    x = ops.cat((x, h.pop()), axis=1)   ->   h_popped = h.pop()
                                             x = ops.cat((x, h_popped), axis=1)

Only pops on names that hold a list in the function (``facts.list_names``) are moved,
only from simple statements, and never from where they may not run or may run more
than once (the branches of ``a if c else b``, ``and``/``or``, lambdas, comprehensions).
Everything the statement evaluates before the pop is free of it (names, attributes,
other calls' arguments) in the code this targets; a pop is the statement's first side
effect there. Applies in forward/construct and what it calls (compiled code).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import read


CONDITIONAL = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation)


class _PopFinder(cst.CSTVisitor):
    """The ``name.pop()`` calls on the function's lists within ``value`` (not ``value``
    itself), outside the places where a pop may not run or may run more than once."""

    def __init__(self, value: cst.BaseExpression, lists) -> None:
        super().__init__()
        self.value, self.lists = value, lists
        self.pops: list[cst.Call] = []

    def visit_Call(self, call: cst.Call) -> None:
        f = call.func
        if (call is not self.value and isinstance(f, cst.Attribute) and f.attr.value == "pop"
                and isinstance(f.value, cst.Name) and f.value.value in self.lists):
            self.pops.append(call)


for _kind in CONDITIONAL:  # not entered
    setattr(_PopFinder, f"visit_{_kind.__name__}", lambda _self, _node: False)


class GraphListPop(Pass):
    id = "MS307"
    name = "graph-list-pop"
    reads = frozenset({"list_names"})
    summary = "lst.pop() nested in an expression in construct -> its own assignment (GRAPH_MODE miscompiles it)."
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        hs = [x, x]\n        return torch.cat((x, hs.pop()), dim=1)\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        hs = [x, x]\n        hs_popped = hs.pop()\n        return ops.cat(tensors=(x, hs_popped), axis=1)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._moved: dict[int, str] = {}  # id of an original pop call -> the name it is bound to
        self._pending: list[list[cst.BaseSmallStatement]] = []  # per statement: assignments to put before it

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._pending.append([])
        if not (self.ctx.compiled and self.ctx.current_function is not None and len(node.body) == 1):
            return
        stmt = node.body[0]
        if not isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)):
            return
        value = stmt.value
        if value is None:
            return
        lists = self.facts.list_names(self.ctx.current_function)
        if not lists:
            return  # (most functions hold no list: the statement is not read)
        finder = _PopFinder(value, lists)
        read(value, finder)
        pops = finder.pops
        used: set[str] = set()
        for call in pops:
            base = f"{call.func.value.value}_popped"
            name, n = base, 1
            while name in used:
                n += 1
                name = f"{base}{n}"
            used.add(name)
            self._moved[id(call)] = name

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self._moved.pop(id(original), None)
        if name is None:
            return updated
        self._pending[-1].append(cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=updated))
        self.ctx.report(original, self.id, f"{name} = {original.func.value.value}.pop() is taken out of the "
                        "expression (GRAPH_MODE miscompiles a nested list pop)", Severity.INFO)
        return cst.Name(name)

    def leave_SimpleStatementLine(self, original, updated):
        before = self._pending.pop()
        if not before or not isinstance(updated, cst.SimpleStatementLine):
            return updated
        lines = [cst.SimpleStatementLine(body=[a], leading_lines=updated.leading_lines if i == 0 else ())
                 for i, a in enumerate(before)]
        return cst.FlattenSentinel([*lines, updated.with_changes(leading_lines=())])
