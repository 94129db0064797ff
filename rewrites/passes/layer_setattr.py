"""MS218: ``setattr(parent, name, param)`` in a Module's method, the name known only when
the code runs -> ``_torch_setattr(parent, name, param)``.

Code that ties or replaces parameters by torch's names kept as data (transformers'
``tie_weights``: ``setattr(self.get_submodule("encoder.embed_tokens"), "weight",
shared)``) writes ``weight`` on a layer MindSpore names otherwise: the converted Embedding
gains a new ``weight`` and keeps using its own ``embedding_table``, so the tie is lost.
The helper (runtime/layer_terms.py) writes a torch parameter name (weight, bias,
running_mean, running_var) on a MindSpore layer under the name the layer has; any other
name, or an object that is no layer, is set as ``setattr`` sets it. A recurrent layer's
weight of torch's name (``weight_hh_l0``) is also put where MindSpore's layer computes with
it (its ``w_hh_list``): weight drop (torchnlp, AWD-LSTM) replaces that weight by a
dropped-out copy before each forward, from a function handed the layer. In methods of the
file's Module classes and in any function (code handed a layer), and only where the name
is not a string written in the call (those are MS204's, by the layer's class).
"""
from __future__ import annotations

import re

import libcst as cst

from transpile.engine.passes import Example, Pass

from ..analysis.layer_types import Instance, index_place
from ..runtime.registry import runtime_helper
from ..syntax import literal_value

HELPER = "_torch_setattr"
# torch's weight names of a recurrent layer (runtime/layer_terms.py's _TORCH_RNN_WEIGHT)
RNN_WEIGHT = re.compile(r"(weight|bias)_(ih|hh)_l(\d+)(_reverse)?")
# a bare container: it holds no layer parameter named otherwise in MindSpore, so setattr on
# it is _torch_setattr's own fallback (MS102 builds a ModuleDict's children into one)
PLAIN_CONTAINERS = frozenset({"mindspore.nn.Cell", "torch.nn.Module"})


