"""A cheap table of the names a file's import statements bind.

Resolving ``tnn.Linear`` to ``torch.nn.Linear`` needs only the imports, not a full
scope analysis (LibCST's QualifiedNameProvider costs about eight parses).
"""
from __future__ import annotations

import libcst as cst

from .walk import children


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of Names and Attributes, else None."""
    # (type identity, not isinstance: LibCST's node classes are final, and isinstance
    # through their ABC metaclass was a tenth of the passes' time, called on every name)
    kind = type(node)
    if kind is _NAME:
        return node.value
    parts: list[str] = []
    while kind is _ATTRIBUTE:
        parts.append(node.attr.value)
        node = node.value
        kind = type(node)
    if kind is not _NAME:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


_NAME, _ATTRIBUTE = cst.Name, cst.Attribute


def build_dotted(name: str) -> cst.BaseExpression:
    """The expression for a dotted name (``a.b.c``)."""
    head, *rest = name.split(".")
    node: cst.BaseExpression = cst.Name(head)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


# Statement-level nodes that may hold an import inside a function (expressions cannot), as
# a set of concrete types (isinstance against LibCST's abstract bases is slow on every node).
_BLOCKS = frozenset(
    t for t in vars(cst).values()
    if isinstance(t, type) and issubclass(t, (cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.Finally,
                                              cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase))
    and not getattr(t, "__abstractmethods__", None)
)
_LINES = frozenset({cst.SimpleStatementLine, cst.SimpleStatementSuite})


def _add_function_imports(table: "ImportTable", node: cst.CSTNode, in_function: bool) -> None:
    """Add the imports inside function bodies, going through statements only (the file's
    expressions are most of its nodes, and never hold one). ``walk.children``: LibCST's
    ``node.children`` visits the node to list them, which cost more than the rest."""
    for child in children(node):
        kind = type(child)
        if kind in _LINES:
            if in_function:
                for small in child.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        table.add(small)
        elif kind in _BLOCKS:
            _add_function_imports(table, child, in_function or kind is cst.FunctionDef)


def _bound_names(target: cst.CSTNode):
    """The names an assignment, loop or ``as`` target binds (``a`` and ``b`` of ``a, [b, *c.d]``)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from _bound_names(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from _bound_names(target.value)


def _statement_bindings(body, names: set[str], declared: set[str]) -> None:
    """Add to ``names`` what the statements of one scope bind other than by import (nested
    functions and classes add their own name only); ``global``/``nonlocal`` names go to ``declared``."""
    for stmt in body:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        names.update(_bound_names(t.target))
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    if not isinstance(small, cst.AnnAssign) or small.value is not None:
                        names.update(_bound_names(small.target))
                elif isinstance(small, (cst.Global, cst.Nonlocal)):
                    declared.update(n.name.value for n in small.names)
            continue
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
            continue
        if isinstance(stmt, cst.For):
            names.update(_bound_names(stmt.target))
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    names.update(_bound_names(item.asname.name))
        for child in children(stmt):  # the blocks of if/for/while/try/with/match
            _block_bindings(child, names, declared)


def _block_bindings(node: cst.CSTNode, names: set[str], declared: set[str]) -> None:
    """``_statement_bindings`` of one child of a compound statement (a suite, an ``elif``,
    an ``else``/``except``/``finally`` clause or a ``case``)."""
    if isinstance(node, cst.BaseCompoundStatement):  # an elif
        _statement_bindings([node], names, declared)
    elif isinstance(node, cst.IndentedBlock):
        _statement_bindings(node.body, names, declared)
    elif isinstance(node, cst.SimpleStatementSuite):
        _statement_bindings([node], names, declared)
    elif isinstance(node, (cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)):
        if isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler)) and node.name is not None:
            names.update(_bound_names(node.name.name))
        _block_bindings(node.body, names, declared)


def scope_bindings(scope: cst.CSTNode) -> frozenset[str]:
    """The names a function or class binds itself other than by import (parameters,
    assignments, loops, ``with``/``except`` targets, nested definitions; not the names it
    declares ``global`` or ``nonlocal``); empty for other nodes."""
    if not isinstance(scope, (cst.FunctionDef, cst.ClassDef)):
        return frozenset()
    names: set[str] = set()
    declared: set[str] = set()
    if isinstance(scope, cst.FunctionDef):
        p = scope.params
        names.update(param.name.value for param in (*p.posonly_params, *p.params, *p.kwonly_params))
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
    _block_bindings(scope.body, names, declared)
    return frozenset(names - declared)


