"""Lists held in another list and changed after it is made (MS509's finding, MS333's rewrite).

``masks = [a, b]`` then ``a.append(m)``: Python's ``masks`` holds the lists themselves and
sees the change; GRAPH_MODE copies a list into another when the holder is made, so the
holder keeps them as they were (torchaudio's Emformer: a Concat of nothing).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.names import STORE, NameRoles
from transpile.engine.walk import iter_nodes, read

from ..syntax import code

# what changes a list in place, as a statement of its own (``a.append(x)``)
LIST_CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"})


def holder_items(value: cst.BaseExpression) -> list[str] | None:
    """The names a holder display lists (``[a, b]``, ``(a, b)``), or None when it is no
    display or lists anything but names."""
    if not isinstance(value, (cst.List, cst.Tuple)) or not value.elements:
        return None
    if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in value.elements):
        return None
    return [e.value.value for e in value.elements]


class _ListEvents(cst.CSTVisitor):
    """The list bindings, holders and in-place changes of ``fn``'s own body, in source order
    (a class of the module: a class made in a function would hold the tree in a cycle)."""

    def __init__(self, fn: cst.FunctionDef, events: list) -> None:
        self.fn, self.events = fn, events

    def visit_FunctionDef(self, node):
        return node is self.fn

    def visit_ClassDef(self, node):
        return False

    def visit_Lambda(self, node):
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        events, value = self.events, node.value
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple):  # a, b = [], []
                for name, item in zip(target.elements, value.elements):
                    if isinstance(name.value, cst.Name) and isinstance(item.value, (cst.List, cst.ListComp)):
                        events.append(("list", name.value.value))
            elif isinstance(target, cst.Name):
                if isinstance(value, (cst.List, cst.ListComp)):
                    events.append(("list", target.value))
                if isinstance(value, (cst.List, cst.Tuple)):
                    items = [e.value.value for e in value.elements if isinstance(e.value, cst.Name)]
                    events.append(("holder", (target.value, node, items)))
            elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                events.append(("change", (target.value.value, f"{target.value.value}[...] = ...")))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            operator = code(node.operator).strip()
            self.events.append(("change", (node.target.value, f"{node.target.value} {operator} ...")))

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Name) and call.func.attr.value in LIST_CHANGES):
            name = call.func.value.value
            self.events.append(("change", (name, f"{name}.{call.func.attr.value}(...)")))


def stale_list_holders(fn: cst.FunctionDef) -> list[tuple[str, cst.Assign, dict[str, str]]]:
    """In ``fn``'s own body (not nested functions), in source order: each ``holder = [a, b]``
    (a list or tuple of names bound to lists in ``fn``) with the listed lists changed in
    place after it (``a.append(x)``, ``a += ...``, ``a[i] = x``): (holder, its assignment,
    list name -> the first change's code)."""
    events: list[tuple[str, object]] = []  # in source order: ("list", name), ("holder", (name, assign, items)), ("change", (name, code))
    read(fn, _ListEvents(fn, events))
    lists: set[str] = set()
    holders: list[tuple[str, cst.Assign, list[str], dict[str, str]]] = []
    for kind, data in events:
        if kind == "list":
            lists.add(data)
        elif kind == "holder":
            name, assign, items = data
            held = [i for i in items if i in lists]
            if held:
                holders.append((name, assign, held, {}))
        else:
            name, code = data
            for _, _, held, changes in holders:
                if name in held:
                    changes.setdefault(name, code)
    return [(name, assign, changes) for name, assign, _, changes in holders if changes]


def remade_holders(fn: cst.FunctionDef, stale=None) -> dict[str, tuple | None]:
    """The stale holders of ``fn`` (``stale_list_holders``) that MS333 makes again after the
    last change of their lists: holder -> (index of the first top-level statement of ``fn``
    assigning it, index of the one holding the last change, its assignments in source
    order); holder -> None for one made again so already (MS333's output: nothing stale is
    read). The others are left to MS509."""
    if stale is None:
        stale = stale_list_holders(fn)
    if not stale or not isinstance(fn.body, cst.IndentedBlock):
        return {}
    body = list(fn.body.body)
    roles = NameRoles.of(fn)
    plans = {}
    for holder in dict.fromkeys(name for name, _, _ in stale):
        uses = [_uses(statement, holder, roles) for statement in body]
        plan = _plan(uses)
        if plan is not False:
            plans[holder] = plan
    return plans


def _plan(uses):
    """(first, last, sites) to make the holder again after ``last``; None when a statement
    after the last change makes it again and nothing reads it before; False otherwise."""
    site_at = [i for i, use in enumerate(uses) if use["sites"]]
    if not site_at:
        return False
    first = site_at[0]
    sites = [s for use in uses for s in use["sites"]]
    items = {e.value.value for s in sites for e in s.value.elements}
    changed_at = [i for i, use in enumerate(uses) if use["changed"] & items]
    if not changed_at:
        return False
    last = changed_at[-1]
    if last >= site_at[-1]:
        end = last + 1
    else:
        end = next(i for i in site_at if i > last)
        if any(use["read"] or use["other_binds"] for use in uses[first:end]):
            return False
        return None
    for use in uses[first:end]:
        if use["read"] or use["other_binds"] or (use["bound"] & items):
            return False
    if site_at[-1] == last:
        return False
    return first, last, sites


def _uses(statement: cst.CSTNode, holder: str, roles: NameRoles) -> dict:
    """What a top-level statement does with ``holder`` and other names: its assignments of
    the holder as a display of names (``sites``), whether it reads the holder or binds it
    another way, the names it may change in place (a method called on them, an item set,
    ``+=``) and the names it binds otherwise."""
    sites, changed, augmented = [], set(), set()
    for node in iter_nodes(statement):
        kind = type(node)
        if kind is cst.Assign:
            for t in node.targets:
                target = t.target
                if (type(target) is cst.Name and target.value == holder and len(node.targets) == 1
                        and holder_items(node.value) is not None):
                    sites.append(node)
                elif type(target) is cst.Subscript and type(target.value) is cst.Name:
                    changed.add(target.value.value)
        elif kind is cst.AugAssign and type(node.target) is cst.Name:
            changed.add(node.target.value)
            augmented.add(node.target.value)
        elif kind is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name:
            changed.add(node.func.value.value)  # any method: it may change the list in place
    stored = roles.stored(statement)
    loads = {name.value for name in roles.loads(statement)}
    binds = sum(1 for name in roles.references(statement) if name.value == holder and roles.role(name) == STORE)
    return {"sites": sites, "read": holder in loads, "changed": changed, "other_binds": binds > len(sites),
            "bound": stored - augmented - {holder}}
