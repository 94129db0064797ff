"""MS305: ``a ^ b`` in functions -> ``_py_xor(a, b)``, which GRAPH_MODE compiles for bools.

GRAPH_MODE's ``^`` takes integers and tensors only: on two Python bools it fails with
"For BitXor, only integer types are supported, but got type of x:BoolImm"
(denoising-diffusion's ``def xnor(x, y): return not (x ^ y)``, called from forward
with ``exists(labels)`` and a flag). Which operands are bools is known only at run time,
so the emitted helper decides there (a constant in a graph)::

    def _py_xor(a, b):
        if isinstance(a, bool) and isinstance(b, bool):
            return a != b
        return a ^ b

It gives what ``a ^ b`` gives for every type (``True ^ False`` is ``True != False``),
so it is used in every function, whether or not GRAPH_MODE compiles it: which
functions forward reaches is not known here. ``^`` with an integer literal operand
(``h ^ 0x5bd1e995``) is never bool ^ bool and is left; so is module-level code.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...runtime.registry import runtime_helper

HELPER = "_py_xor"


class GraphXor(Pass):
    id = "MS305"
    name = "graph-xor"
    summary = "a ^ b in functions -> _py_xor(a, b) (GRAPH_MODE's ^ rejects two Python bools)."
    examples = (
        Example(
            "import torch\ndef xnor(x, y):\n    return not (x ^ y)\n",
            'def _py_xor(a, b):\n    """a ^ b; GRAPH_MODE\'s ^ takes no Python bools (transpile MS305)."""\n'
            "    if isinstance(a, bool) and isinstance(b, bool):\n        return a != b\n    return a ^ b\n\n\n"
            "def xnor(x, y):\n    return not (_py_xor(x, y))\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._functions = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions += 1

    def leave_FunctionDef(self, original, updated):
        self._functions -= 1
        return updated

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated):
        if not (self._functions and isinstance(original.operator, cst.BitXor)) or _int_literal(original):
            return updated
        if not isinstance(updated, cst.BinaryOperation):  # another pass rewrote it
            return updated
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, f"a ^ b is {HELPER}(a, b): GRAPH_MODE's ^ takes no Python bools",
                            Severity.INFO)
        return cst.Call(func=runtime_helper(self.ctx, HELPER),
                        args=[cst.Arg(_bare(updated.left)), cst.Arg(_bare(updated.right))])

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        if not (self._functions and isinstance(original.operator, cst.BitXorAssign)):
            return updated
        if not isinstance(original.target, cst.Name) or isinstance(original.value, cst.Integer):
            return updated
        call = cst.Call(func=runtime_helper(self.ctx, HELPER),
                        args=[cst.Arg(cst.Name(original.target.value)), cst.Arg(_bare(updated.value))])
        return cst.Assign(targets=[cst.AssignTarget(target=updated.target)], value=call, semicolon=updated.semicolon)


def _int_literal(op: cst.BinaryOperation) -> bool:
    return any(isinstance(side, cst.Integer) for side in (op.left, op.right))


def _bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` without its own parentheses (it becomes a call argument)."""
    if getattr(expr, "lpar", None) and len(expr.lpar) == 1 and not isinstance(expr, (cst.Tuple, cst.GeneratorExp)):
        return expr.with_changes(lpar=[], rpar=[])
    return expr
