"""Hooks of tables/nn_init.toml: torch.nn.init."""
from __future__ import annotations

from typing import Any

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import NOT_LITERAL, Unconvertible, code, keyword_call, literal, literal_value
from .registry import hook
from .tensor_methods import FRESH

# a tensor given by an attribute lookup written as a call (``getattr(m, name)``, and the
# lookups MS204 emits: ``_torch_layer_attribute(m, "weight", (...))`` on a layer whose class
# is known only at run time): evaluated once. Another call (``torch.as_tensor(w)``) may give a copy,
# which a fill would leave the parameter out of: refused as before.
ATTRIBUTE_LOOKUPS = frozenset({"getattr", "_torch_layer_attribute", "_torch_attribute"})


# an init function given a fresh tensor (as converted: ops.randn, ops.zeros; torch.empty and
# torch.Tensor(2, 3) become ops.zeros) fills a tensor nothing else holds, so its result is
# the only way to it, in torch as here (wageubn's ``Parameter(nn.init.normal_(torch.randn(...)))``).
# It is evaluated once (_torch_init_fill), so random draws count too. Not ms.Tensor(...):
# torch.as_tensor's conversion, which may share a tensor the fill must reach.
FRESH_TENSORS = FRESH | {"randn", "rand", "randn_like", "rand_like"}


def _creates_a_tensor(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in FRESH_TENSORS)


# methods (and functions, as converted: ``ops.unsqueeze(input=w, dim=0)``) whose result is a
# view of all of a tensor's elements in their order (row-major): torch's init of such a view
# fills the tensor through it. MindSpore has no views: the values drawn for the view's shape
# are written into the tensor reshaped to its own shape (_torch_init_fill_view). A transpose
# or permute reorders the elements: not one of these.
ORDER_KEEPING_VIEWS = frozenset({"view", "reshape", "squeeze", "unsqueeze", "flatten", "view_as", "contiguous"})


def _viewed_tensor(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The tensor an order-keeping view chain (``w.view(n, -1).unsqueeze(0).view(w.shape)``)
    is a view of, or None where ``node`` is not such a chain."""
    seen = False
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in ORDER_KEEPING_VIEWS:
        given = [a.value for a in node.args if a.keyword is not None and a.keyword.value == "input"]
        node = given[0] if given else node.func.value
        seen = True
    return node if seen else None


def _init_target(node: cst.BaseExpression) -> cst.BaseExpression:
    """The tensor an init function fills; ``w.data`` fills ``w`` (MindSpore's
    Parameter.data is a copy)."""
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    probe = node
    while isinstance(probe, (cst.Attribute, cst.Subscript)):
        if isinstance(probe, cst.Subscript):
            if any(
                literal_value(e.slice.value) is NOT_LITERAL and not isinstance(e.slice.value, cst.Name)
                for e in probe.slice if isinstance(e.slice, cst.Index)
            ):
                raise Unconvertible("the tensor is written three times: index it with a literal or a plain name")
        probe = probe.value
    lookup = isinstance(probe, cst.Call) and isinstance(probe.func, cst.Name) and probe.func.value in ATTRIBUTE_LOOKUPS
    if probe is node and _creates_a_tensor(node):
        return node  # filled where it is made, reached only through what the init returns
    if not isinstance(probe, cst.Name) and not lookup:
        raise Unconvertible("the tensor must be a name or attribute (it is written three times)")
    return node


def _written_in_place(tensor: cst.BaseExpression) -> bool:
    """A name or an attribute chain on one: cheap to write three times."""
    while isinstance(tensor, (cst.Attribute, cst.Subscript)):
        tensor = tensor.value
    return isinstance(tensor, cst.Name)


def _fill(ctx, tensor: cst.BaseExpression, init: cst.BaseExpression, shift: str | None = None) -> cst.BaseExpression:
    """``t.assign_value(initializer(init, t.shape, t.dtype).init_data())``: fills t in
    place and returns it, like torch's init functions; another expression goes through
    ``_torch_init_fill``, which evaluates it once; an order-keeping view chain of a tensor
    through ``_torch_init_fill_view``, which fills the tensor."""
    viewed = _viewed_tensor(tensor)
    if viewed is not None:
        helper = runtime_helper(ctx, "_torch_init_fill_view")
        args = [cst.Arg(_init_target(viewed)), cst.Arg(tensor), cst.Arg(init)]
        args += [cst.Arg(cst.parse_expression(shift))] if shift else []
        return cst.Call(func=helper, args=args)
    tensor = _init_target(tensor)
    init_fn = code(ctx.reference("mindspore.common.initializer.initializer"))
    if not _written_in_place(tensor):
        helper = runtime_helper(ctx, "_torch_init_fill")
        args = [cst.Arg(tensor), cst.Arg(init)] + ([cst.Arg(cst.parse_expression(shift))] if shift else [])
        return cst.Call(func=helper, args=args)
    t = code(tensor)
    added = f" + {shift}" if shift else ""
    return cst.parse_expression(
        f"{t}.assign_value({init_fn}({code(init)}, {t}.shape, {t}.dtype).init_data(){added})"
    )


@hook(consumes=("tensor",))
def init_fill(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """torch.nn.init.*_(tensor, ...) -> tensor.assign_value(initializer(<Init>(...), ...)).

    The entry's target is the mindspore.common.initializer class; the other converted
    arguments are its keyword arguments. Random initialisers draw from the same
    distribution, not the same numbers (the RNG streams differ)."""
    out = dict(args)
    tensor = out.pop("tensor", None)
    if tensor is None:
        raise Unconvertible("the tensor argument is missing")
    init = keyword_call(ctx.reference(entry.target), out)
    return _fill(ctx, tensor, init)


@hook()
def init_uniform(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """uniform_(t, a, b): MindSpore's Uniform(scale) draws from [-scale, scale]; a
    shifted interval is Uniform((b - a) / 2) + (a + b) / 2."""
    out = dict(args)
    tensor = out.pop("tensor", None)
    if tensor is None:
        raise Unconvertible("the tensor argument is missing")
    a, b = out.get("a", literal(0.0)), out.get("b", literal(1.0))
    av, bv = literal_value(a), literal_value(b)
    uniform = code(ctx.reference("mindspore.common.initializer.Uniform"))
    if isinstance(av, (int, float)) and isinstance(bv, (int, float)):
        half, mid = (bv - av) / 2, (av + bv) / 2
        init = cst.parse_expression(f"{uniform}(scale={half!r})")
        if mid == 0:
            return _fill(ctx, tensor, init)
        mid_src = repr(mid)
    else:
        init = cst.parse_expression(f"{uniform}(scale=(({code(b)}) - ({code(a)})) / 2)")
        mid_src = f"(({code(a)}) + ({code(b)})) / 2"
    return _fill(ctx, tensor, init, mid_src)


def _gain(nonlinearity: str, param) -> float | int:
    import math

    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1  # an int, as torch returns
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise Unconvertible(f"negative_slope {slope!r} is not a number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise Unconvertible(f"unsupported nonlinearity {nonlinearity!r}")


@hook()
def init_gain(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """calculate_gain('relu') is a number: computed here from literal arguments."""
    nl = literal_value(args.get("nonlinearity", literal(None)))
    param = args.get("param")
    pv = None if param is None else literal_value(param)
    if not isinstance(nl, str) or pv is NOT_LITERAL:
        raise Unconvertible("calculate_gain is computed at conversion time: its arguments must be literals")
    return literal(_gain(nl, pv))
