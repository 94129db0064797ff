"""Hooks of tables/torch_nn_ops.toml: torch.X spellings of torch.nn.functional.X."""
from __future__ import annotations

import re
from typing import Any

import libcst as cst

from ..syntax import (NOT_LITERAL, Unconvertible, code, emitted, keyword_call, literal, literal_value, module_spellings,
                      target_call)
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
    return copy_into(args["input"], _functional(ctx, _twin(entry), args))


@hook(not_a_value=_NOT_A_VALUE)
def rrelu_eval(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``F.rrelu(x, lower, upper)`` outside training is ``F.leaky_relu(x, (lower + upper) / 2)``
    (torch's fixed slope); ``torch.rrelu_(x)`` copies it into ``x``. In training the
    slopes are random: MindSpore's random stream cannot give torch's."""
    training = args.pop("training", None)
    if training is not None and literal_value(training) is not False:
        raise Unconvertible(f"training={code(training)}: a random slope per element (MindSpore's random stream differs)")
    lower, upper = (args.pop(k, literal(d)) for k, d in (("lower", 1.0 / 8), ("upper", 1.0 / 3)))
    lv, uv = literal_value(lower), literal_value(upper)
    if isinstance(lv, (int, float)) and isinstance(uv, (int, float)):
        slope = literal((lv + uv) / 2)
    else:
        slope = cst.parse_expression(f"({code(lower)} + {code(upper)}) / 2")
    result = _functional(ctx, "leaky_relu", {"input": args["input"], "negative_slope": slope})
    return copy_into(args["input"], result) if entry.source.endswith("_") else result


DROPOUT = '''
def {name}(input, p, training, alpha=False, feature=False):
    """torch's dropout family (transpile): each element (``feature``: each channel) kept
    with probability 1 - p; kept values scaled by 1 / (1 - p), or, ``alpha`` (for SELU
    nets), all moved so that mean and variance stay: dropped ones become SELU's
    negative saturation, then an affine map."""
    if p == 0 or not training or input.size == 0:
        return input
    if p == 1:
        return input * {ops}.zeros((), input.dtype)
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = ({ops}.rand(*shape) < 1 - p).astype(input.dtype)
    if not alpha:
        return input * (keep / (1 - p))
    saturation = 1.7580993408473766
    a = ((saturation * saturation * p + 1) * (1 - p)) ** -0.5
    return input * (keep * a) + ((keep - 1) * (saturation * a) + saturation * a * p)
'''


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
    _, ops_, _ = module_spellings(ctx)
    helper = emitted(ctx, "_torch_dropout", DROPOUT.replace("{ops}", ops_))
    flags = {k: literal(True) for k in ("alpha", "feature") if k in name}
    result = keyword_call(helper, {"input": args["input"], "p": args.get("p", literal(0.5)), "training": training, **flags})
    return copy_into(args["input"], result) if name.endswith("_") or inplace else result


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


RMS_NORM = '''
def {name}(input, normalized_shape, weight=None, eps=None):
    """torch's rms_norm (transpile): input / sqrt(mean(input ** 2) + eps) over the last
    len(normalized_shape) axes, computed in float32 for float16/bfloat16 input, then
    times weight; eps defaults to the machine epsilon of the input's dtype (ops.rms_norm
    has no CPU kernel)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    axes = tuple(range(-len(normalized_shape), 0))
    if eps is None:
        eps = {{mindspore}.float16: 2.0 ** -10, {mindspore}.bfloat16: 2.0 ** -7, {mindspore}.float32: 2.0 ** -23,
               {mindspore}.float64: 2.0 ** -52}[input.dtype]
    low = input.dtype in ({mindspore}.float16, {mindspore}.bfloat16)
    x = input.astype({mindspore}.float32) if low else input
    y = (x * {ops}.rsqrt({ops}.mean(x * x, axes, keep_dims=True) + eps)).astype(input.dtype)
    return y * weight if weight is not None else y
'''


CONV_TRANSPOSE = '''
def {name}(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch's conv_transpose1d/2d/3d (transpile): the input spread by stride (zeros
    between its elements), padded by dilation * (kernel - 1) - padding on each side (and
    output_padding more after; a negative amount crops), then a stride-1 convolution with
    the kernel flipped and its in/out channels swapped per group (ops.conv_transpose2d
    has no CPU kernel)."""
    dims = weight.ndim - 2
    unbatched = input.ndim == dims + 1
    x = {ops}.expand_dims(input, 0) if unbatched else input

    def per_axis(value):
        return (value,) * dims if isinstance(value, int) else tuple(value)

    stride, padding, output_padding, dilation = (per_axis(v) for v in (stride, padding, output_padding, dilation))
    for k in range(dims):
        axis, s = 2 + k, stride[k]
        if s > 1:  # s - 1 zeros after each element, the trailing ones cut
            one = {ops}.expand_dims(x, axis + 1)
            spread = {ops}.concat([one] + [{ops}.zeros_like(one)] * (s - 1), axis + 1)
            shape = x.shape[:axis] + (x.shape[axis] * s,) + x.shape[axis + 1:]
            x = {ops}.narrow(spread.reshape(shape), axis, 0, (x.shape[axis] - 1) * s + 1)
        before = dilation[k] * (weight.shape[2 + k] - 1) - padding[k]
        after = before + output_padding[k]
        if before < 0:
            x = {ops}.narrow(x, axis, -before, x.shape[axis] + before)
        if after < 0:
            x = {ops}.narrow(x, axis, 0, x.shape[axis] + after)
        if before > 0 or after > 0:
            sides = [0, 0] * dims
            sides[2 * (dims - 1 - k)] = max(before, 0)
            sides[2 * (dims - 1 - k) + 1] = max(after, 0)
            x = {ops}.pad(x, tuple(sides))
    c_in, c_out, kernel = weight.shape[0], weight.shape[1] * groups, weight.shape[2:]
    w = weight.reshape((groups, c_in // groups, c_out // groups) + kernel).swapaxes(1, 2)
    w = {ops}.flip(w.reshape((c_out, c_in // groups) + kernel), tuple(range(2, 2 + dims)))
    conv = ({ops}.conv1d, {ops}.conv2d, {ops}.conv3d)[dims - 1]
    y = conv(x, w, bias, stride=1, pad_mode="valid", dilation=dilation if dims > 1 else dilation[0], groups=groups)
    return y[0] if unbatched else y
'''

CONV_TBC = '''
def {name}(input, weight, bias, pad=0):
    """torch's conv_tbc (transpile): a 1-D convolution over time of a (time, batch,
    channels) input with a (kernel, in, out) weight."""
    y = {ops}.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, stride=1, pad_mode="pad", padding=pad)
    return y.permute(2, 0, 1)
'''

EMBEDDING_BAG = '''
def {name}(input, weight, offsets=None, mode="mean", per_sample_weights=None, include_last_offset=False,
           padding_idx=None):
    """torch's embedding_bag (transpile): per bag (a row of a 2-D input, or the stretch of
    a 1-D input between offsets) the sum, mean or max of its rows of weight, entries equal
    to padding_idx left out (an empty bag gives zeros); per_sample_weights scale the
    rows summed."""
    if input.ndim == 2:
        width = input.shape[1]
        flat, starts = input.reshape(-1), list(range(0, input.shape[0] * width, width))
        ends = [start + width for start in starts]
        scales = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    else:
        flat, starts, scales = input, [int(o) for o in offsets.tolist()], per_sample_weights
        ends = starts[1:] if include_last_offset else starts[1:] + [flat.shape[0]]
        starts = starts[:-1] if include_last_offset else starts
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    indices = [int(i) for i in flat.tolist()]
    bags = []
    for start, end in zip(starts, ends):
        kept = [k for k in range(start, end) if indices[k] != padding_idx]
        if not kept:
            bags.append({ops}.zeros(weight.shape[1:], weight.dtype))
            continue
        rows = weight[{mindspore}.Tensor([indices[k] for k in kept], {mindspore}.int64)]
        if scales is not None:
            rows = rows * scales[{mindspore}.Tensor(kept, {mindspore}.int64)].reshape(-1, 1)
        if mode == "sum":
            bags.append(rows.sum(0))
        elif mode == "mean":
            bags.append(rows.sum(0) / len(kept))
        else:
            bags.append({ops}.amax(rows, 0))
    return {ops}.stack(bags)
'''

# ops composed by a function emitted beside the code, called with torch's arguments
_COMPOSED = {"embedding_bag": ("_torch_embedding_bag", EMBEDDING_BAG), "rms_norm": ("_torch_rms_norm", RMS_NORM), "conv_transpose": ("_torch_conv_transpose", CONV_TRANSPOSE),
             "conv_tbc": ("_torch_conv_tbc", CONV_TBC)}


@hook(not_a_value=_NOT_A_VALUE)
def composed(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``F.rms_norm(x, [d], w)`` -> ``_torch_rms_norm(input=x, normalized_shape=[d], weight=w)``;
    ``torch.conv_transpose2d(x, w, b, 2)`` -> ``_torch_conv_transpose(input=x, weight=w,
    bias=b, stride=2)`` (the function by the op's name, its dimensions dropped)."""
    name, source = _COMPOSED[re.sub(r"\dd$", "", _twin(entry))]
    ms_, ops_, _ = module_spellings(ctx)
    return keyword_call(emitted(ctx, name, source.replace("{mindspore}", ms_).replace("{ops}", ops_)), args)
