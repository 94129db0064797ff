"""MS301: boolean indexing becomes a multiply by the mask (seed 000, box_select_ms2).

``x[mask]`` has a shape that depends on the data, which GRAPH_MODE cannot compile
well. ``x * mask`` (the mask broadcast over x's trailing axes) keeps x's shape with
the unselected rows zeroed. That changes the result's shape, so the rewrite is
unsafe and says so. ``x[mask] = v`` becomes ``masked_fill``/``where``, and
``x[mask] op= v`` becomes ``x = where(mask, x op v, x)``: both write the receiver
twice, so a receiver that cannot be (``a.diagonal()[mask] *= -1`` writes into a view)
stays as it is, marked. A boolean-indexed subscript is never replaced where it is
written to, nor a selection inside a written target (``x[m, y[m]] = v``): other targets
(``del``, ``for``, tuples, several targets) are marked.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Safety, Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import iter_nodes

from ..analysis.devices import is_device_move
from ..syntax import code, literal_value, operand, repeatable

COMPARISONS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
REDUCTIONS = frozenset({"sum", "mean", "max", "min"})
MASK_METHODS = frozenset({"bool", "logical_not", "logical_and", "logical_or", "isnan", "isinf", "isfinite", "eq", "ne", "gt", "lt", "ge", "le"})


class BoolIndex(Pass):
    id = "MS301"
    name = "bool-index"
    summary = "Boolean indexing becomes a mask multiply (shape kept, rows zeroed)."
    examples = (
        Example(
            "import torch\ndef box_select(box, iou_score):\n    mask = iou_score > 0.3\n    return box[mask]\n",
            "def box_select(box, iou_score):\n    mask = iou_score > 0.3\n"
            "    return box * mask.reshape(mask.shape + (1,) * (box.ndim - mask.ndim)).astype(\n"
            "        box.dtype\n    )\n",
        ),
        Example(
            "import torch\ndef flip(x, s):\n    x[s < 0] *= -1\n    return x\n",
            "from mindspore import ops\ndef flip(x, s):\n    x = ops.where(\n"
            "        (s < 0).reshape((s < 0).shape + (1,) * (x.ndim - (s < 0).ndim)), x * (-1), x\n    )\n"
            "    return x\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._masks: list[set[str]] = [set()]
        self._reduced: set[int] = set()  # selections that are only reduced
        self._written: set[int] = set()  # subscripts written to (targets): never a mask multiply

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
            method = expr.func.attr.value
            if method == "contiguous" or is_device_move(method, expr):  # dropped by the conversion:
                return self._is_mask(expr.func.value)  # x[m.to(x.device)] is x[m] (also on a second run)
            return method in MASK_METHODS
        return False

    def _mask_index(self, sub: cst.Subscript):
        if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
            return None
        index = sub.slice[0].slice.value
        return index if self._is_mask(index) else None

    def _note_written(self, target) -> None:
        if isinstance(target, cst.Subscript):
            # and every selection inside it: x[m, y[m]] = v computes where to write from
            # y[m], whose selected count matters (a mask multiply would change it)
            self._written.update(id(n) for n in iter_nodes(target) if type(n) is cst.Subscript)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:  # Element or StarredElement
                self._note_written(element.value)

    def _masked_targets(self, target) -> list[cst.Subscript]:
        """The boolean-indexed subscripts ``target`` writes to."""
        if isinstance(target, (cst.Tuple, cst.List)):
            return [s for element in target.elements for s in self._masked_targets(element.value)]
        return [target] if isinstance(target, cst.Subscript) and self._mask_index(target) is not None else []

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_written(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._note_written(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._note_written(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._note_written(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._note_written(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._note_written(node.asname.name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._note_written(t.target)
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
        x = updated.func.value.value
        mask = updated.func.value.slice[0].slice.value  # with the other passes' rewrites
        reduction = found[2]
        xs, m = code(_atom(x)), code(_broadcast(mask, x, cast=True))
        ops = code(self.ctx.reference("mindspore.ops.ones_like").value)
        text = {
            "sum": f"({xs} * {m}).sum()",
            "mean": f"({xs} * {m}).sum() / ({ops}.ones_like({xs}) * {m}).sum()",
            "max": f"{ops}.where({m} > 0, {xs}, {ops}.full_like({xs}, float('-inf'))).max()",
            "min": f"{ops}.where({m} > 0, {xs}, {ops}.full_like({xs}, float('inf'))).min()",
        }[reduction]
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{code(original)} becomes a masked {reduction} (same value, static shape)", Severity.INFO)
        return cst.parse_expression(text)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        if id(original) in self._written or id(original) in self._reduced:
            return updated
        if self._mask_index(original) is None:
            return updated
        mask = updated.slice[0].slice.value  # with the other passes' rewrites
        self.ctx.count_converted()
        self.ctx.report(
            original, self.id,
            f"boolean indexing {code(original)} replaced by a mask multiply: the result keeps the full "
            "shape with unselected entries zeroed; code that relies on the selected count must use the mask",
            Severity.WARNING, Safety.UNSAFE,
        )
        value = updated.value
        return cst.BinaryOperation(left=_atom(value), operator=cst.Multiply(),
                                 right=_broadcast(mask, value, cast=True))

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        written = [s for t in original.targets for s in self._masked_targets(t.target)]
        if not written:
            return updated
        if len(original.targets) != 1 or original.targets[0].target is not written[0]:
            return self._leave_marked(original, updated, written, "an assignment to several targets")
        parts = self._receiver_and_mask(original, written[0], updated.targets[0].target)
        if parts is None:
            return updated
        target, mask = parts
        value = updated.value
        number = literal_value(value)
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            ops = code(self.ctx.reference("mindspore.ops.masked_fill").value)
            new = f"{ops}.masked_fill({code(target)}, {code(_broadcast(mask, target, cast=False))}, {code(value)})"
            return self._rebind(original, updated, target, cst.parse_expression(new))
        return self._rebind(original, updated, target, self._where(mask, value, target))

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        """``x[m] op= v`` -> ``x = where(m, x op v, x)``."""
        written = self._masked_targets(original.target)
        if not written:
            return updated
        binary = getattr(cst, type(original.operator).__name__.removesuffix("Assign"))
        if binary is cst.MatrixMultiply:
            return self._leave_marked(original, updated, written, "a matrix-multiply assignment")
        parts = self._receiver_and_mask(original, written[0], updated.target)
        if parts is None:
            return updated
        target, mask = parts
        new = cst.BinaryOperation(left=target, operator=binary(), right=operand(updated.value))
        return self._rebind(original, updated, target, self._where(mask, new, target))

    def leave_AnnAssign(self, original, updated):
        return self._leave_marked(original, updated, self._masked_targets(original.target), "an annotated assignment")

    def leave_Del(self, original, updated):
        return self._leave_marked(original, updated, self._masked_targets(original.target), "del")

    def leave_For(self, original, updated):
        return self._leave_marked(original, updated, self._masked_targets(original.target), "a for loop")

    def leave_CompFor(self, original, updated):
        return self._leave_marked(original, updated, self._masked_targets(original.target), "a comprehension")

    def leave_WithItem(self, original, updated):
        written = self._masked_targets(original.asname.name) if original.asname is not None else []
        return self._leave_marked(original, updated, written, "a with statement")

    def _leave_marked(self, original, updated, written: list[cst.Subscript], where: str):
        """A boolean-indexed target the pass cannot write as a masked update stays as it is.
        (Markers quote no code: the other passes may rewrite it, and converting the output
        again must give the same marker.)"""
        for _ in written:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"a boolean-indexed target of {where} needs a manual "
                          "where() (only `x[m] = v` and `x[m] op= v` are converted)")
        return updated

    def _receiver_and_mask(self, statement, original: cst.Subscript, updated):
        """(receiver, mask) of a masked write, with the other passes' rewrites; None, with
        a marker, when the receiver cannot be evaluated and written twice."""
        if not isinstance(updated, cst.Subscript) or not repeatable(original.value):
            self.ctx.count_unconverted()
            self.ctx.mark(statement, self.id, "a masked write whose receiver cannot be written twice (a call, "
                          "or a view of another tensor) needs a manual where()")
            return None
        return updated.value, updated.slice[0].slice.value

    def _where(self, mask, value, target) -> cst.BaseExpression:
        ops = code(self.ctx.reference("mindspore.ops.where").value)
        return cst.parse_expression(f"{ops}.where({code(_broadcast(mask, target, cast=False))}, {code(value)}, {code(target)})")

    def _rebind(self, original, updated, target, value) -> cst.Assign:
        self.ctx.count_converted()
        self.ctx.report(
            original, self.id,
            f"masked assignment to {code(target)} rebinds it to a new tensor (other references keep the old values)",
            Severity.WARNING, Safety.UNSAFE,
        )
        return cst.Assign(targets=[cst.AssignTarget(target)], value=value, semicolon=updated.semicolon)


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
