"""MS314: ``functools.reduce(f, xs[, initial])`` in compiled code -> ``_py_reduce(f, xs[, initial])``.

GRAPH_MODE (MindSpore 2.10) compiles ``reduce`` into something that breaks the Cells
compiled after it in the same graph, without an error: pretrainedmodels' ResNeXt
(``LambdaMap`` -> ``LambdaReduce(lambda x, y: x + y)`` -> ``LambdaMap`` ...) gets a
single tensor where the second ``LambdaMap`` returns a list, and the next ``reduce``
sums the rows of that tensor. PYNATIVE is right. The helper is the loop ``reduce`` is::

    def _py_reduce(function, items, *initial):
        values = initial + tuple(items)
        if not values:
            raise TypeError("reduce() of empty iterable with no initial value")
        result = values[0]
        for value in values[1:]:
            result = function(result, value)
        return result

which both modes compile to Python's result. Only calls with two or three positional
arguments are rewritten, in forward/construct and what they call (``ctx.compiled``);
other code keeps ``reduce``.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...runtime.registry import runtime_helper

HELPER = "_py_reduce"
REDUCE = "functools.reduce"


class GraphReduce(Pass):
    id = "MS314"
    name = "graph-reduce"
    summary = "functools.reduce in construct -> _py_reduce, a loop (GRAPH_MODE's reduce breaks what follows it)."
    examples = (
        Example(
            "from functools import reduce\nimport torch.nn as nn\nclass M(nn.Module):\n"
            "    def forward(self, xs):\n        return reduce(lambda a, b: a + b, xs)\n",
            "from functools import reduce\nimport mindspore.nn as nn\n\n\n"
            "def _py_reduce(function, items, *initial):\n"
            '    """functools.reduce(function, items[, initial]) as a loop (transpile MS314): GRAPH_MODE\'s\n'
            '    reduce changes what the code compiled after it computes."""\n'
            "    values = initial + tuple(items)\n    if not values:\n"
            '        raise TypeError("reduce() of empty iterable with no initial value")\n'
            "    result = values[0]\n    for value in values[1:]:\n        result = function(result, value)\n"
            "    return result\n\n\n"
            "class M(nn.Cell):\n    def construct(self, xs):\n        return _py_reduce(lambda a, b: a + b, xs)\n",
        ),
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self.ctx.compiled or self.ctx.imports.qualify(original.func) != REDUCE:
            return updated
        if not 2 <= len(updated.args) <= 3 or any(a.keyword or a.star for a in updated.args):
            return updated
        self.ctx.report(original, self.id, f"functools.reduce is {HELPER}, a loop: GRAPH_MODE's reduce "
                        "changes what the code compiled after it computes", Severity.INFO)
        return updated.with_changes(func=runtime_helper(self.ctx, HELPER))
