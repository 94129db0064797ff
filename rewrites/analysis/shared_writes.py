"""Writes torch sees through another name: a view, an alias, a caller's parameter.

In torch a view shares its tensor's memory, a second name is the same object and a
function's parameter is the caller's object: writing into one (``y[i] = v``, ``y += v``,
``y.add_(v)``, ``y[i].mul_(v)``) changes the other. ``aliased_writes`` lists such writes of a
function's own body; the lint MS513 reports them in compiled code, and ``FileFacts.
written_view_pieces`` picks the views whose writes the converted code must store through
their tensor.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.walk import read

from .compiled import FORWARD_NAMES, OwnBody

# torch methods whose result is a view of the receiver (shares its memory)
VIEW_METHODS = frozenset({
    "view", "view_as", "transpose", "permute", "t", "unsqueeze", "squeeze", "narrow", "expand",
    "expand_as", "select", "unfold", "diagonal", "as_strided", "movedim", "moveaxis", "swapaxes",
    "swapdims", "unflatten", "detach", "T", "mT",
})
# views whose elements may share one place of memory: torch refuses most writes into them
OVERLAPPING_VIEWS = frozenset({"expand", "expand_as", "as_strided", "unfold"})


def view_root(expr: cst.BaseExpression) -> str | None:
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


# what a tensor tells of itself besides its values: a write into it changes none of them
METADATA = frozenset({"shape", "dtype", "ndim", "device", "size", "dim", "numel", "is_contiguous"})
# in-place methods that are no tensor writes
NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "register_hook_"})


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
    views: set[str] = set()  # names bound to a view (a slice, x.view(...)), not to a name
    for kind, node, name, other, at, loop in events.events:
        if kind in ("bind", "bind view"):
            state[name] = _shared(state, name, other)
            (views.add if kind == "bind view" else views.discard)(name)
        elif kind == "write" or (kind == "augmented write" and name in views):  # n += 1 on a number: no write
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
        self._metadata: set[int] = set()  # ids of names read only for their shape, dtype, ...

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
        if type(target) is cst.Subscript and (name := view_root(target)):
            self._write(node, name)
        elif type(target) is cst.Name:  # y += v: in place in torch, where y is a view
            self.events.append(("augmented write", node, target.value, None, self._at(), tuple(self._loops)))

    def leave_Call(self, node):
        func = node.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method.endswith("_") and not method.startswith("_") and method not in NOT_WRITES:
                name = view_root(func.value)
                if name:
                    self._write(node, name)

    def _write_or_bind(self, node, target, value, at):
        if type(target) is cst.Name:
            other = view_root(value)
            kind = "bind" if other is None or type(value) is cst.Name else "bind view"
            self.events.append((kind, node, target.value, other, at, tuple(self._loops)))
        elif type(target) is cst.Subscript and (name := view_root(target)):
            self._write(node, name)
        else:
            for name in _target_names(target):
                self.events.append(("bind", node, name, None, at, tuple(self._loops)))

    def _write(self, node, name):
        self.events.append(("write", node, name, None, self._at(), tuple(self._loops)))

    def visit_Attribute(self, node):
        if type(node.value) is cst.Name and node.attr.value in METADATA:
            self._metadata.add(id(node.value))

    def read_after(self, name: str, node, loops: tuple) -> bool:
        """``name``'s values are read after the statement ``node``, or anywhere in a loop
        around it (``x.shape``, ``x.dtype``, ... read no value: a write does not change them)."""
        roles, metadata = self._roles, self._metadata
        if any(n.value == name and id(n) not in metadata for loop in loops for n in roles.loads(loop)):
            return True
        inside = {id(n) for n in roles.references(node)}
        after = False
        for n in self._loads:
            if id(n) in inside:
                after = True  # (the loads in source order: those past the statement's own)
            elif after and n.value == name and id(n) not in metadata:
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
