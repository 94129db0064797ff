"""MS308: a local that only some branches of an ``if`` assign, and that code after the
``if`` reads, is set to None before the ``if``, in forward and what it calls.

GRAPH_MODE compiles both branches of an ``if`` and refuses a name one of them leaves
unbound: "The local variable 'y' is not defined in false branch, but defined in true
branch", even when the later read is under the same condition (x-transformers::

    if has_memory_tokens:
        mem_every = self.memory_tokens_interspersed_every
        ...
    if has_memory_tokens:
        if exists(mem_every): ...

). Python never reads the name on a path that did not bind it (it would raise), so a
None bound first changes nothing that runs. Inside a loop the None goes before the
outermost loop, not before the ``if`` (a value left by an earlier iteration must stay:
x-transformers' ``if layer_type == 'a': layer_mem = ...``, read on later 'a' layers), and
only for names the loop binds first. Not done for names bound before; a branch that ends
in ``return``/``raise``/``break``/``continue`` does not reach the read and needs none.

A name the body of a for loop binds first and code after the loop reads is set to None
before the (outermost) loop too: GRAPH_MODE refuses it ("The local variable 'attended'
defined in the 'for' loop body cannot be used outside of the loop body", open-kimi's
``for block in self.blocks: attended = block(normed)`` then ``return head(attended)``);
Python reads it after the loop only when the loop ran, so the None changes nothing that runs.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.names import DEL, LOAD
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import rewrite


_EXITS = (cst.Return, cst.Raise, cst.Break, cst.Continue)


def _bound_names(target) -> list[str]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return []


def _exits(block) -> bool:
    """The block's last statement leaves it (return, raise, break, continue)."""
    body = getattr(block, "body", ())
    if not body:
        return False
    last = body[-1]
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, _EXITS) for s in last.body)


