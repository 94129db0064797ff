"""MS316: a list comprehension with several ``for`` clauses in compiled code -> one ``for`` each.

GRAPH_MODE (MindSpore 2.10) compiles a comprehension of one ``for`` only: "The
'generators' supports 1 'comprehension' in ListComp/GeneratorExp, but got 2
comprehensions" (torchnd's ``[v for i in dims_idx for v in (p[i], p[i])]``). Each
``for`` after the first becomes an inner comprehension, and ``sum(..., [])`` joins the
lists, in order (each ``if`` stays with its ``for``)::

    [v for i in idx if i for v in f(i)]   ->   sum([[v for v in f(i)] for i in idx if i], [])
    tuple(t for b in bs for t in g(b))    ->   tuple(sum([[t for t in g(b)] for b in bs], []))

A generator expression is rewritten only as the sole argument of ``tuple``/``list`` (which
consume it at once, as a list does). ``sum`` copies the list so far for each inner list,
which is cheap for the few items a network's construct iterates; so only compiled code is
rewritten: forward/construct and what they call on ``self`` (``ctx.compiled``), and the
functions of the module that those methods call by name (x-transformers' layer order,
``resolve_repeat_blocks_to_layer_execute_order``, called from forward). ``async for`` is
left.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from .called_by_compiled import CompiledOrCalled

CONSUMERS = ("tuple", "list")


class GraphSeveralFors(CompiledOrCalled, Pass):
    id = "MS316"
    name = "graph-several-fors"
    reads = frozenset({"compiled_callees", "forward_helpers", "submodule_helpers"})
    summary = "A list comprehension of several for clauses in construct -> nested ones joined by sum(..., []) (GRAPH_MODE)."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x, dims):\n"
            "        pad = [v for i in dims for v in (i, i)]\n        return x, pad\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x, dims):\n"
            "        pad = sum([[v for v in (i, i)] for i in dims], [])\n        return x, pad\n",
        ),
    )

    def _builtin(self, func) -> bool:
        return isinstance(func, cst.Name) and func.value in CONSUMERS and func.value not in self.ctx.imports.bindings

    def leave_ListComp(self, original: cst.ListComp, updated: cst.ListComp):
        if not _several(updated.for_in) or not self._compiled():
            return updated
        self._note(original)
        return _joined(updated.elt, updated.for_in, updated)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not (self._builtin(original.func) and len(updated.args) == 1 and self._compiled()):
            return updated
        arg = updated.args[0]
        if arg.keyword or arg.star or not isinstance(arg.value, cst.GeneratorExp) or not _several(arg.value.for_in):
            return updated
        self._note(original)
        return updated.with_changes(args=[arg.with_changes(value=_joined(arg.value.elt, arg.value.for_in, None))])

    def _note(self, node) -> None:
        self.ctx.report(node, self.id, "a comprehension of several for clauses is one per for, joined by "
                        "sum(..., []): GRAPH_MODE compiles one for per comprehension", Severity.INFO)


def _clauses(for_in: cst.CompFor) -> list[cst.CompFor]:
    out = []
    while for_in is not None:
        out.append(for_in)
        for_in = for_in.inner_for_in
    return out


def _several(for_in: cst.CompFor) -> bool:
    clauses = _clauses(for_in)
    return len(clauses) > 1 and all(c.asynchronous is None for c in clauses)


def _joined(elt: cst.BaseExpression, for_in: cst.CompFor, outer: cst.ListComp | None) -> cst.BaseExpression:
    """``[elt for a in A for b in B]`` as ``sum([[elt for b in B] for a in A], [])``; each
    further ``for`` nests once more."""
    clauses = [c.with_changes(inner_for_in=None) for c in _clauses(for_in)]
    flat: cst.BaseExpression = cst.ListComp(elt=elt, for_in=clauses[-1])
    for clause in reversed(clauses[:-1]):
        flat = _joined_call(cst.ListComp(elt=flat, for_in=clause))
    if outer is not None:
        flat = flat.with_changes(lpar=outer.lpar, rpar=outer.rpar)
    return flat


def _joined_call(lists: cst.BaseExpression) -> cst.Call:
    return cst.Call(func=cst.Name("sum"), args=[cst.Arg(lists), cst.Arg(cst.List([]))])