class ImportTable:
    """Binding name -> qualified name, for every import seen so far."""

    def __init__(self) -> None:
        self.bindings: dict[str, str] = {}
        self.relative: set[str] = set()  # names bound by relative imports (the package's own)
        self.star_roots: set[str] = set()  # top-level packages star-imported (``from torch import *``)
        self.local_only: set[str] = set()  # names bound only by imports inside function bodies
        # names bound only under ``if TYPE_CHECKING:``: they qualify annotations, and hold
        # nothing when the code runs
        self.type_checking_only: set[str] = set()
        # The functions and classes the traversal is inside (the caller shares its list):
        # a name one of them binds itself (``one_hot = ...``) hides the import there.
        self.open_scopes: list[cst.CSTNode] = []
        self._scope_bindings: dict[int, tuple[cst.CSTNode, frozenset[str]]] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None:
                    self.bindings[alias.asname.name.value] = full
                else:
                    # ``import a.b`` binds ``a``; ``a.b.x`` then resolves by itself.
                    root = full.split(".")[0]
                    self.bindings[root] = root
            return
        if isinstance(node.names, cst.ImportStar):
            if not node.relative and node.module is not None:  # binds names no table lists: see roots()
                self.star_roots.add((dotted_name(node.module) or "").split(".")[0])
            return
        if node.relative:
            # ``from . import initialization as init``: a name of the package's own (not a
            # tensor, not torch's init), kept apart: qualify() resolves imported names only
            for alias in node.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else dotted_name(alias.name)
                self.relative.add(alias.asname.name.value if alias.asname is not None else name)
            return
        if node.module is None:
            return
        module = dotted_name(node.module)
        if module is None:
            return
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted_name(alias.name)
            bound = alias.asname.name.value if alias.asname is not None else name
            self.bindings[bound] = f"{module}.{name}"

    @classmethod
    def from_module(cls, module: cst.Module) -> "ImportTable":
        """Imports at module level, including inside top-level if/try blocks."""
        table = cls()
        guarded = cls()  # imports under ``if TYPE_CHECKING:`` (nothing at run time)

        def scan(body, into) -> None:
            for stmt in body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, (cst.Import, cst.ImportFrom)):
                            into.add(small)
                elif isinstance(stmt, cst.If) and _type_checking(stmt.test) and stmt.orelse is None:
                    scan(stmt.body.body, guarded)
                elif isinstance(stmt, (cst.If, cst.Try)):
                    scan(stmt.body.body, into)
                    for extra in (getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
                        if extra is not None and hasattr(extra, "body"):
                            inner = extra.body
                            scan(inner.body if hasattr(inner, "body") else [inner], into)
                    for handler in getattr(stmt, "handlers", ()):
                        scan(handler.body.body, into)

        scan(module.body, table)
        del scan  # the recursive closure is a cycle holding the table
        for name, qual in guarded.bindings.items():  # they qualify annotations; a run-time import wins
            if name not in table.bindings:
                table.bindings[name] = qual
                table.type_checking_only.add(name)
        table.relative |= guarded.relative
        # Lazy imports inside functions (``import torch`` in a config method, to load
        # faster) bind names the function's code uses as the module's own would; a name
        # the module binds at its level keeps that binding.
        local = cls()
        _add_function_imports(local, module, False)
        for name, qual in local.bindings.items():
            if name not in table.bindings:
                table.bindings[name] = qual
                table.local_only.add(name)
        table.relative |= local.relative - table.bindings.keys()
        return table

    def hidden(self, name: str, scopes: list[cst.CSTNode] | None = None) -> bool:
        """Whether ``name`` is a local of the scope the traversal is in (``scopes``, else
        ``open_scopes``, outermost first): a function that assigns it (or an enclosing
        one), or the class whose body it is in (a class's names are not visible in its methods)."""
        for depth, scope in enumerate(reversed(self.open_scopes if scopes is None else scopes)):
            if name in self.bindings_of(scope) and (depth == 0 or not isinstance(scope, cst.ClassDef)):
                return True
        return False

    def bindings_of(self, scope: cst.CSTNode) -> frozenset[str]:
        """``scope_bindings(scope)``, computed once per node."""
        known = self._scope_bindings.get(id(scope))
        if known is None or known[0] is not scope:  # the node itself is kept: ids are reused
            known = self._scope_bindings[id(scope)] = (scope, scope_bindings(scope))
        return known[1]

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a dotted expression whose head is an imported name."""
        head = node
        while type(head) is _ATTRIBUTE:  # (most heads are no import: ``self.x.y``, locals)
            head = head.value
        if type(head) is not _NAME:
            return None
        target = self.bindings.get(head.value)
        if target is None or (self.open_scopes and self.hidden(head.value)):
            return None
        if head is node:
            return target
        rest = dotted_name(node).partition(".")[2]
        return f"{target}.{rest}"

    def roots(self) -> set[str]:
        """The top-level packages the file imports from (``from torch import *`` included)."""
        return {q.split(".")[0] for q in self.bindings.values()} | self.star_roots


def _type_checking(test: cst.BaseExpression) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``: a block that never runs."""
    if isinstance(test, cst.Name):
        return test.value == "TYPE_CHECKING"
    return isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING" and isinstance(test.value, cst.Name)
