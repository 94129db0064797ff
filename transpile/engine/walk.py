"""Tree walks cheaper than LibCST's own visitors.

LibCST rebuilds every node of the tree on a transformer traversal (and calls two
attribute hooks per field), which made one traversal cost more than parsing. These
walks visit children in the same lexical order as LibCST, skip layout subtrees
(whitespace, commas, brackets) that no handler asks for, and rebuild a node only when
one of its children changed.

``transform(node, driver)`` calls ``driver.on_visit(node)`` / ``driver.on_leave(original,
updated)`` like a ``CSTTransformer``; ``read(node, reader)`` calls a reader's
``visit_<Type>`` / ``leave_<Type>`` methods like a ``CSTVisitor``, changing nothing.
"""
from __future__ import annotations

import functools
import inspect
import typing
import weakref
from typing import Callable, Iterable

import libcst as cst
from libcst import CSTNode, FlattenSentinel, MaybeSentinel, RemovalSentinel

# Node types that hold nothing but layout: their subtrees are skipped unless a handler
# names one of these types.
LAYOUT_TYPES: frozenset[type] = frozenset({
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline, cst.EmptyLine,
    cst.Comment, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.LeftParen, cst.RightParen,
    cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.ImportStar,
    # operators (``+``, ``and``, ``<``, ``+=``) hold only their surrounding whitespace
    *(t for t in vars(cst).values() if isinstance(t, type) and issubclass(t, (
        cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp))),
})

# Fields of these node types hold statement bodies: a statement line left empty by
# removals is dropped from them, as LibCST does.
_BODY_OWNERS = (cst.Module, cst.IndentedBlock)

_FIELD_ORDER: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}  # isinstance(x, CSTNode) goes through ABCMeta: slow per node


def is_node(value) -> bool:
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = issubclass(kind, CSTNode)
    return known


class _FieldRecorder(cst.CSTVisitor):
    """Learns the order in which LibCST visits a node type's fields (lexical order)."""

    def __init__(self, parent: CSTNode) -> None:
        super().__init__()
        self.parent = parent
        self.fields: list[str] = []

    def on_visit(self, node) -> bool:
        return False

    def on_visit_attribute(self, node, attribute) -> None:
        if node is self.parent:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node, attribute) -> None:
        pass


def field_order(node: CSTNode) -> tuple[str, ...]:
    """The fields of ``node``'s type that hold child nodes, in LibCST's visiting order."""
    kind = type(node)
    order = _FIELD_ORDER.get(kind)
    if order is None:
        recorder = _FieldRecorder(node)
        node._visit_and_replace_children(recorder)
        order = tuple(dict.fromkeys(recorder.fields))
        # LibCST leaves out a field it holds None in (an f-string's ``format_spec``): an order
        # learnt from such a node would skip that field in every later node of the type
        if getattr(node, "format_spec", False) is not None:
            _FIELD_ORDER[kind] = order
    return order


def walked_fields(node: CSTNode, skip: frozenset) -> tuple[str, ...]:
    """The fields of ``node``'s type, in visiting order, that may hold a node of a type not
    in ``skip`` (by the fields' annotations): a name's parentheses, a call's whitespace are
    not looked at. Learnt once per type and ``skip``."""
    kind = type(node)
    known = _WALKED.get(skip)
    if known is None:
        known = _WALKED[skip] = {}
    fields = known.get(kind)
    if fields is None:
        order = _FIELD_ORDER.get(kind) or field_order(node)
        types = _field_types().get(kind, {})
        # (a field without an annotation is always looked at)
        fields = tuple(name for name in order if types.get(name) is None or not types[name] <= skip)
        if kind in _FIELD_ORDER:  # (an order learnt from a node that lacked a field is not kept)
            known[kind] = fields
    return fields


_WALKED: dict[frozenset, dict[type, tuple[str, ...]]] = {}


def children(node: CSTNode, skip: frozenset = LAYOUT_TYPES) -> Iterable[CSTNode]:
    """The child nodes of ``node`` in lexical order, layout left out."""
    node_kinds = _IS_NODE
    known = _WALKED.get(skip)
    fields = known.get(type(node)) if known is not None else None
    for name in walked_fields(node, skip) if fields is None else fields:
        value = getattr(node, name)
        kind = type(value)
        if node_kinds.get(kind) or (kind not in node_kinds and is_node(value)):
            if kind not in skip:
                yield value
        elif kind is tuple or kind is list:
            for item in value:
                if type(item) not in skip:
                    yield item


