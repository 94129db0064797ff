"""MS325: a generator function compiled code iterates -> a function returning the list of its items.

GRAPH_MODE compiles no ``yield`` (MindSpore 2.10: "Unsupported expression 'Yield'"): opacus'
DPLSTM and DPGRU loop ``for layer, directions in self.iterate_layers(self.cells, h_0s, c_0s)``
over a method that yields one item per layer. Where the caller only iterates over the call,
the items the generator yields, gathered in a list, are the ones the loop takes, in the same
order::

    def pairs(self, xs):                    def pairs(self, xs):
        for i in range(len(xs)):                items = []
            yield i, xs[i]          ->          for i in range(len(xs)):
                                                    items.append((i, xs[i]))
                                                return items

The list is made before the loop runs, not item by item: the same items where the generator
reads nothing the loop's body changes (compiled code changes no attribute and no outside
list). A generator expression yielded (or in a yielded tuple) becomes a tuple made with its
item: left lazy, it would read the generator's locals once they have moved on (opacus yields
one per layer, reading ``layer``: PYNATIVE gave every layer the last one's cells). Rewritten
only when
  - each ``yield`` is a statement of its own (``yield x``, not ``y = yield x`` nor ``yield
    from``), the function has no ``while`` (a generator that never ends has no list) nor
    lambda, and its ``return`` statements give no value;
  - every use of the function in the file is a call iterated right there: the iterable of a
    ``for`` or a comprehension, or the argument of ``zip``, ``enumerate``, ``list``,
    ``tuple``, ``sorted``, ``sum``, ``any``, ``all`` (no ``next()``, no call kept for later);
  - it is a method compiled code calls on ``self`` or a module function it calls by name.
Another generator compiled code calls is reported (a warning on its ``def``): GRAPH_MODE
will not compile it.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import read

from ...syntax import free_name, is_docstring
from ...analysis.compiled import OwnBody
from .called_by_compiled import CompiledOrCalled

CONSUMERS = frozenset({"zip", "enumerate", "list", "tuple", "sorted", "sum", "any", "all"})


class GraphGenerators(CompiledOrCalled, Pass):
    id = "MS325"
    name = "graph-generators"
    reads = frozenset({"compiled_callees", "forward_helpers", "identifiers", "names", "submodule_helpers"})
    summary = ("A generator function compiled code only iterates over -> a function returning the list of "
               "its items (GRAPH_MODE compiles no yield).")
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def pairs(self, xs):\n"
            "        for i in range(len(xs)):\n            yield i, xs[i]\n\n"
            "    def forward(self, xs):\n        return sum(x * i for i, x in self.pairs(xs))\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def pairs(self, xs):\n        items = []\n"
            "        for i in range(len(xs)):\n            items.append((i, xs[i]))\n        return items\n\n"
            "    def construct(self, xs):\n        return sum(x * i for i, x in self.pairs(xs))\n",
        ),
    )

    mentions = ("yield",)  # it acts on generator functions only
    _iterated: frozenset[str] | None = None  # names (``f``, ``self.f``) whose every use is an iterated call
    _module: cst.Module | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node  # (its uses are read when a compiled generator needs them: most files have none)

    def _iterated_names(self) -> frozenset[str]:
        if self._iterated is None:
            uses = _Uses()
            read(self._module, uses)
            counts = {**self.facts.names.load_counts(self._module), **uses.uses}
            self._iterated = frozenset(n for n, count in counts.items() if uses.iterated.get(n, 0) == count)
        return self._iterated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        if not self.ctx.open_scopes or self.ctx.open_scopes[-1] is not original:
            return updated
        enclosing = self.ctx.open_scopes[-2] if len(self.ctx.open_scopes) > 1 else None
        name = original.name.value
        key = f"self.{name}" if type(enclosing) is cst.ClassDef else name
        if not self._compiled():
            return updated
        shape = _shape(original)
        if not shape.yields:
            return updated
        if not shape.plain or type(enclosing) not in (cst.ClassDef, type(None)) \
                or key not in self._iterated_names():
            # (a nested function's uses are its scope's)
            self.ctx.report(original, self.id, f"{name} is a generator compiled code calls: GRAPH_MODE compiles no "
                            "yield (\"Unsupported expression 'Yield'\"), and it is not one this rule makes a list "
                            "(a while loop, a yield inside an expression, a use other than iterating over a call); "
                            "return a list or tuple of the items", Severity.WARNING)
            return updated
        items = free_name(self.facts.identifiers(original), "items")
        body = updated.body.with_changes(body=_gathered(updated.body.body, items))
        self.ctx.report(original, self.id, f"{name} yields items compiled code only iterates over: it returns "
                        "the list of them (GRAPH_MODE compiles no yield)", Severity.INFO)
        return updated.with_changes(body=body)


def _shape(fn: cst.FunctionDef) -> "_Shape":
    found = _Shape()
    read(fn.body, found)
    return found


def _gathered(body, items: str) -> list:
    """``body`` with each ``yield x`` an append to ``items``, ``items = []`` first and
    ``return items`` for each return and at the end."""
    out = list(_Gather(items).rewrite(body))
    start = 1 if out and is_docstring(out[0]) else 0
    out.insert(start, cst.SimpleStatementLine(body=[cst.Assign(
        targets=[cst.AssignTarget(cst.Name(items))], value=cst.List(elements=[]))]))
    last = out[-1]
    if not (type(last) is cst.SimpleStatementLine and type(last.body[-1]) is cst.Return):
        out.append(cst.SimpleStatementLine(body=[cst.Return(value=cst.Name(items))]))
    return out


class _Gather(OwnBody, cst.CSTTransformer):
    def __init__(self, items: str) -> None:
        self.items = items

    def rewrite(self, body):
        return [statement.visit(self) for statement in body]

    def leave_Expr(self, original, updated):
        if type(updated.value) is not cst.Yield:
            return updated
        value = _eager(updated.value.value) if updated.value.value is not None else cst.Name("None")
        if type(value) is cst.Tuple and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        append = cst.Call(func=cst.Attribute(value=cst.Name(self.items), attr=cst.Name("append")),
                          args=[cst.Arg(value)])
        return updated.with_changes(value=append)

    def leave_Return(self, original, updated):
        return updated.with_changes(value=cst.Name(self.items), whitespace_after_return=cst.SimpleWhitespace(" "))


def _eager(value):
    """A yielded value whose generator expressions (as the value or an item of a tuple or list
    of it) are tuples: gathered in the list, each is made when its item is, as the loop would
    have met it (a generator expression reads the generator's locals when it is iterated,
    and they have moved on once the list is made: opacus yields one per layer, each reading
    ``layer``)."""
    kind = type(value)
    if kind is cst.GeneratorExp:
        return cst.Call(func=cst.Name("tuple"), args=[cst.Arg(value.with_changes(lpar=[], rpar=[]))])
    if kind in (cst.Tuple, cst.List):
        return value.with_changes(elements=[e.with_changes(value=_eager(e.value)) if type(e) is cst.Element else e
                                            for e in value.elements])
    return value


class _Shape(OwnBody, cst.CSTVisitor):
    """Counts the yields of a function's own body and whether each is a plain statement."""

    def __init__(self) -> None:
        self.yields = 0
        self.plain = True
        self._statement_yields: set[int] = set()

    def visit_Lambda(self, node):
        self.plain = False  # (a lambda made in a generator reads its locals late, as a generator expression)
        return False

    def visit_While(self, node):
        self.plain = False

    def visit_Return(self, node):
        if node.value is not None:
            self.plain = False

    def visit_Expr(self, node):
        if type(node.value) is cst.Yield:
            self._statement_yields.add(id(node.value))

    def visit_Yield(self, node):
        self.yields += 1
        if id(node) not in self._statement_yields or isinstance(node.value, cst.From):
            self.plain = False

    def visit_Await(self, node):
        self.plain = False


