"""The module's functions that compiled methods call by name, for the GRAPH passes that
rewrite them too: ``ctx.compiled`` covers forward, construct and what they call on
``self``, not yet a module function they call (x-transformers' layer order, the Karras
U-Nets' ``normalize_weight``), which GRAPH_MODE compiles as well."""
from __future__ import annotations

import libcst as cst

from transpile.engine.walk import read

from ...analysis.compiled import compiled_method


class CompiledOrCalled:
    """A pass's mixin: ``visit_Module`` finds the functions, ``_compiled()`` says whether the
    traversal is in compiled code or in one of them (its outermost function)."""

    _called: frozenset[int] = frozenset()  # ids of the module's functions compiled methods call by name

    def visit_Module(self, node: cst.Module) -> None:
        functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        if not functions:
            return  # (no module function a method could call: the methods are not read)
        calls = _CalledNames()
        for cls in (s for s in node.body if isinstance(s, cst.ClassDef)):
            for method in cls.body.body:
                if isinstance(method, cst.FunctionDef) and compiled_method(self.ctx, method, cls):
                    read(method, calls)
        self._called = frozenset(id(functions[n]) for n in calls.names if n in functions)

    def _compiled(self) -> bool:
        scopes = self.ctx.open_scopes
        return self.ctx.compiled or bool(scopes and id(scopes[0]) in self._called)


class _CalledNames(cst.CSTVisitor):
    """The names called as functions (``f(...)``) under the nodes it visits."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.names.add(node.func.value)
