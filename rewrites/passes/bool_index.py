"""MS301: boolean-indexed writes become in-place masked updates; masked reductions keep a static shape.

``x[mask]`` has a shape that depends on the data, which GRAPH_MODE compiles as a dynamic
shape; a boolean-indexed write of a tensor it does not compile at all (MindSpore 2.10:
``x[m] *= -1`` fails in BroadcastTo). The rewrites compute what torch computes in both
modes (tests/differential/test_graph_rewrites.py):

* ``x[m] = v`` -> ``x[...] = x.masked_fill(m, v)`` (a number: the method casts it to x's
  dtype, where ``ops.masked_fill`` refuses ``0`` on a float tensor) or ``x[...] = where(m, v, x)``,
  and ``x[m] op= v`` -> ``x[...] = where(m, x op v, x)``: written in place, so other
  references to ``x`` see the write in PYNATIVE as in torch. A read ``y[m]`` with the
  same mask inside the value becomes ``y`` (``where`` takes only the masked entries).
  The receiver is written twice, so one that cannot be (``a.diagonal()[mask] *= -1``
  writes into a view) stays as it is, marked. A boolean-indexed subscript is never
  replaced where it is written to, nor a selection inside a written target
  (``x[m, y[m]] = v``): other targets (``del``, ``for``, tuples, several targets) are marked.
* ``x[m].sum()`` / ``.mean()`` / ``.max()`` / ``.min()`` -> the reduction of
  ``where(m, x, neutral)``: the same value, unselected infinities and NaNs left out.

A plain read ``x[m]`` is left as it is (both modes run it): a mask multiply would keep
x's shape where torch's selection has one row per True, and zeroed rows where torch has
none. In compiled code it gets a note (a dynamic shape in GRAPH_MODE).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
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
    summary = "Boolean-indexed writes become in-place masked updates; masked reductions keep a static shape."
    examples = (
        Example(
            "import torch\ndef total(box, iou_score):\n    mask = iou_score > 0.3\n    return box[mask].sum()\n",
            "from mindspore import ops\ndef total(box, iou_score):\n    mask = iou_score > 0.3\n"
            "    return ops.where(\n        mask.reshape(mask.shape + (1,) * (box.ndim - mask.ndim)),\n"
            "        box,\n        ops.zeros_like(box),\n    ).sum()\n",
        ),
        Example(
            "import torch\ndef flip(x, s):\n    x[s < 0] *= -1\n    return x\n",
            "from mindspore import ops\ndef flip(x, s):\n    x[...] = ops.where(\n"
            "        (s < 0).reshape((s < 0).shape + (1,) * (x.ndim - (s < 0).ndim)), x * (-1), x\n    )\n"
            "    return x\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._masks: list[set[str]] = [set()]
        self._reduced: set[int] = set()  # selections that are only reduced
        self._written: set[int] = set()  # subscripts written to (targets): never a mask multiply
        self._write_masks: list[tuple[int, object]] = []  # (statement id, its mask or None) of open writes
        self._elementwise_reads: set[int] = set()  # subscripts that are a masked write's value or its operands

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
        self._enter_write(node, [node.target], node.value)

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

    def _enter_write(self, statement, targets, value) -> None:
        """The mask of a masked write ``x[m] = v`` (None for other statements), so a read
        ``y[m]`` that is ``v`` or an operand of its arithmetic is known to be taken at the
        written entries only (elementwise: ``where(m, y, x)`` reads y at m alone)."""
        written = [s for t in targets for s in self._masked_targets(t)]
        mask = self._mask_index(written[0]) if len(written) == 1 == len(targets) else None
        self._write_masks.append((id(statement), mask))
        if mask is not None:
            self._elementwise_reads.update(id(n) for n in _elementwise_operands(value) if isinstance(n, cst.Subscript))

    def _leave_write(self, statement) -> None:
        if self._write_masks and self._write_masks[-1][0] == id(statement):
            self._write_masks.pop()

    def _same_mask_as_write(self, sub: cst.Subscript) -> bool:
        if id(sub) not in self._elementwise_reads:
            return False
        mask, written = self._mask_index(sub), self._write_masks[-1][1] if self._write_masks else None
        return mask is not None and written is not None and mask.deep_equals(written)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._enter_write(node, [t.target for t in node.targets], node.value)
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
        xs, m = code(_atom(x)), code(_broadcast(mask, x, cast=False))
        ops = code(self.ctx.reference("mindspore.ops.where").value)
        # where, not a product: an unselected inf or NaN times 0 is NaN
        text = {
            "sum": f"{ops}.where({m}, {xs}, {ops}.zeros_like({xs})).sum()",
            "mean": f"{ops}.where({m}, {xs}, {ops}.zeros_like({xs})).sum() / {ops}.where({m}, {ops}.ones_like({xs}), {ops}.zeros_like({xs})).sum()",
            "max": f"{ops}.where({m}, {xs}, {ops}.full_like({xs}, float('-inf'))).max()",
            # min as the max of the negation, -inf filled: MindSpore 2.10's GRAPH mode, given a
            # +inf and a -inf fill in one graph, now and then filled the min's with -inf (2 of 120
            # compilations of max and min side by side gave -inf; none of 120 this way)
            "min": f"-{ops}.where({m}, -{xs}, {ops}.full_like({xs}, float('-inf'))).max()",
        }[reduction]
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{code(original)} becomes a masked {reduction} (same value, static shape)", Severity.INFO)
        return cst.parse_expression(text)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        if id(original) in self._written or id(original) in self._reduced:
            return updated
        if self._mask_index(original) is None:
            return updated
        if self._same_mask_as_write(original):  # x[m] = y[m]: where(m, y, x) takes y at m only
            return updated.value
        if self.ctx.compiled:
            self.ctx.report(original, self.id, f"boolean indexing {code(original)}: a shape that depends on the "
                            "data, a dynamic shape in GRAPH_MODE", Severity.INFO)
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        self._leave_write(original)
        written = [s for t in original.targets for s in self._masked_targets(t.target)]
        if not written:
            return updated
        if len(original.targets) != 1 or original.targets[0].target is not written[0]:
            return self._leave_marked(original, updated, written, "an assignment to several targets")
        if self._reads_a_selection(original.value, written[0]):
            return self._leave_marked(original, updated, written, "an assignment of a selection's result")
        parts = self._receiver_and_mask(original, written[0], updated.targets[0].target)
        if parts is None:
            return updated
        target, mask = parts
        value = updated.value
        number = literal_value(value)
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            # the method casts a number to the tensor's dtype; ops.masked_fill has no CPU kernel for
            # an int fill of a float tensor (x[m] = 0)
            new = f"{code(operand(target))}.masked_fill({code(_broadcast(mask, target, cast=False))}, {code(value)})"
            return self._rebind(original, updated, target, cst.parse_expression(new))
        return self._rebind(original, updated, target, self._where(mask, value, target))

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        """``x[m] op= v`` -> ``x[...] = where(m, x op v, x)``."""
        self._leave_write(original)
        written = self._masked_targets(original.target)
        if not written:
            return updated
        binary = getattr(cst, type(original.operator).__name__.removesuffix("Assign"))
        if binary is cst.MatrixMultiply:
            return self._leave_marked(original, updated, written, "a matrix-multiply assignment")
        if self._reads_a_selection(original.value, written[0]):
            return self._leave_marked(original, updated, written, "an assignment of a selection's result")
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

    def _reads_a_selection(self, value, written: cst.Subscript) -> bool:
        """Whether ``value`` holds a boolean selection other than an elementwise read with
        the written mask (``cumsum(y[m])`` has the selected count's shape: where() over the
        whole tensor cannot place it)."""
        mask = self._mask_index(written)
        return any(isinstance(n, cst.Subscript) and self._mask_index(n) is not None and id(n) not in self._reduced
                   and not (id(n) in self._elementwise_reads and self._mask_index(n).deep_equals(mask))
                   for n in iter_nodes(value))

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
        """``target[...] = value``: the masked update written into the tensor itself, as
        torch's write is (a rebinding would leave other references to it unchanged)."""
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"masked write to {code(target)}: written in place as a where() over the "
                        "whole tensor (GRAPH_MODE compiles no boolean-indexed write of a tensor)", Severity.INFO)
        if not isinstance(target, cst.Subscript):  # x[0] = ... writes into x already
            target = cst.Subscript(value=_atom(target), slice=[cst.SubscriptElement(cst.Index(cst.Ellipsis()))])
        return cst.Assign(targets=[cst.AssignTarget(target)], value=value, semicolon=updated.semicolon)


ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def _elementwise_operands(value):
    """``value`` and, through arithmetic operators and unary signs, its operands."""
    yield value
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, ELEMENTWISE):
        yield from _elementwise_operands(value.left)
        yield from _elementwise_operands(value.right)
    elif isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
        yield from _elementwise_operands(value.expression)


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
