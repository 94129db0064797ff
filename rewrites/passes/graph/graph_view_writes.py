"""MS513: an in-place write that torch sees through another name, in compiled code.

In torch a view shares its tensor's memory, a second name is the same object and a
function's parameter is the caller's object: writing into one (``y[i] = v``, ``y += v``
on an item, ``y.add_(v)``, ``y[i].mul_(v)``) changes the other. GRAPH_MODE compiles a
write as a new value bound to the written name only. Measured on MindSpore 2.10 (CPU),
each of these left the other tensor as it was, without an error, where PYNATIVE changed it:
``y = x.view(2, 2, 2)`` (or ``y = x[:, 0:4:2]``, or ``y = x``) then ``y[:, 0] = ...`` and
``return x``; a helper ``def f(x): x[:, 0] = ...`` that returns nothing, called as ``f(x)``
before ``return x``; the same helper writing an item of a list it is given. (mambapy's
parallel scan is written so: ``Xa = X; Xa = Xa.view(...); Xa[:, :, :, 1].add_(...)`` in a
static method that changes its parameter ``X``; its GRAPH output differed by 2.5e-04.)

A lint only. It reports, in compiled code (forward, construct, the methods they call on
``self`` or on their class by name, the module functions they call), a write into:
  - a name that shares memory, at that point of the function, with another name (one is
    bound to the other, to an item or slice of it, or to one of VIEW_METHODS on it), when
    the other is a parameter of the function or is read after the write (or in the same
    loop): ``y = x.view(-1); y[0] = v; return x``, and ``y = x; x[0] = v; return y``;
  - a parameter of a function other than forward/construct that the function does not
    return by name (a helper returning it is MS207's: the caller takes the result).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import read

from ...analysis.compiled import FORWARD_NAMES, OwnBody, compiled_method
from .called_by_compiled import CompiledOrCalled

# torch methods whose result is a view of the receiver (shares its memory)
VIEW_METHODS = frozenset({
    "view", "view_as", "transpose", "permute", "t", "unsqueeze", "squeeze", "narrow", "expand",
    "expand_as", "select", "unfold", "diagonal", "as_strided", "movedim", "moveaxis", "swapaxes",
    "swapdims", "unflatten", "detach", "T", "mT",
})
# in-place methods that are no tensor writes
NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "register_hook_"})
SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class GraphViewWrites(CompiledOrCalled, Pass):
    id = "MS513"
    name = "graph-view-writes"
    reads = frozenset({"compiled_callees", "forward_helpers", "names", "submodule_helpers"})
    summary = ("Report an in-place write torch sees through another name (a view, an alias, a caller's "
               "parameter) in compiled code: GRAPH_MODE changes only the written name.")
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        y = x.view(-1)\n        y[0] = 1.0\n        return x\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        y = x.view(-1)\n        y[0] = 1.0\n        return x\n",
        ),
    )

    _by_class_name: frozenset[int] = frozenset()  # ids of methods compiled code calls as ``Class.m(...)``

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        reached = [m for m in methods.values() if compiled_method(self.ctx, m, node)]
        seen = {id(m) for m in reached}
        found = set()
        while reached:
            calls = _ClassCalls(node.name.value)
            read(reached.pop(), calls)
            for name in calls.names:
                method = methods.get(name)
                if method is not None and id(method) not in seen:
                    seen.add(id(method))
                    found.add(id(method))
                    reached.append(method)
        self._by_class_name = self._by_class_name | found

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scopes = self.ctx.open_scopes
        outermost = not any(type(s) is cst.FunctionDef for s in scopes[:-1])
        if not (self._compiled() or id(node) in self._by_class_name or
                (not outermost and any(id(s) in self._by_class_name for s in scopes))):
            return
        for write, name, other in aliased_writes(node, self.facts.names):  # noqa: B007
            self.ctx.report(write, self.id, f"{name} {other}: torch's write into {name} changes that tensor too, "
                            f"GRAPH_MODE changes only {name}, without an error; write into the tensor by its own "
                            "name (a helper: return it and assign the result where it is called) (GRAPH_MODE)",
                            Severity.WARNING)


def aliased_writes(fn: cst.FunctionDef, roles):
    """(write statement, written name, what the name shares) for each write of ``fn``'s own
    body (nested functions are theirs) that another name sees in torch."""
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)]
    forward = fn.name.value in FORWARD_NAMES
    events = _Events(fn, roles)
    read(fn.body, events)
    returned = events.returned
    # name -> None (its own value), "param" or the name it shares memory with
    state: dict[str, str | None] = {p: (None if forward else "param") for p in params[:]}
    if params and params[0] in ("self", "cls"):
        state[params[0]] = None
    for kind, node, name, other, at, loop in events.events:
        if kind == "bind":
            state[name] = _shared(state, name, other)
        elif kind == "write":
            held = state.get(name)
            if held == "param":
                if name not in returned:
                    yield node, name, (f"is a parameter of {fn.name.value} (which does not return it), "
                                       "the caller's tensor")
            else:
                # the other names of the same memory: the one it is a view of, and the views of that
                root = held if held is not None else name
                others = [m for m, h in state.items() if m != name and (m == root or h == root)]
                seen = [m for m in others if (m == root and state.get(m) == "param")
                        or events.read_after(m, node, loop)]
                if seen:
                    yield node, name, f"shares memory with {seen[0]} (a view, or the same tensor)"


def _shared(state, name, other):
    """What ``name = <view of other>`` holds (``other`` None: a value of its own)."""
    if other is None:
        return None
    held = state.get(other)
    root = held if held not in (None, "param") else other
    if held is None and other not in state:
        return None  # a name the function never bound (a global): not followed
    return None if root == name else root


def _root(expr):
    """The name an expression is a view of (``x``, ``x[:, 1]``, ``x.view(...)[0]``), or None."""
    while True:
        kind = type(expr)
        if kind is cst.Name:
            return expr.value
        if kind is cst.Subscript:
            expr = expr.value
        elif kind is cst.Attribute and expr.attr.value in ("T", "mT"):
            expr = expr.value
        elif kind is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in VIEW_METHODS:
            expr = expr.func.value
        else:
            return None


class _Events(OwnBody, cst.CSTVisitor):
    """The bindings, writes and name reads of a function's own body, in source order."""

    def __init__(self, fn, roles):
        self._roles = roles
        self._loads = list(roles.loads(fn.body))  # in source order
        self.events: list = []  # (kind, node, name, other, position, enclosing loops)
        self.returned: set[str] = set()
        self._loops: list = []
        self._count = 0
        self._fn = fn

    def _at(self) -> int:
        self._count += 1
        return self._count

    def visit_For(self, node):
        self._loops.append(node)
        for name in _target_names(node.target):
            self.events.append(("bind", node, name, None, self._at(), tuple(self._loops)))

    def leave_For(self, node):
        self._loops.pop()

    def visit_While(self, node):
        self._loops.append(node)

    def leave_While(self, node):
        self._loops.pop()

    def visit_Return(self, node):
        if type(node.value) is cst.Name:
            self.returned.add(node.value.value)

    def leave_Assign(self, node):
        at = self._at()
        for target in node.targets:
            self._write_or_bind(node, target.target, node.value, at)

    def leave_AnnAssign(self, node):
        if node.value is not None:
            self._write_or_bind(node, node.target, node.value, self._at())

    def leave_AugAssign(self, node):
        target = node.target
        if type(target) is cst.Subscript and (name := _root(target)):
            self._write(node, name)

    def leave_Call(self, node):
        func = node.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method.endswith("_") and not method.startswith("_") and method not in NOT_WRITES:
                name = _root(func.value)
                if name:
                    self._write(node, name)

    def _write_or_bind(self, node, target, value, at):
        if type(target) is cst.Name:
            other = _root(value)
            self.events.append(("bind", node, target.value, other, at, tuple(self._loops)))
        elif type(target) is cst.Subscript and (name := _root(target)):
            self._write(node, name)
        else:
            for name in _target_names(target):
                self.events.append(("bind", node, name, None, at, tuple(self._loops)))

    def _write(self, node, name):
        self.events.append(("write", node, name, None, self._at(), tuple(self._loops)))

    def read_after(self, name: str, node, loops: tuple) -> bool:
        """``name`` is read after the statement ``node``, or anywhere in a loop around it."""
        roles = self._roles
        if any(n.value == name for loop in loops for n in roles.loads(loop)):
            return True
        inside = {id(n) for n in roles.references(node)}
        after = False
        for n in self._loads:
            if id(n) in inside:
                after = True  # (the loads in source order: those past the statement's own)
            elif after and n.value == name:
                return True
        return False


def _target_names(target):
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _target_names(e.value)]
    if type(target) is cst.StarredElement:
        return _target_names(target.value)
    return []


class _ClassCalls(cst.CSTVisitor):
    """The methods called as ``Class.m(...)``, ``self.m(...)`` or ``cls.m(...)``."""

    def __init__(self, class_name: str) -> None:
        self.owners = {class_name, "self", "cls"}
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in self.owners:
            self.names.add(func.attr.value)
