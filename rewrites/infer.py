"""Cheap, local guesses about what an expression is: a tensor, a layer, a mask."""
from __future__ import annotations

import functools

import libcst as cst

# Method names whose call on a tensor gives a tensor.
TENSOR_METHODS_RETURNING_TENSORS = frozenset(
    "view reshape permute transpose contiguous float int long bool half double flatten "
    "squeeze unsqueeze expand expand_as repeat sum mean max min abs exp log sqrt sigmoid "
    "tanh relu softmax clamp clone detach to type type_as masked_fill matmul mm bmm t "
    "narrow chunk split pow mul add sub div neg".split()
)


@functools.lru_cache(maxsize=1)
def _table_tensor_methods() -> frozenset[str]:
    """Tensor methods the tables convert and say return a tensor."""
    from .apply import tables

    return frozenset(name for name, e in tables().methods.items() if e.tensor_result and not e.unsupported)


class TensorScope:
    """Names known to hold tensors in the current function, innermost last."""

    def __init__(self) -> None:
        self.frames: list[set[str]] = []

    def push(self, names=()) -> None:
        self.frames.append(set(names))

    def pop(self) -> None:
        self.frames.pop()

    def add(self, name: str) -> None:
        if self.frames:
            self.frames[-1].add(name)

    def __contains__(self, name: str) -> bool:
        return bool(self.frames) and name in self.frames[-1]


def forward_params(node: cst.FunctionDef) -> list[str]:
    """Parameters of forward/construct other than self: tensors by convention."""
    names = [p.name.value for p in node.params.params]
    return names[1:] if names and names[0] == "self" else names


def is_tensor(expr: cst.BaseExpression, scope: TensorScope, ctx, roots: set[str]) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in scope
    if isinstance(expr, cst.Subscript):
        return is_tensor(expr.value, scope, ctx, roots)
    if isinstance(expr, cst.BinaryOperation):
        return is_tensor(expr.left, scope, ctx, roots) or is_tensor(expr.right, scope, ctx, roots)
    if isinstance(expr, cst.UnaryOperation):
        return is_tensor(expr.expression, scope, ctx, roots)
    if isinstance(expr, cst.Comparison):  # (x > 0) is a boolean tensor
        return is_tensor(expr.left, scope, ctx, roots) or any(
            is_tensor(c.comparator, scope, ctx, roots) for c in expr.comparisons)
    if isinstance(expr, cst.Call):
        qual = ctx.imports.qualify(expr.func)
        if qual is not None:
            return qual.split(".")[0] in roots and not qual.split(".")[-1][:1].isupper()
        if isinstance(expr.func, cst.Attribute) and (
            expr.func.attr.value in TENSOR_METHODS_RETURNING_TENSORS or expr.func.attr.value in _table_tensor_methods()
        ):
            return is_tensor(expr.func.value, scope, ctx, roots)
        # self.conv(x): a layer applied to a tensor gives a tensor
        if isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Name) and expr.func.value.value == "self":
            return any(is_tensor(a.value, scope, ctx, roots) for a in expr.args)
    return False


def plainly_not_tensor(expr: cst.BaseExpression, ctx) -> bool:
    """Receivers that are obviously something else: modules, literals, config chains."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List,
                         cst.Dict, cst.Set, cst.Integer, cst.Float, cst.ListComp, cst.DictComp)):
        return True
    if isinstance(expr, cst.Name) and (expr.value in ctx.imports.bindings or expr.value == "self"):
        return True
    if isinstance(expr, cst.Attribute):
        # self.args.device, self.config.x: attribute chains two deep off self are config
        inner = expr.value
        if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and inner.value.value == "self":
            return True
        if ctx.imports.qualify(expr) is not None:
            return True
    return False


def layer_attributes(class_node: cst.ClassDef, ctx, tables) -> dict:
    """``self.X = nn.Y(...)`` anywhere in a class body: attribute X -> Y's table entry."""
    found: dict = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            if not isinstance(assign.value, cst.Call) or len(assign.targets) != 1:
                return
            target = assign.targets[0].target
            qual = ctx.imports.qualify(assign.value.func)
            entry = tables.lookup(qual) if qual else None
            if (entry is not None and isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name) and target.value.value == "self"):
                found[target.attr.value] = entry

    class_node.body.visit(Finder())
    return found
