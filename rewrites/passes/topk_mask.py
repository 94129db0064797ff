"""MS302: ``torch.topk`` with a k that is not a constant -> sort, k-th value, mask.

MindSpore cannot compile TopK with a variable k in GRAPH_MODE (seed 000, the
ClassLoss example). The values become ``x * mask`` (full shape, the top k kept and
the rest zeroed; ties with the k-th value are kept too), and a later ``.mean()`` of
them becomes ``ops.sum(values) / ops.sum(mask)``. Unsafe: the result keeps x's shape.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Safety, Severity
from transpile.engine.passes import Example, Pass

from ..syntax import NOT_LITERAL, Unconvertible, bind, code, literal_value

TOPK = "torch.topk"
TOPK_PARAMS = ("input", "k", "dim", "largest", "sorted")


class TopkMask(Pass):
    id = "MS302"
    name = "topk-mask"
    summary = "torch.topk with a variable k becomes sort + k-th value + mask."
    examples = (
        Example(
            "import torch\ndef f(con, k):\n    loss, _ = torch.topk(con, k=k)\n    return loss.mean()\n",
            "from mindspore import ops\ndef f(con, k):\n"
            "    loss_sorted, _ = ops.sort(con, axis=-1, descending=True)\n"
            "    loss_mask = (con >= ops.expand_dims(ops.gather(loss_sorted, k - 1, -1), -1)).astype(\n"
            "        con.dtype\n    )\n    loss = con * loss_mask\n    return ops.sum(loss) / ops.sum(loss_mask)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._masks: list[dict[str, str]] = [{}]  # per function: values name -> mask name

    def visit_FunctionDef(self, node) -> None:
        self._masks.append({})

    def leave_FunctionDef(self, original, updated):
        self._masks.pop()
        return updated

    @staticmethod
    def _assigned_call(stmt: cst.SimpleStatementLine):
        """(call, literal index or None) of ``t = f(...)`` or ``t = f(...)[i]``, else None."""
        if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
            return None
        call, index = stmt.body[0].value, None
        if isinstance(call, cst.Subscript) and len(call.slice) == 1 and isinstance(call.slice[0].slice, cst.Index):
            index = literal_value(call.slice[0].slice.value)
            call = call.value
        return (call, index) if isinstance(call, cst.Call) else None

    def _converted_args(self, updated: cst.SimpleStatementLine) -> dict:
        """The arguments as the other passes of this stage converted them (the table's
        call takes torch's names by keyword), so the lines written here carry them."""
        found = self._assigned_call(updated)
        try:
            return bind(found[0], TOPK_PARAMS, ()) if found else {}
        except Unconvertible:
            return {}

    def _match(self, stmt: cst.SimpleStatementLine):
        """(values name, indices target or None, bound args) for ``v, _ = torch.topk(...)``."""
        found = self._assigned_call(stmt)
        if found is None or self.ctx.imports.qualify(found[0].func) != TOPK:
            return None
        assign = stmt.body[0]
        call, index = found
        if len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        if index == 0 and isinstance(target, cst.Name):
            values, indices = target.value, None
        elif index is None and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            first, second = (e.value for e in target.elements)
            if not isinstance(first, cst.Name):
                return None
            values, indices = first.value, second
        else:
            return None
        try:
            args = bind(call, TOPK_PARAMS, ())
        except Unconvertible:
            return None
        k = args.get("k")
        if k is None or isinstance(literal_value(k), int):
            return None  # a constant k compiles: the table converts it
        return values, indices, args

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        found = self._match(original)
        if found is None:
            return updated
        values, indices, args = found
        args = {**args, **self._converted_args(updated)}
        if indices is not None and not (isinstance(indices, cst.Name) and indices.value == "_"):
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, "torch.topk with a variable k: the indices have no static-shape equivalent")
            return updated
        dim = code(args["dim"]) if "dim" in args else "-1"
        largest = literal_value(args["largest"]) if "largest" in args else True
        if largest is NOT_LITERAL:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, "torch.topk with a variable k and a variable largest=")
            return updated
        ops = code(self.ctx.reference("mindspore.ops.sort").value)
        x, k = code(args["input"]), code(args["k"])
        sorted_, mask = f"{values}_sorted", f"{values}_mask"
        compare = ">=" if largest else "<="
        lines = [
            f"{sorted_}, _ = {ops}.sort({x}, axis={dim}, descending={bool(largest)})",
            f"{mask} = ({x} {compare} {ops}.expand_dims({ops}.gather({sorted_}, {k} - 1, {dim}), {dim})).astype({x}.dtype)",
            f"{values} = {x} * {mask}",
        ]
        self._masks[-1][values] = mask
        self.ctx.count_converted()
        self.ctx.report(
            original, self.id,
            f"torch.topk with variable k={k}: {values} keeps the full shape (the top k kept, the rest zeroed, "
            f"ties kept); {mask} marks the kept entries",
            Severity.WARNING, Safety.UNSAFE,
        )
        stmts = [cst.parse_statement(line + "\n") for line in lines]
        stmts[0] = stmts[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel(stmts)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        """``values.mean()`` of masked top-k values averages over the kept entries only."""
        func = original.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "mean" and not original.args
                and isinstance(func.value, cst.Name) and func.value.value in self._masks[-1]):
            name, mask = func.value.value, self._masks[-1][func.value.value]
            # ops.sum, not the method: a Tensor.sum is converted (to ops.sum) by another
            # pass of this stage, which never sees this new call; the next run would
            ops = code(self.ctx.reference("mindspore.ops.sum").value)
            return cst.parse_expression(f"{ops}.sum({name}) / {ops}.sum({mask})")
        return updated
