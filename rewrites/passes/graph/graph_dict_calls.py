"""MS332: ``dict(a=x, b=y)`` in compiled code -> ``{"a": x, "b": y}``.

GRAPH_MODE (MindSpore 2.10) compiles a dict display but runs a call of ``dict`` in Python
while the graph runs (its JIT fallback): the value has no type at compile time, and
whatever reads it is untyped too. alphagenome's ``pos_emb = dict(rotary_emb = rotary_emb)``,
spread into each attention layer's call, made the layer's output untyped, and a later
``std.astype(x.dtype)`` was given a tensor for a dtype ("negative dimensions are not
allowed" while compiling); measured: ``f(x, **dict(r=x * 2))`` fails in GRAPH_MODE where
``f(x, **{"r": x * 2})`` compiles. The display builds the same dict, its values evaluated in
the same order::

    pos_emb = dict(rotary_emb = rotary_emb)   ->   pos_emb = {"rotary_emb": rotary_emb}

Only calls of the builtin (no import or local of that name) with keyword arguments alone
(``dict()`` is ``{}``; a positional mapping or a ``**`` spread is left: a repeated key is an
error for the call and not for a display), in compiled code (forward, construct, what they
call on ``self``) and in the module's functions those call by name.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from .called_by_compiled import CompiledOrCalled


class GraphDictCalls(CompiledOrCalled, Pass):
    id = "MS332"
    name = "graph-dict-calls"
    reads = frozenset({"compiled_callees", "forward_helpers", "submodule_helpers", "names"})
    summary = "dict(a=x) in compiled code -> {\"a\": x} (GRAPH_MODE runs a call of dict in Python: an untyped value)."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        kw = dict(scale=x * 2)\n        return self.f(x, **kw)\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        kw = {\"scale\": x * 2}\n        return self.f(x, **kw)\n",
        ),
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not (type(original.func) is cst.Name and original.func.value == "dict"
                and "dict" not in self.ctx.imports.bindings):
            return updated
        if any(a.keyword is None or a.star for a in updated.args):
            return updated
        fn = self.ctx.current_function
        if fn is None or not self._compiled() or "dict" in self.facts.names.stored(fn):
            return updated
        self.ctx.report(original, self.id, "dict(...) of keywords is a dict display: GRAPH_MODE runs a call of dict "
                        "in Python, and its value has no type in the graph", Severity.INFO)
        elements = [cst.DictElement(key=cst.SimpleString(f'"{a.keyword.value}"'), value=a.value) for a in updated.args]
        return cst.Dict(elements=elements, lpar=updated.lpar, rpar=updated.rpar)
