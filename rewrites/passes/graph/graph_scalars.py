"""MS303: ``.item()``, ``float(t)`` and ``int(t)`` on tensors inside construct: a note.

A Python scalar taken from a tensor forces a sync in PYNATIVE, and GRAPH_MODE computes
it in Python (MindSpore 2.10's JIT fallback compiles it). Keeping the 0-d tensor instead
is not what torch computes: forward then returns a Tensor where torch returns a Python
number (``steps = int(n)``), and ``x / float(s)`` takes s's dtype where torch keeps x's
(tests/differential/test_graph_rewrites.py). So the code is left as it is and the pass
says where such a scalar is taken in compiled code. Arguments of ``range()`` and
indices need Python ints anyway and get no note.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...table_calls import tables
from ...tensor_inference import TensorScope, forward_params, is_tensor

CASTS = frozenset({"float", "int"})  # the casts to Python numbers


class GraphScalars(Pass):
    id = "MS303"
    name = "graph-scalars"
    reads = frozenset({"loss_layers"})
    summary = "A note where construct takes a Python scalar from a tensor (.item(), float(t), int(t)); the code is kept."
    runs_after = {
        "MS202": "MS303 rewrites int(t.item()) whole from the call MS202 made of it",
    }
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n        s = x.sum().item()\n"
            "        return x / float(s)\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\nclass M(nn.Cell):\n"
            "    def construct(self, x):\n        s = ops.sum(input=x).item()\n        return x / float(s)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.roots = tables().source_roots
        self.scope = TensorScope()
        self._forward = 0
        self._python_int_context = 0  # inside range(...) or an index

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value in ("forward", "construct"):
            self._forward += 1
            self.scope.push(forward_params(node))

    def leave_FunctionDef(self, original, updated):
        if original.name.value in ("forward", "construct"):
            self._forward -= 1
            self.scope.pop()
        return updated

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._forward and _strip_scalar(node.value) is not None and is_tensor(_strip_scalar(node.value), self.scope, self.ctx, self.roots):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    self.scope.add(t.target.value)
        elif self._forward and is_tensor(node.value, self.scope, self.ctx, self.roots):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    self.scope.add(t.target.value)

    def _tensor_or_scalar_of_one(self, expr) -> bool:
        """A tensor, or ``t.item()`` of one (which this pass turns back into the tensor)."""
        inner = _strip_scalar(expr)
        target = inner if inner is not None else expr
        return is_tensor(target, self.scope, self.ctx, self.roots)

    def _is_python_int_call(self, node: cst.Call) -> bool:
        """Calls whose arguments stay Python numbers: range() and friends, and MindSpore's
        operators, which take Python scalars where they take a number (ops.std's ddof,
        ops.dropout's p): a cast the converted code passes them is what they need."""
        if isinstance(node.func, cst.Name) and node.func.value in ("range", "len", "list", "tuple"):
            return True
        qualified = self.ctx.imports.qualify(node.func)
        return bool(qualified) and qualified.split(".")[0] == "mindspore"

    def visit_Call(self, node: cst.Call) -> None:
        if self._is_python_int_call(node):
            self._python_int_context += 1

    def visit_SubscriptElement(self, node) -> None:
        self._python_int_context += 1

    def leave_SubscriptElement(self, original, updated):
        self._python_int_context -= 1
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self._is_python_int_call(original):
            self._python_int_context -= 1
            return updated
        if not self._forward or self._python_int_context:
            return updated
        # a cast an earlier pass of this stage wrote (torch.sym_int(a) -> int(a)) is
        # handled now, as it would be when the output is converted again
        cast = original if _strip_scalar(original) is not None else updated
        inner = _strip_scalar(cast)
        if inner is None or not self._tensor_or_scalar_of_one(inner):
            return updated
        # a 0-d tensor in its place would change forward's results (their type, the dtype of
        # the arithmetic): the note only
        self.ctx.report(original, self.id, "Python scalar from a tensor in construct: a sync in PYNATIVE, computed "
                        "in Python by GRAPH_MODE (kept: a 0-d tensor would change the results' types)", Severity.INFO)
        return updated


def _strip_scalar(expr):
    """The tensor inside ``t.item()``, ``float(t)`` or ``int(t)``, else None."""
    if not isinstance(expr, cst.Call):
        return None
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "item" and not expr.args:
        return expr.func.value
    if isinstance(expr.func, cst.Name) and expr.func.value in CASTS and len(expr.args) == 1 and not expr.args[0].keyword:
        return expr.args[0].value
    return None
