"""MS203: cast the arguments of calls to layers whose MindSpore version needs other dtypes.

Also ``self.attn(q, k, v, need_weights=False)`` on an ``nn.MultiheadAttention``: MindSpore
returns ``(output,)`` where torch returns ``(output, None)``, so the call becomes
``(self.attn(...)[0], None)`` and ``x, _ = ...`` unpacks as before.

``self.loss = nn.CrossEntropyLoss()`` in ``__init__``, then ``self.loss(pred, label)``
in ``construct``: MindSpore wants int32 labels where torch takes int64, so the call
becomes ``self.loss(pred, label.astype(ms.int32))``. The tables say which layer
needs which cast (``call_casts``).
"""
from __future__ import annotations

import libcst as cst

from transpile.passes import Example, Pass

from ..table_calls import tables


class LayerCallCasts(Pass):
    id = "MS203"
    name = "layer-call-casts"
    summary = "Cast call arguments of layers whose MindSpore form needs other dtypes (loss labels -> int32)."
    examples = (
        Example(
            "import torch.nn as nn\nclass L(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.ce = nn.CrossEntropyLoss()\n    def forward(self, p, y):\n        return self.ce(p, y)\n",
            "import mindspore.nn as nn\nimport mindspore as ms\nclass L(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.ce = nn.CrossEntropyLoss()\n    def construct(self, p, y):\n        return self.ce(p, y.astype(ms.int32))\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self._layers: list[dict[str, dict[str, str]]] = []  # per class: attribute -> casts
        self._attention: list[set[str]] = []  # per class: attributes holding nn.MultiheadAttention

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        layers = self.facts.layer_attributes(node, self.tables)
        self._layers.append({attr: dict(e.call_casts) for attr, e in layers.items() if e.call_casts})
        self._attention.append({attr for attr, e in layers.items() if e.source == "torch.nn.MultiheadAttention"})

    def leave_ClassDef(self, original, updated):
        self._layers.pop()
        self._attention.pop()
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self._layers:
            return updated
        func = original.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return updated
        if func.attr.value in self._attention[-1]:
            return _no_weights(updated)
        if not self._layers[-1]:
            return updated
        casts = self._layers[-1].get(func.attr.value)
        if not casts:
            return updated
        args = list(updated.args)
        for index, dtype in casts.items():
            i = int(index)
            if i < len(args) and not args[i].keyword and not args[i].star:
                cast = cst.Call(func=cst.Attribute(value=args[i].value, attr=cst.Name("astype")),
                                args=[cst.Arg(self.ctx.reference(dtype))])
                args[i] = args[i].with_changes(value=cast)
        return updated.with_changes(args=args)


def _no_weights(call: cst.Call) -> cst.BaseExpression:
    """``attn(q, k, v, need_weights=False)``: torch returns ``(output, None)``, MindSpore
    ``(output,)``; ``(attn(...)[0], None)`` unpacks like torch's."""
    flag = next((a for a in call.args if a.keyword is not None and a.keyword.value == "need_weights"), None)
    if flag is None or not (isinstance(flag.value, cst.Name) and flag.value.value == "False"):
        return call
    first = cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    return cst.Tuple([cst.Element(first), cst.Element(cst.Name("None"))])
