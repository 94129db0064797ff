"""MS217: ``conv.stride[0]`` -> ``_torch_layer_geometry(conv, "stride", 1)[0]``: a converted
convolution's window read back as torch holds it.

torch's convolutions keep ``kernel_size``, ``stride``, ``padding`` and ``dilation`` as one
value per spatial axis (``Conv1d``: ``(s,)``). MindSpore's keep them otherwise: Conv1d (and
Conv1dTranspose) as 2-d layers, ``(1, s)`` and a padding of ``(0, 0, p, p)``; Conv2d and
Conv3d an int padding, or (begin, end) pairs. Code that computes a length from them
(``max_positions * conv1.stride[0] * conv2.stride[0]``) then gets another number, or an
index error. Where the type index says the receiver holds one of those layers (built in
the class, another method, a base class or another file of the tree), the read becomes a
call of ``_torch_layer_geometry`` (runtime/layer_terms.py), which gives torch's tuple.
Not an assignment target, nor ``self.stride`` (a subclass's own attribute).
"""
from __future__ import annotations

import re

import libcst as cst

from transpile.engine.passes import Example, Pass

from ..analysis.layer_types import Instance, OneOf, index_place, shape_of
from ..runtime.registry import runtime_helper
from ..table_calls import tables

HELPER = "_torch_layer_geometry"
GEOMETRY = frozenset({"kernel_size", "stride", "padding", "dilation"})
# torch's convolution classes and their spatial axes (Conv1d, ConvTranspose2d, ...)
_CONV = re.compile(r"torch\.nn\.Conv(?:Transpose)?([123])d")
# MindSpore's, built by code converted before (by hand or an earlier run: iterative runs)
_MINDSPORE_CONV = re.compile(r"mindspore\.nn\.Conv([123])d(?:Transpose)?")


def _mindspore_axes(cls) -> int | None:
    found = _MINDSPORE_CONV.fullmatch(cls) if isinstance(cls, str) else None
    return int(found.group(1)) if found else None


def spatial_axes(entry) -> int | None:
    """The spatial axes of a torch convolution the tables convert to a MindSpore layer;
    None for any other entry."""
    if entry is None or entry.kind != "class" or not (entry.target or "").startswith("mindspore."):
        return None
    found = _CONV.fullmatch(entry.source)
    return int(found.group(1)) if found else None


class LayerGeometry(Pass):
    id = "MS217"
    name = "layer-geometry"
    reads = frozenset({"layer_types"})
    summary = "conv.stride, .padding, .kernel_size, .dilation of converted convolutions read as torch's tuples."
    examples = (
        Example(
            "import torch.nn as nn\nclass Enc(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv1d(4, 4, 3, stride=2)\n\n"
            "    def forward(self, x):\n        return x[..., :: self.conv.stride[0]]\n",
            "import mindspore.nn as nn\n\n\n"
            "def _torch_layer_geometry(layer, name, dims):\n"
            '    """``layer.<name>`` (kernel_size, stride, padding, dilation) as torch\'s layer of ``dims``\n'
            "    spatial axes holds it: a tuple of one value per axis, or the padding mode torch was given\n"
            '    as a string (\'same\', \'valid\') (transpile MS217)."""\n'
            "    value = getattr(layer, name)\n"
            '    if name == "padding":\n'
            '        mode = str(getattr(layer, "pad_mode", "pad")).lower()\n'
            '        if mode in ("same", "valid"):\n'
            "            return mode\n"
            "        if not isinstance(value, int):\n"
            "            # MindSpore pads each axis on both sides, (begin, end) pairs; torch's padding is\n"
            "            # the same on both sides: the begins of the last ``dims`` axes\n"
            "            value = tuple(value)[0::2][-dims:]\n"
            "    if isinstance(value, int):\n"
            "        return (value,) * dims\n"
            "    return tuple(value)[-dims:]\n\n\n"
            "class Enc(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv1d(\n            in_channels=4,\n            out_channels=4,\n"
            '            kernel_size=3,\n            stride=2,\n            has_bias=True,\n            pad_mode="pad",\n'
            "        )\n\n"
            '    def construct(self, x):\n        return x[..., :: _torch_layer_geometry(self.conv, "stride", 1)[0]]\n',
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self._targets: set[int] = set()  # ids of attributes assigned, augmented or deleted

    def _target(self, node) -> None:
        self._targets.add(id(node.target))

    visit_AssignTarget = visit_AnnAssign = visit_AugAssign = visit_Del = _target

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value not in GEOMETRY or id(original) in self._targets:
            return updated
        receiver = original.value
        if type(receiver) is cst.Name and receiver.value == "self":
            return updated
        axes = self._axes(receiver)
        if axes is None:
            return updated
        self.ctx.count_converted()
        return cst.Call(runtime_helper(self.ctx, HELPER), [
            cst.Arg(updated.value), cst.Arg(cst.SimpleString(f'"{original.attr.value}"')),
            cst.Arg(cst.Integer(str(axes)))])

    def _in_cell(self) -> bool:
        cls = self.ctx.current_class
        return cls is not None and any(self.ctx.imports.qualify(b.value) == "mindspore.nn.Cell" for b in cls.bases)

    def _axes(self, receiver: cst.BaseExpression) -> int | None:
        """The spatial axes of the convolution the receiver holds, when the type index says
        it holds one (of one number of axes, whichever it is)."""
        if type(receiver) not in (cst.Attribute, cst.Subscript, cst.Name):
            return None
        types = self.facts.layer_types()
        value = types.value(shape_of(receiver, *index_place(self.ctx.open_scopes, types.index)))
        # a MindSpore layer's geometry is read as torch's only by code written for torch
        # (a torch class beside one converted before), never in a Cell's own code
        theirs = not self._in_cell()
        found = {spatial_axes(types.call_entry(v)) or (_mindspore_axes(v.cls) if theirs else None)
                 for v in (value.values if isinstance(value, OneOf) else (value,)) if isinstance(v, Instance)}
        if len(found) != 1 or None in found or not isinstance(value, (Instance, OneOf)):
            return None
        if isinstance(value, OneOf) and not all(isinstance(v, Instance) for v in value.values):
            return None
        return found.pop()
