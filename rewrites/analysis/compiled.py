"""Which code GRAPH_MODE compiles: the scopes the GRAPH rewrites (MS3xx) apply in."""
from __future__ import annotations

import libcst as cst

FORWARD_NAMES = ("forward", "construct")


class CompiledScopes:
    """Knows whether the code being visited is compiled with forward/construct: forward,
    construct, the methods they call on ``self`` (``facts.forward_helpers``) and the
    functions nested in them. A base of the GRAPH_MODE rewrites (``compiled``)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self._helpers: list[frozenset[str]] = []  # per class: methods forward calls on self
        self._scopes: list[str] = []  # "class", "compiled" (forward and what it calls), "python"
        self._functions: list[cst.FunctionDef] = []

    @property
    def compiled(self) -> bool:
        return bool(self._scopes) and self._scopes[-1] == "compiled"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._helpers.append(self.facts.forward_helpers(node))
        self._scopes.append("class")

    def leave_ClassDef(self, original, updated):
        self._helpers.pop()
        self._scopes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._scopes and self._scopes[-1] == "class":
            compiled = node.name.value in FORWARD_NAMES or node.name.value in self._helpers[-1]
        else:
            compiled = self.compiled
        self._scopes.append("compiled" if compiled else "python")
        self._functions.append(node)

    def leave_FunctionDef(self, original, updated):
        self._scopes.pop()
        self._functions.pop()
        return updated
