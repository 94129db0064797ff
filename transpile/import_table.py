"""A cheap table of the names a file's import statements bind.

Resolving ``tnn.Linear`` to ``torch.nn.Linear`` needs only the imports, not a full
scope analysis (LibCST's QualifiedNameProvider costs about eight parses).
"""
from __future__ import annotations

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of Names and Attributes, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def build_dotted(name: str) -> cst.BaseExpression:
    """The expression for a dotted name (``a.b.c``)."""
    head, *rest = name.split(".")
    node: cst.BaseExpression = cst.Name(head)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


# Statement-level nodes that may hold an import inside a function (expressions cannot).
_BLOCKS = (cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.Finally, cst.ExceptHandler,
           cst.ExceptStarHandler, cst.MatchCase)


def _add_function_imports(table: "ImportTable", node: cst.CSTNode, in_function: bool) -> None:
    """Add the imports inside function bodies, going through statements only (the file's
    expressions are most of its nodes, and never hold one)."""
    for child in node.children:
        if isinstance(child, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if in_function:
                for small in child.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        table.add(small)
        elif isinstance(child, _BLOCKS):
            _add_function_imports(table, child, in_function or isinstance(child, cst.FunctionDef))


class ImportTable:
    """Binding name -> qualified name, for every import seen so far."""

    def __init__(self) -> None:
        self.bindings: dict[str, str] = {}
        self.relative: set[str] = set()  # names bound by relative imports (the package's own)
        self.local_only: set[str] = set()  # names bound only by imports inside function bodies

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

        def scan(body) -> None:
            for stmt in body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, (cst.Import, cst.ImportFrom)):
                            table.add(small)
                elif isinstance(stmt, (cst.If, cst.Try)):
                    scan(stmt.body.body)
                    for extra in (getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
                        if extra is not None and hasattr(extra, "body"):
                            inner = extra.body
                            scan(inner.body if hasattr(inner, "body") else [inner])
                    for handler in getattr(stmt, "handlers", ()):
                        scan(handler.body.body)

        scan(module.body)
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

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a dotted expression whose head is an imported name."""
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.bindings.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def roots(self) -> set[str]:
        return {q.split(".")[0] for q in self.bindings.values()}
