"""MS311: ``assert all(f(x) for x in xs)`` in construct -> ``for x in xs: assert f(x)``.

GRAPH_MODE evaluates ``all()`` of a comprehension in Python (JIT fallback) with only the
local names: a module-level function called in it is "NameError: name 'divisible_by' is
not defined" (denoising-diffusion's ``assert all([divisible_by(d, self.downsample_factor)
for d in x.shape[-2:]])``), and ``self`` is not defined either. A loop of asserts compiles,
and checks the same items in the same order, stopping at the first false one as ``all``
does (the message, if any, is evaluated only then, as before)::

    assert all([divisible_by(d, f) for d in x.shape[-2:]])  ->  for d in x.shape[-2:]:
                                                                     assert divisible_by(d, f)

Only a list comprehension or generator with one ``for`` over one name and no ``if``,
whose name is used nowhere else in the function (the loop leaves it bound, the
comprehension did not), in forward/construct, the methods it calls and functions nested
in them; other code keeps its ``all``.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import iter_nodes



class GraphAssertAll(Pass):
    id = "MS311"
    name = "graph-assert-all"
    summary = "assert all(f(x) for x in xs) in construct -> a loop of asserts (GRAPH_MODE's all() sees no globals)."
    examples = (
        Example(
            "import torch.nn as nn\ndef ok(d):\n    return d % 2 == 0\nclass M(nn.Module):\n"
            "    def forward(self, x):\n        assert all([ok(d) for d in x.shape[-2:]])\n        return x\n",
            "import mindspore.nn as nn\ndef ok(d):\n    return d % 2 == 0\nclass M(nn.Cell):\n"
            "    def construct(self, x):\n        for d in x.shape[-2:]:\n            assert ok(d)\n        return x\n",
        ),
    )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if not self.ctx.compiled or len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assert):
            return updated
        test = updated.body[0].test
        if not (isinstance(test, cst.Call) and type(test.func) is cst.Name and test.func.value == "all"
                and len(test.args) == 1 and "all" not in self.ctx.imports.bindings and not test.args[0].keyword and not test.args[0].star):
            return updated
        comp = test.args[0].value
        if not isinstance(comp, (cst.ListComp, cst.GeneratorExp)):
            return updated
        loop = comp.for_in
        if (loop.inner_for_in is not None or loop.ifs or loop.asynchronous is not None
                or not isinstance(loop.target, cst.Name)):
            return updated
        name = loop.target.value
        inside = _name_count(comp, name)
        if _name_count(self.ctx.current_function, name) != inside:
            return updated  # the name is used elsewhere in the function: the loop would rebind it
        self.ctx.report(original, self.id, "assert all(...) of a comprehension is a loop of asserts: "
                        "GRAPH_MODE evaluates all() without the module's names", Severity.INFO)
        check = updated.body[0].with_changes(test=comp.elt, semicolon=cst.MaybeSentinel.DEFAULT)
        return cst.For(target=loop.target, iter=loop.iter,
                       body=cst.IndentedBlock([cst.SimpleStatementLine([check])]),
                       leading_lines=updated.leading_lines)


def _name_count(node: cst.CSTNode, name: str) -> int:
    """How many ``Name`` nodes spell ``name`` under ``node`` (attribute and keyword names too)."""
    return sum(1 for n in iter_nodes(node) if type(n) is cst.Name and n.value == name)
