"""MS301: boolean indexing becomes a multiply by the mask (seed 000, box_select_ms2).

``x[mask]`` has a shape that depends on the data, which GRAPH_MODE cannot compile
well. ``x * mask`` (the mask broadcast over x's trailing axes) keeps x's shape with
the unselected rows zeroed. That changes the result's shape, so the rewrite is
unsafe and says so. ``x[mask] = v`` becomes ``masked_fill``/``where``.
"""
from __future__ import annotations

import libcst as cst

from transpile.diagnostics import Safety, Severity
from transpile.passes import Example, Pass

from ..syntax import code, literal_value

COMPARISONS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
REDUCTIONS = frozenset({"sum", "mean", "max", "min"})
MASK_METHODS = frozenset({"bool", "logical_not", "logical_and", "logical_or", "isnan", "isinf", "isfinite", "eq", "ne", "gt", "lt", "ge", "le"})


class BoolIndex(Pass):
    id = "MS301"
    name = "bool-index"
    summary = "Boolean indexing becomes a mask multiply (shape kept, rows zeroed)."
    safety = Safety.UNSAFE
    examples = (
        Example(
            "import torch\ndef box_select(box, iou_score):\n    mask = iou_score > 0.3\n    return box[mask]\n",
            "def box_select(box, iou_score):\n    mask = iou_score > 0.3\n"
            "    return box * mask.reshape(mask.shape + (1,) * (box.ndim - mask.ndim)).astype(\n"
            "        box.dtype\n    )\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._masks: list[set[str]] = [set()]
        self._reduced: set[int] = set()  # selections that are only reduced

    def visit_FunctionDef(self, node) -> None:
        self._masks.append(set())

    def leave_FunctionDef(self, original, updated):
        self._masks.pop()
        return updated

    def _is_mask(self, expr) -> bool:
        if isinstance(expr, cst.Comparison):
            return all(isinstance(t.operator, COMPARISONS) for t in expr.comparisons)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self._is_mask(expr.left) and self._is_mask(expr.right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self._is_mask(expr.expression)
        if isinstance(expr, cst.Name):
            return expr.value in self._masks[-1]
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            return expr.func.attr.value in MASK_METHODS
        return False

    def _mask_index(self, sub: cst.Subscript):
        if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
            return None
        index = sub.slice[0].slice.value
        return index if self._is_mask(index) else None

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._is_mask(node.value):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    self._masks[-1].add(t.target.value)

    def _reduced_selection(self, call: cst.Call):
        """``x[mask].sum()`` and friends: (x, mask, reduction) when the call is one."""
        func = call.func
        if (isinstance(func, cst.Attribute) and func.attr.value in REDUCTIONS and not call.args
                and isinstance(func.value, cst.Subscript)):
            mask = self._mask_index(func.value)
            if mask is not None:
                return func.value, mask, func.attr.value
        return None

    def visit_Call(self, node: cst.Call) -> None:
        found = self._reduced_selection(node)
        if found is not None:
            self._reduced.add(id(found[0]))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        """A selection only reduced keeps its shape exactly: a masked reduction (seed 000)."""
        found = self._reduced_selection(original)
        if found is None:
            return updated
        sub, mask, reduction = found
        x = updated.func.value.value
        xs, m = code(_atom(x)), code(_broadcast(mask, x, cast=True))
        ops = code(self.ctx.reference("mindspore.ops.ones_like").value)
        text = {
            "sum": f"({xs} * {m}).sum()",
            "mean": f"({xs} * {m}).sum() / ({ops}.ones_like({xs}) * {m}).sum()",
            "max": f"{ops}.where({m} > 0, {xs}, {ops}.full_like({xs}, float('-inf'))).max()",
            "min": f"{ops}.where({m} > 0, {xs}, {ops}.full_like({xs}, float('inf'))).min()",
        }[reduction]
        self.ctx.stats.converted += 1
        self.ctx.report(original, self.id, f"{code(original)} becomes a masked {reduction} (same value, static shape)", Severity.INFO)
        return cst.parse_expression(text)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        if getattr(self, "_in_target", False) or id(original) in self._reduced:
            return updated
        mask = self._mask_index(original)
        if mask is None:
            return updated
        self.ctx.stats.converted += 1
        self.ctx.report(
            original, self.id,
            f"boolean indexing {code(original)} replaced by a mask multiply: the result keeps the full "
            "shape with unselected entries zeroed; code that relies on the selected count must use the mask",
            Severity.WARNING, Safety.UNSAFE,
        )
        value = updated.value
        return cst.BinaryOperation(left=_atom(value), operator=cst.Multiply(), right=_broadcast(mask, value, cast=True))

    def visit_AssignTarget(self, node) -> None:
        self._in_target = True

    def leave_AssignTarget(self, original, updated):
        self._in_target = False
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if len(original.targets) != 1 or not isinstance(original.targets[0].target, cst.Subscript):
            return updated
        sub = original.targets[0].target
        mask = self._mask_index(sub)
        if mask is None:
            return updated
        target = sub.value
        if not isinstance(target, (cst.Name, cst.Attribute)):
            self.ctx.stats.unconverted += 1
            self.ctx.mark(original, self.id, f"masked assignment to {code(target)} needs a manual where()")
            return updated
        ops = self.ctx.reference("mindspore.ops.masked_fill").value
        value = updated.value
        number = literal_value(value)
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            new = f"{code(ops)}.masked_fill({code(target)}, {code(_broadcast(mask, target, cast=False))}, {code(value)})"
        else:
            new = f"{code(ops)}.where({code(_broadcast(mask, target, cast=False))}, {code(value)}, {code(target)})"
        self.ctx.stats.converted += 1
        self.ctx.report(
            original, self.id,
            f"masked assignment to {code(target)} rebinds it to a new tensor (other references keep the old values)",
            Severity.WARNING, Safety.UNSAFE,
        )
        return updated.with_changes(targets=[cst.AssignTarget(target)], value=cst.parse_expression(new))


def _atom(expr):
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _same_shape(mask, like) -> bool:
    """``x[x > 0]``: a comparison of x itself has x's shape, no reshape needed."""
    if isinstance(mask, cst.Comparison):
        return mask.left.deep_equals(like) or _same_shape(mask.left, like)
    if isinstance(mask, cst.BinaryOperation):
        return _same_shape(mask.left, like) or _same_shape(mask.right, like)
    if isinstance(mask, cst.UnaryOperation):
        return _same_shape(mask.expression, like)
    return False


def _broadcast(mask, like, cast: bool):
    """mask reshaped to broadcast over ``like``'s trailing axes (``expand_dims`` as needed)."""
    m = code(_atom(mask))
    x = code(_atom(like))
    if _same_shape(mask, like):
        return cst.parse_expression(f"{m}.astype({x}.dtype)" if cast else m)
    text = f"{m}.reshape({m}.shape + (1,) * ({x}.ndim - {m}.ndim))"
    if cast:
        text += f".astype({x}.dtype)"
    return cst.parse_expression(text)
