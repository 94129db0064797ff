"""MS209: questions about where a tensor lives: ``x.device.type``, ``x.is_cuda``, ``x.is_cpu``.

MindSpore's ``Tensor.device`` is the device's name (``'CPU'`` on CPU in 2.10), a string
without ``.type``, and its tensors have no ``is_cuda``/``is_cpu``. torch's device type
is lowercase and calls a GPU ``'cuda'``: ``_torch_device_type(x.device)``, a function
emitted in the file, gives it (``'cpu'``, ``'cuda'``), in GRAPH mode too. It reads the
string form, so a torch-style device string or object (``self.device``) answers alike.

Any receiver is taken: no value but a tensor (or a Parameter) has ``.device.type`` or
``is_cuda`` in torch code; ``is_cuda``/``is_cpu`` are left where the file assigns an
attribute of that name (its own objects have it).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..runtime.registry import runtime_helper

HELPER = "_torch_device_type"
# x.is_cuda -> _torch_device_type(x.device) == "cuda"
FLAGS = {"is_cuda": "cuda", "is_cpu": "cpu"}


class DeviceQueries(Pass):
    id = "MS209"
    name = "device-queries"
    reads = frozenset({"assigned_attributes"})
    summary = "x.device.type, x.is_cuda, x.is_cpu -> torch's device type, from MindSpore's device name."
    examples = (
        Example(
            "import torch\ndef f(x):\n    return x.device.type == 'cpu'\n",
            "def _torch_device_type(device):\n"
            '    """torch\'s device type (\'cpu\', \'cuda\') of a MindSpore device name (\'CPU\', \'GPU\') or a\n'
            '    device string (transpile MS209)."""\n'
            '    kind = str(device).split(":")[0].lower()\n    if kind == "gpu":\n        return "cuda"\n    return kind\n\n\n'
            'def f(x):\n    return _torch_device_type(x.device) == "cpu"\n',
        ),
    )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        name = original.attr.value
        if name == "type" and isinstance(original.value, cst.Attribute) and original.value.attr.value == "device":
            receiver = original.value.value
            if self._imported(receiver):
                return updated
            self.ctx.count_converted()
            return self._device_type(original, updated.value)
        if name in FLAGS and not self._imported(original.value):
            if name in self.facts.assigned_attributes():
                if not (isinstance(original.value, cst.Name) and original.value.value == "self"):
                    self.ctx.report(original, self.id, f".{name}: left, the file assigns an attribute of that name",
                                    Severity.INFO)
                return updated
            self.ctx.count_converted()
            device = cst.Attribute(value=updated.value, attr=cst.Name("device"))
            return cst.Comparison(left=self._device_type(original, device), comparisons=[
                cst.ComparisonTarget(operator=cst.Equal(), comparator=cst.SimpleString(f'"{FLAGS[name]}"'))])
        return updated

    def _imported(self, receiver: cst.BaseExpression) -> bool:
        """``torch.device.type`` and the like are names of a module, not a tensor's."""
        root = receiver
        while isinstance(root, cst.Attribute):
            root = root.value
        return isinstance(root, cst.Name) and root.value in self.ctx.imports.bindings

    def _device_type(self, original: cst.CSTNode, device: cst.BaseExpression) -> cst.Call:
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, f"MindSpore's Tensor.device is a name ('CPU'): torch's device "
                            f"type is read from it by {HELPER}", Severity.INFO)
        return cst.Call(func=runtime_helper(self.ctx, HELPER), args=[cst.Arg(device)])
