"""Hooks of tables/nn_layers.toml: torch.nn layer classes."""
from __future__ import annotations

from typing import Any

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import (is_number, NOT_LITERAL, Unconvertible, code, emitted, keyword_call, literal, literal_value, module_spellings, name_chain, operand, target_call)
from ..value_transforms import as_tuple
from .nn_utils import PACKING_CALLS
from .registry import hook


def default_stride(out: dict[str, Any]) -> None:
    """torch's pooling stride defaults to the kernel size (also when None), MindSpore's to 1."""
    stride = out.get("stride")
    if stride is None or literal_value(stride) is None:
        if "kernel_size" not in out:
            raise Unconvertible("kernel_size is missing")
        out["stride"] = out["kernel_size"]


def named_pad_mode(padding: str) -> cst.BaseExpression:
    """torch's padding='same'/'valid' is MindSpore's pad_mode of that name."""
    if padding not in ("same", "valid"):
        raise Unconvertible(f"padding={padding!r} is not understood")
    return literal(padding)


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


def conv_padding_at_run_time(entry) -> list[str]:
    dims = _dims(entry)
    expand = ("padding if isinstance(padding, int) else padding[0]" if dims == 1
              else "padding if isinstance(padding, int) else tuple(p for p in padding for _ in (0, 1))")
    return [
        'mode = kwargs.pop("padding_mode", "zeros")',
        'if mode != "zeros":',
        '    raise ValueError(f"padding_mode={mode!r} has no MindSpore Conv argument: pad the input with ops.pad")',
        'padding = kwargs.pop("padding", 0)',
        "if isinstance(padding, str):",
        '    kwargs["pad_mode"] = padding',
        "else:",
        '    kwargs["pad_mode"] = "pad"',
        f'    kwargs["padding"] = {expand}',
    ]


