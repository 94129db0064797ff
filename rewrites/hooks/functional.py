"""Hooks of tables/functional.toml: torch.nn.functional."""
from __future__ import annotations

from typing import Any

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import (is_number, NOT_LITERAL, Unconvertible, code, keyword_call, literal, literal_value, name_chain, operand, operand_code, target_call)
from ..value_transforms import as_tuple
from .registry import hook
from .torch_indexing import run_time_helper  # noqa: F401  (losses composed beside the code: the entries' hook)
from .nn_layers import default_stride, fold_output_size, interpolate, local_response_norm, named_pad_mode, softmax_axis, softmax_axis_at_run_time  # noqa: F401  (interpolate, softmax_axis: shared hooks)
from .torch_functions import float_input, integer_via_float, softmax_rows_guarded  # noqa: F401  (shared: F.softsign, F.relu6 on integer inputs)


def f_conv_at_run_time(entry) -> list[str]:
    """F.conv1d/2d/3d passed as a value (torchnd's registry of convolutions by rank)."""
    return [
        'padding = kwargs.pop("padding", 0)',
        "if isinstance(padding, str):",
        '    kwargs["pad_mode"] = padding',
        "elif padding != 0 and (isinstance(padding, int) or any(padding)):",
        '    kwargs["pad_mode"] = "pad"',
        '    kwargs["padding"] = padding',
    ]