class _Uses(cst.CSTVisitor):
    """For each method ``self.f``: how often the file reads an attribute ``f``; for ``f`` and
    ``self.f``, how often as a call iterated right there (the names' reads are the name
    index's)."""

    def __init__(self) -> None:
        self.uses: dict[str, int] = {}
        self.iterated: dict[str, int] = {}
        self._iterated_calls: set[int] = set()

    def _mark(self, expr) -> None:
        if type(expr) is cst.Call:
            self._iterated_calls.add(id(expr))

    def visit_For(self, node):
        self._mark(node.iter)

    def visit_CompFor(self, node):
        self._mark(node.iter)

    def visit_Call(self, node):
        if type(node.func) is cst.Name and node.func.value in CONSUMERS:
            for arg in node.args:
                self._mark(arg.value)
        if id(node) in self._iterated_calls:
            key = _key(node.func)
            if key:
                self.iterated[key] = self.iterated.get(key, 0) + 1

    def visit_Attribute(self, node):
        # ``x.f`` on any receiver counts as a use of the method ``f``
        key = f"self.{node.attr.value}"
        self.uses[key] = self.uses.get(key, 0) + 1


def _key(expr) -> str | None:
    if type(expr) is cst.Name:
        return expr.value
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
        return f"self.{expr.attr.value}"
    return None
