"""MS513: an in-place write that torch sees through another name, in compiled code.

In torch a view shares its tensor's memory, a second name is the same object and a
function's parameter is the caller's object: writing into one (``y[i] = v``, ``y[i] += v``,
``y += v`` on a view, ``y.add_(v)``, ``y[i].mul_(v)``) changes the other. GRAPH_MODE compiles a
write as a new value bound to the written name only. Measured on MindSpore 2.10 (CPU),
each of these left the other tensor as it was, without an error, where PYNATIVE changed it:
``y = x.view(2, 2, 2)`` (or ``y = x[:, 0:4:2]``, or ``y = x``) then ``y[:, 0] = ...`` and
``return x``; a helper ``def f(x): x[:, 0] = ...`` that returns nothing, called as ``f(x)``
before ``return x``; the same helper writing an item of a list it is given. (mambapy's
parallel scan is written so: ``Xa = X; Xa = Xa.view(...); Xa[:, :, :, 1].add_(...)`` in a
static method that changes its parameter ``X``; its GRAPH output differed by 2.5e-04.)

Where the written name is bound to a view (``y = x[:, 0:4:2]``, ``x.view(...)``: MS202 notes it
with ``_torch_view``), the converted code raises in GRAPH mode instead (the note does not
survive compilation): an error rather than a different result. An alias or a caller's
parameter written has no such guard: GRAPH mode computes something else, and this warning
is all the user gets.

A lint only. It reports (the analysis: analysis/shared_writes.py), in compiled code (forward, construct, the methods they call on
``self`` or on their class by name, the module functions they call), a write into:
  - a name that shares memory, at that point of the function, with another name (one is
    bound to the other, to an item or slice of it, or to one of VIEW_METHODS on it), when
    the other is a parameter of the function or is read after the write (or in the same
    loop): ``y = x.view(-1); y[0] = v; return x``, and ``y = x; x[0] = v; return y``;
  - a parameter of a function other than forward/construct that the function does not
    return by name (a helper returning it is MS207's: the caller takes the result).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import read

from ...analysis.compiled import compiled_method
from .called_by_compiled import CompiledOrCalled

SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class GraphViewWrites(CompiledOrCalled, Pass):
    id = "MS513"
    name = "graph-view-writes"
    reads = frozenset({"aliased_writes", "compiled_callees", "forward_helpers", "submodule_helpers"})
    summary = ("Report an in-place write torch sees through another name (a view, an alias, a caller's "
               "parameter) in compiled code: GRAPH_MODE changes only the written name.")
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        y = x\n        x[0] = 1.0\n        return y\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        y = x\n        x[0] = 1.0\n        return y\n",
        ),
    )

    _by_class_name: frozenset[int] = frozenset()  # ids of methods compiled code calls as ``Class.m(...)``

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        reached = [m for m in methods.values() if compiled_method(self.ctx, m, node)]
        seen = {id(m) for m in reached}
        found = set()
        while reached:
            calls = _ClassCalls(node.name.value)
            read(reached.pop(), calls)
            for name in calls.names:
                method = methods.get(name)
                if method is not None and id(method) not in seen:
                    seen.add(id(method))
                    found.add(id(method))
                    reached.append(method)
        self._by_class_name = self._by_class_name | found

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scopes = self.ctx.open_scopes
        outermost = not any(type(s) is cst.FunctionDef for s in scopes[:-1])
        if not (self._compiled() or id(node) in self._by_class_name or
                (not outermost and any(id(s) in self._by_class_name for s in scopes))):
            return
        for write, name, other in self.facts.aliased_writes(node):  # noqa: B007
            self.ctx.report(write, self.id, f"{name} {other}: torch's write into {name} changes that tensor too, "
                            f"GRAPH_MODE changes only {name}, without an error (where {name} is bound to a view, "
                            "the converted code raises there in GRAPH_MODE instead); write into the tensor by its own "
                            "name (a helper: return it and assign the result where it is called) (GRAPH_MODE)",
                            Severity.WARNING)


class _ClassCalls(cst.CSTVisitor):
    """The methods called as ``Class.m(...)``, ``self.m(...)`` or ``cls.m(...)``."""

    def __init__(self, class_name: str) -> None:
        self.owners = {class_name, "self", "cls"}
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in self.owners:
            self.names.add(func.attr.value)
