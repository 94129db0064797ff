"""MS310: a dict cache on self, filled and read in construct, becomes the value it caches.

Model code memoises a tensor computed from parameters in a dict attribute of the
module, keyed by device (timm's LeViT, EfficientFormer, TinyViT attention biases)::

    if key not in self.cache:                          return self.biases[:, self.idxs]
        self.cache[key] = self.biases[:, self.idxs]   ->
    return self.cache[key]

GRAPH_MODE (MindSpore 2.10) cannot compile the write into a dict attribute of the
Cell (the compiled graph sees the dict as a constant tuple: "'tuple' object does not
support item assignment", or a failure at run time). The cached value is what the
call computes again; computing it each time gives the same result (and follows the
parameters after they change). Only the exact shape above: an ``if K not in self.D:``
without else whose body is the single ``self.D[K] = E``, directly followed by
``return self.D[K]`` (same D, same K). Applies in forward/construct and what it calls.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...syntax import code


def _self_attr(node) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _lookup(node) -> tuple[str, str] | None:
    """``self.D[K]`` -> (D, code of K)."""
    if (isinstance(node, cst.Subscript) and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index) and _self_attr(node.value)):
        return _self_attr(node.value), code(node.slice[0].slice.value)
    return None


def _only(block) -> cst.BaseSmallStatement | None:
    if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
        block = block.body[0]
    if isinstance(block, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and len(block.body) == 1:
        return block.body[0]
    return None


def _memo(stmt, nxt) -> cst.BaseExpression | None:
    """The cached expression E when (stmt, nxt) is the memo shape, else None."""
    if not (isinstance(stmt, cst.If) and stmt.orelse is None):
        return None
    test = stmt.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.NotIn)):
        return None
    cache = _self_attr(test.comparisons[0].comparator)
    key = code(test.left)
    fill = _only(stmt.body)
    if not (cache and isinstance(fill, cst.Assign) and len(fill.targets) == 1
            and _lookup(fill.targets[0].target) == (cache, key)):
        return None
    ret = _only(nxt)
    if not (isinstance(ret, cst.Return) and ret.value is not None and _lookup(ret.value) == (cache, key)):
        return None
    return fill.value


class GraphMemo(Pass):
    id = "MS310"
    name = "graph-memo"
    summary = "if k not in self.cache: self.cache[k] = e; return self.cache[k] in construct -> return e (GRAPH_MODE compiles no dict attribute write)."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        key = str(x.device)\n        if key not in self.cache:\n"
            "            self.cache[key] = self.bias * 2\n        return self.cache[key]\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        key = str(x.device)\n        return self.bias * 2\n",
        ),
    )

    def _fold(self, body):
        out, i, changed = [], 0, False
        while i < len(body):
            value = _memo(body[i], body[i + 1]) if i + 1 < len(body) else None
            if value is None:
                out.append(body[i])
                i += 1
                continue
            self.ctx.report(body[i], self.id, "a dict cache on self is computed each call instead "
                            "(GRAPH_MODE compiles no write into a Cell's dict attribute)", Severity.INFO)
            self.ctx.count_converted()
            out.append(cst.SimpleStatementLine(body=[cst.Return(value=value)], leading_lines=body[i].leading_lines))
            i += 2
            changed = True
        return out if changed else None

    def leave_IndentedBlock(self, original, updated):
        if not self.ctx.compiled:
            return updated
        body = self._fold(list(updated.body))
        return updated if body is None else updated.with_changes(body=body)
