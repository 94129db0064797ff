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
    from .table_calls import tables

    return frozenset(name for name, e in tables().methods.items() if e.tensor_result and not e.unsupported)


@functools.lru_cache(maxsize=1)
def tensor_properties() -> frozenset[str]:
    """Tensor properties the tables convert (``torch.Tensor.real``): a tensor's is a tensor.
    Not those MindSpore's tensor spells alike (target ``.shape``): they stay as written."""
    from .table_calls import tables

    return frozenset(name.rsplit(".", 1)[-1] for name, e in tables().entries.items()
                     if e.kind == "attribute" and name.startswith("torch.Tensor.") and not e.unsupported
                     and not (e.target or "").startswith("."))


# Methods of torch.distributions objects that give a tensor (d.log_prob(x).sum(-1)),
# trusted in a file that imports from torch.distributions
DISTRIBUTION_METHODS = frozenset({"log_prob", "rsample", "sample", "entropy", "cdf", "icdf", "perplexity"})


def imports_distributions(ctx) -> bool:
    return any(q == "torch.distributions" or q.startswith("torch.distributions.") for q in ctx.imports.bindings.values())


# einops functions that return one tensor (pack returns a tensor and shapes)
EINOPS_TENSOR_FUNCTIONS = frozenset({"einops.rearrange", "einops.reduce", "einops.repeat", "einops.einsum"})


def mapped_tensors(value: cst.BaseExpression, scope: "TensorScope", ctx, roots: set[str]) -> bool:
    """``map(lambda t: <a tensor>, xs)``, ``map(torch.sigmoid, xs)``: every item a tensor
    (``q, k, v = map(lambda t: rearrange(t, ...), qkv)``)."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "map"
            and value.func.value not in ctx.imports.bindings and len(value.args) >= 2 and not value.args[0].keyword):
        return False
    fn = value.args[0].value
    if isinstance(fn, cst.Lambda):
        return is_tensor(fn.body, scope, ctx, roots)
    qual = ctx.imports.qualify(fn)
    return qual is not None and qual.split(".")[0] in roots and not qual.split(".")[-1][:1].isupper()


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


def annotated_tensors(node: cst.FunctionDef, ctx) -> list[str]:
    """Parameters annotated as tensors: ``x: Tensor``, ``b: torch.Tensor``,
    ``m: Optional[Tensor]``, ``m: Tensor | None``."""
    return [p.name.value for p in named_params(node)
            if p.annotation is not None and _is_tensor_type(p.annotation.annotation, ctx)]


def _is_tensor_type(expr, ctx) -> bool:
    # (a module-level function: a recursive closure over ctx is a reference cycle that kept
    # each file's whole tree alive until the cyclic collector found it)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        return _is_tensor_type(expr.left, ctx) or _is_tensor_type(expr.right, ctx)
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        head = ctx.imports.qualify(expr.value) or (expr.value.value if isinstance(expr.value, cst.Name) else "")
        if head.rsplit(".", 1)[-1] == "Optional":
            return _is_tensor_type(expr.slice[0].slice.value, ctx)
        return False
    return ctx.imports.qualify(expr) == "torch.Tensor"


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
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        # a layer's own parameters (in subclasses of torch layers: self.weight.size()), and
        # attributes the class made parameters or buffers (scope holds "self.class_token")
        return expr.attr.value in ("weight", "bias") or f"self.{expr.attr.value}" in scope
    if isinstance(expr, cst.Attribute) and expr.attr.value in tensor_properties():  # x.real
        return is_tensor(expr.value, scope, ctx, roots)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return parameter_data(expr) or is_tensor(expr.value, scope, ctx, roots)
    if isinstance(expr, cst.Call):
        qual = ctx.imports.qualify(expr.func)
        if qual is not None:
            if qual in EINOPS_TENSOR_FUNCTIONS:
                return True
            return qual.split(".")[0] in roots and not qual.split(".")[-1][:1].isupper()
        facts = getattr(ctx, "facts", None)
        if isinstance(expr.func, cst.Name) and facts is not None and expr.func.value in facts.loss_layers():
            return True  # criterion(out, y): a loss layer gives a tensor
        # self.conv(x): a layer applied to a tensor gives a tensor (self.relu(x) too: a
        # layer named like a tensor method is still a layer)
        if isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Name) and expr.func.value.value == "self":
            return any(is_tensor(a.value, scope, ctx, roots) for a in expr.args)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in DISTRIBUTION_METHODS and imports_distributions(ctx):
            return True
        if isinstance(expr.func, cst.Attribute) and (
            expr.func.attr.value in TENSOR_METHODS_RETURNING_TENSORS or expr.func.attr.value in _table_tensor_methods()
        ):
            return is_tensor(expr.func.value, scope, ctx, roots)
    return False


def parameter_data(expr: cst.BaseExpression) -> bool:
    """``m.weight.data``, ``self.bias.data``, ``lstm.weight_ih_l0.data``: the tensor of a
    parameter, by the names torch gives parameters."""
    if not (isinstance(expr, cst.Attribute) and expr.attr.value == "data" and isinstance(expr.value, cst.Attribute)):
        return False
    name = expr.value.attr.value
    return any(name.startswith(p) or name.endswith(p) for p in ("weight", "bias"))


def plainly_not_tensor(expr: cst.BaseExpression, ctx) -> bool:
    """Receivers that are obviously something else: modules, literals, config chains."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List,
                         cst.Dict, cst.Set, cst.Integer, cst.Float, cst.ListComp, cst.DictComp)):
        return True
    if isinstance(expr, cst.Name) and (expr.value in ctx.imports.bindings or expr.value in ctx.imports.relative
                                       or expr.value == "self"):
        return True
    if isinstance(expr, cst.Attribute):
        # self.args.device, self.config.x: attribute chains two deep off self are config
        inner = expr.value
        if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and inner.value.value == "self":
            return not parameter_data(expr)
        if ctx.imports.qualify(expr) is not None:
            return True
    return False


def target_names(target: cst.BaseExpression):
    """The names an assignment target binds to one value each (``a`` and ``b`` of
    ``a, (b, c.d) = ...``; not attributes, subscripts or starred names)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from target_names(el.value)


def named_params(fn: cst.FunctionDef) -> tuple[cst.Param, ...]:
    """Every parameter of ``fn`` that can be passed by position or by name (not ``*args``
    or ``**kwargs``), in order."""
    p = fn.params
    return (*p.posonly_params, *p.params, *p.kwonly_params)
