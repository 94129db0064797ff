"""Which code GRAPH_MODE compiles: the scopes the GRAPH rewrites (MS3xx) apply in.

The engine keeps ``ctx.compiled`` as it walks: a method is compiled when ``compiled_method``
says so, a function nested in compiled code is compiled too, a class body is not.
"""
from __future__ import annotations

import libcst as cst

FORWARD_NAMES = ("forward", "construct")


def compiled_method(ctx, function: cst.FunctionDef, cls: cst.ClassDef) -> bool:
    """forward, construct and the methods they call on ``self`` (``facts.forward_helpers``)."""
    name = function.name.value
    return name in FORWARD_NAMES or (ctx.facts is not None and name in ctx.facts.forward_helpers(cls))


class OwnBody:
    """A visitor's (or transformer's) mixin: it reads a function's own body, not the functions,
    classes and lambdas nested in it (their code is theirs)."""

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False