@hook(consumes=("padding_mode",), adds=("pad_mode",), at_run_time=conv_padding_at_run_time)
def conv_padding(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """Conv layers: MindSpore defaults to pad_mode='same'; torch pads explicitly.
    ``nn.Conv2d(3, 8, 3, padding=1, padding_mode='reflect')`` ->
    ``_torch_padded_conv(nn.Conv2d, padding_mode='reflect', padding=1, ...)``."""
    mode = args.pop("padding_mode", None)
    if mode is not None and literal_value(mode) != "zeros":
        if "Transpose" in entry.target:
            raise Unconvertible(f"padding_mode={code(mode)}: torch's transposed convolutions take 'zeros' only")
        helper = runtime_helper(ctx, "_torch_padded_conv")
        return cst.Call(helper, [cst.Arg(ctx.reference(entry.target)), *keyword_call(helper, {"padding_mode": mode, **args}).args])
    padding = args.pop("padding", None)
    out = dict(args)
    if padding is None:
        out["pad_mode"] = literal("pad")
        return out
    v = literal_value(padding)
    if isinstance(v, str):
        out["pad_mode"] = named_pad_mode(v)
        return out
    out["pad_mode"] = literal("pad")
    out["padding"] = _expand_padding(padding, _dims(entry))
    if isinstance(padding, (cst.Name, cst.Attribute)) and "Transpose" not in entry.target:
        # a name may hold 'same' or 'valid' when it runs (a block's padding="same" default)
        src = code(padding)
        out["pad_mode"] = cst.parse_expression(f'{src} if isinstance({src}, str) else "pad"')
        out["padding"] = cst.parse_expression(f"0 if isinstance({src}, str) else {code(operand(out['padding']))}")
    return out


def pool_window_at_run_time(entry) -> list[str]:
    dims = _dims(entry)
    lines = [
        'if kwargs.get("stride") is None:',
        '    kwargs["stride"] = kwargs["kernel_size"]',
        'for name, default in (("padding", 0), ("ceil_mode", False), ("dilation", 1), ("return_indices", False)):',
        "    if name in kwargs and type(kwargs[name]) is type(default) and kwargs[name] == default:",
        "        del kwargs[name]",
        'if any(name in kwargs for name in ("padding", "ceil_mode", "dilation", "return_indices")):',
        '    kwargs["pad_mode"] = "pad"',
    ]
    if dims == 1:
        lines += ['    if not isinstance(kwargs.get("padding", 0), int):', '        kwargs["padding"] = kwargs["padding"][0]']
    return lines


@hook(adds=("pad_mode",), at_run_time=pool_window_at_run_time)
def pool_window(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """Pooling: torch's stride defaults to the kernel size, MindSpore's to 1."""
    out = dict(args)
    default_stride(out)
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


def layer_norm_at_run_time(entry) -> list[str]:
    return [
        'for key in ("elementwise_affine", "bias"):',
        '    if kwargs.pop(key, True) is not True:',
        '        raise ValueError(f"{key}=False: MindSpore nn.LayerNorm always holds trainable gamma/beta")',
        'shape = kwargs.pop("normalized_shape")',
        "shape = (shape,) if isinstance(shape, int) else tuple(shape)",
        "if len(shape) != 1:",
        '    raise ValueError("normalized_shape spans several axes: MindSpore nn.LayerNorm takes -1 as its only negative axis")',
        'kwargs.update(normalized_shape=shape, begin_norm_axis=-1, begin_params_axis=-1)',
    ]


@hook(at_run_time=layer_norm_at_run_time, consumes=("elementwise_affine", "bias"))
def layer_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """nn.LayerNorm: a tuple shape, normalised over the last axis.

    MindSpore's begin_norm_axis/begin_params_axis accept -1 as the only negative
    value (-2 raises), and the input rank is unknown here. A non-literal shape
    (``d_model``) is taken to be one dimension; if it is not, MindSpore raises when the
    layer runs (gamma's size does not match), it never silently normalises the wrong
    axes. A literal shape of several axes, or ``elementwise_affine``/``bias`` other than
    a literal True (x-transformers' ``LayerNorm(dim, elementwise_affine=False)``), makes
    an emitted Cell computing torch's layer norm with only the parameters torch has.
    """
    out = dict(args)
    shape = out.pop("normalized_shape", None)
    if shape is None:
        raise Unconvertible("normalized_shape is missing")
    affine = {k: out.pop(k) for k in ("elementwise_affine", "bias") if k in out}
    several = isinstance(shape, (cst.Tuple, cst.List)) and len(shape.elements) != 1  # (3, dim) too
    if several or any(literal_value(a) is not True for a in affine.values()):
        cell = runtime_helper(ctx, "_torch_LayerNorm_parts")
        return keyword_call(cell, {"normalized_shape": shape, **out, **affine})
    return {"normalized_shape": as_tuple(shape), "begin_norm_axis": literal(-1), "begin_params_axis": literal(-1), **out}


def conv_transpose2d_padding_at_run_time(entry) -> list[str]:
    return [
        *conv_padding_at_run_time(entry),
        'extra = kwargs.pop("output_padding", 0)',
        "extra = (extra, extra) if isinstance(extra, int) else tuple(extra)",
        'if extra != (0, 0) and kwargs["pad_mode"] == "pad":',
        '    pad = kwargs.get("padding", 0)',
        "    pad = (pad, pad) if isinstance(pad, int) else pad[::2]",
        "    if any(p < e for p, e in zip(pad, extra)):",
        '        raise ValueError(f"output_padding={extra} larger than padding={pad} has no MindSpore equivalent")',
        '    kwargs["padding"] = (pad[0], pad[0] - extra[0], pad[1], pad[1] - extra[1])',
        "elif extra != (0, 0):",
        '    raise ValueError(f"output_padding={extra} with padding={kwargs[\'pad_mode\']!r}")',
    ]


@hook(consumes=("padding_mode", "output_padding"), at_run_time=conv_transpose2d_padding_at_run_time)
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
        if isinstance(literal_value(args.get("padding", literal(0))), str):
            raise Unconvertible("output_padding with a padding mode")
        # known when it runs (output_padding=stride - 1): the padding is computed there
        out["pad_mode"] = literal("pad")
        out["padding"] = keyword_call(runtime_helper(ctx, "_torch_transposed_padding"),
                                      {"padding": args.get("padding", literal(0)), "output_padding": op})
        return out
    if any(p < o for p, o in zip(pad, opv)):
        raise Unconvertible(f"output_padding={opv} larger than padding={pad} has no MindSpore equivalent")
    out["pad_mode"] = literal("pad")
    out["padding"] = literal([pad[0], pad[0] - opv[0], pad[1], pad[1] - opv[1]])
    return out


def batch_norm_stats_at_run_time(entry) -> list[str]:
    return [
        'if not kwargs.pop("track_running_stats", True):',
        '    kwargs["use_batch_statistics"] = True',
    ]


@hook(consumes=("track_running_stats",), at_run_time=batch_norm_stats_at_run_time)
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


def softmax_axis_at_run_time(entry) -> list[str]:
    return [
        'if kwargs.get("dim") is None:',
        '    raise ValueError("dim is not given: torch picks it from the input rank at run time")',
    ]


@hook(at_run_time=softmax_axis_at_run_time)
def softmax_axis(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """Softmax-like layers: torch's ``dim=None`` picks an axis from the input's rank at
    run time (a deprecated implicit choice); MindSpore needs the axis."""
    axis = args.get("axis")
    if axis is None or literal_value(axis) is None:
        raise Unconvertible("dim is not given: torch picks it from the input's rank at run time; write dim= explicitly")
    return args


@hook(consumes=("size",))
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
    if is_number(a):
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
    if is_number(v):
        return literal(float(v))
    if isinstance(v, (tuple, list)):
        return literal([float(x) for x in v])
    src = code(value)
    return cst.parse_expression(f"tuple(float(s) for s in {src}) if isinstance({src}, (tuple, list)) else float({src})")


@hook()
def cell_list_items(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``nn.ModuleList(Block(i) for i in range(n))``: torch takes any iterable, MindSpore's
    CellList a list only (a generator raises TypeError): anything but a list display is
    made a list. The cells go by position (CellList's keywords are not its items)."""
    items = args.get("modules")
    if items is None or literal_value(items) is None:
        return cst.Call(func=ctx.reference(entry.target))
    if isinstance(items, cst.GeneratorExp):
        items = cst.ListComp(elt=items.elt, for_in=items.for_in)
    elif not isinstance(items, (cst.List, cst.ListComp)):
        items = cst.Call(func=cst.Name("list"), args=[cst.Arg(items)])
    return cst.Call(func=ctx.reference(entry.target), args=[cst.Arg(items)])


@hook(consumes=("module", "device_ids", "output_device", "dim"))
def data_parallel(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``nn.DataParallel(model, device_ids=[0, 1])`` -> ``_TorchDataParallel(model)``: the
    devices are torch's choice among GPUs; on one device the wrapper only calls its module."""
    if "module" not in args:
        raise Unconvertible("DataParallel without its module")
    return cst.Call(func=runtime_helper(ctx, "_TorchDataParallel"), args=[cst.Arg(args["module"])])


# -- code emitted beside the converted code -------------------------------------------
def _function_cell(ctx, layer: str, function: str, args: dict[str, Any], name: str | None = None) -> cst.Call:
    """``layer`` computes ``function(input, **its arguments)``: a Cell emitted beside the
    code keeps the (converted) arguments and calls the function. GRAPH mode takes the
    keyword dict as a constant, Tensors in it too."""
    _, _, nn_ = module_spellings(ctx)
    source = (f"class {{name}}({nn_}.Cell):\n"
              f'    """{layer} as a Cell calling {function} with the layer\'s arguments (transpile MS201)."""\n\n'
              f"    def __init__(self, **kwargs):\n        super().__init__()\n        self.kwargs = kwargs\n\n"
              f"    def construct(self, input):\n        return {function}(input, **self.kwargs)\n")
    cell = emitted(ctx, name or "_torch_" + layer.rsplit(".", 1)[-1], source)
    return keyword_call(cell, args)


@hook(not_a_value="the layer becomes a Cell emitted beside the code: call it where it is built")
def function_cell(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """A torch layer that is the entry's target function applied with the layer's
    arguments (nn.Unfold is ops.unfold; mindspore.nn.Unfold is TF's
    extract_image_patches and mint's has no CPU kernel): an emitted Cell."""
    return _function_cell(ctx, entry.source, code(ctx.reference(entry.target)), args)


def fold_output_size(ctx, size: cst.BaseExpression) -> cst.BaseExpression:
    """ops.fold takes output_size as an int32 Tensor of two sizes; torch an int or a pair."""
    v = literal_value(size)
    if isinstance(v, int) and not isinstance(v, bool):
        size = literal([v, v])
    elif v is NOT_LITERAL and name_chain(size):  # an int or a pair, known when it runs
        src = code(size)
        size = cst.parse_expression(f"{src} if isinstance({src}, (tuple, list)) else ({src}, {src})")
    return target_call(ctx, "mindspore.Tensor", {}, (size, ctx.reference("mindspore.int32")))


@hook(not_a_value="the layer becomes a Cell emitted beside the code: call it where it is built")
def fold_cell(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """nn.Fold: ops.fold (it runs on CPU; mint's Fold does not) in an emitted Cell, the
    output size made the int32 Tensor ops.fold takes."""
    out = dict(args)
    if "output_size" not in out:
        raise Unconvertible("output_size is missing")
    out["output_size"] = fold_output_size(ctx, out["output_size"])
    return _function_cell(ctx, entry.source, code(ctx.reference(entry.target)), out)


def _interpolate_any_mode(ctx, entry, args: dict[str, Any]) -> cst.BaseExpression:
    """F.interpolate / nn.Upsample whose mode is not a literal: a function emitted beside
    the code does what the literal mode would (for a layer, a Cell calling it)."""
    function = runtime_helper(ctx, "_torch_interpolate")
    if entry.kind == "class":
        return _function_cell(ctx, entry.source, function.value, args, name="_torch_UpsampleAnyMode")
    if "input" not in args:
        raise Unconvertible("input is missing")
    return keyword_call(function, args)


def _bicubic(ctx, entry, args: dict[str, Any]) -> cst.BaseExpression:
    """F.interpolate / nn.Upsample with mode='bicubic': the composition above, emitted
    beside the code (a function; for a layer, a Cell calling it)."""
    function = runtime_helper(ctx, "_torch_interpolate_bicubic")
    kwargs = {k: v for k, v in args.items() if k not in ("input", "mode")}
    if entry.kind == "class":
        return _function_cell(ctx, entry.source, function.value, kwargs, name="_torch_UpsampleBicubic")
    if "input" not in args:
        raise Unconvertible("input is missing")
    return keyword_call(function, {"input": args["input"], **kwargs})


def interpolate_at_run_time(entry) -> list[str]:
    return [
        'mode = kwargs.get("mode", "nearest")',
        'if mode == "bicubic":',
        '    raise ValueError("mode=\'bicubic\' given at run time: MindSpore\'s bicubic differs from torch\'s")',
        'scale = kwargs.pop("scale_factor", None)',
        "if scale is not None:",
        "    scales = tuple(scale) if isinstance(scale, (tuple, list)) else (scale,)",
        "    if any(float(s) != int(s) for s in scales):",
        '        raise ValueError(f"scale_factor={scale} is fractional: torch samples with 1/scale, MindSpore with in/out")',
        '    kwargs["scale_factor"] = tuple(float(s) for s in scale) if isinstance(scale, (tuple, list)) else float(scale)',
        '    if mode not in ("trilinear", "area"):',
        '        kwargs["recompute_scale_factor"] = True',
    ]


@hook(at_run_time=interpolate_at_run_time)
def interpolate(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """nn.Upsample / F.interpolate: MindSpore wants a float scale_factor and, except for
    'trilinear' and 'area', an output size instead of a scale factor
    (``recompute_scale_factor=True`` computes ``floor(in * scale)``, as torch does).

    torch samples with ``1 / scale`` unless told to recompute, MindSpore with
    ``in / out``: the same when ``in * scale`` is whole, which a whole literal scale
    guarantees. A fractional literal scale is refused; a variable one is converted
    (the note on the entry says so). 'bicubic' is composed exactly (``_bicubic``).
    """
    out = dict(args)
    mode = literal_value(out.get("mode", literal("nearest")))
    if mode is NOT_LITERAL:
        return _interpolate_any_mode(ctx, entry, out)
    if mode == "bicubic":
        return _bicubic(ctx, entry, out)
    scale = out.get("scale_factor")
    if scale is None or literal_value(scale) is None:
        out.pop("scale_factor", None)
        return out
    v = literal_value(scale)
    values = v if isinstance(v, (tuple, list)) else [v]
    if v is not NOT_LITERAL and not all(is_number(x) for x in values):
        return out  # not a number (``...``, a string): torch refuses it when it runs; left as written
    if v is not NOT_LITERAL and any(float(x) != int(x) for x in values):
        raise Unconvertible(
            f"scale_factor={code(scale)} is fractional: torch samples with 1/scale, MindSpore with "
            "in/out, which differ unless in * scale is whole; pass size= instead"
        )
    out["scale_factor"] = _float_scale(scale)
    if mode not in ("trilinear", "area"):  # whole scales: recomputing the size changes nothing
        out["recompute_scale_factor"] = literal(True)
    return out


def instance_norm_at_run_time(entry) -> list[str]:
    return ['if "num_features" not in kwargs:',
            '    raise TypeError("missing the required argument \'num_features\'")',
            'kwargs.setdefault("num_groups", kwargs["num_features"])']


@hook(at_run_time=instance_norm_at_run_time)
def instance_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any]:
    """nn.InstanceNorm*d(C) is nn.GroupNorm(C, C): one group per channel normalises each
    (sample, channel) over its spatial axes. MindSpore's own InstanceNorm has no CPU
    kernel; GroupNorm runs everywhere and takes any rank >= 3."""
    channels = args.get("num_channels")
    if channels is None:
        raise Unconvertible("num_features is missing")
    return {"num_groups": channels, **args}


ATTENTION_INPUTS = ("query", "key", "value")


def _attention_inputs_by_position(call: cst.Call) -> cst.Call:
    """MindSpore's MultiheadAttention.__call__ reads ``args[0..2]`` even when query, key
    and value come as keywords (IndexError): pass them by position."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) != sum(1 for a in call.args if a.keyword is None):
        return call  # *args: positions unknown
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    moved = []
    for name in ATTENTION_INPUTS[len(positional):]:
        if name not in keywords:
            break
        moved.append(keywords.pop(name))
    if not moved:
        return call
    plain = [a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) for a in moved]
    rest = [a for a in call.args if a.keyword is not None and a.keyword.value in keywords]
    args = positional + plain + rest
    return call.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args[:-1]] + [
        args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])


@hook(kind="layer_call")
def attention_call(ctx, entry, call: cst.Call) -> cst.BaseExpression:
    """``attn(query=q, key=k, value=v)`` passes the inputs by position (MindSpore's
    ``__call__`` indexes ``args``); ``attn(q, k, v, need_weights=False)``: torch returns
    ``(output, None)``, MindSpore ``(output,)``; ``(attn(...)[0], None)`` unpacks like torch's."""
    call = _attention_inputs_by_position(call)
    flag = next((a for a in call.args if a.keyword is not None and a.keyword.value == "need_weights"), None)
    if flag is None or not (isinstance(flag.value, cst.Name) and flag.value.value == "False"):
        return call
    first = cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    return cst.Tuple([cst.Element(first), cst.Element(cst.Name("None"))])


@hook(kind="layer_call")
def rnn_call(ctx, entry, call: cst.Call) -> cst.BaseExpression:
    """``self.lstm(x, hx)`` in a file that packs sequences -> ``_torch_rnn_call(self.lstm,
    x, hx)``, which passes a packed input's lengths as seq_length; elsewhere unchanged."""
    if not ctx.facts.qualified_calls() & PACKING_CALLS:
        return call
    helper = runtime_helper(ctx, "_torch_rnn_call")
    return call.with_changes(func=helper, args=[cst.Arg(call.func), *call.args])


@hook(not_a_value="the layer becomes a Cell emitted beside the code: call it where it is built")
def runtime_cell(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """A layer MindSpore lacks, or whose kernel refuses torch's argument values ->
    ``_Torch<Name>(**args)``, the Cell of runtime/nn_layers.py computing torch's result
    (``nn.RReLU(0.1, 0.3)`` -> ``_TorchRReLU(lower=0.1, upper=0.3)``)."""
    return keyword_call(runtime_helper(ctx, "_Torch" + entry.source.rsplit(".", 1)[-1]), args)


def elu_alpha_at_run_time(entry) -> list[str]:
    return ['if kwargs.get("alpha", 1.0) != 1.0:',
            '    raise ValueError("alpha: nn.ELU passed as a value takes alpha=1.0 only (MindSpore\'s Elu kernel)")']


@hook(consumes=("alpha",), at_run_time=elu_alpha_at_run_time)
def elu_alpha(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """``nn.ELU()`` / ``nn.ELU(1.0)`` is MindSpore's nn.ELU; another alpha (its Elu kernel
    takes only 1.0) the composed ``_TorchELU(alpha=...)``."""
    alpha = args.pop("alpha", None)
    if alpha is None or literal_value(alpha) == 1.0:
        return args
    return keyword_call(runtime_helper(ctx, "_TorchELU"), {"alpha": alpha})


def embedding_max_norm_at_run_time(entry) -> list[str]:
    return ['if kwargs.pop("max_norm", None) is not None:',
            '    raise ValueError("max_norm: nn.Embedding passed as a value does not renormalise rows")',
            'kwargs.pop("norm_type", None)']


@hook(consumes=("max_norm", "norm_type"), at_run_time=embedding_max_norm_at_run_time)
def embedding_max_norm(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """``nn.Embedding(n, d, max_norm=m)`` -> ``_TorchEmbedding(...)``, MindSpore's
    nn.Embedding renormalising the rows it looks up first as torch does; without
    max_norm (norm_type then changes nothing) MindSpore's own."""
    max_norm = args.pop("max_norm", None)
    norm_type = args.pop("norm_type", None)
    if max_norm is None or literal_value(max_norm) is None:
        return args
    extra = {"max_norm": max_norm, **({"norm_type": norm_type} if norm_type is not None else {})}
    return keyword_call(runtime_helper(ctx, "_TorchEmbedding"), {**args, **extra})


@hook(consumes=("persistent",))
def buffer_persistence(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """nn.Buffer: a persistent buffer is a non-trainable Parameter (saved, loaded, found by
    the weight map); ``persistent=False`` is the tensor itself, a plain attribute of the
    Cell: torch leaves such a buffer out of ``state_dict``, and MindSpore saves every
    Parameter. A persistence known only at run time is left as it is."""
    out = dict(args)
    persistent = literal_value(out.pop("persistent", literal(True)))
    if persistent is True:
        return out
    if persistent is False:
        return out["default_input"]
    raise Unconvertible("persistent= is not a literal True or False")


def _runtime_base(ctx, entry) -> cst.BaseExpression:
    """The Cell of runtime/nn_layers.py standing for a torch base class: ``_Torch<Name>``,
    the name's leading underscores dropped (``_ConvNd`` -> ``_TorchConvNd``)."""
    return runtime_helper(ctx, "_Torch" + entry.source.rsplit(".", 1)[-1].lstrip("_"))


@hook(as_value=_runtime_base)
def runtime_base(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """A torch base class that packages subclass (``class SVConv2d(_ConvNd)``, its
    ``super().__init__(...)`` with torch's arguments) -> the Cell of runtime/nn_layers.py
    holding torch's attributes under torch's names, as a base (its bare reference) and
    when called."""
    return keyword_call(_runtime_base(ctx, entry), args)

