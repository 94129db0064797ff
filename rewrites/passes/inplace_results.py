"""MS207: a helper that changes its argument in place has its result assigned back.

torch code often calls a helper for its side effect and drops the result::

    def _add_shortcut(x, shortcut):
        x[:, :, 1:, :] += shortcut[:, :, 1:, :]
        return x

    _add_shortcut(x, q)          # x is changed in place

MindSpore's PYNATIVE mode changes the caller's tensor too, but GRAPH mode compiles
``x[...] += ...`` (and ``x.add_(...)``) to a new value bound to the helper's local
name: the caller's ``x`` is left as it was and the result is silently wrong. When a
function of the same file mutates one of its parameters in place and every
``return`` gives back exactly that parameter, a call to it made as a statement, with
a plain name for that argument, becomes ``x = helper(x, ...)``. In torch the helper
returns the very object it was given, so the assignment changes nothing there.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..syntax import Unconvertible, bind


class InplaceResults(Pass):
    id = "MS207"
    name = "inplace-results"
    reads = frozenset({"returns_mutated_param"})
    summary = ("A call, made as a statement, to a helper that changes its argument in place and returns it "
               "gets its result assigned back (GRAPH mode does not change the caller's tensor).")
    examples = (
        Example(
            "import torch\ndef bump(x, y):\n    x[1:] += y[1:]\n    return x\n\ndef f(a, b):\n    bump(a, b)\n    return a\n",
            "def bump(x, y):\n    x[1:] += y[1:]\n    return x\n\ndef f(a, b):\n    a = bump(a, b)\n    return a\n",
        ),
        Example(
            "import torch\ndef scale(t: torch.Tensor, k):\n    t.mul_(k)\n    return t\n\ndef g(a):\n    scale(t=a, k=2)\n    return a\n",
            "import mindspore as ms\nfrom mindspore import ops\ndef scale(t: ms.Tensor, k):\n"
            "    t.copy_(src=ops.mul(input=t, other=k))\n    return t\n\n"
            "def g(a):\n    a = scale(t=a, k=2)\n    return a\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        # helper name -> (positional parameters, keyword-only parameters, the one it returns)
        self.helpers: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {}

    def visit_Module(self, node: cst.Module) -> None:
        for stmt in node.body:
            if isinstance(stmt, cst.FunctionDef):
                returned = self.facts.returns_mutated_param(stmt)
                if returned is not None:
                    p = stmt.params
                    positional = tuple(q.name.value for q in (*p.posonly_params, *p.params))
                    self.helpers[stmt.name.value] = (positional, tuple(q.name.value for q in p.kwonly_params), returned)

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = original.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
            return updated
        helper = self.helpers.get(call.func.value)
        if helper is None:
            return updated
        positional, kwonly, returned = helper
        try:
            target = bind(call, positional, kwonly).get(returned)
        except Unconvertible:  # *args / **kwargs, or a call that does not fit the signature
            return updated
        if not isinstance(target, cst.Name):
            return updated
        self.ctx.report(original, self.id,
                        f"{call.func.value}() changes {target.value} in place: its result is assigned back "
                        "(GRAPH mode would leave the caller's tensor unchanged)", Severity.INFO)
        return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(target.value))], value=updated.value,
                          semicolon=updated.semicolon)
