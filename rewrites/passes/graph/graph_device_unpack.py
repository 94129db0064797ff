"""MS315: ``x.device`` taken out of a tuple assignment in compiled code, onto its own line.

GRAPH_MODE (MindSpore 2.10) reads ``x.device`` as a value it then drops, and in a tuple
assignment that drops the names bound beside it: after ``b, device, n = x.shape[0],
x.device, x.shape[1]``, ``ops.arange(n)`` fails with "For 'Cast', the input 'dtype'
expect a type, but got AbstractNegligible" (x-transformers' ``seq_len, device =
x.shape[1], x.device``). On a line of its own it is harmless::

    b, device, n = x.shape[0], x.device, x.shape[1]   ->   device = x.device
                                                           b, n = x.shape[0], x.shape[1]

Only a one-line ``names = values`` of the same length without stars is rewritten, and only
where no name the device lines bind is read by a value (reading an attribute has no side
effect, so the order of the reads does not matter). Applies in forward/construct and what
they call (``ctx.compiled``).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...syntax import lines_in_place_of


class GraphDeviceUnpack(Pass):
    id = "MS315"
    name = "graph-device-unpack"
    reads = frozenset({"names"})
    summary = "x.device in a tuple assignment in construct -> its own line (GRAPH_MODE drops the names beside it)."
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        n, device = x.shape[1], x.device\n        return torch.arange(n, device=device)\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        device = x.device\n        n = x.shape[1]\n        return ops.arange(start=n)\n",
        ),
    )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        if not (self.ctx.compiled and isinstance(updated, cst.SimpleStatementLine) and len(original.body) == 1
                and len(updated.body) == 1):
            return updated
        stmt, before = updated.body[0], original.body[0]
        if not (isinstance(stmt, cst.Assign) and isinstance(before, cst.Assign) and len(stmt.targets) == 1):
            return updated
        names, values = _pairs(stmt)
        _, original_values = _pairs(before)
        if names is None or original_values is None or len(original_values) != len(values):
            return updated
        device = [i for i, v in enumerate(original_values) if _device_read(v)]
        if not device or len(device) == len(values):
            return updated
        read = set().union(*(self.facts.names.referenced(v) for v in original_values))
        if any(names[i] in read for i in device):
            return updated
        rest = [i for i in range(len(values)) if i not in device]
        lines = [_assign([names[i]], [values[i]]) for i in device] + [_assign([names[i] for i in rest], [values[i] for i in rest])]
        self.ctx.report(original, self.id, "x.device has a line of its own: in a tuple assignment GRAPH_MODE "
                        "drops the names bound beside it", Severity.INFO)
        return lines_in_place_of(updated, lines)


def _pairs(stmt: cst.Assign) -> tuple[list[str] | None, list[cst.BaseExpression] | None]:
    """The names and values of ``a, b = e1, e2`` (plain names, no stars, as many of each)."""
    target, value = stmt.targets[0].target, stmt.value
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, cst.Tuple):
        return None, None
    if any(not isinstance(e, cst.Element) or not isinstance(e.value, cst.Name) for e in target.elements):
        return None, None
    if any(not isinstance(e, cst.Element) for e in value.elements) or len(value.elements) != len(target.elements):
        return None, None
    return [e.value.value for e in target.elements], [e.value for e in value.elements]


def _device_read(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Attribute) and value.attr.value == "device"


def _assign(names: list[str], values: list[cst.BaseExpression]) -> cst.Assign:
    if len(names) == 1:
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(names[0]))], value=values[0])
    target = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
    value = cst.Tuple([cst.Element(v) for v in values], lpar=[], rpar=[])
    return cst.Assign(targets=[cst.AssignTarget(target)], value=value)
