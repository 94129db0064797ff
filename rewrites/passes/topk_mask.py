"""MS302: ``torch.topk`` with a k that is not a constant, only summed or averaged -> sort and rank mask.

A TopK whose k is not a constant has a shape that depends on data, which GRAPH_MODE
compiles as a dynamic shape (or, on some backends, not at all: seed 000, the ClassLoss
example). Where the values are only reduced whole (every use is ``values.mean()`` or
``values.sum()``) and the indices are dropped, the values become the sorted input with
every entry ranked past k zeroed (full shape, static), and ``values.mean()`` becomes
``ops.sum(values) / ops.sum(mask)``: the same sum and mean as torch's, ties and k equal
to the size included (tests/differential/test_graph_rewrites.py runs both modes).

Any other use of the values (indexing them, as GPT's sampling does with ``v[:, [-1]]``)
needs their real shape: the call is left to the table (``ops.topk``, which takes a
variable k in both modes), with a note in compiled code.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from transpile.engine.walk import iter_nodes

from ..syntax import NOT_LITERAL, Unconvertible, bind, code, literal_value

TOPK = "torch.topk"
TOPK_PARAMS = ("input", "k", "dim", "largest", "sorted")


class TopkMask(Pass):
    id = "MS302"
    name = "topk-mask"
    summary = "torch.topk with a variable k whose values are only summed or averaged becomes sort + rank mask."
    examples = (
        Example(
            "import torch\ndef f(con, k):\n    loss, _ = torch.topk(con, k=k)\n    return loss.mean()\n",
            "from mindspore import ops\ndef f(con, k):\n"
            "    loss_sorted, _ = ops.sort(con, axis=-1, descending=True)\n"
            "    loss_mask = (ops.cumsum(ops.ones_like(loss_sorted), axis=-1) <= k).astype(con.dtype)\n"
            "    loss = ops.where(loss_mask > 0, loss_sorted, ops.zeros_like(loss_sorted))\n"
            "    return ops.sum(loss) / ops.sum(loss_mask)\n",
        ),
        Example(  # the values indexed (GPT's sampling): left to the table
            "import torch\ndef f(logits, k):\n    v, _ = torch.topk(logits, k)\n    return v[:, [-1]]\n",
            "from mindspore import ops\ndef f(logits, k):\n    v, _ = ops.topk(input=logits, k=k)\n    return v[:, [-1]]\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._masks: list[dict[str, str]] = [{}]  # per function: values name -> mask name
        self._reduced_only: dict[tuple[int, str], bool] = {}  # (function id, name) -> only reduced

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

    def _only_reduced(self, name: str) -> bool:
        """Whether every use of ``name`` in the function but its one assignment is a
        whole ``name.mean()`` or ``name.sum()`` (any other use needs torch's shape)."""
        function = self.ctx.current_function
        if function is None:
            return False
        key = (id(function), name)
        if key not in self._reduced_only:
            mentions = reductions = 0
            for node in iter_nodes(function.body):
                if isinstance(node, cst.Name) and node.value == name:
                    mentions += 1
                elif (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
                      and node.func.attr.value in ("mean", "sum") and isinstance(node.func.value, cst.Name)
                      and node.func.value.value == name):
                    reductions += 1
            self._reduced_only[key] = mentions == 1 + reductions
        return self._reduced_only[key]

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
        if not self._only_reduced(values):
            if self.ctx.compiled:
                self.ctx.report(original, self.id, f"torch.topk with a k that is not a constant: {values} has a "
                                "shape that depends on k, a dynamic shape in GRAPH_MODE", Severity.INFO)
            return updated
        ops = code(self.ctx.reference("mindspore.ops.sort").value)
        x, k = code(args["input"]), code(args["k"])
        x_atom = x if isinstance(args["input"], (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else f"({x})"
        sorted_, mask = f"{values}_sorted", f"{values}_mask"
        # a mask by rank, not by value: ties with the k-th value count once, as in torch
        lines = [
            f"{sorted_}, _ = {ops}.sort({x}, axis={dim}, descending={bool(largest)})",
            f"{mask} = ({ops}.cumsum({ops}.ones_like({sorted_}), axis={dim}) <= {k}).astype({x_atom}.dtype)",
            f"{values} = {ops}.where({mask} > 0, {sorted_}, {ops}.zeros_like({sorted_}))",
        ]
        self._masks[-1][values] = mask
        self.ctx.count_converted()
        self.ctx.report(
            original, self.id,
            f"torch.topk with variable k={k}: {values} keeps the full shape (the sorted values, those ranked "
            f"past k zeroed), only summed or averaged here; {mask} marks the kept entries",
            Severity.INFO,
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
