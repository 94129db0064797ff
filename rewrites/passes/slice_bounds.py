"""MS306: slices of empty axes: negative literal bounds from the size, writes to empty regions skipped.

MindSpore 2.10 in PYNATIVE mode raises "The DimsSize should not be zero" reading or
writing ``x[:-1]``, ``x[-2:]``, ``x[:, :-1]`` ... when the sliced axis has size 0: it
normalises the negative bound modulo the size. torch, numpy and Python give an empty
slice (torchaudio's Emformer: ``output_mems[:-1]`` of a memory with no rows). Only a
negative bound fails: ``x[0:0]``, ``x[1:]`` and ``x[:2]`` of an empty axis are fine.

``a:-k`` (``k`` an integer literal) becomes ``a:max(n - k, 0)``, with ``n`` the size of
the sliced axis: Python's own reading of a negative bound, for every size. ``n`` is
``len(x)`` for a subscript with one slice (the first axis of any sequence: lists,
strings and tuples keep their meaning) and ``x.shape[d]`` in a subscript of several
items (only arrays take those). The axis ``d`` counts the items before the slice (an
integer, another slice: one axis; ``None``: none), or after an ``...`` from the end;
an item of unknown rank (a tensor index may be a mask of several axes) stops the count
and a slice past it is left. ``x`` is written twice, so it must be a name, an attribute
chain or a subscript of them; a step other than a positive literal (or none) is left.
Cheap where the axis is not empty: two integer operations.

Writing a region that holds no element, ``x[d0:d1, h0:h1] = v`` with ``d0 == d1``
(torchvision's swin3d: ``attn_mask[d[0]:d[1], h[0]:h[1], w[0]:w[1]] = count`` over
shifts of 0), raises "memcpy_s error, errorno(34)" in MindSpore 2.10 PYNATIVE when
several axes are sliced; torch writes nothing. Such a write, to a subscript of two or
more slices at least one of whose bounds is not a literal (plain slices and integers
only, every bound written twice), runs only where ``_torch_selects_nothing`` (integer
arithmetic on the shape, emitted beside the code) says the region is not empty.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..runtime.registry import runtime_helper
from ..syntax import NOT_LITERAL, literal_value, repeatable
from ..tensor_inference import plainly_not_tensor

GUARD = "_torch_selects_nothing"

# receivers that are never arrays (pandas' indexers take tuples of slices but have no shape)
NOT_ARRAYS = frozenset({"shape", "iloc", "loc", "iat", "at"})


def _negative_literal(node) -> int | None:
    """``k`` of a bound written ``-k`` (k > 0 an integer literal)."""
    if (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, cst.Integer)):
        k = int(node.expression.evaluated_value)
        return k if k > 0 else None
    return None


def _plain_step(s: cst.Slice) -> bool:
    if s.step is None:
        return True
    step = literal_value(s.step)
    return isinstance(step, int) and not isinstance(step, bool) and step > 0


def _axes(elements) -> list[int | None]:
    """The receiver's axis each subscript item slices (None: not known or not a slice)."""
    kinds = []
    for el in elements:
        item = el.slice
        if isinstance(item, cst.Slice):
            kinds.append("slice")
        elif isinstance(item.value, cst.Ellipsis):
            kinds.append("...")
        elif isinstance(item.value, cst.Name) and item.value.value == "None":
            kinds.append("new")
        elif isinstance(literal_value(item.value), int):
            kinds.append("int")
        else:
            kinds.append("unknown")
    axes: list[int | None] = [None] * len(kinds)
    cut = kinds.index("...") if "..." in kinds else len(kinds)

    def count(indices, start, step):
        axis = start
        for i in indices:
            if kinds[i] in ("unknown", "..."):
                return
            if kinds[i] == "slice":
                axes[i] = axis
            if kinds[i] != "new":
                axis += step

    count(range(cut), 0, 1)
    if cut < len(kinds):
        count(range(len(kinds) - 1, cut, -1), -1, -1)
    return axes


