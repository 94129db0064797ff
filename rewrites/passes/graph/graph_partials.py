"""MS322: ``functools.partial(f, ...)`` made in a Module's Python-only methods -> ``_TorchPartial(f, ...)``.

A partial object kept on a Module and called in construct (x-transformers' ``self.attn_fn =
partial(softmax_fn, dtype=torch.float32)``, measured on MindSpore 2.10) compiles, but what it
returns has no known rank in GRAPH_MODE: the shape-driven code after it fails ("__len__()
should return >= 0" in an einsum planned from the shapes), where the same function called
directly, or through a subclass of partial that defines its own ``__call__``, keeps its
shape. ``_TorchPartial`` (rewrites/runtime/graph.py) is that subclass: ``isinstance(p,
functools.partial)``, ``p.func``, ``p.args`` and ``p.keywords`` hold, and its call merges
the keywords as partial's does, in both modes.

Rewritten: calls resolved to ``functools.partial`` in the methods of a class with compiled
methods (forward, construct, what they call on ``self``), outside the compiled ones (a
partial made in construct is MindSpore's own construct, left alone), whose first argument is
a function: a name or attribute chain whose last part does not start with a capital (a
partial of a class builds layers in ``__init__`` and never runs in a graph), or a partial
of one.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...analysis.compiled import compiled_method
from ...runtime.registry import runtime_helper
from ...syntax import name_chain

PARTIAL = "functools.partial"


class GraphPartials(Pass):
    id = "MS322"
    name = "graph-partials"
    reads = frozenset({"forward_helpers", "submodule_helpers"})
    summary = ("functools.partial(f, ...) made in a Module's Python-only methods -> _TorchPartial(f, ...) "
               "(GRAPH_MODE gives a partial object's result no known rank).")
    examples = (
        Example(
            'from functools import partial\n'
            'import torch.nn as nn\n'
            'def scale(x, k):\n'
            '    return x * k\n'
            'class M(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.f = partial(scale, k=2)\n'
            '    def forward(self, x):\n'
            '        return self.f(x)\n',
            'from functools import partial\n'
            'import mindspore.nn as nn\n'
            'import functools\n'
            '\n'
            '\n'
            'class _TorchPartial(functools.partial):\n'
            '    """functools.partial as GRAPH_MODE compiles its call (transpile MS322): what a partial\n'
            "    object returns in construct has no known rank there; keywords merge as partial's do.\n"
            '    """\n'
            '\n'
            '    def __call__(self, *args, **kwargs):\n'
            '        keywords = {}\n'
            '        for key in self.keywords:\n'
            '            keywords[key] = self.keywords[key]\n'
            '        for key in kwargs:\n'
            '            keywords[key] = kwargs[key]\n'
            '        return self.func(*self.args, *args, **keywords)\n'
            '\n'
            '\n'
            'def scale(x, k):\n'
            '    return x * k\n'
            'class M(nn.Cell):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.f = _TorchPartial(scale, k=2)\n'
            '    def construct(self, x):\n'
            '        return self.f(x)\n'
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._compiled_classes: set[int] = set()  # ids of the classes with compiled methods

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if any(type(s) is cst.FunctionDef and compiled_method(self.ctx, s, node) for s in node.body.body):
            self._compiled_classes.add(id(node))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        cls = self.ctx.current_class
        if cls is None or id(cls) not in self._compiled_classes or self.ctx.compiled \
                or self.ctx.current_function is None or self.ctx.imports.qualify(original.func) != PARTIAL:
            return updated
        first = original.args[0] if original.args else None
        if first is None or first.keyword is not None or first.star or not self._function(first.value):
            return updated
        self.ctx.report(original, self.id, "functools.partial kept on a Module is _TorchPartial: GRAPH_MODE gives "
                        "what a partial object returns in construct no known rank", Severity.INFO)
        return updated.with_changes(func=runtime_helper(self.ctx, "_TorchPartial"))

    def _function(self, node: cst.BaseExpression) -> bool:
        """A name or attribute chain whose last part does not start with a capital, or a
        partial of one (``partial(partial(F.softmax, dim=-1), dtype=...)``)."""
        if type(node) is cst.Call:
            return self.ctx.imports.qualify(node.func) == PARTIAL and bool(node.args) \
                and node.args[0].keyword is None and not node.args[0].star and self._function(node.args[0].value)
        if not name_chain(node):
            return False
        last = node.attr.value if type(node) is cst.Attribute else node.value
        return not last[:1].isupper()
