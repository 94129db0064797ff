"""Escape hatches for what the tables cannot say as data.

Every hook has one signature: ``hook(ctx, entry, args, receiver)`` where ``args`` are
the converted keyword arguments (target names). It returns the arguments to emit,
or a whole replacement expression. It raises ``Unconvertible`` to leave the call.
"""
from __future__ import annotations

from typing import Any

import libcst as cst

from .syntax import NOT_LITERAL, Unconvertible, code, keyword_call, literal, literal_value


def _dims(entry) -> int:
    name = entry.source.rsplit(".", 1)[-1]
    return int(name[-2])  # Conv2d -> 2, ConvTranspose1d -> 1, MaxPool3d -> 3


def _expand_padding(value: cst.BaseExpression, dims: int) -> cst.BaseExpression:
    """torch pads each spatial axis on both sides: (h, w) -> (h, h, w, w)."""
    v = literal_value(value)
    if isinstance(v, int):
        return value
    if isinstance(v, (tuple, list)):
        if len(v) != dims:
            raise Unconvertible(f"padding {v!r} does not have {dims} entries")
        if dims == 1:
            return literal(v[0])
        return literal([p for p in v for _ in (0, 1)])
    if isinstance(value, (cst.Tuple, cst.List)) and all(isinstance(e, cst.Element) for e in value.elements):
        # (0, padding, padding): the entries are expressions, the count is known
        items = [e.value for e in value.elements]
        if len(items) != dims:
            raise Unconvertible(f"padding {code(value)} does not have {dims} entries")
        if dims == 1:
            return items[0]
        return cst.Tuple([cst.Element(item) for item in items for _ in (0, 1)])
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and dims > 1:  # a sequence, built once
        return cst.parse_expression(f"tuple(side for side in {code(value)} for _ in (0, 1))")
    if isinstance(value, (cst.Name, cst.Attribute)) and dims > 1:
        src = code(value)
        return cst.parse_expression(f"{src} if isinstance({src}, int) else tuple(side for side in {src} for _ in (0, 1))")
    return value