class SliceBounds(Pass):
    id = "MS306"
    name = "slice-bounds"
    reads = frozenset({"list_names"})
    summary = ("Slices of empty axes: x[:-k] -> x[:max(n - k, 0)]; a write to an empty region of several sliced "
               "axes is skipped.")
    examples = (
        Example(
            "import torch\ndef f(x, mems):\n    return x[:, -2:], mems[:-1]\n",
            "def f(x, mems):\n    return x[:, max(x.shape[1] - 2, 0) :], mems[: max(len(mems) - 1, 0)]\n",
        ),
    )

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        if not isinstance(updated, cst.Subscript) or not any(
            isinstance(el.slice, cst.Slice) and _plain_step(el.slice)
            and (_negative_literal(el.slice.lower) or _negative_literal(el.slice.upper))
            for el in original.slice
        ):
            return updated
        receiver = updated.value
        if (not repeatable(original.value) or plainly_not_tensor(original.value, self.ctx)
                or (isinstance(original.value, cst.Attribute) and original.value.attr.value in NOT_ARRAYS)
                or any(name in self.ctx.imports.bindings for name in ("max", "len"))):
            return updated
        fn = self.ctx.innermost(cst.FunctionDef)
        if isinstance(original.value, cst.Name) and fn is not None and original.value.value in self.facts.list_names(fn):
            return updated  # a list: its negative bounds already mean what they say
        axes = _axes(original.slice) if len(original.slice) > 1 else [0]
        elements = list(updated.slice)
        changed = False
        for i, el in enumerate(elements):
            s = el.slice
            if not isinstance(s, cst.Slice) or axes[i] is None or not _plain_step(s):
                continue
            size = (cst.Call(func=cst.Name("len"), args=[cst.Arg(receiver)]) if len(elements) == 1
                    else cst.Subscript(value=cst.Attribute(value=receiver, attr=cst.Name("shape")),
                                       slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(axes[i]))
                                                                             if axes[i] >= 0 else
                                                                             cst.UnaryOperation(cst.Minus(), cst.Integer(str(-axes[i])))))]))
            bounds = {}
            for part in ("lower", "upper"):
                k = _negative_literal(getattr(s, part))
                if k is not None:
                    bounds[part] = cst.Call(func=cst.Name("max"), args=[
                        cst.Arg(cst.BinaryOperation(left=size, operator=cst.Subtract(), right=cst.Integer(str(k)))),
                        cst.Arg(cst.Integer("0"))])
            if bounds:
                elements[i] = el.with_changes(slice=s.with_changes(**bounds))
                changed = True
        if not changed:
            return updated
        self.ctx.report(original, self.id, "negative slice bound written from the axis size: MindSpore raises on "
                        "a negative bound of an empty axis", Severity.INFO)
        return updated.with_changes(slice=elements)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._guarded: set[int] = set()  # writes under an ``if not _torch_selects_nothing(...)``

    def visit_If(self, node: cst.If) -> None:
        """A write already under the guard (a converted file converted again) stays as it is."""
        test = node.test
        if (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
                and isinstance(test.expression, cst.Call) and isinstance(test.expression.func, cst.Name)
                and test.expression.func.value == GUARD and isinstance(node.body, cst.IndentedBlock)
                and len(node.body.body) == 1):
            self._guarded.add(id(node.body.body[0]))

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        """``x[a:b, c:d] = v`` -> ``if not _torch_selects_nothing(x.shape, ((0, a, b), (1, c, d))): ...``"""
        if (len(original.body) != 1 or not isinstance(original.body[0], (cst.Assign, cst.AugAssign))
                or id(original) in self._guarded):
            return updated
        stmt = original.body[0]
        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], cst.Subscript) or not isinstance(updated, cst.SimpleStatementLine):
            return updated
        target = targets[0]
        done = updated.body[0]
        if not isinstance(done, (cst.Assign, cst.AugAssign)):
            return updated  # another pass made a call of the write (MS215)
        written = done.targets[0].target if isinstance(done, cst.Assign) else done.target
        if not isinstance(written, cst.Subscript) or not self._array_receiver(target):
            return updated
        bounds = []
        for axis, el in enumerate(written.slice):
            item = el.slice
            if isinstance(item, cst.Slice):
                if item.step is not None or not all(b is None or repeatable(b) for b in (item.lower, item.upper)):
                    return updated
                bounds.append((axis, item.lower, item.upper))
            elif not isinstance(literal_value(item.value), int):
                return updated  # ..., None, a tensor index: the axes are not known
        if len(bounds) < 2 or all(literal_value(b) is not NOT_LITERAL
                                  for _, lo, hi in bounds for b in (lo, hi) if b is not None):
            return updated
        none = cst.Name("None")
        index = cst.Tuple([cst.Element(cst.Tuple([cst.Element(cst.Integer(str(a))), cst.Element(lo or none),
                                                  cst.Element(hi or none)])) for a, lo, hi in bounds])
        shape = cst.Attribute(value=written.value, attr=cst.Name("shape"))
        test = cst.UnaryOperation(cst.Not(), cst.Call(func=runtime_helper(self.ctx, GUARD),
                                                      args=[cst.Arg(shape), cst.Arg(index)]))
        self.ctx.report(original, self.id, "a write to slices known only at run time runs where the region is not "
                        "empty: MindSpore fails writing an empty region of several sliced axes", Severity.INFO)
        return cst.If(test=test, body=cst.IndentedBlock([updated.with_changes(leading_lines=())]),
                      leading_lines=updated.leading_lines)

    def _array_receiver(self, target: cst.Subscript) -> bool:
        receiver = target.value
        if (not repeatable(receiver) or plainly_not_tensor(receiver, self.ctx)
                or (isinstance(receiver, cst.Attribute) and receiver.attr.value in NOT_ARRAYS)):
            return False
        fn = self.ctx.innermost(cst.FunctionDef)
        return not (isinstance(receiver, cst.Name) and fn is not None and receiver.value in self.facts.list_names(fn))
