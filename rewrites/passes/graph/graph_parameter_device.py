"""MS326: ``self.weight.device`` in compiled code -> ``_torch_device(self.weight)``.

GRAPH_MODE (MindSpore 2.10) refuses the ``.device`` of a Parameter whose value the code goes
on to use: "Failed to compile in GRAPH_MODE because the 'Parameter' object's method 'device'
is not supported in 'construct'" (prosper-nn's HCNN: ``device = self.init_state.device``,
then handed to the method that builds its output buffers). The device of the Parameter's
value compiles, and a tensor's own ``.device`` does; the emitted helper reads the one that
applies when it runs (a constant in a graph)::

    def _torch_device(tensor):
        if isinstance(tensor, ms.Parameter):
            return tensor.value().device
        return tensor.device

Parameters are attributes of the Cell: the rewrite applies to ``.device`` read of an
attribute chain starting at ``self`` (``self.init_state.device``, ``self.fc.weight.device``)
in forward/construct and what they call (``ctx.compiled``); a name's ``.device`` (a tensor
passed in) and code outside compiled functions are left. So is a ``.device`` handed over as a
placement (``x.to(self.w.device)``, ``device=self.w.device``): the conversion drops those
arguments (MindSpore places tensors by its context), so the value is never used, and a helper
call there would hide the placement from the pass that drops it (torchaudio's WavLM
``bucket.to(self.rel_attn_embed.weight.device)`` became a call GRAPH_MODE could not type).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...runtime.registry import runtime_helper
from ...syntax import self_chain

HELPER = "_torch_device"


class GraphParameterDevice(Pass):
    id = "MS326"
    name = "graph-param-device"
    summary = "self.<attribute>.device in construct -> _torch_device(self.<attribute>) (GRAPH_MODE refuses a Parameter's .device)."
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.h0 = nn.Parameter(torch.zeros(1, 4))\n"
            "    def forward(self, x):\n        device = self.h0.device\n"
            "        return x + torch.zeros(4, device=device)\n",
            "import mindspore.nn as nn\nimport mindspore as ms\nfrom mindspore import ops\n\n\n"
            "def _torch_device(tensor):\n"
            '    """tensor.device, of a Parameter too (transpile MS326): GRAPH_MODE refuses a Parameter\'s\n'
            "    .device where the value is used (\"the 'Parameter' object's method 'device' is not\n"
            "    supported\"), and reads it of the Parameter's value.\"\"\"\n"
            "    if isinstance(tensor, ms.Parameter):\n        return tensor.value().device\n"
            "    return tensor.device\n\n\n"
            "class M(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.h0 = ms.Parameter(default_input=ops.zeros(size=(1, 4)))\n"
            "    def construct(self, x):\n        device = _torch_device(self.h0)\n"
            "        return x + ops.zeros(size=4)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._stored: set[int] = set()  # the attributes assignments and del statements write, and placements

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._stored.update(_written(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stored.update(_written(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._stored.update(_written(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        self._stored.update(_written(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        moves = isinstance(node.func, cst.Attribute) and node.func.attr.value == "to"
        for arg in node.args:
            if (arg.keyword is None and moves) or (arg.keyword is not None and arg.keyword.value == "device"):
                self._stored.add(id(arg.value))  # a placement: dropped by the conversion, left for it

    def leave_Attribute(self, original: cst.Attribute, updated):
        if not (self.ctx.compiled and original.attr.value == "device" and self_chain(original.value)):
            return updated
        if id(original) in self._stored:  # self.x.device = ... (a write) or a placement, left
            return updated
        if not isinstance(updated, cst.Attribute):  # another pass rewrote it
            return updated
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, f"self.<attribute>.device is {HELPER}(...): GRAPH_MODE refuses "
                            "a Parameter's .device", Severity.INFO)
        return cst.Call(func=runtime_helper(self.ctx, HELPER), args=[cst.Arg(updated.value)])


def _written(target: cst.BaseExpression) -> list[int]:
    """The ids of the attributes a target writes (``a.b = ...``, ``a.b, c = ...``)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [i for e in target.elements for i in _written(e.value)]
    if isinstance(target, cst.StarredElement):
        return _written(target.value)
    return [id(target)] if isinstance(target, cst.Attribute) else []
