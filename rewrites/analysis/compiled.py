"""Which code GRAPH_MODE compiles: the scopes the GRAPH rewrites (MS3xx) apply in.

The engine keeps ``ctx.compiled`` as it walks: a method is compiled when ``compiled_method``
says so, a function nested in compiled code is compiled too, a class body is not.
"""
from __future__ import annotations

import libcst as cst

FORWARD_NAMES = ("forward", "construct")


def compiled_method(ctx, function: cst.FunctionDef, cls: cst.ClassDef) -> bool:
    """forward, construct and the methods they call on ``self`` (``facts.forward_helpers``),
    and the methods they call on a submodule of a class of the file (``facts.submodule_helpers``)."""
    name = function.name.value
    if name in FORWARD_NAMES:
        return True
    facts = ctx.facts
    return facts is not None and (name in facts.forward_helpers(cls)
                                  or (cls.name.value, name) in facts.submodule_helpers())


VALUE_STATEMENTS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)


def compiled_statement(ctx, line: cst.SimpleStatementLine):
    """The one statement of ``line`` that computes a value (an assignment, a return, an
    expression) in a compiled function, with that function: ``(function, statement)``, or
    None (not compiled, several statements on the line, another kind, a bare return)."""
    function = ctx.current_function
    if not (ctx.compiled and function is not None and len(line.body) == 1):
        return None
    statement = line.body[0]
    if not isinstance(statement, VALUE_STATEMENTS) or statement.value is None:
        return None
    return function, statement


class OwnBody:
    """A visitor's (or transformer's) mixin: it reads a function's own body, not the functions,
    classes and lambdas nested in it (their code is theirs)."""

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False
