"""MS320: ``it = iter(xs)`` ... ``next(it, d)`` in compiled code -> a tuple, its first item and the rest.

GRAPH_MODE (MindSpore 2.10) has no iterator: ``next(it, None)`` fails to compile ("For 'Next',
the number of input should be 1, but got 2"; x-transformers' layer loop hands each attention
layer ``next(iter_attn_cache, None)``), and ``next(it)`` gives the pair (item, the rest),
without an error. A tuple's first item, the tuple rebound to the rest, is what the iterator
yields; GRAPH_MODE knows a tuple's length when it compiles. (Not a list popped: a list of
constants, ``[None]``, is one Python object the compiled graph pops in place, so a second call
finds it empty, "pop from empty list".) So::

    it = iter(xs)                        it = tuple(xs)
    y = f(a, next(it, None))      ->     if it:
                                             it_next = it[0]
                                             it = it[1:]
                                         else:
                                             it_next = None
                                         y = f(a, it_next)

A name is rewritten only where every binding of it in the function is ``name = iter(...)``
of something other than a generator (a tuple is taken at once where the iterator takes item
by item: the same for a tuple, a list or a dict not changed meanwhile), and every read is
``next(name, default)`` in a simple statement, where it runs once (not in a branch of
``a if c else b``, of ``and``/``or``, a comprehension or a lambda); what the statement
evaluates before the call is names, attributes and constants in the code this targets, as
MS307 assumes for its pops. The default is evaluated only when the tuple is empty (Python
evaluates it always): a name or a constant there, as written. Applies in compiled code.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.names import LOAD
from transpile.engine.walk import read

from ...syntax import ConditionalDepth, free_name

BUILTINS = ("iter", "next", "tuple")


def _never(_scope) -> bool:
    return False


class GraphIterators(Pass):
    id = "MS320"
    name = "graph-iterators"
    reads = frozenset({"identifiers", "names", "nodes"})
    summary = "it = iter(xs) ... next(it, d) in compiled code -> a tuple, its first item and the rest (GRAPH_MODE has no iterator)."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x, caches):\n"
            "        it = iter(caches)\n        return self.f(x, next(it, None))\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x, caches):\n"
            "        it = tuple(caches)\n        if it:\n            it_next = it[0]\n            it = it[1:]\n        else:\n"
            "            it_next = None\n        return self.f(x, it_next)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._iterators: dict[int, frozenset[str]] = {}  # id of a function -> its names rewritten
        self._moved: dict[int, str] = {}  # id of an original next call -> the name its item is bound to
        self._pending: list[list[cst.If]] = []  # per statement line: the ifs to put before it

    def _rewritten(self, fn: cst.FunctionDef) -> frozenset[str]:
        key = id(fn)
        if key not in self._iterators:
            self._iterators[key] = self._find(fn)
        return self._iterators[key]

    def _find(self, fn: cst.FunctionDef) -> frozenset[str]:
        if any(b in self.ctx.imports.bindings for b in BUILTINS):
            return frozenset()
        made: dict[str, int] = {}
        for assign in self.facts.nodes(fn, (cst.Assign,), _never):
            if (len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name and _iter_call(assign.value)):
                name = assign.targets[0].target.value
                made[name] = made.get(name, 0) + 1
        if not made:
            return frozenset()
        bound: dict[str, int] = {}
        names = self.facts.names
        for ref in names.references(fn):
            if ref.value in made and names.role(ref) != LOAD:
                bound[ref.value] = bound.get(ref.value, 0) + 1
        if names.stored(fn) & set(BUILTINS):  # a local iter, next or tuple
            return frozenset()
        nexts = _SafeNexts(set(made))
        read(fn, nexts)
        loads = names.load_counts(fn)
        return frozenset(n for n in made if bound.get(n, 0) == made[n] and nexts.safe.get(n, 0) == loads.get(n, 0)
                         and loads.get(n, 0) > 0 and nexts.unsafe.get(n, 0) == 0)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._pending.append([])
        fn = self.ctx.current_function
        if not (self.ctx.compiled and fn is not None):
            return
        rewritten = self._rewritten(fn)
        if not rewritten:
            return
        taken = set(self.facts.identifiers(fn)) | set(self._moved.values())
        for call in _statement_nexts(node, rewritten):
            name = free_name(taken, f"{call.args[0].value.value}_next")
            taken.add(name)
            self._moved[id(call)] = name

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        fn = self.ctx.current_function
        if not (self.ctx.compiled and fn is not None and len(original.targets) == 1
                and type(original.targets[0].target) is cst.Name and _iter_call(original.value)):
            return updated
        name = original.targets[0].target.value
        if name not in self._rewritten(fn) or type(updated.value) is not cst.Call:
            return updated
        self.ctx.report(original, self.id, f"{name} = iter(...) is a tuple, its first item taken by each next: "
                        "GRAPH_MODE has no iterator (next(it, default) does not compile, next(it) gives a pair)", Severity.INFO)
        return updated.with_changes(value=updated.value.with_changes(func=cst.Name("tuple")))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self._moved.pop(id(original), None)
        if name is None:
            return updated
        listed = original.args[0].value.value
        first = cst.Subscript(value=cst.Name(listed), slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        rest = cst.Subscript(value=cst.Name(listed), slice=[cst.SubscriptElement(cst.Slice(lower=cst.Integer("1"), upper=None))])
        self._pending[-1].append(cst.If(
            test=cst.Name(listed),
            body=cst.IndentedBlock(body=[_assign(name, first), _assign(listed, rest)]),
            orelse=cst.Else(body=cst.IndentedBlock(body=[_assign(name, updated.args[1].value)]))))
        self.ctx.report(original, self.id, f"next({listed}, ...) is {listed}'s first item, taken before the statement "
                        "(the rest rebound), or the default: GRAPH_MODE has no iterator", Severity.INFO)
        return cst.Name(name)

    def leave_SimpleStatementLine(self, original, updated):
        before = self._pending.pop()
        if not before or not isinstance(updated, cst.SimpleStatementLine):
            return updated
        first = before[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([first, *before[1:], updated.with_changes(leading_lines=())])


def _assign(name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)])


def _iter_call(value: cst.BaseExpression) -> bool:
    """``iter(xs)`` of one positional argument that is not a generator."""
    return (type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "iter"
            and len(value.args) == 1 and not value.args[0].star and value.args[0].keyword is None
            and type(value.args[0].value) is not cst.GeneratorExp)


def _next_of(call: cst.CSTNode, names) -> bool:
    """``next(name, default)`` on one of ``names``, the default a name, an attribute or a constant."""
    return (type(call) is cst.Call and type(call.func) is cst.Name and call.func.value == "next"
            and len(call.args) == 2 and all(not a.star and a.keyword is None for a in call.args)
            and type(call.args[0].value) is cst.Name and call.args[0].value.value in names
            and _plain(call.args[1].value))


def _plain(value: cst.BaseExpression) -> bool:
    while type(value) is cst.Attribute:
        value = value.value
    return type(value) in (cst.Name, cst.Integer, cst.Float, cst.SimpleString)


class _SafeNexts(ConditionalDepth):
    """Per name: its ``next(name, default)`` calls where they run once (``safe``), and those
    where they may not run or run more than once (``unsafe``)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.safe: dict[str, int] = {}
        self.unsafe: dict[str, int] = {}
        self._lines: list[bool] = []  # the simple statement lines open: whether each holds one statement

    def visit_SimpleStatementLine(self, node) -> None:
        self._lines.append(len(node.body) == 1)

    def leave_SimpleStatementLine(self, node) -> None:
        self._lines.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if _next_of(node, self.names):
            counts = self.safe if (self._lines and self._lines[-1] and not self.conditional) else self.unsafe
            name = node.args[0].value.value
            counts[name] = counts.get(name, 0) + 1



def _statement_nexts(line: cst.SimpleStatementLine, names) -> list[cst.Call]:
    """The ``next(name, default)`` calls of a line on the names rewritten, in source order."""
    found: list[cst.Call] = []

    class _Nexts(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if _next_of(node, names):
                found.append(node)

    read(line, _Nexts())
    return found