@functools.cache
def _field_types() -> dict[type, dict[str, frozenset[type]]]:
    """For each concrete LibCST node type, the concrete node types each annotated field may
    hold, read from its type annotation (an abstract base stands for its concrete
    subclasses; a field of strings holds none)."""
    concrete = [t for t in vars(cst).values() if isinstance(t, type) and issubclass(t, CSTNode)
                and not inspect.isabstract(t) and hasattr(t, "__dataclass_fields__")]

    # (a concrete type's ``__mro__`` names its bases: issubclass through ABCMeta, for every
    # pair, was most of this function's time, which every run pays once)
    subclasses: dict[type, tuple[type, ...]] = {}

    def named(annotation, found: set[type]) -> None:
        if isinstance(annotation, type):
            if issubclass(annotation, CSTNode):
                held = subclasses.get(annotation)
                if held is None:
                    held = subclasses[annotation] = tuple(t for t in concrete if annotation in t.__mro__)
                found.update(held)
            return
        for argument in typing.get_args(annotation):
            named(argument, found)

    fields: dict[type, dict[str, frozenset[type]]] = {}
    for kind in concrete:
        hints = typing.get_type_hints(kind)
        fields[kind] = {}
        for name in kind.__dataclass_fields__:
            if name in hints:
                found: set[type] = set()
                named(hints[name], found)
                fields[kind][name] = frozenset(found)
    return fields


@functools.cache
def _may_hold() -> dict[type, frozenset[type]]:
    """For each concrete LibCST node type, the node types its subtrees may hold (its fields'
    types, closed over)."""
    held = {kind: set().union(*types.values()) for kind, types in _field_types().items()}
    changed = True
    while changed:
        changed = False
        for kind, inner in held.items():
            grown = inner.union(*(held[t] for t in inner))
            if len(grown) != len(inner):
                held[kind], changed = grown, True
    return {kind: frozenset(inner) for kind, inner in held.items()}


@functools.lru_cache(maxsize=256)
def skippable(handled: frozenset[str]) -> frozenset[type]:
    """The node types a walk whose handlers are for the types named in ``handled`` need not
    enter: layout, and every type whose subtrees can hold no handled node (a walk that only
    handles statements skips every expression)."""
    may_hold = _may_hold()
    return LAYOUT_TYPES | frozenset(
        kind for kind, inner in may_hold.items()
        if kind.__name__ not in handled and not any(t.__name__ in handled for t in inner))


def _removed_value(parent: CSTNode, name: str):
    default = parent.__dataclass_fields__[name].default
    if default is None or default is MaybeSentinel.DEFAULT:
        return default
    raise TypeError(f"a {type(getattr(parent, name)).__name__} in {type(parent).__name__}.{name} cannot be removed")


def transform(node: CSTNode, driver, skip: frozenset = LAYOUT_TYPES):
    """Transform ``node`` with ``driver.on_visit``/``on_leave``; returns the new node, a
    RemovalSentinel or a FlattenSentinel, like ``CSTNode.visit``."""
    on_visit, on_leave = driver.on_visit, driver.on_leave
    node_kinds = _IS_NODE  # (looked up inline: this runs for every field of every node)
    walked = _WALKED.setdefault(skip, {})

    def walk(node: CSTNode):
        if on_visit(node):
            changes = None
            fields = walked.get(type(node))
            for name in walked_fields(node, skip) if fields is None else fields:
                value = getattr(node, name)
                kind = type(value)
                if node_kinds.get(kind) or (kind not in node_kinds and is_node(value)):
                    if kind in skip:
                        continue
                    new = walk(value)
                    if new is not value:
                        if isinstance(new, RemovalSentinel):
                            new = _removed_value(node, name)
                        elif isinstance(new, FlattenSentinel):
                            raise TypeError(f"{type(node).__name__}.{name} cannot hold a sequence")
                        changes = changes or {}
                        changes[name] = new
                elif kind is tuple or kind is list:
                    items = None
                    for i, item in enumerate(value):
                        if type(item) in skip:
                            if items is not None:
                                items.append(item)
                            continue
                        new = walk(item)
                        if new is item and items is None:
                            continue
                        if items is None:
                            items = list(value[:i])
                        if isinstance(new, RemovalSentinel):
                            continue
                        news = new.nodes if isinstance(new, FlattenSentinel) else (new,)
                        for one in news:
                            if name == "body" and isinstance(node, _BODY_OWNERS) and not item._is_removable() \
                                    and one._is_removable():
                                continue  # a statement line emptied by removals goes
                            items.append(one)
                    if items is not None:
                        changes = changes or {}
                        changes[name] = tuple(items)
            updated = node.with_changes(**changes) if changes else node
        else:
            updated = node
        return on_leave(node, updated)

    try:
        return walk(node)
    finally:
        del walk  # the recursive closure is a cycle holding the driver (and through it the tree)


def _dispatch(reader_type: type) -> tuple[dict, dict]:
    """visit_/leave_ handlers by node type name. LibCST's visitor base classes define a
    no-op for every node type; only the handlers written outside LibCST count."""
    table = _DISPATCH.get(reader_type)
    if table is None:
        visits: dict[str, Callable] = {}
        leaves: dict[str, Callable] = {}
        for klass in reversed(reader_type.__mro__):
            if klass.__module__.startswith("libcst") or klass is object:
                continue
            for attr, value in vars(klass).items():
                kind, _, node_type = attr.partition("_")
                if node_type and "_" not in node_type and kind in ("visit", "leave") and callable(value):
                    (visits if kind == "visit" else leaves)[node_type] = value
        table = _DISPATCH[reader_type] = (visits, leaves)
    return table