class GraphBranchLocals(Pass):
    id = "MS308"
    name = "graph-branch-locals"
    reads = frozenset({"names"})
    summary = "A local bound in only some branches of an if and read after it is set to None first (GRAPH_MODE)."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        if self.extra:\n            y = x * 2\n        if self.extra:\n            x = x + y\n"
            "        return x\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n        y = None\n"
            "        if self.extra:\n            y = x * 2\n        if self.extra:\n            x = x + y\n"
            "        return x\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._step = 0  # order of binds and reads in the function
        self._first_bound: list[dict[str, int]] = []  # per function: name -> step it is first bound
        self._reads: list[dict[str, int]] = []  # per function: name -> last step it is read
        # per function: whether it is compiled (the reads of one that is not are never asked:
        # not noted; the steps stay in order for those that are)
        self._compiled: list[bool] = []
        self._updated: set[int] = set()  # ids of the names augmented assignments bind (they read them too)
        self._branches: list[set[str]] = []  # names each open if-branch binds, innermost last
        self._loops = 0
        self._loop_starts: list[tuple[int, set[str]]] = []  # open loops: step at their start, names their ifs leave unbound
        self._ifs: list[dict] = []  # per function: candidate ifs and loops (updated body id -> [facts])
        self._if_stack: list[dict] = []  # open ifs: step at their start, their branches (bound, exits)
        self._elifs: set[int] = set()  # ids of ifs that are another if's elif
        self._if_elses: set[int] = set()  # ids of Else nodes that belong to an if (not a for/while/try)
        self._summaries: dict[int, tuple] = {}  # elif id -> (names bound on every path, every path exits)
        self._saved: list[tuple] = []
        self._if_bodies: set[int] = set()  # ids of the bodies of the open ifs

    # -- functions ---------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
        names += [p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
        self._first_bound.append({n: -1 for n in names})
        self._reads.append({})
        self._compiled.append(self.ctx.compiled)
        self._ifs.append({})
        self._saved.append((self._branches, self._loops, self._loop_starts))
        self._branches, self._loops, self._loop_starts = [], 0, []

    def leave_FunctionDef(self, original, updated):
        self._first_bound.pop()
        reads, ifs = self._reads.pop(), self._ifs.pop()
        self._compiled.pop()
        self._branches, self._loops, self._loop_starts = self._saved.pop()
        if not self.ctx.compiled or not ifs:
            return updated
        inserts: dict[int, list[str]] = {}
        for key, each in ifs.items():
            names = sorted({n for facts in each for n in facts["names"] if reads.get(n, -1) > facts["end"]})
            if names:
                inserts[key] = names
        if not inserts:
            return updated
        for names in inserts.values():
            self.ctx.count_converted(len(names))
        self.ctx.report(original, self.id, "locals bound in only some branches of an if, or first in a for loop, "
                        "set to None first: "
                        + ", ".join(sorted({n for v in inserts.values() for n in v})), Severity.INFO)
        return updated.with_changes(body=rewrite(updated.body, _InsertNones(inserts)))  # (LibCST's visit rebuilt every node)

    # -- binds and reads -----------------------------------------------------------------
    def _bind(self, names) -> None:
        if not self._first_bound:
            return
        self._step += 1
        for name in names:
            self._first_bound[-1].setdefault(name, self._step)
            for branch in self._branches:  # an if nested in a branch binds into it too
                branch.add(name)

    def leave_Assign(self, original, updated):
        self._bind(n for t in original.targets for n in _bound_names(t.target))
        return updated

    def leave_AnnAssign(self, original, updated):
        if original.value is not None:
            self._bind(_bound_names(original.target))
        return updated

    def leave_NamedExpr(self, original, updated):
        self._bind(_bound_names(original.target))
        return updated

    def leave_WithItem(self, original, updated):
        if original.asname is not None:
            self._bind(_bound_names(original.asname.name))
        return updated

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._updated.add(id(node.target))  # ``y += 1`` reads y before it binds it

    def visit_Name(self, node: cst.Name) -> None:
        if not (self._compiled and self._compiled[-1]):
            return
        role = self.facts.names.role(node)
        if role == LOAD or role == DEL or id(node) in self._updated:
            self._step += 1
            self._reads[-1][node.value] = self._step

    # -- loops: a value may come from an earlier iteration -------------------------------------
    def visit_For(self, node: cst.For) -> None:
        self._enter_loop()

    def leave_For(self, original, updated):
        if len(self._loop_starts) == 1 and self._first_bound and self.ctx.compiled:
            # GRAPH_MODE refuses a name a for loop's body binds first and code after the loop
            # reads ("defined in the 'for' loop body cannot be used outside of the loop body")
            start = self._loop_starts[-1][0]
            inside = {n for n, step in self._first_bound[-1].items() if step > start}
            if inside:
                self._ifs[-1].setdefault(id(updated.body), []).append({"names": inside, "end": self._step})
        self._leave_loop(updated)
        self._bind(_bound_names(original.target))
        return updated

    def visit_While(self, node) -> None:
        self._enter_loop()

    def leave_While(self, original, updated):
        self._leave_loop(updated)
        return updated

    def _enter_loop(self) -> None:
        self._loops += 1
        self._loop_starts.append((self._step, set()))

    def _leave_loop(self, updated) -> None:
        """The outermost loop gets the Nones of the names its ifs leave unbound, read after its
        start (a later iteration reads what an earlier one bound), and bound first inside it."""
        self._loops -= 1
        start, names = self._loop_starts.pop()
        if self._loop_starts:
            self._loop_starts[-1][1].update(names)
            return
        if not self._first_bound:
            return
        first = self._first_bound[-1]
        names = {n for n in names if first.get(n, 0) > start}
        if names and self.ctx.compiled:
            self._ifs[-1].setdefault(id(updated.body), []).append({"names": names, "end": start})

    # -- ifs -------------------------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._if_stack.append({"start": self._step, "branches": []})
        self._if_bodies.add(id(node.body))
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))
        elif node.orelse is not None:
            self._if_elses.add(id(node.orelse))

    # an if's body is told apart by its node: passes see nodes, not the fields they fill
    def visit_IndentedBlock(self, node) -> None:
        if id(node) in self._if_bodies:
            self._branches.append(set())

    def leave_IndentedBlock(self, original, updated):
        self._leave_body(original)
        return updated

    def visit_SimpleStatementSuite(self, node) -> None:
        self.visit_IndentedBlock(node)

    def leave_SimpleStatementSuite(self, original, updated):
        self._leave_body(original)
        return updated

    def _leave_body(self, block) -> None:
        if id(block) in self._if_bodies:
            self._if_bodies.remove(id(block))
            self._if_stack[-1]["branches"].append((self._branches.pop(), _exits(block)))

    # the else of a for, while or try is no branch of an if
    def visit_Else(self, node: cst.Else) -> None:
        if id(node) in self._if_elses:
            self._branches.append(set())

    def leave_Else(self, original, updated):
        if id(original) not in self._if_elses:
            return updated
        self._if_elses.discard(id(original))
        self._if_stack[-1]["branches"].append((self._branches.pop(), _exits(original.body)))
        return updated

    def leave_If(self, original: cst.If, updated: cst.If):
        facts = self._if_stack.pop()
        branches = facts["branches"]
        if isinstance(original.orelse, cst.If):  # elif: its summary is one branch of this if
            branches.append(self._summaries.pop(id(original.orelse)))
        elif original.orelse is None:
            branches.append((set(), False))
        reaching = [bound for bound, exits in branches if not exits]
        always = set.intersection(*reaching) if reaching else set()
        anywhere = set().union(*(bound for bound, _ in branches))
        if id(original) in self._elifs:
            self._elifs.discard(id(original))
            self._summaries[id(original)] = (always, not reaching)
            return updated
        if not self._first_bound or not self.ctx.compiled or not reaching:
            return updated
        first = self._first_bound[-1]
        names = {n for n in anywhere - always if first.get(n, 0) > facts["start"]}
        if names and self._loop_starts:  # set before the outermost loop, when it is left
            self._loop_starts[-1][1].update(names)
        elif names:
            # keyed by the if's body: the statement itself may still be replaced after this
            # pass leaves it (a marker comment attached to it), its body no more
            self._ifs[-1].setdefault(id(updated.body), []).append({"names": names, "end": self._step})
        return updated


class _InsertNones(cst.CSTTransformer):
    """``name = None`` before the if and loop statements found (by the id of the body of the
    node the pass returned for each)."""

    def __init__(self, inserts: dict[int, list[str]]) -> None:
        self.inserts = inserts

    def leave_IndentedBlock(self, original, updated):
        keys = [id(s.body) if isinstance(s, (cst.If, cst.For, cst.While)) else None for s in original.body]
        if not any(k in self.inserts for k in keys):
            return updated
        body = []
        for key, after in zip(keys, updated.body):  # no statement is added or dropped here
            body += [cst.parse_statement(f"{name} = None\n") for name in self.inserts.get(key, ())]
            body.append(after)
        return updated.with_changes(body=body)
