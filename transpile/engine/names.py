"""Which names of a tree are references: the one name-use analysis of the project.

A LibCST ``Name`` is not always a variable: ``x.attr``'s ``attr``, ``f(key=v)``'s ``key``, a
parameter's, function's or class's own name, the names of an import, of ``global``, of
``except E as e`` and of match patterns are labels (CPython's ``ast`` has no ``Name`` for
them). Every other ``Name`` is an expression that reads (load), binds (store) or deletes
(del) the variable, with the meaning of ``ast.Name``'s ``ctx`` (``None``, ``True`` and
``False`` are constants, no variables).

``NameRoles`` holds, for one tree, the labels and the names that store or delete; a name
in neither is a load. The file's roles are filled by the scope walk that indexes it
(``walk.ScopeIndex``: no walk of its own), the converted tree's by ``NameRoles.of``. Every
question about names is a query on it (``is_reference``, ``loads``, ``stored``,
``load_counts``, ``identifiers``); rewrites never walk a tree for names themselves
(``tests/test_pass_rules.py``). Python's binding rules are not framework-specific: the
engine knows nothing of torch here either.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Iterator

import libcst as cst

from .walk import children, iter_nodes

LOAD, STORE, DEL = "load", "store", "del"
CONSTANTS = frozenset({"None", "True", "False"})  # names to LibCST, constants to Python


def _label(roles: "NameRoles", node) -> None:
    if type(node) is cst.Name:
        roles.labels.add(id(node))


def _targets(roles: "NameRoles", target, role: str) -> None:
    """A name bound (or deleted) by an assignment, loop, ``with ... as``, walrus or ``del``:
    through tuples, lists and starred elements; an attribute or subscript target reads its parts."""
    kind = type(target)
    if kind is cst.Name:
        roles.stores[id(target)] = role
    elif kind is cst.Tuple or kind is cst.List:
        for element in target.elements:
            _targets(roles, element.value, role)
    elif kind is cst.StarredElement:
        _targets(roles, target.value, role)


def _import(roles: "NameRoles", node) -> bool:
    for inner in iter_nodes(node):
        _label(roles, inner)
    return True  # not entered: its dotted names are no attributes of the code


def _mark_attribute(roles: "NameRoles", node: cst.Attribute) -> None:
    roles.labels.add(id(node.attr))
    roles.attributes.add(node.attr.value)


def _mark_arg(roles: "NameRoles", node: cst.Arg) -> None:
    if node.keyword is not None:
        roles.labels.add(id(node.keyword))


def _mark_named(roles: "NameRoles", node) -> None:  # Param, FunctionDef, ClassDef
    roles.labels.add(id(node.name))


def _mark_names(roles: "NameRoles", node) -> None:  # global, nonlocal
    for item in node.names:
        _label(roles, item.name)


def _mark_handler(roles: "NameRoles", node: cst.ExceptHandler) -> None:
    if node.name is not None:
        _label(roles, node.name.name)


def _mark_assign(roles: "NameRoles", node: cst.Assign) -> None:
    for target in node.targets:
        _targets(roles, target.target, STORE)


def _mark_target(roles: "NameRoles", node) -> None:  # AnnAssign, AugAssign, For, CompFor, NamedExpr
    _targets(roles, node.target, STORE)


def _mark_with_item(roles: "NameRoles", node: cst.WithItem) -> None:
    if node.asname is not None:
        _targets(roles, node.asname.name, STORE)


def _mark_del(roles: "NameRoles", node: cst.Del) -> None:
    _targets(roles, node.target, DEL)


def _mark_pattern_name(roles: "NameRoles", node) -> None:  # MatchAs, MatchStar
    if node.name is not None:
        _label(roles, node.name)


def _mark_mapping(roles: "NameRoles", node: cst.MatchMapping) -> None:
    if node.rest is not None:
        _label(roles, node.rest)


def _mark_keyword_pattern(roles: "NameRoles", node: cst.MatchKeywordElement) -> None:
    _label(roles, node.key)


# What a node says of the names just under it; a marker that returns True has labelled the
# whole subtree, which the walk does not enter (imports).
MARKERS: dict[type, Callable] = {
    cst.Attribute: _mark_attribute, cst.Arg: _mark_arg, cst.Param: _mark_named, cst.FunctionDef: _mark_named,
    cst.ClassDef: _mark_named, cst.Import: _import, cst.ImportFrom: _import, cst.Global: _mark_names,
    cst.Nonlocal: _mark_names, cst.ExceptHandler: _mark_handler, cst.Assign: _mark_assign,
    cst.AnnAssign: _mark_target, cst.AugAssign: _mark_target, cst.For: _mark_target, cst.CompFor: _mark_target,
    cst.NamedExpr: _mark_target, cst.WithItem: _mark_with_item, cst.Del: _mark_del,
    cst.MatchAs: _mark_pattern_name, cst.MatchStar: _mark_pattern_name, cst.MatchMapping: _mark_mapping,
    cst.MatchKeywordElement: _mark_keyword_pattern,
}


class NameRoles:
    """The role of every ``Name`` of one tree (see the module docstring). Ask with nodes of
    that tree: a node from elsewhere counts as a load."""

    __slots__ = ("labels", "stores", "attributes")
    markers = MARKERS  # for the scope walk that fills the file's roles (walk.ScopeIndex)

    def __init__(self) -> None:
        self.labels: set[int] = set()  # ids of names that are no variables
        self.stores: dict[int, str] = {}  # ids of names bound or deleted -> STORE or DEL
        self.attributes: set[str] = set()  # every attribute name of the code (``p.grad``: grad)

    def freeze(self) -> "NameRoles":
        """Read-only from here on (the walk that filled it is over)."""
        self.labels = frozenset(self.labels)
        self.stores = MappingProxyType(self.stores)
        self.attributes = frozenset(self.attributes)
        return self

    @classmethod
    def of(cls, tree: cst.CSTNode) -> "NameRoles":
        """The roles of a tree no scope walk indexed (a converted module): one walk."""
        roles = cls()
        stack = [tree]
        while stack:
            node = stack.pop()
            mark = MARKERS.get(type(node))
            if mark is not None and mark(roles, node):
                continue
            stack.extend(children(node))
        return roles.freeze()

    # -- one name ----------------------------------------------------------------------
    def is_reference(self, name: cst.Name) -> bool:
        """Whether ``name`` is a variable (read, bound or deleted), not a label or constant."""
        return id(name) not in self.labels and name.value not in CONSTANTS

    def role(self, name: cst.Name) -> str | None:
        """LOAD, STORE or DEL; None for a label."""
        key = id(name)
        if key in self.labels or name.value in CONSTANTS:
            return None
        return self.stores.get(key, LOAD)

    # -- a subtree -----------------------------------------------------------------------
    def references(self, node: cst.CSTNode, enter: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.Name]:
        """The variables under ``node`` (itself included), in source order; the children of
        nodes ``enter`` refuses are not read."""
        labels = self.labels
        for inner in iter_nodes(node, None if enter is None else (lambda n: not enter(n))):
            if type(inner) is cst.Name and id(inner) not in labels and inner.value not in CONSTANTS:
                yield inner

    def loads(self, node: cst.CSTNode) -> Iterator[cst.Name]:
        """The names read under ``node``, in source order."""
        stores = self.stores
        return (name for name in self.references(node) if id(name) not in stores)

    def load_counts(self, node: cst.CSTNode) -> dict[str, int]:
        """How many times each name is read under ``node`` (nested scopes included)."""
        counts: dict[str, int] = {}
        for name in self.loads(node):
            counts[name.value] = counts.get(name.value, 0) + 1
        return counts

    def referenced(self, node: cst.CSTNode) -> set[str]:
        """The variables named under ``node``, read or bound."""
        return {name.value for name in self.references(node)}

    def stored(self, node: cst.CSTNode) -> set[str]:
        """The names bound or deleted under ``node`` (nested scopes included)."""
        stores = self.stores
        return {name.value for name in self.references(node) if id(name) in stores}


def identifiers(node: cst.CSTNode) -> set[str]:
    """Every identifier written under ``node``, label or variable: a new name that must not
    be confused with any of them (a fresh local) avoids them all."""
    return {inner.value for inner in iter_nodes(node) if type(inner) is cst.Name}


def scoped_references(tree: cst.CSTNode, also: tuple[type, ...] = ()) -> list[tuple[cst.CSTNode, tuple]]:
    """Every variable of a tree no scope walk indexed (a converted module), in source order,
    with the functions and classes it is in, outermost first: one walk. A definition's
    decorators, parameter defaults and annotations, return annotation and bases are in the
    scope around it, its body in its own. Nodes of the types ``also`` names come too."""
    roles = NameRoles()
    scopes: list[tuple] = [()]  # the open definitions, outermost first, as each is entered
    found: list[tuple[cst.CSTNode, tuple]] = []
    # The commonest nodes, their label names not entered (an attribute's name, an
    # argument's keyword): a third of the walk's time went to marking and skipping them.
    direct = not also or not {cst.Attribute, cst.Call, cst.Arg, *_PLAIN_PARTS} & set(also)
    # (only labels matter here: the markers of what binds, which mark no label, are not run)
    markers = {kind: mark for kind, mark in MARKERS.items() if kind not in _BINDING_MARKERS}

    def walk(node: cst.CSTNode) -> None:
        kind = type(node)
        if direct:
            if kind is cst.Attribute:
                walk(node.value)
                return
            if kind is cst.Call:
                walk(node.func)
                for arg in node.args:
                    walk(arg.value)
                return
            parts = _PLAIN_PARTS.get(kind)
            if parts is not None:
                for part in parts(node):
                    walk(part)
                return
        mark = markers.get(kind)
        if mark is not None and mark(roles, node):
            return
        if kind is cst.Name:
            if id(node) not in roles.labels and node.value not in CONSTANTS:
                found.append((node, scopes[-1]))
            return
        if kind in also:
            found.append((node, scopes[-1]))
        if kind is cst.FunctionDef or kind is cst.ClassDef:
            for part in _outside(node):
                walk(part)
            scopes.append((*scopes[-1], node))
            walk(node.body)
            scopes.pop()
            return
        for child in children(node):
            walk(child)

    walk(tree)
    del walk  # (the recursive closure and its cell are a cycle holding the tree's names)
    return found


# Nodes that label no name, with the parts that hold expressions, in source order (the
# commonest statements and leaves; the walk takes them without the generic field scan).
_PLAIN_PARTS: dict[type, Callable] = {
    cst.SimpleStatementLine: lambda node: node.body,
    cst.IndentedBlock: lambda node: node.body,
    cst.Expr: lambda node: (node.value,),
    cst.Return: lambda node: () if node.value is None else (node.value,),
    cst.Assign: lambda node: (*(target.target for target in node.targets), node.value),
    cst.Integer: lambda node: (),
    cst.Float: lambda node: (),
    cst.SimpleString: lambda node: (),
}
_BINDING_MARKERS = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr,
                              cst.WithItem, cst.Del})


def _outside(node) -> list:
    """What a function or class definition evaluates in the scope around it."""
    if type(node) is cst.ClassDef:
        return [*node.decorators, *node.bases, *node.keywords]
    p = node.params
    params = (*p.posonly_params, *p.params, *p.kwonly_params,
              *(s for s in (p.star_arg, p.star_kwarg) if isinstance(s, cst.Param)))
    return [*node.decorators, *(x for param in params for x in (param.default, param.annotation) if x is not None),
            *([node.returns] if node.returns else [])]
