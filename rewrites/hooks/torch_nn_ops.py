"""Hooks of tables/torch_nn_ops.toml: torch.X spellings of torch.nn.functional.X (the ops
composed beside the code are run-time helpers of rewrites/runtime/nn_ops.py)."""
from __future__ import annotations

import functools
import re
from typing import Any

import libcst as cst

from ..runtime.registry import helper, runtime_helper
from ..syntax import NOT_LITERAL, Unconvertible, code, keyword_call, literal, literal_value, target_call
from .functional import REDUCTION_CODES, squeezed_pair
from .registry import hook
from .tensor_methods import copy_into

# torch.X takes these arguments as torch's private codes (their index here); F.X by name
_CODES = {
    "reduction": ("none", "mean", "sum"),
    "mode": ("bilinear", "nearest", "bicubic"),  # grid_sampler's interpolation_mode
    "padding_mode": ("zeros", "border", "reflection"),
}
assert all(REDUCTION_CODES[n] == i for i, n in enumerate(_CODES["reduction"]))

_NOT_A_VALUE = "torch's own spelling of a functional op: its arguments are converted where it is called"
# torch.X whose functional op has another name (the rest: the same name, "_with_indices"
# and the in-place "_" removed)
_TWINS = {"native_channel_shuffle": "channel_shuffle", "constant_pad_nd": "pad", "affine_grid_generator": "affine_grid",
          "grid_sampler": "grid_sample", "grid_sampler_2d": "grid_sample", "grid_sampler_3d": "grid_sample"}


def _twin(entry) -> str:
    """The torch.nn.functional op ``entry`` spells: ``torch.selu_`` -> ``selu``."""
    name = entry.source.rsplit(".", 1)[-1].removesuffix("_with_indices").rstrip("_")
    return _TWINS.get(name, name)


def _code_name(name: str, value: cst.BaseExpression) -> cst.BaseExpression:
    """torch's code of argument ``name`` -> F's name: ``reduction=1`` -> ``"mean"``; any
    other expression indexes the same names at run time."""
    names = _CODES[name]
    v = literal_value(value)
    if v is NOT_LITERAL:
        spelled = ", ".join(f'"{n}"' for n in names)
        return cst.parse_expression(f"({spelled})[{code(value)}]")
    if type(v) is not int or not 0 <= v < len(names):
        raise Unconvertible(f"{name}={code(value)} is not one of torch's codes 0..{len(names) - 1}")
    return literal(names[v])


