"""MS204: ``self.bn.weight`` -> ``self.bn.gamma``: parameter names of converted layers.

Code that touches a layer's parameters by name (tied weights, custom init,
freezing) must use MindSpore's names: BatchNorm ``gamma``/``beta``, Embedding
``embedding_table``, ... The tables' ``weights`` renames say which. The layer is
known from ``self.X = nn.Y(...)`` in the class, or from an ``isinstance`` test:
in ``if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):`` (the init loop over
``self.modules()``) ``m.weight`` is ``m.gamma`` when every class tested agrees, and so
are attributes holding constructor arguments (``m.out_features`` -> ``m.out_channels``).
"""
from __future__ import annotations

import libcst as cst

from transpile.diagnostics import Severity
from transpile.passes import Example, Pass
from transpile.walk import rewrite

from ..table_calls import tables


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
        layers = self.facts.layer_attributes(node, self.tables)
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

    def leave_If(self, original: cst.If, updated: cst.If):
        """``if isinstance(m, nn.BatchNorm2d): init(m.weight)`` -> ``m.gamma`` in that branch."""
        guard = _isinstance_guard(original.test, self.ctx, self.tables)
        if guard is None:
            return updated
        name, renames = guard
        if not renames:
            return updated
        renamer = _Renamer(name, renames)
        body = rewrite(updated.body, renamer)
        if renamer.count:
            self.ctx.stats.converted += renamer.count
        return updated.with_changes(body=body)


def _isinstance_guard(test, ctx, tables):
    """``isinstance(name, cls_or_tuple)`` with torch layer classes -> (name, the renames
    all of them share); None when the test is something else."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
        return None
    classes = test.args[1].value
    items = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
    shared: dict[str, str] | None = None
    for item in items:
        qual = ctx.imports.qualify(item)
        entry = tables.lookup(qual) if qual else None
        if entry is None or entry.kind != "class":
            return None
        renames = {k: v for k, v in entry.weights.items() if v and v != k}
        # attributes holding constructor arguments: m.out_features -> m.out_channels
        renames.update({k: v for k, v in entry.rename.items()
                        if k not in ("weight", "bias") and k not in renames and v != k and v != "*" and not v.startswith("has_")})
        # only what every class renames the same way (BatchNorm2d and Linear disagree on weight)
        shared = renames if shared is None else {k: v for k, v in shared.items() if renames.get(k) == v}
    return test.args[0].value.value, shared or {}


class _Renamer(cst.CSTTransformer):
    def __init__(self, name: str, renames: dict[str, str]):
        self.name, self.renames, self.count = name, renames, 0

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if not (isinstance(updated.value, cst.Name) and updated.value.value == self.name):
            return updated
        new = self.renames.get(updated.attr.value)
        if new is None:
            return updated
        self.count += 1
        return cst.parse_expression(f"{self.name}.{new}")