@hook(at_run_time=f_conv_at_run_time)
def f_conv(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """F.conv1d/2d/3d: ops.conv* pad with pad_mode='valid' unless told 'pad'."""
    out = dict(args)
    padding = out.pop("padding", None)
    if padding is None:
        return out
    v = literal_value(padding)
    if isinstance(v, str):
        out["pad_mode"] = named_pad_mode(v)
        return out
    if v == 0 or (isinstance(v, (tuple, list)) and not any(v)):
        return out
    out["pad_mode"] = literal("pad")
    out["padding"] = padding
    return out


@hook()
def f_pool_stride(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """F.avg_pool*/lp_pool*: torch's stride defaults to the kernel size, ops' to 1;
    torch's divisor_override=None is ops' 0."""
    out = dict(args)
    default_stride(out)
    div = out.get("divisor_override")
    if div is not None and literal_value(div) is None:
        out.pop("divisor_override")
    return out


@hook()
def f_normalize(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.normalize(x, p=2, dim, eps) is x / max(||x||, eps); ops.L2Normalize divides by
    sqrt(max(sum(x^2), epsilon)): the same with epsilon = eps ** 2. Any other p (or a p
    known only when it runs): ``_torch_normalize``, emitted beside the code, torch's
    formula with ops.norm's vector norm."""
    p = args.get("p")
    dim = args.get("dim", literal(1))
    eps = args.get("eps", literal(1e-12))
    if p is not None and literal_value(p) not in (2, 2.0):
        fn = runtime_helper(ctx, "_torch_normalize")
        return cst.Call(func=fn, args=[cst.Arg(args["input"]), cst.Arg(p), cst.Arg(dim), cst.Arg(eps)])
    e = literal_value(eps)
    if is_number(e):
        epsilon = literal(float(e) ** 2)
    else:
        epsilon = cst.parse_expression(f"({code(eps)}) ** 2")
    prim = keyword_call(ctx.reference("mindspore.ops.L2Normalize"), {"axis": dim, "epsilon": epsilon})
    return cst.Call(func=prim, args=[cst.Arg(args["input"])])


@hook()
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
    tup = as_tuple(shape)
    weight = args.get("weight")
    bias = args.get("bias")
    if weight is None or literal_value(weight) is None:
        weight = target_call(ctx, "mindspore.ops.ones", {}, (tup,))
    if bias is None or literal_value(bias) is None:
        bias = target_call(ctx, "mindspore.ops.zeros", {}, (tup,))
    eps = args.get("eps", literal(1e-5))
    prim = keyword_call(
        ctx.reference("mindspore.ops.LayerNorm"),
        {"begin_norm_axis": literal(-1), "begin_params_axis": literal(-1), "epsilon": eps},
    )
    call = cst.Call(func=prim, args=[cst.Arg(args["input"]), cst.Arg(weight), cst.Arg(bias)])
    return cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])


@hook(consumes=("max_norm", "norm_type"))
def f_embedding(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.embedding(input, weight) is weight[input]: ops.gather(weight, input, 0).
    (ops.embedding has no CPU kernel; padding_idx only changes the gradient.) With
    max_norm, ``_torch_f_embedding`` renormalises the rows looked up in weight first,
    as torch does in place."""
    max_norm = args.pop("max_norm", None)
    norm_type = args.pop("norm_type", None)
    if max_norm is not None and literal_value(max_norm) is not None:
        extra = {"norm_type": norm_type} if norm_type is not None else {}
        return keyword_call(runtime_helper(ctx, "_torch_f_embedding"),
                            {"input": args["input"], "weight": args["weight"], "max_norm": max_norm, **extra})
    return target_call(ctx, "mindspore.ops.gather", {}, (args["weight"], args["input"], literal(0)))


def f_elu_alpha_at_run_time(entry) -> list[str]:
    return ['if kwargs.pop("alpha", 1.0) != 1.0:',
            '    raise ValueError("alpha: F.elu passed as a value takes alpha=1.0 only (MindSpore\'s Elu kernel)")']


@hook(consumes=("alpha",), at_run_time=f_elu_alpha_at_run_time)
def f_elu_alpha(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """F.elu with alpha 1.0 is ops.elu; another alpha (MindSpore's Elu kernel takes only
    1.0) the composed ``_torch_elu``."""
    alpha = args.pop("alpha", None)
    if alpha is None or literal_value(alpha) == 1.0:
        return args
    return keyword_call(runtime_helper(ctx, "_torch_elu"), {"input": args["input_x"], "alpha": alpha})


@hook()
def f_one_hot(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """F.one_hot: num_classes=-1 infers the depth from the data (a dynamic shape)."""
    depth = args.get("depth")
    if depth is None or literal_value(depth) == -1:
        raise Unconvertible("num_classes is not given: torch infers it from the data; write num_classes=")
    return args


@hook()
def f_pairwise_distance(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.pairwise_distance(x1, x2, p, eps, keepdim) is ||x1 - x2 + eps||_p over the last axis."""
    x1, x2 = operand(args["x1"]), operand(args["x2"])
    eps = operand(args.get("eps", literal(1e-6)))
    diff = cst.parse_expression(f"{code(x1)} - {code(x2)} + {code(eps)}")
    return target_call(ctx, "mindspore.ops.vector_norm", {
        "ord": args.get("p", literal(2.0)), "axis": literal(-1), "keepdims": args.get("keepdim", literal(False)),
    }, (diff,))


@hook()
def f_instance_norm(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.instance_norm without running statistics is ops.group_norm with one group per channel."""
    for name in ("running_mean", "running_var"):
        if name in args and literal_value(args[name]) is not None:
            raise Unconvertible(f"{name}: instance norm with running statistics has no MindSpore equivalent")
    use = args.get("use_input_stats")
    if use is not None and literal_value(use) is not True:
        raise Unconvertible("use_input_stats=False needs running statistics")
    x = args["input"]
    if not name_chain(x):
        raise Unconvertible("the input must be a plain name (it is used twice: ops.group_norm needs its channel count)")
    out = {"num_groups": cst.parse_expression(f"{code(x)}.shape[1]")}
    for name in ("weight", "bias", "eps"):
        if name in args and literal_value(args[name]) is not None:
            out[name] = args[name]
    return target_call(ctx, "mindspore.ops.group_norm", out, (x,))


@hook()
def f_batch_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """F.batch_norm: ops.batch_norm needs weight and bias tensors (torch: None = 1 and 0).
    With both running statistics literally None (torch then needs training=True), an
    emitted function normalises by the batch's statistics."""
    out = dict(args)
    mean = out.get("running_mean")
    if (mean is None or literal_value(mean) is None) and literal_value(out.get("running_var", literal(None))) is None:
        training = out.get("training")
        if training is not None and literal_value(training) is False:
            raise Unconvertible("running_mean/running_var are None with training=False (torch raises)")
        fn = runtime_helper(ctx, "_torch_batch_norm_batch_stats")
        kept = {k: out[k] for k in ("weight", "bias", "eps") if k in out}
        return keyword_call(fn, {"input": out["input_x"], **kept})
    if mean is None or literal_value(mean) is None or literal_value(out.get("running_var", literal(None))) is None:
        raise Unconvertible("running_mean/running_var are None: ops.batch_norm needs running statistics")
    for name, fill in (("weight", "mindspore.ops.ones_like"), ("bias", "mindspore.ops.zeros_like")):
        value = out.get(name)
        if value is None or literal_value(value) is None:
            if not name_chain(mean):
                raise Unconvertible("running_mean must be a plain name (used for the default weight/bias)")
            out[name] = target_call(ctx, fill, {}, (mean,))
    return out


@hook(consumes=("size",))
def f_local_response_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    out = local_response_norm(ctx, entry, args, receiver)
    return {"x": args["x"], **out}


@hook()
def first_output(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """The target returns a tuple whose first item is torch's result (ops.ctc_loss also
    returns log_alpha)."""
    call = keyword_call(ctx.reference(entry.target), args)
    return cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])


@hook()
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


@hook(at_run_time=softmax_axis_at_run_time)
def softmax_rows(ctx, entry, args: dict[str, Any], receiver):
    """F.softmax: the axis as ``softmax_axis`` says; through ``_torch_softmax`` where the
    file writes an infinity (``softmax_rows_guarded``)."""
    args = softmax_axis(ctx, entry, args, receiver)
    if not ctx.facts.writes_infinity():
        return args
    return softmax_rows_guarded(ctx, target_call(ctx, entry.target, args))


@hook()
def f_fold(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """ops.fold takes output_size as an int32 Tensor."""
    out = dict(args)
    if "output_size" not in out:
        raise Unconvertible("output_size is missing")
    out["output_size"] = fold_output_size(ctx, out["output_size"])
    return out


@hook()
def f_sdpa(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.scaled_dot_product_attention composed from ops.matmul/softmax (MindSpore's fused
    attention kernels are Ascend-only): softmax(q @ k^T * scale + mask) @ v.

    A bool mask keeps the positions where it is True, a float mask is added; a mask whose
    type is not known here is told apart at run time by its dtype. ``is_causal`` masks
    above the diagonal (top-left aligned, as torch); a flag held in a variable decides
    at run time, as does any expression. ``dropout_p`` other than a literal 0
    (``self.p if self.training else 0.0``) drops attention weights with ops.dropout: zero
    in eval gives torch's result, a positive p draws from MindSpore's RNG stream.
    ``enable_gqa`` (unless literally False) repeats each key/value head for its group of
    query heads. With a mask the weights come from ``_torch_attention_weights`` (a row the
    mask keeps nothing of gives zeros, as torch; MindSpore's softmax would spoil others)."""
    q, k, v = args["query"], args["key"], args["value"]
    if not (name_chain(q) and name_chain(k)):
        raise Unconvertible("query and key must be plain names (their shapes are used)")
    ops_ = code(ctx.reference("mindspore.ops.matmul")).rsplit(".", 1)[0]
    ms_ = code(ctx.reference("mindspore.bool_")).rsplit(".", 1)[0]
    gqa = args.get("enable_gqa")
    key, value = code(k), code(v)
    # a non-literal enable_gqa repeats too: the group size is 1 when the head counts agree
    if gqa is not None and literal_value(gqa) not in (False, None):
        if not name_chain(v):
            raise Unconvertible("with enable_gqa, value must be a plain name")
        groups = f"{code(q)}.shape[-3] // {code(k)}.shape[-3]"
        key = f"{ops_}.repeat_interleave({code(k)}, {groups}, -3)"
        value = f"{ops_}.repeat_interleave({code(v)}, {groups}, -3)"
    causal = args.get("is_causal")
    cv = False if causal is None else literal_value(causal)
    scale = args.get("scale")
    scale_src = f"{code(q)}.shape[-1] ** -0.5"
    if scale is not None and literal_value(scale) is NOT_LITERAL and name_chain(scale):
        # a variable (transformers' scaling=module.scaling) may hold None: the default scale
        scale_src = f"({scale_src} if {code(scale)} is None else {code(scale)})"
    elif scale is not None and literal_value(scale) is not None:
        scale_src = f"({code(scale)})"
    scores = f"{ops_}.matmul({code(q)}, {ops_}.swapaxes({key}, -2, -1)) * {scale_src}"
    if cv is not False:
        tri = f"{ops_}.triu({ops_}.ones(({code(q)}.shape[-2], {code(k)}.shape[-2]), {ms_}.bool_), diagonal=1)"
        masked = f"{ops_}.masked_fill({scores}, {tri}, float('-inf'))"
        # a flag known only at run time (timm's Attention(is_causal=...), whisper's
        # is_causal=mask is not None and n_ctx > 1) picks either; it is evaluated once
        scores = masked if cv is True else f"({masked} if {operand_code(causal)} else {scores})"
    mask = args.get("attn_mask")
    if mask is not None and literal_value(mask) is not None:
        keep = f"{ops_}.where({operand_code(mask)}, {scores}, float('-inf'))"
        if isinstance(mask, cst.Comparison):  # a bool mask, statically
            scores = keep
        elif name_chain(mask):  # (timm passes attn_mask=None through a variable)
            scores = (f"({scores} if {code(mask)} is None else {keep} if {code(mask)}.dtype == {ms_}.bool_ "
                      f"else {scores} + {code(mask)})")
        else:
            raise Unconvertible("attn_mask: give the mask a name (bool and float masks differ: its dtype decides)")
    weights = f"{ops_}.softmax({scores}, axis=-1)"
    if mask is not None and literal_value(mask) is not None:
        # a mask may keep nothing of a row: torch's zeros there, and the other rows intact
        weights = f"{code(runtime_helper(ctx, '_torch_attention_weights'))}({scores})"
    p = args.get("dropout_p")
    if p is not None and literal_value(p) not in (0, 0.0):
        weights = f"{ops_}.dropout({weights}, p=float({code(p)}))"
    return cst.parse_expression(f"{ops_}.matmul({weights}, {value})")


@hook()
def f_max_pool1d(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """F.max_pool1d: mindspore.ops has none; pool a height-1 image with ops.max_pool2d:
    squeeze(max_pool2d(expand_dims(x, 2), (1, k), (1, s), (0, p), (1, d), ceil_mode), 2).
    With return_indices=True both results are squeezed (a row's flat indices are its
    positions)."""
    ri = args.get("return_indices")
    with_indices = ri is not None and literal_value(ri) is True
    if ri is not None and literal_value(ri) not in (True, False, None):
        raise Unconvertible(f"return_indices={code(ri)} chosen at run time")

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
    if with_indices:
        pairs["return_indices"] = ri
    x4 = target_call(ctx, "mindspore.ops.expand_dims", {}, (args["input"], literal(2)))
    pooled = target_call(ctx, "mindspore.ops.max_pool2d", pairs, (x4,))
    if with_indices:
        return squeezed_pair(ctx, pooled)
    return target_call(ctx, "mindspore.ops.squeeze", {}, (pooled, literal(2)))


@hook()
def f_grid_sample(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """ops.grid_sample has no bicubic interpolation (it raises): refused."""
    if literal_value(args.get("mode", literal(None))) == "bicubic":
        raise Unconvertible("mode='bicubic': MindSpore's grid_sample has no bicubic interpolation")
    return args


@hook()
def int64_indices(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``F.adaptive_max_pool3d(x, n, return_indices=True)``: ops.adaptive_max_pool3d's
    indices are int32; ``_int64_indices(...)`` casts them to torch's int64."""
    call = keyword_call(ctx.reference(entry.target), args)
    ri = args.get("return_indices")
    if ri is None or literal_value(ri) is False:
        return call
    if literal_value(ri) is not True:
        raise Unconvertible(f"return_indices={code(ri)} chosen at run time")
    return cst.Call(func=runtime_helper(ctx, "_int64_indices"), args=[cst.Arg(call)])


def squeezed_pair(ctx, pooled: cst.BaseExpression) -> cst.Call:
    """``_squeezed_pair(pooled)``: both results of a 2-D pool with indices, height squeezed."""
    return cst.Call(func=runtime_helper(ctx, "_squeezed_pair"), args=[cst.Arg(pooled)])


# torch's private reduction codes (torch.nn._reduction.get_enum), which MMDetection-style
# losses branch on: "elementwise_mean" is torch's deprecated spelling of "mean".
REDUCTION_CODES = {"none": 0, "mean": 1, "elementwise_mean": 1, "sum": 2}


@hook()
def reduction_enum(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``F._Reduction.get_enum(r)`` is a lookup: a literal ``r`` becomes its code, any
    other expression indexes the same table (an unknown name raises KeyError; torch: ValueError)."""
    value = args.get("reduction")
    if value is None:
        raise Unconvertible("reduction is missing")
    v = literal_value(value)
    if isinstance(v, str):
        if v not in REDUCTION_CODES:
            raise Unconvertible(f"{v!r} is not a valid value for reduction")
        return literal(REDUCTION_CODES[v])
    if v is not NOT_LITERAL:
        raise Unconvertible(f"reduction={code(value)} is not a string")
    table = ", ".join(f"{k!r}: {n}" for k, n in REDUCTION_CODES.items()).replace("'", '"')
    return cst.parse_expression(f"{{{table}}}[{code(value)}]")


def f_bce_weight_at_run_time(entry) -> list[str]:
    return ['if kwargs.pop("weight", None) is not None:',
            '    raise ValueError("weight: F.binary_cross_entropy passed as a value takes no weight (MindSpore\'s CPU '
            'kernel does not broadcast it)")']


@hook(consumes=("weight",), at_run_time=f_bce_weight_at_run_time)
def f_bce_weight(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """F.binary_cross_entropy is ops.binary_cross_entropy; with a weight (MindSpore's CPU
    kernel reads past one smaller than the input) the composed ``_torch_binary_cross_entropy``."""
    weight = args.pop("weight", None)
    if weight is None or literal_value(weight) is None:
        return args
    rest = {k: v for k, v in args.items() if k not in ("logits", "labels")}
    return keyword_call(runtime_helper(ctx, "_torch_binary_cross_entropy"),
                        {"input": args["logits"], "target": args["labels"], "weight": weight, **rest})