def conv_padding(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """Conv layers: MindSpore defaults to pad_mode='same'; torch pads explicitly."""
    mode = args.pop("padding_mode", None)
    if mode is not None and literal_value(mode) != "zeros":
        raise Unconvertible(
            f"padding_mode={code(mode)} has no MindSpore Conv argument: pad the input with ops.pad "
            "(mode='reflect'/'replicate'/'circular') and use pad_mode='valid'"
        )
    padding = args.pop("padding", None)
    out = dict(args)
    if padding is None:
        out["pad_mode"] = literal("pad")
        return out
    v = literal_value(padding)
    if isinstance(v, str):
        if v not in ("same", "valid"):
            raise Unconvertible(f"padding={v!r} is not understood")
        out["pad_mode"] = literal(v)
        return out
    out["pad_mode"] = literal("pad")
    out["padding"] = _expand_padding(padding, _dims(entry))
    return out


def pool_window(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """Pooling: torch's stride defaults to the kernel size, MindSpore's to 1."""
    out = dict(args)
    stride = out.get("stride")
    if stride is None or literal_value(stride) is None:
        if "kernel_size" not in out:
            raise Unconvertible("kernel_size is missing")
        out["stride"] = out["kernel_size"]
    # Arguments at their default are dropped; MindSpore rejects padding, dilation,
    # return_indices and ceil_mode unless pad_mode='pad'.
    for name, default in (("padding", 0), ("ceil_mode", False), ("dilation", 1), ("return_indices", False)):
        value = literal_value(out[name]) if name in out else None
        if type(value) is type(default) and value == default:
            out.pop(name)
    padding, ceil, dilation, indices = (out.get(n) for n in ("padding", "ceil_mode", "dilation", "return_indices"))
    if padding is not None or ceil is not None or dilation is not None or indices is not None:
        out["pad_mode"] = literal("pad")
        if padding is not None:
            out["padding"] = _expand_padding(padding, 1) if _dims(entry) == 1 else padding
    return out


def tensor_size(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.size()`` -> ``x.shape``; ``x.size(d)`` -> ``x.shape[d]`` (Tensor.size is numel)."""
    shape = cst.Attribute(value=receiver, attr=cst.Name("shape"))
    dim = args.get("dim")
    if dim is None:
        return shape
    return cst.Subscript(value=shape, slice=[cst.SubscriptElement(cst.Index(dim))])


def tensor_dim(ctx, entry, args, receiver) -> cst.BaseExpression:
    return cst.Attribute(value=receiver, attr=cst.Name("ndim"))


HOOKS = {
    "conv_padding": conv_padding,
    "pool_window": pool_window,
    "tensor_size": tensor_size,
    "tensor_dim": tensor_dim,
}


# -- torch.nn layers (nn_layers.toml / nn_losses.toml) -----------------------------
def _shape_tuple(value: cst.BaseExpression) -> cst.BaseExpression:
    v = literal_value(value)
    if isinstance(v, int) and not isinstance(v, bool):
        return literal([v])
    if isinstance(v, (tuple, list)):
        return literal(list(v))
    src = code(value)
    return cst.parse_expression(f"({src},) if isinstance({src}, int) else tuple({src})")


def layer_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """nn.LayerNorm: a tuple shape, normalised over the last axis.

    MindSpore's begin_norm_axis/begin_params_axis accept -1 as the only negative
    value (-2 raises), and the input rank is unknown here: a literal shape with more
    than one dimension cannot be converted. A non-literal shape (``d_model``) is taken
    to be one dimension; if it is not, MindSpore raises when the layer runs (gamma's
    size does not match), it never silently normalises the wrong axes.
    """
    out = dict(args)
    shape = out.pop("normalized_shape", None)
    if shape is None:
        raise Unconvertible("normalized_shape is missing")
    v = literal_value(shape)
    if isinstance(v, (tuple, list)) and len(v) != 1:
        raise Unconvertible(
            f"normalized_shape={code(shape)} spans {len(v)} axes: MindSpore nn.LayerNorm counts "
            "begin_norm_axis from the front (-1 is the only negative value it accepts); "
            "write begin_norm_axis=begin_params_axis=rank - n by hand"
        )
    return {"normalized_shape": _shape_tuple(shape), "begin_norm_axis": literal(-1), "begin_params_axis": literal(-1), **out}


def conv_transpose2d_padding(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """ConvTranspose2d: MindSpore's output_padding only appends zeros, torch computes the
    extra rows/columns; an asymmetric padding ``(p, p - op, ...)`` gives torch's result."""
    out = dict(args)
    op = out.pop("output_padding", None)
    opv = 0 if op is None else literal_value(op)
    out = conv_padding(ctx, entry, out, receiver)
    if opv == 0 or opv == (0, 0):
        return out
    pad = literal_value(args.get("padding", literal(0)))
    if isinstance(opv, int) and not isinstance(opv, bool):
        opv = (opv, opv)
    if isinstance(pad, int) and not isinstance(pad, bool):
        pad = (pad, pad)
    if not (isinstance(opv, (tuple, list)) and isinstance(pad, (tuple, list)) and len(opv) == len(pad) == 2):
        raise Unconvertible("output_padding and padding must be literal ints or pairs")
    if any(p < o for p, o in zip(pad, opv)):
        raise Unconvertible(f"output_padding={opv} larger than padding={pad} has no MindSpore equivalent")
    out["pad_mode"] = literal("pad")
    out["padding"] = literal([pad[0], pad[0] - opv[0], pad[1], pad[1] - opv[1]])
    return out


def batch_norm_stats(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """BatchNorm ``track_running_stats=False`` (always batch statistics) is
    MindSpore's ``use_batch_statistics=True``; True is MindSpore's default (None)."""
    out = dict(args)
    track = out.pop("track_running_stats", None)
    if track is None:
        return out
    v = literal_value(track)
    if v is True:
        return out
    if v is False:
        out["use_batch_statistics"] = literal(True)
        return out
    out["use_batch_statistics"] = cst.parse_expression(f"None if {code(track)} else True")
    return out


def softmax_axis(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """Softmax-like layers: torch's ``dim=None`` picks an axis from the input's rank at
    run time (a deprecated implicit choice); MindSpore needs the axis."""
    axis = args.get("axis")
    if axis is None or literal_value(axis) is None:
        raise Unconvertible("dim is not given: torch picks it from the input's rank at run time; write dim= explicitly")
    return args


def local_response_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """nn.LocalResponseNorm(size, alpha, beta, k) -> nn.LRN(depth_radius, bias, alpha, beta).

    torch divides by ``(k + alpha / size * sum(a^2 over size channels)) ** beta``, with
    the window centred for odd sizes; TF-style LRN sums over 2 * depth_radius + 1
    channels and does not divide alpha. Exact for an odd literal size only.
    """
    size = literal_value(args.get("size"))
    if not isinstance(size, int) or isinstance(size, bool) or size % 2 == 0:
        raise Unconvertible("size must be an odd integer literal: an even window is not centred in torch")
    alpha = args.get("alpha", literal(0.0001))
    a = literal_value(alpha)
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        alpha_expr = literal(a / size)
    else:
        alpha_expr = cst.parse_expression(f"({code(alpha)}) / {size}")
    out = {
        "depth_radius": literal((size - 1) // 2),
        "bias": args.get("bias", literal(1.0)),
        "alpha": alpha_expr,
        "beta": args.get("beta", literal(0.75)),
    }
    return out


def _float_scale(value: cst.BaseExpression) -> cst.BaseExpression:
    v = literal_value(value)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return literal(float(v))
    if isinstance(v, (tuple, list)):
        return literal([float(x) for x in v])
    src = code(value)
    return cst.parse_expression(f"tuple(float(s) for s in {src}) if isinstance({src}, (tuple, list)) else float({src})")


def interpolate(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """nn.Upsample / F.interpolate: MindSpore wants a float scale_factor and, except for
    'trilinear' and 'area', an output size instead of a scale factor
    (``recompute_scale_factor=True`` computes ``floor(in * scale)``, as torch does).

    torch samples with ``1 / scale`` unless told to recompute, MindSpore with
    ``in / out``: the same when ``in * scale`` is whole, which a whole literal scale
    guarantees. A fractional literal scale is refused; a variable one is converted
    (the note on the entry says so).
    """
    out = dict(args)
    mode = literal_value(out.get("mode", literal("nearest")))
    if mode is NOT_LITERAL:
        raise Unconvertible("mode must be a literal string")
    if mode == "bicubic":
        raise Unconvertible("MindSpore's bicubic resize uses other cubic coefficients than torch (results differ by ~0.2)")
    scale = out.get("scale_factor")
    if scale is None or literal_value(scale) is None:
        out.pop("scale_factor", None)
        return out
    v = literal_value(scale)
    values = v if isinstance(v, (tuple, list)) else [v]
    if v is not NOT_LITERAL and any(float(x) != int(x) for x in values):
        raise Unconvertible(
            f"scale_factor={code(scale)} is fractional: torch samples with 1/scale, MindSpore with "
            "in/out, which differ unless in * scale is whole; pass size= instead"
        )
    out["scale_factor"] = _float_scale(scale)
    if mode not in ("trilinear", "area"):  # whole scales: recomputing the size changes nothing
        out["recompute_scale_factor"] = literal(True)
    return out


def instance_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """nn.InstanceNorm*d(C) is nn.GroupNorm(C, C): one group per channel normalises each
    (sample, channel) over its spatial axes. MindSpore's own InstanceNorm has no CPU
    kernel; GroupNorm runs everywhere and takes any rank >= 3."""
    channels = args.get("num_channels")
    if channels is None:
        raise Unconvertible("num_features is missing")
    return {"num_groups": channels, **args}


HOOKS.update({
    "instance_norm": instance_norm,
    "interpolate": interpolate,
    "layer_norm": layer_norm,
    "conv_transpose2d_padding": conv_transpose2d_padding,
    "batch_norm_stats": batch_norm_stats,
    "softmax_axis": softmax_axis,
    "local_response_norm": local_response_norm,
})


# -- torch.* functions and Tensor methods: rewrites/torch_hooks.py -------------------
from .torch_hooks import TORCH_HOOKS  # noqa: E402

HOOKS.update(TORCH_HOOKS)


# -- torch.nn.functional (functional.toml) -----------------------------------------
def _call(ctx, target: str, args: dict[str, Any], positional: tuple = ()) -> cst.Call:
    call = keyword_call(ctx.reference(target), args)
    return call.with_changes(args=[cst.Arg(p) for p in positional] + list(call.args))


def _is_simple(node) -> bool:
    """A name or attribute chain: safe to write twice."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    return node if _is_simple(node) or literal_value(node) is not NOT_LITERAL else cst.parse_expression(f"({code(node)})")


def f_conv(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """F.conv1d/2d/3d: ops.conv* pad with pad_mode='valid' unless told 'pad'."""
    out = dict(args)
    padding = out.pop("padding", None)
    if padding is None:
        return out
    v = literal_value(padding)
    if isinstance(v, str):
        if v not in ("same", "valid"):
            raise Unconvertible(f"padding={v!r} is not understood")
        out["pad_mode"] = literal(v)
        return out
    if v == 0 or (isinstance(v, (tuple, list)) and not any(v)):
        return out
    out["pad_mode"] = literal("pad")
    out["padding"] = padding
    return out


def f_pool_stride(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """F.avg_pool*/lp_pool*: torch's stride defaults to the kernel size, ops' to 1;
    torch's divisor_override=None is ops' 0."""
    out = dict(args)
    stride = out.get("stride")
    if stride is None or literal_value(stride) is None:
        if "kernel_size" not in out:
            raise Unconvertible("kernel_size is missing")
        out["stride"] = out["kernel_size"]
    div = out.get("divisor_override")
    if div is not None and literal_value(div) is None:
        out.pop("divisor_override")
    return out


def f_normalize(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.normalize(x, p=2, dim, eps) is x / max(||x||, eps); ops.L2Normalize divides by
    sqrt(max(sum(x^2), epsilon)): the same with epsilon = eps ** 2. p must be 2."""
    p = args.get("p")
    if p is not None and literal_value(p) not in (2, 2.0):
        raise Unconvertible(f"p={code(p)}: ops.L2Normalize is the 2-norm only")
    dim = args.get("dim", literal(1))
    eps = args.get("eps", literal(1e-12))
    e = literal_value(eps)
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        epsilon = literal(float(e) ** 2)
    else:
        epsilon = cst.parse_expression(f"({code(eps)}) ** 2")
    prim = keyword_call(ctx.reference("mindspore.ops.L2Normalize"), {"axis": dim, "epsilon": epsilon})
    return cst.Call(func=prim, args=[cst.Arg(args["input"])])


def f_layer_norm(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.layer_norm over ONE trailing axis: ops.layer_norm has no CPU kernel, the
    ops.LayerNorm primitive runs everywhere but only takes -1 as a negative axis."""
    shape = args["normalized_shape"]
    v = literal_value(shape)
    if isinstance(v, (tuple, list)) and len(v) != 1:
        raise Unconvertible(
            f"normalized_shape={code(shape)} spans {len(v)} axes: MindSpore's LayerNorm only takes -1 as a "
            "negative begin axis and the input rank is unknown here"
        )
    tup = _shape_tuple(shape)
    weight = args.get("weight")
    bias = args.get("bias")
    if weight is None or literal_value(weight) is None:
        weight = _call(ctx, "mindspore.ops.ones", {}, (tup,))
    if bias is None or literal_value(bias) is None:
        bias = _call(ctx, "mindspore.ops.zeros", {}, (tup,))
    eps = args.get("eps", literal(1e-5))
    prim = keyword_call(
        ctx.reference("mindspore.ops.LayerNorm"),
        {"begin_norm_axis": literal(-1), "begin_params_axis": literal(-1), "epsilon": eps},
    )
    call = cst.Call(func=prim, args=[cst.Arg(args["input"]), cst.Arg(weight), cst.Arg(bias)])
    return cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])


def f_embedding(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.embedding(input, weight) is weight[input]: ops.gather(weight, input, 0).
    (ops.embedding has no CPU kernel; padding_idx only changes the gradient.)"""
    return _call(ctx, "mindspore.ops.gather", {}, (args["weight"], args["input"], literal(0)))


def f_one_hot(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """F.one_hot: num_classes=-1 infers the depth from the data (a dynamic shape)."""
    depth = args.get("depth")
    if depth is None or literal_value(depth) == -1:
        raise Unconvertible("num_classes is not given: torch infers it from the data; write num_classes=")
    return args


def f_pairwise_distance(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.pairwise_distance(x1, x2, p, eps, keepdim) is ||x1 - x2 + eps||_p over the last axis."""
    x1, x2 = _paren(args["x1"]), _paren(args["x2"])
    eps = _paren(args.get("eps", literal(1e-6)))
    diff = cst.parse_expression(f"{code(x1)} - {code(x2)} + {code(eps)}")
    return _call(ctx, "mindspore.ops.vector_norm", {
        "ord": args.get("p", literal(2.0)), "axis": literal(-1), "keepdims": args.get("keepdim", literal(False)),
    }, (diff,))


def f_instance_norm(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.instance_norm without running statistics is ops.group_norm with one group per channel."""
    for name in ("running_mean", "running_var"):
        if name in args and literal_value(args[name]) is not None:
            raise Unconvertible(f"{name}: instance norm with running statistics has no MindSpore equivalent")
    use = args.get("use_input_stats")
    if use is not None and literal_value(use) is not True:
        raise Unconvertible("use_input_stats=False needs running statistics")
    x = args["input"]
    if not _is_simple(x):
        raise Unconvertible("the input must be a plain name (it is used twice: ops.group_norm needs its channel count)")
    out = {"num_groups": cst.parse_expression(f"{code(x)}.shape[1]")}
    for name in ("weight", "bias", "eps"):
        if name in args and literal_value(args[name]) is not None:
            out[name] = args[name]
    return _call(ctx, "mindspore.ops.group_norm", out, (x,))


def f_batch_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """F.batch_norm: ops.batch_norm needs weight and bias tensors (torch: None = 1 and 0)."""
    out = dict(args)
    mean = out.get("running_mean")
    if mean is None or literal_value(mean) is None or literal_value(out.get("running_var", literal(None))) is None:
        raise Unconvertible("running_mean/running_var are None: ops.batch_norm needs running statistics")
    if not _is_simple(mean):
        raise Unconvertible("running_mean must be a plain name (used for the default weight/bias)")
    for name, fill in (("weight", "mindspore.ops.ones_like"), ("bias", "mindspore.ops.zeros_like")):
        value = out.get(name)
        if value is None or literal_value(value) is None:
            out[name] = _call(ctx, fill, {}, (mean,))
    return out


def f_local_response_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    out = local_response_norm(ctx, entry, args, receiver)
    return {"x": args["x"], **out}


HOOKS.update({
    "f_conv": f_conv,
    "f_pool_stride": f_pool_stride,
    "f_normalize": f_normalize,
    "f_layer_norm": f_layer_norm,
    "f_embedding": f_embedding,
    "f_one_hot": f_one_hot,
    "f_pairwise_distance": f_pairwise_distance,
    "f_instance_norm": f_instance_norm,
    "f_batch_norm": f_batch_norm,
    "f_local_response_norm": f_local_response_norm,
})


def first_output(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """The target returns a tuple whose first item is torch's result (ops.ctc_loss also
    returns log_alpha)."""
    call = keyword_call(ctx.reference(entry.target), args)
    return cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])


def f_multi_margin(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """ops.multi_margin_loss takes an int margin only (a float raises)."""
    out = dict(args)
    margin = out.get("margin")
    if margin is None:
        return out
    v = literal_value(margin)
    if isinstance(v, float) and v.is_integer():
        out["margin"] = literal(int(v))
        return out
    if isinstance(v, int) and not isinstance(v, bool):
        return out
    raise Unconvertible(f"margin={code(margin)}: ops.multi_margin_loss takes an integer margin only (nn.MultiMarginLoss takes any)")


def f_fold(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """ops.fold takes output_size as an int32 Tensor."""
    out = dict(args)
    size = out.get("output_size")
    if size is None:
        raise Unconvertible("output_size is missing")
    v = literal_value(size)
    if isinstance(v, int) and not isinstance(v, bool):
        size = literal([v, v])
    out["output_size"] = _call(ctx, "mindspore.Tensor", {}, (size, ctx.reference("mindspore.int32")))
    return out


HOOKS.update({"first_output": first_output, "f_multi_margin": f_multi_margin, "f_fold": f_fold})


def f_sdpa(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.scaled_dot_product_attention without a mask or dropout, composed from
    ops.matmul/softmax (MindSpore's fused attention kernels are Ascend-only):
    softmax(q @ k^T * scale [+ causal -inf above the diagonal]) @ v."""
    q, k, v = args["query"], args["key"], args["value"]
    if not (_is_simple(q) and _is_simple(k)):
        raise Unconvertible("query and key must be plain names (their shapes are used)")
    mask = args.get("attn_mask")
    if mask is not None and literal_value(mask) is not None:
        raise Unconvertible("attn_mask: a bool mask selects and a float mask adds; write the masking by hand")
    p = args.get("dropout_p")
    if p is not None and literal_value(p) not in (0, 0.0):
        raise Unconvertible("dropout_p > 0 is random: MindSpore's RNG stream differs")
    gqa = args.get("enable_gqa")
    if gqa is not None and literal_value(gqa) is not False:
        raise Unconvertible("enable_gqa=True (grouped-query heads) is not composed")
    causal = args.get("is_causal")
    cv = False if causal is None else literal_value(causal)
    if cv not in (True, False):
        raise Unconvertible("is_causal must be a literal True/False")
    ops_ = code(ctx.reference("mindspore.ops.matmul")).rsplit(".", 1)[0]
    ms_ = code(ctx.reference("mindspore.bool_")).rsplit(".", 1)[0]
    scale = args.get("scale")
    scale_src = f"{code(q)}.shape[-1] ** -0.5" if scale is None or literal_value(scale) is None else f"({code(scale)})"
    scores = f"{ops_}.matmul({code(q)}, {ops_}.swapaxes({code(k)}, -2, -1)) * {scale_src}"
    if cv:
        tri = f"{ops_}.triu({ops_}.ones(({code(q)}.shape[-2], {code(k)}.shape[-2]), {ms_}.bool_), diagonal=1)"
        scores = f"{ops_}.masked_fill({scores}, {tri}, float('-inf'))"
    return cst.parse_expression(f"{ops_}.matmul({ops_}.softmax({scores}, axis=-1), {code(v)})")


HOOKS.update({"f_sdpa": f_sdpa})


# -- torch.nn.init (nn_init.toml) ----------------------------------------------------
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
    if not isinstance(probe, cst.Name):
        raise Unconvertible("the tensor must be a name or attribute (it is written three times)")
    return node


def _fill(ctx, tensor: cst.BaseExpression, init: cst.BaseExpression) -> cst.BaseExpression:
    """``t.assign_value(initializer(init, t.shape, t.dtype).init_data())``: fills t in
    place and returns it, like torch's init functions."""
    t = code(tensor)
    init_fn = code(ctx.reference("mindspore.common.initializer.initializer"))
    return cst.parse_expression(
        f"{t}.assign_value({init_fn}({code(init)}, {t}.shape, {t}.dtype).init_data())"
    )


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
    return _fill(ctx, _init_target(tensor), init)


def init_uniform(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """uniform_(t, a, b): MindSpore's Uniform(scale) draws from [-scale, scale]; a
    shifted interval is Uniform((b - a) / 2) + (a + b) / 2."""
    out = dict(args)
    tensor = out.pop("tensor", None)
    if tensor is None:
        raise Unconvertible("the tensor argument is missing")
    tensor = _init_target(tensor)
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
    t = code(tensor)
    init_fn = code(ctx.reference("mindspore.common.initializer.initializer"))
    return cst.parse_expression(
        f"{t}.assign_value({init_fn}({code(init)}, {t}.shape, {t}.dtype).init_data() + {mid_src})"
    )


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


def init_gain(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """calculate_gain('relu') is a number: computed here from literal arguments."""
    nl = literal_value(args.get("nonlinearity", literal(None)))
    param = args.get("param")
    pv = None if param is None else literal_value(param)
    if not isinstance(nl, str) or pv is NOT_LITERAL:
        raise Unconvertible("calculate_gain is computed at conversion time: its arguments must be literals")
    return literal(_gain(nl, pv))


HOOKS.update({"init_fill": init_fill, "init_uniform": init_uniform, "init_gain": init_gain})


def f_max_pool1d(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.max_pool1d: mindspore.ops has none; pool a height-1 image with ops.max_pool2d:
    squeeze(max_pool2d(expand_dims(x, 2), (1, k), (1, s), (0, p), (1, d), ceil_mode), 2)."""
    ri = args.get("return_indices")
    if ri is not None and literal_value(ri) is not False:
        raise Unconvertible("return_indices=True is not composed (use nn.MaxPool1d)")

    def one(name: str, default):
        value = args.get(name)
        if value is None or literal_value(value) is None:
            return default
        v = literal_value(value)
        if isinstance(v, (tuple, list)):
            if len(v) != 1:
                raise Unconvertible(f"{name}={code(value)} has more than one entry")
            return literal(v[0])
        return value

    k = one("kernel_size", None)
    if k is None:
        raise Unconvertible("kernel_size is missing")
    s = one("stride", k)
    pairs = {
        "kernel_size": cst.parse_expression(f"(1, {code(k)})"),
        "stride": cst.parse_expression(f"(1, {code(s)})"),
    }
    p = one("padding", literal(0))
    if literal_value(p) != 0:
        pairs["padding"] = cst.parse_expression(f"(0, {code(p)})")
    d = one("dilation", literal(1))
    if literal_value(d) != 1:
        pairs["dilation"] = cst.parse_expression(f"(1, {code(d)})")
    ceil = args.get("ceil_mode")
    if ceil is not None and literal_value(ceil) is not False:
        pairs["ceil_mode"] = ceil
    x4 = _call(ctx, "mindspore.ops.expand_dims", {}, (args["input"], literal(2)))
    pooled = _call(ctx, "mindspore.ops.max_pool2d", pairs, (x4,))
    return _call(ctx, "mindspore.ops.squeeze", {}, (pooled, literal(2)))


HOOKS.update({"f_max_pool1d": f_max_pool1d})


# Arguments a hook consumes itself instead of passing them to the target (the table
# test uses this to check that every other emitted keyword exists in the target).
HOOK_CONSUMES: dict[str, set[str]] = {
    "conv_padding": {"padding_mode"},
    "conv_transpose2d_padding": {"padding_mode"},
    "batch_norm_stats": {"track_running_stats"},
    "local_response_norm": {"size"},  # becomes depth_radius
    "f_local_response_norm": {"size"},
    "init_fill": {"tensor"},  # the receiver of assign_value
}
try:
    from .torch_hooks import HOOK_CONSUMES as _TORCH_HOOK_CONSUMES
except ImportError:  # pragma: no cover
    _TORCH_HOOK_CONSUMES = {}
HOOK_CONSUMES.update(_TORCH_HOOK_CONSUMES)