def _functional(ctx, name: str, args: dict[str, Any]) -> cst.BaseExpression:
    """``F.<name>(**args)`` converted by the torch.nn.functional entry."""
    from ..table_calls import convert_call, tables  # (table_calls imports the hooks)

    twin = tables().lookup(f"torch.nn.functional.{name}")
    if coded := [k for k in args if k in _CODES]:
        args = {**args, **{k: _code_name(k, args[k]) for k in coded}}
    call = cst.Call(func=cst.Name("F"), args=[
        cst.Arg(value, keyword=cst.Name(k), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        for k, value in args.items()])
    return convert_call(ctx, twin, call, "MS201")


@hook(not_a_value=_NOT_A_VALUE)
def as_functional(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.conv2d(x, w, None, 1, 1)`` is ``F.conv2d(input=x, weight=w, bias=None,
    stride=1, padding=1)``: converted as the functional entry says (the entry's renames
    give F's argument names; ``reduction=1`` is ``reduction="mean"``).
    ``F.max_pool2d_with_indices(...)`` is ``F.max_pool2d(..., return_indices=True)``
    (the entry sets it)."""
    return _functional(ctx, _twin(entry), args)


@hook(not_a_value=_NOT_A_VALUE)
def as_functional_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.selu_(x)`` -> ``x.copy_(ops.selu(x))``: the out-of-place functional op
    copied into its input, which it returns (as torch does)."""
    return copy_into(ctx, args["input"], _functional(ctx, _twin(entry), args))


@hook(not_a_value=_NOT_A_VALUE)
def rrelu_eval(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``F.rrelu(x, lower, upper)`` outside training is ``F.leaky_relu(x, (lower + upper) / 2)``
    (torch's fixed slope); ``torch.rrelu_(x)`` copies it into ``x``. In training (or
    training known only when it runs) ``_torch_rrelu`` draws a slope per element
    uniformly in [lower, upper]: torch's distribution, not its draws."""
    training = args.pop("training", None)
    lower, upper = (args.pop(k, literal(d)) for k, d in (("lower", 1.0 / 8), ("upper", 1.0 / 3)))
    if training is not None and literal_value(training) is not False:
        result = keyword_call(runtime_helper(ctx, "_torch_rrelu"),
                              {"input": args["input"], "lower": lower, "upper": upper, "training": training})
        return copy_into(ctx, args["input"], result) if entry.source.endswith("_") else result
    lv, uv = literal_value(lower), literal_value(upper)
    if isinstance(lv, (int, float)) and isinstance(uv, (int, float)):
        slope = literal((lv + uv) / 2)
    else:
        slope = cst.parse_expression(f"({code(lower)} + {code(upper)}) / 2")
    result = _functional(ctx, "leaky_relu", {"input": args["input"], "negative_slope": slope})
    return copy_into(ctx, args["input"], result) if entry.source.endswith("_") else result


@hook(not_a_value=_NOT_A_VALUE)
def dropout_family(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``F.alpha_dropout(x, 0.2, True)`` -> ``_torch_dropout(input=x, p=0.2, training=True,
    alpha=True)``, torch's draw (its distribution: MindSpore's random stream differs);
    outside training (F's default) the input itself. ``torch.feature_dropout_(x, ...)``
    and ``inplace=True`` copy the result into ``x``."""
    name = entry.source.rsplit(".", 1)[-1]
    inplace = literal_value(args.pop("inplace", literal(False)))
    if inplace is NOT_LITERAL:
        raise Unconvertible("inplace chosen at run time")
    training = args.get("training", literal(False))
    if literal_value(training) is False:
        return args["input"]
    helper = runtime_helper(ctx, "_torch_dropout")
    flags = {k: literal(True) for k in ("alpha", "feature") if k in name}
    result = keyword_call(helper, {"input": args["input"], "p": args.get("p", literal(0.5)), "training": training, **flags})
    return copy_into(ctx, args["input"], result) if name.endswith("_") or inplace else result


@hook(not_a_value=_NOT_A_VALUE)
def adaptive_max_pool1d_indices(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.adaptive_max_pool1d(x, n)`` -> (values, indices): ``ops.adaptive_max_pool2d``
    of the height-1 image to (1, n) with indices, both squeezed back to 1-D."""
    size = args["output_size"]
    v = literal_value(size)
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise Unconvertible(f"output_size={code(size)} has more than one entry")
        size = literal(v[0])
    image = target_call(ctx, "mindspore.ops.expand_dims", {}, (args["input"], literal(2)))
    pooled = target_call(ctx, "mindspore.ops.adaptive_max_pool2d", {
        "input": image, "output_size": cst.parse_expression(f"(1, {code(size)})"), "return_indices": literal(True)})
    return squeezed_pair(ctx, pooled)


def _composed_name(entry) -> str:
    return "_torch_" + re.sub(r"\dd$", "", _twin(entry))


def composed_value(ctx, entry) -> cst.Name | None:
    """``F.conv_transpose3d`` as a value (torchnd's registry of convolutions by rank): the
    helper its calls become, where the helper takes torch's parameters in torch's order."""
    name = _composed_name(entry)
    signature = _helper_signature(name)
    if signature is None or signature != (tuple(entry.params), tuple(entry.kwonly)):
        return None
    return runtime_helper(ctx, name)


@functools.lru_cache(maxsize=None)
def _helper_signature(name: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(positional, keyword-only) parameter names of the helper ``name`` when it takes
    neither ``*args`` nor ``**kwargs``; else None (its source is parsed once a run)."""
    definition = cst.parse_statement(helper(name).source)
    params = definition.params if isinstance(definition, cst.FunctionDef) else None
    if params is None or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
        return None
    return (tuple(p.name.value for p in (*params.posonly_params, *params.params)),
            tuple(p.name.value for p in params.kwonly_params))


@hook(not_a_value=_NOT_A_VALUE, as_value=composed_value)
def composed(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``F.rms_norm(x, [d], w)`` -> ``_torch_rms_norm(input=x, normalized_shape=[d], weight=w)``;
    ``torch.conv_transpose2d(x, w, b, 2)`` -> ``_torch_conv_transpose(input=x, weight=w,
    bias=b, stride=2)`` (the function by the op's name, its dimensions dropped)."""
    return keyword_call(runtime_helper(ctx, _composed_name(entry)), args)
