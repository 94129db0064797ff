"""MS203: calls of built layers whose MindSpore version takes or returns other things.

A layer entry says what (tables/nn_layers.toml): ``call_casts`` casts arguments,
``call_rename``/``call_drop`` rename or drop keywords (``self.encoder(x, mask=m,
is_causal=True)`` -> ``self.encoder(x, src_mask=m)``), and a ``call_hook`` rewrites the
call (in hooks/nn_layers.py):
``self.attn(q, k, v, need_weights=False)`` on an ``nn.MultiheadAttention`` returns
``(output,)`` in MindSpore where torch returns ``(output, None)``, so the call becomes
``(self.attn(...)[0], None)`` and ``x, _ = ...`` unpacks as before.

``self.loss = nn.CrossEntropyLoss()`` in ``__init__``, then ``self.loss(pred, label)``
in ``construct`` (or ``nn.CrossEntropyLoss()(pred, label)`` in one expression): MindSpore wants int32 labels where torch takes int64, so the call
becomes ``self.loss(pred, label.astype(ms.int32))``. The tables say which layer
needs which cast (``call_casts``).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.passes import Example, Pass

from transpile.engine.tables import ApiEntry

from ..analysis.layer_types import Instance, index_place, shape_of
from ..hooks import HOOKS
from ..table_calls import tables


class LayerCallCasts(Pass):
    id = "MS203"
    name = "layer-call-casts"
    reads = frozenset({"layer_attributes", "layer_types", "module", "nodes", "qualified_calls"})
    summary = "Calls of built layers: argument casts (loss labels -> int32) and call hooks (MultiheadAttention results)."
    examples = (
        Example(
            "import torch.nn as nn\nclass L(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.ce = nn.CrossEntropyLoss()\n    def forward(self, p, y):\n        return self.ce(p, y)\n",
            "import mindspore.nn as nn\nimport mindspore as ms\nclass L(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.ce = nn.CrossEntropyLoss()\n    def construct(self, p, y):\n        return self.ce(p, y.astype(ms.int32))\n",
        ),
        Example(  # built and called in one expression; size_average=False is torch's reduction="sum"
            "import torch.nn as nn\ndef loss(p, y):\n    return nn.CrossEntropyLoss(size_average=False)(p, y)\n",
            "import mindspore.nn as nn\nimport mindspore as ms\ndef loss(p, y):\n"
            "    return nn.CrossEntropyLoss(reduction=\"sum\")(p, y.astype(ms.int32))\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self._layers: list[dict[str, ApiEntry]] = []  # per class: attribute -> its layer's entry
        # what each function binds to layers is found the first time a call of a plain name in
        # it asks (most functions call none)
        self._named_memo: dict[int, dict[str, ApiEntry]] = {}


    def _named_layers(self, scope) -> dict[str, ApiEntry]:
        """``criterion = nn.CrossEntropyLoss()`` in the scope (a training function's loss):
        names every assignment of which builds the same layer with call rewrites."""
        if id(scope) not in self._named_memo:
            self._named_memo[id(scope)] = self._find_named_layers(scope)
        return self._named_memo[id(scope)]

    def _find_named_layers(self, scope) -> dict[str, ApiEntry]:
        found: dict[str, ApiEntry | None] = {}
        for assign in self.facts.nodes(scope, (cst.Assign,), lambda s: False):
            for target in assign.targets:
                if isinstance(target.target, cst.Name):
                    name = target.target.value
                    entry = self._built_here(assign.value, called=False)
                    found[name] = entry if found.get(name, entry) is entry else None
        return {name: entry for name, entry in found.items() if entry is not None}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        layers = self.facts.layer_attributes(node, self.tables)
        self._layers.append({attr: e for attr, e in layers.items()
                             if e.call_casts or e.call_hook or e.call_rename or e.call_drop})

    def leave_ClassDef(self, original, updated):
        self._layers.pop()
        return updated

    def _built_here(self, func: cst.BaseExpression, called: bool = True) -> ApiEntry | None:
        """``nn.CrossEntropyLoss(...)(p, y)``: a layer built and called in one expression
        (``called=False``: ``func`` is the construction itself)."""
        if not isinstance(func, cst.Call):
            return None
        qual = self.ctx.imports.qualify(func.func)
        entry = self.tables.lookup(qual) if qual else None
        return entry if entry is not None and entry.kind == "class" and (entry.call_casts or entry.call_hook
                                                                         or entry.call_rename or entry.call_drop) else None

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        entry = self._built_here(func)
        if entry is None and isinstance(func, cst.Name):
            function = self.ctx.current_function
            local = self._named_layers(function or self.facts.module)
            entry = local.get(func.value) if func.value in local else (
                self._named_layers(self.facts.module).get(func.value)
                if function is not None and not self._assigned_here(func.value) else None)
            if entry is None:
                return updated
        if entry is None and self._layers and (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                                               and func.value.value == "self"):
            entry = self._layers[-1].get(func.attr.value)
        if entry is None:
            entry = self._indexed_layer(func)
        if entry is None:
            return updated
        if entry.call_rename or entry.call_drop:
            hint = _unmasked_hint(original, entry)
            if hint is not None:
                self.ctx.count_unconverted()
                self.ctx.mark(original, self.id, f"{hint}=True without a mask: torch may apply causal attention "
                              "itself; MindSpore's layer takes the mask only, so pass the causal mask")
                return updated
            updated = _keywords(updated, entry)
        if entry.call_hook:
            return HOOKS[entry.call_hook].function(self.ctx, entry, updated)
        args = list(updated.args)
        for index, dtype in entry.call_casts.items():
            i = int(index)
            if i < len(args) and not args[i].keyword and not args[i].star and not self._cast_to(args[i].value, dtype):
                cast = cst.Call(func=cst.Attribute(value=args[i].value, attr=cst.Name("astype")),
                                args=[cst.Arg(self.ctx.reference(dtype))])
                args[i] = args[i].with_changes(value=cast)
        return updated.with_changes(args=args)


    def _indexed_layer(self, func: cst.BaseExpression) -> ApiEntry | None:
        """A layer the tree's type index knows (built in another method, file or helper,
        or an instance of the tree's subclass of a torch layer that keeps its forward:
        ``self.encoder(x, mask=m)`` with ``encoder`` a ``class Encoder(nn.TransformerEncoder)``),
        and ``super().forward(x, mask=m)`` in such a subclass: the torch layer's call rewrites."""
        types = self.facts.layer_types()
        scope, owner, locals_, module = index_place(self.ctx.open_scopes, types.index)
        if (type(func) is cst.Attribute and func.attr.value in ("forward", "construct") and owner is not None
                and type(func.value) is cst.Call and type(func.value.func) is cst.Name
                and func.value.func.value == "super"):
            info = types.index.classes.get(owner)
            bases = info.bases if info is not None else ()
            entries = [e for e in (types.call_entry(Instance(b)) for b in bases) if e is not None]
            entry = entries[0] if entries else None
        elif type(func) in (cst.Name, cst.Attribute, cst.Subscript):
            entry = types.call_entry(types.value(shape_of(func, scope, owner, locals_, module)))
        else:
            return None
        if entry is None or not (entry.call_casts or entry.call_hook or entry.call_rename or entry.call_drop):
            return None
        return entry

    def _assigned_here(self, name: str) -> bool:
        """The current function binds ``name`` itself, as a parameter or by assignment (a
        module-level layer of that name is hidden)."""
        scope = self.ctx.open_scopes[-1] if self.ctx.open_scopes else None
        if type(scope) is cst.FunctionDef and any(
                p.name.value == name for p in (*scope.params.posonly_params, *scope.params.params,
                                                *scope.params.kwonly_params)):
            return True
        return any(isinstance(t.target, cst.Name) and t.target.value == name
                   for scope in self.ctx.open_scopes[-1:] if type(scope) is cst.FunctionDef
                   for assign in self.facts.nodes(scope, (cst.Assign,), lambda s: False) for t in assign.targets)

    def _cast_to(self, value: cst.BaseExpression, dtype: str) -> bool:
        """``value`` is ``x.astype(<dtype>)`` already (a layer whose construction was left as
        torch's is still known as that layer on the next run: its cast is not doubled)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "astype" and len(value.args) == 1):
            return False
        spelled = self.ctx.imports.qualify(value.args[0].value)
        return spelled == dtype


def _keywords(call: cst.Call, entry: ApiEntry) -> cst.Call:
    """The call's keywords as MindSpore's layer takes them."""
    args = [a for a in call.args if a.keyword is None or a.keyword.value not in entry.call_drop]
    args = [a.with_changes(keyword=cst.Name(entry.call_rename[a.keyword.value]))
            if a.keyword is not None and a.keyword.value in entry.call_rename else a for a in args]
    if args and len(args) != len(call.args):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def _unmasked_hint(call: cst.Call, entry: ApiEntry) -> str | None:
    """A dropped ``*is_causal`` keyword that is not literally False, in a call passing no
    mask by keyword: the hint may be all that makes the attention causal."""
    masks = [a for a in call.args if a.keyword is not None and a.keyword.value.endswith("mask")
             and not (isinstance(a.value, cst.Name) and a.value.value == "None")]
    for a in call.args:
        if a.keyword is not None and a.keyword.value in entry.call_drop and a.keyword.value.endswith("is_causal"):
            if not (isinstance(a.value, cst.Name) and a.value.value == "False") and not masks:
                return a.keyword.value
    return None