_DISPATCH: "weakref.WeakKeyDictionary[type, tuple[dict, dict]]" = weakref.WeakKeyDictionary()  # readers are often local classes


def read(node: CSTNode, reader) -> None:
    """Walk ``node`` calling ``reader.visit_<Type>(node)`` (False: skip the children) and
    ``reader.leave_<Type>(node)``; layout nodes are skipped unless the reader handles them."""
    visits, leaves = _dispatch(type(reader))
    handled = {t for t in LAYOUT_TYPES if t.__name__ in visits or t.__name__ in leaves}
    skip = skippable(frozenset(visits) | frozenset(leaves)) - handled

    def walk(node: CSTNode) -> None:
        name = type(node).__name__
        visit = visits.get(name)
        if visit is None or visit(reader, node) is not False:
            for child in children(node, skip):
                walk(child)
        leave = leaves.get(name)
        if leave is not None:
            leave(reader, node)

    try:
        walk(node)
    finally:
        del walk  # the recursive closure is a cycle holding the reader


def iter_nodes(node: CSTNode, prune: Callable[[CSTNode], bool] | None = None) -> Iterable[CSTNode]:
    """Every node under ``node`` (itself first), depth first, layout left out; children of
    nodes for which ``prune`` says True are not entered."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if prune is None or current is node or not prune(current):
            stack.extend(reversed(list(children(current))))


class _HandlerDriver:
    """Drives a transformer-like object's ``visit_<Type>``/``leave_<Type>`` methods."""

    def __init__(self, transformer) -> None:
        self.transformer = transformer
        self.visits, self.leaves = _dispatch(type(transformer))

    def on_visit(self, node) -> bool:
        visit = self.visits.get(type(node).__name__)
        return visit is None or visit(self.transformer, node) is not False

    def on_leave(self, original, updated):
        leave = self.leaves.get(type(original).__name__)
        return updated if leave is None else leave(self.transformer, original, updated)


def rewrite(node: CSTNode, transformer):
    """``node.visit(transformer)`` for a transformer with ``visit_<Type>``/``leave_<Type>``
    methods only, on the cheaper walk."""
    return transform(node, _HandlerDriver(transformer))


SCOPE_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


class ScopeIndex:
    """The nodes of chosen types in a module, listed by the scope that holds them
    (function, class, lambda or the module), in source order: one walk of the file, after
    which questions about any scope are answered without walking it again.

    A scope holds its body; a function's decorators, parameters and annotations, and a
    class's bases, belong to the enclosing scope, where Python evaluates them. A nested
    scope is listed in its parent at its place, so ``nodes`` can step into it.
    """

    def __init__(self, module: cst.Module, kinds: Iterable[type], names=None) -> None:
        """``names``: a ``names.NameRoles`` to fill on the way (the file's name index, with
        no walk of its own); nothing inside an import statement is listed then."""
        self.kinds = frozenset(kinds) | SCOPE_TYPES
        self._names = names
        self._markers = names.markers if names is not None else {}
        held = self._held = {id(module): []}
        top = held[id(module)]
        self._spans: dict[int, tuple[int, int]] = {}  # top-level statement -> its share of ``top``
        for child in children(module):
            start = len(top)
            self._visit(child, top)
            self._spans[id(child)] = (start, len(top))

    def _visit(self, node: CSTNode, held: list) -> None:
        kind = type(node)
        if kind is cst.Name and kind not in self.kinds:
            return  # (a name holds no node: most of a walk's nodes end here)
        mark = self._markers.get(kind)
        entered = mark is None or not mark(self._names, node)
        if kind not in SCOPE_TYPES:
            if kind in self.kinds:
                held.append(node)
            if not entered:
                return
            for child in children(node):
                self._visit(child, held)
            return
        inner = self._held[id(node)] = []
        for field in field_order(node):
            if field == "body":
                held.append(node)  # after its header, which runs first
            value = getattr(node, field)
            parts = (value,) if is_node(value) else value if type(value) in (tuple, list) else ()
            for part in parts:
                if type(part) not in LAYOUT_TYPES:
                    # the body is the scope's own; the rest is evaluated outside it
                    self._visit(part, inner if field == "body" else held)

    def nodes(self, scope: CSTNode, kinds: tuple[type, ...] | frozenset, enter: Callable[[CSTNode], bool] | None = None):
        """Nodes of ``kinds`` in ``scope``, in source order, with those of the nested scopes
        ``enter`` accepts (all of them when ``enter`` is None)."""
        return self._expand(self._held.get(id(scope), ()), kinds, enter)

    def _expand(self, held, kinds, enter):
        for node in held:
            kind = type(node)
            if kind in kinds:
                yield node
            if kind in SCOPE_TYPES and (enter is None or enter(node)):
                yield from self.nodes(node, kinds, enter)

    def top_level_statement_nodes(self, stmt: CSTNode, kinds, enter: Callable[[CSTNode], bool] | None = None):
        """``nodes`` for one statement of the module's body (what of the module's own
        scope that statement holds)."""
        start, end = self._spans.get(id(stmt), (0, 0))
        module_held = next(iter(self._held.values()))
        return self._expand(module_held[start:end], kinds, enter)
