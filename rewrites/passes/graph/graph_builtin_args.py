"""MS330: a comprehension given to ``reversed()`` or ``sorted()`` in compiled code gets a line of its own.

GRAPH_MODE (MindSpore 2.10) runs ``reversed()`` and ``sorted()`` in Python while it compiles
construct (its JIT fallback), evaluating the call's source text with the module's globals
only: a comprehension written inside the call loses the function's local names ("name 'n'
is not defined": lafhterlearn's ``list(reversed([i / n for i in range(n)]))``). The same
comprehension compiled on a line of its own keeps them, and ``reversed()``/``sorted()`` of the
list it gives compile (measured on 2.10). So the comprehension is assigned to a name just
before the statement (a generator expression becomes a list comprehension: both functions
read all of their argument before anything else happens)::

    w = list(reversed([i / n for i in range(n)]))   ->   w_items = [i / n for i in range(n)]
                                                          w = list(reversed(w_items))

Only the first argument of such a call, in a simple statement of compiled code (forward or
construct and what it calls), never where it may not run or may run more than once (lambdas,
comprehensions, conditional expressions, ``and``/``or``), and only where every other call in
the statement is one of a few builtins without side effects: running the comprehension first
then changes no order of effects.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import read

from ...analysis.compiled import compiled_statement
from ...syntax import ConditionalDepth, free_name, lines_before

INTERPRETED = frozenset({"reversed", "sorted"})
# builtins that change nothing: calls of them may run after the comprehension instead of before
PURE_BUILTINS = INTERPRETED | frozenset({
    "list", "tuple", "len", "range", "enumerate", "zip", "min", "max", "sum", "abs", "int", "float", "bool", "str",
})
COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp)


class _Finder(ConditionalDepth):
    """In a statement's value: the comprehensions that are the first argument of an
    interpreted builtin (outside conditional code), and whether a call that may have an
    effect (of anything but ``PURE_BUILTINS``) runs apart from them: a call around one runs
    after it either way (``ms.tensor(list(reversed([...])))``), any other may run before."""

    def __init__(self) -> None:
        self.comprehensions: list[cst.BaseExpression] = []
        self._open: list[list] = []  # the calls of unknown effect being visited: [node, holds a comprehension]
        self._apart = 0  # such calls that held none

    @property
    def impure(self) -> bool:
        return self._apart > 0

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if type(func) is not cst.Name or func.value not in PURE_BUILTINS:
            self._open.append([node, False])
            return True
        if (func.value in INTERPRETED and not self.conditional and node.args and not node.args[0].star
                and not node.args[0].keyword and type(node.args[0].value) in COMPREHENSIONS):
            self.comprehensions.append(node.args[0].value)
            for call in self._open:
                call[1] = True
            for arg in node.args[1:]:
                read(arg, self)
            return False  # the comprehension's own calls run together, in their order
        return True

    def leave_Call(self, node: cst.Call) -> None:
        if self._open and self._open[-1][0] is node:
            _, holds = self._open.pop()
            self._apart += not holds


class GraphBuiltinArgs(Pass):
    id = "MS330"
    name = "graph-builtin-args"
    reads = frozenset({"names"})
    summary = ("a comprehension given to reversed() or sorted() in construct gets a line of its own "
               "(GRAPH_MODE runs those calls in Python, where the comprehension loses the function's names).")
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        n = x.shape[1]\n        w = list(reversed([i / n for i in range(n)]))\n"
            "        return x * torch.tensor(w)\n",
            "import mindspore.nn as nn\nimport mindspore as ms\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        n = x.shape[1]\n        w_items = [i / n for i in range(n)]\n        w = list(reversed(w_items))\n"
            "        return x * ms.Tensor(input_data=w)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._moved: dict[int, str] = {}  # id of an original comprehension -> the name it is bound to
        self._pending: list[list[cst.Assign]] = []  # per statement: the assignments to put before it

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._pending.append([])
        found = compiled_statement(self.ctx, node)
        if found is None:
            return
        fn, stmt = found
        finder = _Finder()
        read(stmt.value, finder)
        if not finder.comprehensions or finder.impure:
            return
        target = stmt.targets[0].target if type(stmt) is cst.Assign and len(stmt.targets) == 1 else None
        base = f"{target.value}_items" if type(target) is cst.Name else "items"
        taken = set(self.facts.names.load_counts(fn))
        for comprehension in finder.comprehensions:
            name = free_name(taken, base)
            taken.add(name)
            self._moved[id(comprehension)] = name

    def _hoisted(self, original, updated):
        name = self._moved.pop(id(original), None)
        if name is None or not self._pending:
            return updated
        value = updated if type(updated) is cst.ListComp else cst.ListComp(elt=updated.elt, for_in=updated.for_in)
        self._pending[-1].append(cst.Assign(targets=[cst.AssignTarget(cst.Name(name))],
                                            value=value.with_changes(lpar=[], rpar=[])))
        self.ctx.report(original, self.id, f"the comprehension given to a call GRAPH_MODE runs in Python is {name}, "
                        "assigned just before (there it keeps the function's names)", Severity.INFO)
        return cst.Name(name)

    leave_ListComp = leave_GeneratorExp = _hoisted

    def leave_SimpleStatementLine(self, original, updated):
        before = self._pending.pop()
        return lines_before(updated, before) if isinstance(updated, cst.SimpleStatementLine) else updated
