"""MS204: ``self.bn.weight`` -> ``self.bn.gamma``: parameter names of converted layers.

Code that touches a layer's parameters by name (tied weights, custom init,
freezing) must use MindSpore's names: BatchNorm ``gamma``/``beta``, Embedding
``embedding_table``, ... The tables' ``weights`` renames say which.
"""
from __future__ import annotations

import libcst as cst

from transpile.diagnostics import Severity
from transpile.passes import Example, Pass

from .apply import tables
from .infer import layer_attributes


class LayerParams(Pass):
    id = "MS204"
    name = "layer-params"
    summary = "Parameter attributes of converted layers take MindSpore's names (bn.weight -> bn.gamma)."
    examples = (
        Example(
            "import torch.nn as nn\nclass LM(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(10, 4)\n        self.head = nn.Linear(4, 10, bias=False)\n"
            "        self.head.weight = self.embed.weight\n",
            "import mindspore.nn as nn\nclass LM(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(vocab_size=10, embedding_size=4)\n"
            "        self.head = nn.Dense(in_channels=4, out_channels=10, has_bias=False)\n"
            "        self.head.weight = self.embed.embedding_table\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self._renames: list[dict[str, dict[str, str]]] = []  # per class: attribute -> param renames

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        layers = layer_attributes(node, self.ctx, self.tables)
        self._renames.append({attr: dict(e.weights) for attr, e in layers.items() if e.weights})

    def leave_ClassDef(self, original, updated):
        self._renames.pop()
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if not self._renames or not self._renames[-1]:
            return updated
        layer = original.value
        if not (isinstance(layer, cst.Attribute) and isinstance(layer.value, cst.Name) and layer.value.value == "self"):
            return updated
        renames = self._renames[-1].get(layer.attr.value)
        new = renames.get(original.attr.value) if renames else None
        if new is None or new == original.attr.value:
            return updated
        if new == "":
            self.ctx.report(original, self.id, f"self.{layer.attr.value}.{original.attr.value} has no MindSpore counterpart", Severity.WARNING)
            return updated
        self.ctx.stats.converted += 1
        return updated.with_changes(attr=cst.Name(new))
