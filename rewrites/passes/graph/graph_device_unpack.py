"""MS315: a parallel assignment in compiled code, one assignment per line.

GRAPH_MODE (MindSpore 2.10) does not always keep the constants a tuple assignment unpacks:
in x-transformers' attention, after ``b, n, ..., is_multi_latent_attn = x.shape[0],
x.shape[1], ..., self.use_latent_kv`` (nine names), ``if is_multi_latent_attn:`` was not
folded, so the arm Python never takes was compiled and called an attribute holding None
("The object is not callable"); after ``n, heads, kv_heads = q.shape[-2], q.shape[1],
k.shape[1]`` the arm of ``if kv_heads == 1:`` that makes keys 3-d was compiled, and the
einsum equation chosen on ``k.ndim`` was no constant. One assignment per name keeps every
value what it is. ``x.device`` is one such value: in a tuple assignment GRAPH_MODE reads it
as a value it then drops, and drops the names bound beside it (``b, device, n =
x.shape[0], x.device, x.shape[1]`` then ``ops.arange(n)``: "For 'Cast', the input 'dtype'
expect a type, but got AbstractNegligible")::

    b, device, n = x.shape[0], x.device, x.shape[1]   ->   b = x.shape[0]
                                                           device = x.device
                                                           n = x.shape[1]

Only a one-line ``names = values`` of the same length without stars, whose targets are
plain names, is rewritten, and only where no value names a target (Python evaluates every
value before it binds a name; with no value reading a name bound on the line, binding each
as soon as its value is known gives the same names the same values, and the values are
still evaluated left to right). Where a value does name a target, or a value unpacks with a
star, only the ``x.device`` reads are taken out, onto lines of their own first, when no
value names the names they bind (reading an attribute has no side effect, so the order of
the reads does not matter); a value unpacked with a star stays in the rest (``b, n, device =
*x.shape, x.device`` -> ``device = x.device``, ``b, n = *x.shape``) when the device read is
on one side of every starred value.
Applies in forward/construct and what they call (``ctx.compiled``).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.names import scoped_references
from transpile.engine.passes import Example, Pass

from ...syntax import lines_in_place_of


class GraphDeviceUnpack(Pass):
    id = "MS315"
    name = "graph-device-unpack"
    reads = frozenset({"names"})
    runs_after = {
        "MS317": "MS315 splits a line only where no walrus was hoisted from it (MS317 adds its lines to it)",
        "MS318": "MS315 leaves a line MS318 made an if statement of",
        "MS320": "MS315 splits a line only where no next() was taken out of it (MS320 adds its lines to it)",
        "MS330": "MS315 splits a line only where no comprehension was taken out of it (MS330 adds its lines to it)",
    }
    summary = ("a parallel assignment in construct -> one line per name (GRAPH_MODE may drop the constants a "
               "tuple unpacks, and drops the names beside x.device).")
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        n, device = x.shape[1], x.device\n        return torch.arange(n, device=device)\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        n = x.shape[1]\n        device = x.device\n        return ops.arange(start=n)\n",
        ),
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        b, flag = x.shape[0], self.flag\n        if flag:\n            x = self.f(x)\n        return x * b\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        b = x.shape[0]\n        flag = self.flag\n        if flag:\n            x = self.f(x)\n        return x * b\n",
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
        if names is None:
            return updated
        # the converted values (a lowering may have made the tuple: converting the output again
        # must change nothing): the variables they name
        if len(set(names)) == len(names) and all(type(v) is cst.Element for v in values) \
                and not {n.value for v in values for n, _ in scoped_references(v.value)}.intersection(names):
            self.ctx.report(original, self.id, "one assignment per name: GRAPH_MODE may not keep the constants a "
                            "tuple assignment unpacks (and drops the names beside x.device)", Severity.INFO)
            return lines_in_place_of(updated, [_assign([n], [v]) for n, v in zip(names, values)])
        _, original_values = _pairs(before)
        if original_values is None or len(original_values) != len(values):
            return updated
        device = [i for i, v in enumerate(original_values) if type(v) is cst.Element and _device_read(v.value)]
        if not device or len(device) == len(values):
            return updated
        bound = {i: _bound_by(i, values, len(names)) for i in device}  # value position -> name position
        if any(n is None for n in bound.values()):
            return updated
        read = set().union(*(self.facts.names.referenced(v.value) for v in original_values))
        if any(names[bound[i]] in read for i in device):
            return updated
        rest = [i for i in range(len(values)) if i not in device]
        rest_names = [n for j, n in enumerate(names) if j not in bound.values()]
        lines = [_assign([names[bound[i]]], [values[i]]) for i in device] + [_assign(rest_names, [values[i] for i in rest])]
        self.ctx.report(original, self.id, "x.device has a line of its own: in a tuple assignment GRAPH_MODE "
                        "drops the names bound beside it", Severity.INFO)
        return lines_in_place_of(updated, lines)


def _pairs(stmt: cst.Assign) -> tuple[list[str] | None, list[cst.BaseElement] | None]:
    """The names and value elements of ``a, b = e1, e2`` (plain names; values may unpack
    with a star, ``b, n, device = *x.shape, x.device``; as many of each without stars)."""
    target, value = stmt.targets[0].target, stmt.value
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, cst.Tuple):
        return None, None
    if any(not isinstance(e, cst.Element) or not isinstance(e.value, cst.Name) for e in target.elements):
        return None, None
    if not all(isinstance(e, cst.Element) for e in value.elements) and len(value.elements) > len(target.elements):
        return None, None
    if all(isinstance(e, cst.Element) for e in value.elements) and len(value.elements) != len(target.elements):
        return None, None
    return [e.value.value for e in target.elements], list(value.elements)


def _bound_by(i: int, values: list[cst.BaseElement], names: int) -> int | None:
    """The position of the name value ``i`` binds: counted from the start when no starred
    value comes before it, from the end when none comes after it (``*x.shape, x.device``
    binds the last name), unknown otherwise."""
    starred = [j for j, v in enumerate(values) if type(v) is cst.StarredElement]
    if not any(j < i for j in starred):
        return i
    if not any(j > i for j in starred):
        return names - (len(values) - i)
    return None


def _device_read(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Attribute) and value.attr.value == "device"


def _assign(names: list[str], values: list[cst.BaseElement]) -> cst.Assign:
    if len(names) == 1 and len(values) == 1 and type(values[0]) is cst.Element:
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(names[0]))], value=values[0].value)
    target = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
    value = cst.Tuple([v.with_changes(comma=cst.MaybeSentinel.DEFAULT) for v in values], lpar=[], rpar=[])
    return cst.Assign(targets=[cst.AssignTarget(target)], value=value)
