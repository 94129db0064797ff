"""Run-time helpers: torch.X spellings of torch.nn.functional ops (tables/torch_nn_ops.toml)
composed of MindSpore ops, called with torch's arguments.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


def _torch_dropout(input, p, training, alpha=False, feature=False):
    """torch's dropout family (transpile): each element (``feature``: each channel) kept
    with probability 1 - p; kept values scaled by 1 / (1 - p), or, ``alpha`` (for SELU
    nets), all moved so that mean and variance stay: dropped ones become SELU's
    negative saturation, then an affine map."""
    if p == 0 or not training or input.size == 0:
        return input
    if p == 1:
        return input * ops.zeros((), input.dtype)
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = (ops.rand(*shape) < 1 - p).astype(input.dtype)
    if not alpha:
        return input * (keep / (1 - p))
    saturation = 1.7580993408473766
    a = ((saturation * saturation * p + 1) * (1 - p)) ** -0.5
    return input * (keep * a) + ((keep - 1) * (saturation * a) + saturation * a * p)


def _torch_embedding_bag(input, weight, offsets=None, mode="mean", per_sample_weights=None, include_last_offset=False,
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
            bags.append(ops.zeros(weight.shape[1:], weight.dtype))
            continue
        rows = weight[ms.Tensor([indices[k] for k in kept], ms.int64)]
        if scales is not None:
            rows = rows * scales[ms.Tensor(kept, ms.int64)].reshape(-1, 1)
        if mode == "sum":
            bags.append(rows.sum(0))
        elif mode == "mean":
            bags.append(rows.sum(0) / len(kept))
        else:
            bags.append(ops.amax(rows, 0))
    return ops.stack(bags)


def _torch_rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch's rms_norm (transpile): input / sqrt(mean(input ** 2) + eps) over the last
    len(normalized_shape) axes, computed in float32 for float16/bfloat16 input, then
    times weight; eps defaults to the machine epsilon of the input's dtype (ops.rms_norm
    has no CPU kernel)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    axes = tuple(range(-len(normalized_shape), 0))
    if eps is None:
        eps = {ms.float16: 2.0 ** -10, ms.bfloat16: 2.0 ** -7, ms.float32: 2.0 ** -23,
               ms.float64: 2.0 ** -52}[input.dtype]
    low = input.dtype in (ms.float16, ms.bfloat16)
    x = input.astype(ms.float32) if low else input
    y = (x * ops.rsqrt(ops.mean(x * x, axes, keep_dims=True) + eps)).astype(input.dtype)
    return y * weight if weight is not None else y


def _torch_conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch's conv_transpose1d/2d/3d (transpile): the input spread by stride (zeros
    between its elements), padded by dilation * (kernel - 1) - padding on each side (and
    output_padding more after; a negative amount crops), then a stride-1 convolution with
    the kernel flipped and its in/out channels swapped per group (ops.conv_transpose2d
    has no CPU kernel)."""
    dims = weight.ndim - 2
    unbatched = input.ndim == dims + 1
    x = ops.expand_dims(input, 0) if unbatched else input

    def per_axis(value):
        return (value,) * dims if isinstance(value, int) else tuple(value)

    stride, padding, output_padding, dilation = (per_axis(v) for v in (stride, padding, output_padding, dilation))
    for k in range(dims):
        axis, s = 2 + k, stride[k]
        if s > 1:  # s - 1 zeros after each element, the trailing ones cut
            one = ops.expand_dims(x, axis + 1)
            spread = ops.concat([one] + [ops.zeros_like(one)] * (s - 1), axis + 1)
            shape = x.shape[:axis] + (x.shape[axis] * s,) + x.shape[axis + 1:]
            x = ops.narrow(spread.reshape(shape), axis, 0, (x.shape[axis] - 1) * s + 1)
        before = dilation[k] * (weight.shape[2 + k] - 1) - padding[k]
        after = before + output_padding[k]
        if before < 0:
            x = ops.narrow(x, axis, -before, x.shape[axis] + before)
        if after < 0:
            x = ops.narrow(x, axis, 0, x.shape[axis] + after)
        if before > 0 or after > 0:
            sides = [0, 0] * dims
            sides[2 * (dims - 1 - k)] = max(before, 0)
            sides[2 * (dims - 1 - k) + 1] = max(after, 0)
            x = ops.pad(x, tuple(sides))
    c_in, c_out, kernel = weight.shape[0], weight.shape[1] * groups, weight.shape[2:]
    w = weight.reshape((groups, c_in // groups, c_out // groups) + kernel).swapaxes(1, 2)
    w = ops.flip(w.reshape((c_out, c_in // groups) + kernel), tuple(range(2, 2 + dims)))
    conv = (ops.conv1d, ops.conv2d, ops.conv3d)[dims - 1]
    y = conv(x, w, bias, stride=1, pad_mode="valid", dilation=dilation if dims > 1 else dilation[0], groups=groups)
    return y[0] if unbatched else y


def _torch_conv_tbc(input, weight, bias, pad=0):
    """torch's conv_tbc (transpile): a 1-D convolution over time of a (time, batch,
    channels) input with a (kernel, in, out) weight."""
    y = ops.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, stride=1, pad_mode="pad", padding=pad)
    return y.permute(2, 0, 1)


def _torch_elu(input, alpha=1.0):
    """torch's elu with any alpha (MindSpore's Elu kernel takes only 1.0): x where x > 0,
    alpha * (exp(x) - 1) elsewhere; the exponential of min(x, 0), so a large x gives no
    inf that the gradient of the branch not taken would multiply by zero."""
    return ops.where(input > 0, input, alpha * (ops.exp(ops.minimum(input, 0)) - 1))


def _torch_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """torch's rrelu: negative values times a slope, in training drawn uniformly in
    [lower, upper] for each element (torch's distribution, not its draws), outside
    training the fixed (lower + upper) / 2."""
    if training:
        slope = ops.rand(*input.shape, dtype=input.dtype) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    return ops.where(input >= 0, input, input * slope)


def _torch_embedding_renorm(weight, input, max_norm, norm_type=2.0):
    """torch's embedding_renorm_: the rows of weight that input looks up whose norm
    exceeds max_norm scaled to max_norm / (norm + 1e-7), the others kept; the new table
    (torch writes it into weight, the caller assigns it)."""
    norms = ops.norm(weight, norm_type, dim=1)
    looked_up = ops.zeros((weight.shape[0],), ms.float32).index_fill(0, input.reshape(-1).astype(ms.int32), 1.0) > 0
    scale = ops.where(looked_up & (norms > max_norm), max_norm / (norms + 1e-7), ops.ones_like(norms))
    return ops.stop_gradient(weight * scale.reshape(-1, 1))


def _torch_f_embedding(input, weight, max_norm=None, norm_type=2.0):
    """torch's F.embedding: the rows of weight input names; with max_norm, the rows
    looked up renormalised in weight itself first (torch changes weight in place)."""
    if max_norm is not None:
        weight.assign_value(_torch_embedding_renorm(weight, input, max_norm, norm_type))
    return ops.gather(weight, input, 0)
