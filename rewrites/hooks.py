"""Escape hatches for what the tables cannot say as data.

Every hook has one signature: ``hook(ctx, entry, args, receiver)`` where ``args`` are
the converted keyword arguments (target names). It returns the arguments to emit,
or a whole replacement expression. It raises ``Unconvertible`` to leave the call.
"""
from __future__ import annotations

from typing import Any

import libcst as cst

from .calls import Unconvertible, code, literal, literal_value


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
    padding = out.get("padding")
    if padding is not None and literal_value(padding) == 0:
        out.pop("padding")
        padding = None
    ceil = out.get("ceil_mode")
    if ceil is not None and literal_value(ceil) is False:
        out.pop("ceil_mode")
        ceil = None
    if padding is not None or ceil is not None:
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