class LayerSetattr(Pass):
    id = "MS218"
    name = "layer-setattr"
    reads = frozenset({"assignments_and_calls", "layer_types"})
    summary = "setattr(layer, name, param) with a name known at run time writes torch's parameter names as MindSpore's."
    examples = (
        Example(
            "import torch.nn as nn\nclass LM(nn.Module):\n    def tie(self, layer, name, param):\n"
            "        setattr(layer, name, param)\n",
            "import mindspore.nn as nn\nimport re\n\n\n_TORCH_PARAMETER_NAMES = {\n"
            "    \"weight\": (\"embedding_table\", \"gamma\", \"bn2d.gamma\", \"w\"),\n"
            "    \"bias\": (\"beta\", \"bn2d.beta\"),\n"
            "    \"running_mean\": (\"moving_mean\", \"bn2d.moving_mean\"),\n"
            "    \"running_var\": (\"moving_variance\", \"bn2d.moving_variance\"),\n}\n\n\n"
            "_TORCH_RNN_WEIGHT = re.compile(r\"(weight|bias)_(ih|hh)_l(\\d+)(_reverse)?\")\n\n\n"
            "def _torch_rnn_weight_slot(layer, name):\n"
            "    \"\"\"Where a MindSpore recurrent layer computes with its weight of torch's ``name``\n"
            "    (``weight_hh_l1_reverse``): (the tuple attribute, the index in it), or None for any other\n"
            "    name or object. Layer k, direction d is item k * directions + d (MindSpore's order).\n"
            "    \"\"\"\n"
            "    if not (isinstance(name, str) and isinstance(layer, (nn.RNN, nn.LSTM, nn.GRU))):\n"
            "        return None\n    match = _TORCH_RNN_WEIGHT.fullmatch(name)\n    if match is None:\n"
            "        return None\n    kind, gates, k, reverse = match.groups()\n"
            "    directions = 2 if layer.bidirectional else 1\n"
            "    index = int(k) * directions + (1 if reverse else 0)\n"
            "    tuple_name = (\"w\" if kind == \"weight\" else \"b\") + \"_\" + gates + \"_list\"\n"
            "    if reverse and directions == 1 or index >= len(getattr(layer, tuple_name)):\n"
            "        return None\n    return tuple_name, index\n\n\n"
            "def _torch_set_layer_attribute(layer, torch_name, ms_names, value):\n"
            "    \"\"\"layer.<torch_name> = value (weight tying), written under the name the layer has:\n"
            "    torch's, else the first of its MindSpore names it has (transpile MS204).\"\"\"\n"
            "    for name in (torch_name, *ms_names):\n        owner, _, last = name.rpartition(\".\")\n"
            "        target = layer\n        for part in owner.split(\".\") if owner else ():\n"
            "            target = getattr(target, part, None)\n"
            "        if target is not None and getattr(target, last, None) is not None:\n"
            "            setattr(target, last, value)\n            return\n"
            "    setattr(layer, torch_name, value)\n\n\ndef _torch_setattr(obj, name, value):\n"
            "    \"\"\"setattr(obj, name, value) with a name known only when the code runs (weight tying over\n"
            "    torch's parameter names kept as data: ``setattr(parent, \"weight\", shared)``): on a\n"
            "    converted layer, a torch parameter name is written under the name the layer has (an\n"
            "    Embedding's weight is its embedding_table); on a recurrent layer, a weight of torch's\n"
            "    name (``weight_hh_l0``: weight drop replaces it by a dropped-out copy each forward) is\n"
            "    also put where the layer computes with it; anything else is set as setattr sets it\n"
            "    (transpile MS218).\"\"\"\n    slot = _torch_rnn_weight_slot(obj, name)\n"
            "    if slot is not None:\n        items = list(getattr(obj, slot[0]))\n"
            "        items[slot[1]] = value\n        setattr(obj, slot[0], tuple(items))\n"
            "        return setattr(obj, name, value)\n"
            "    if isinstance(obj, nn.Cell) and name in _TORCH_PARAMETER_NAMES:\n"
            "        return _torch_set_layer_attribute(\n"
            "            obj, name, _TORCH_PARAMETER_NAMES[name], value\n        )\n"
            "    return setattr(obj, name, value)\n\n\nclass LM(nn.Cell):\n"
            "    def tie(self, layer, name, param):\n        _torch_setattr(layer, name, param)\n",
        ),
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if not (type(func) is cst.Name and func.value == "setattr" and len(original.args) == 3
                and all(a.keyword is None and not a.star for a in original.args)):
            return updated
        written = type(original.args[1].value) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
        if written and isinstance(literal_value(original.args[1].value), str) \
                and RNN_WEIGHT.fullmatch(literal_value(original.args[1].value)):
            written = False  # a recurrent layer's weight: where it computes is found when it runs
        if written or "setattr" in self.ctx.imports.bindings or self._plain_container(original.args[0].value):
            return updated
        types = self.facts.layer_types()
        owner = index_place(self.ctx.open_scopes, types.index)[1]
        if (owner is None and self.ctx.current_function is None) or (
                owner is not None and not types.module_value(Instance(owner))):
            return updated  # module level, or a method of a class that is no Module
        self.ctx.count_converted()
        return updated.with_changes(func=runtime_helper(self.ctx, HELPER))

    def _plain_container(self, receiver) -> bool:
        """``receiver`` a name this function binds to a bare ``nn.Cell()``/``nn.Module()``."""
        fn = self.ctx.current_function
        if type(receiver) is not cst.Name or fn is None:
            return False
        return any(type(node) is cst.Assign and type(node.value) is cst.Call and not node.value.args
                   and any(type(t.target) is cst.Name and t.target.value == receiver.value for t in node.targets)
                   and self.ctx.imports.qualify(node.value.func) in PLAIN_CONTAINERS
                   for node in self.facts.assignments_and_calls(fn))
