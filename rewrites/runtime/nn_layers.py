"""Run-time helpers: torch.nn layers (tables/nn_layers.toml) MindSpore's own do not match:
convolutions with another padding mode, a layer norm of several axes or without its
parameters, DataParallel, interpolation whose mode is known when it runs, bicubic
interpolation.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import nn, ops

from .functional import (_torch_binary_cross_entropy, _torch_multilabel_margin_loss, _torch_soft_margin_loss,
                         _torch_triplet_margin_loss)
from .nn_ops import _torch_dropout, _torch_elu, _torch_embedding_renorm, _torch_rms_norm, _torch_rrelu


# torch's Conv1d/2d/3d with padding_mode 'reflect'/'replicate'/'circular' pad the input
# themselves (F.pad; padding='same': d * (k - 1) in all, the extra one after) and
# convolve with no padding. MindSpore's Conv has no such mode: a subclass of the
# MindSpore layer pads first and convolves with pad_mode='valid', so weight and bias
# keep their names. The padding gathers each padded axis by a computed index (ops.pad's
# reflect has no CPU kernel for 5-D input), in tensor ops only: GRAPH mode compiles it.
def _torch_conv_padded_input(x, sides, mode):
    """The input of a torch Conv layer padded as its padding_mode says (transpile MS201):
    `sides` holds (before, after) per spatial axis."""
    dims = len(sides)
    for k in range(dims):
        before, after = sides[k]
        if before > 0 or after > 0:
            axis = x.ndim - dims + k
            n = x.shape[axis]
            position = ops.arange(-before, n + after, dtype=ms.int32)
            if mode == "reflect":
                index = ops.abs(position)
                index = ops.where(index >= n, 2 * (n - 1) - index, index)
            elif mode == "circular":
                index = (position + n) % n
            else:  # replicate, zeros
                index = ops.clamp(position, 0, n - 1)
            y = ops.gather(x, index, axis)
            if mode == "zeros":
                inside = ops.logical_and(position >= 0, position < n).reshape((-1,) + (1,) * (x.ndim - 1 - axis))
                y = ops.where(inside, y, ops.zeros_like(y))
            x = y
    return x


def _torch_padded_conv(layer, padding_mode, padding=0, **kwargs):
    """A torch Conv layer with padding_mode (transpile MS201): the input padded as torch
    pads it ('zeros', 'reflect', 'replicate' or 'circular'), then a pad_mode='valid'
    convolution; weight and bias keep their names."""
    dims = 1 if issubclass(layer, nn.Conv1d) else 2 if issubclass(layer, nn.Conv2d) else 3

    def per_axis(value):
        return (value,) * dims if isinstance(value, int) else tuple(value)

    if padding == "same":
        kernel, dilation = per_axis(kwargs["kernel_size"]), per_axis(kwargs.get("dilation", 1))
        sides = tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))
    else:
        sides = tuple((p, p) for p in per_axis(0 if padding == "valid" else padding))

    class Padded(layer):
        def construct(self, x):
            return super().construct(_torch_conv_padded_input(x, self.torch_sides, self.torch_padding_mode))

    Padded.__name__ = Padded.__qualname__ = layer.__name__
    cell = Padded(pad_mode="valid", **kwargs)
    cell.torch_sides = sides
    cell.torch_padding_mode = padding_mode
    return cell


# nn.LayerNorm without its weight or bias, or over several trailing axes: MindSpore's
# nn.LayerNorm always holds gamma and beta and counts its axes from the front.
def _torch_transposed_padding(padding, output_padding):
    """A ConvTranspose2d's padding when its output_padding is known only when it runs
    (``output_padding=stride - 1``): MindSpore's output_padding only appends zeros, so
    torch's extra rows and columns are an asymmetric padding (p, p - op) per axis
    (transpile MS201)."""
    pad = (padding, padding) if isinstance(padding, int) else tuple(padding)
    extra = (output_padding, output_padding) if isinstance(output_padding, int) else tuple(output_padding)
    if any(p < e for p, e in zip(pad, extra)):
        raise ValueError(f"output_padding={extra} larger than padding={pad} has no MindSpore equivalent")
    return (pad[0], pad[0] - extra[0], pad[1], pad[1] - extra[1])


class _torch_LayerNorm_parts(nn.Cell):
    """torch.nn.LayerNorm over the trailing axes of normalized_shape, with gamma only if
    elementwise_affine and beta only if bias too, as torch (transpile MS201): MindSpore's
    nn.LayerNorm always holds both."""

    def __init__(self, normalized_shape, epsilon=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.axes = tuple(range(-len(shape), 0))
        self.epsilon = epsilon
        self.gamma = ms.Parameter(ops.ones(shape), name="gamma") if elementwise_affine else None
        self.beta = ms.Parameter(ops.zeros(shape), name="beta") if elementwise_affine and bias else None

    def construct(self, x):
        mean = x.mean(self.axes, keep_dims=True)
        centred = x - mean
        y = centred / ops.sqrt((centred * centred).mean(self.axes, keep_dims=True) + self.epsilon)
        if self.gamma is not None:
            y = y * self.gamma
        if self.beta is not None:
            y = y + self.beta
        return y


class _TorchConvNd(nn.Cell):
    """torch.nn.modules.conv._ConvNd, the base torch's convolutions share, as packages
    subclass it (a convolution of their own calling ``F.conv2d(x, self.weight, self.bias,
    self.stride, ...)`` in forward): torch's constructor and attributes under torch's names,
    the weight ``(out, in / groups, *kernel)`` (transposed: ``(in, out / groups, *kernel)``)
    and bias drawn as torch's ``reset_parameters`` draws them (the subclass's own
    ``reset_parameters``, where it has one, is the one called), no construct of its own."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()  # device and dtype: one device; the weights float32, as torch's default
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0 or out_channels % groups != 0:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of zeros, reflect, replicate, circular, not {padding_mode!r}")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of ('same', 'valid')")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel_size
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.transposed, self.output_padding, self.groups = transposed, output_padding, groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):  # F.pad's order: the last axis first, (before, after) each
            sides = [0, 0] * len(kernel_size)
            if padding == "same":
                for i in range(len(kernel_size) - 1, -1, -1):
                    total = dilation[i] * (kernel_size[i] - 1)
                    at = 2 * (len(kernel_size) - 1 - i)
                    sides[at], sides[at + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = sides
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        shape = ((in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups))
        self.weight = ms.Parameter(ops.zeros(shape + tuple(kernel_size), ms.float32), name="weight")
        self.bias = ms.Parameter(ops.zeros((out_channels,), ms.float32), name="bias") if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        """torch's: kaiming_uniform_(weight, a=sqrt(5)), the bias uniform in
        +-1/sqrt(fan_in)."""
        import math

        from mindspore.common.initializer import HeUniform, Uniform, initializer

        self.weight.assign_value(initializer(HeUniform(negative_slope=math.sqrt(5)), self.weight.shape,
                                             self.weight.dtype).init_data())
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.weight.shape[2:])
            bound = 1 / math.sqrt(fan_in) if fan_in != 0 else 0
            self.bias.assign_value(initializer(Uniform(scale=bound), self.bias.shape, self.bias.dtype).init_data())


class _TorchLazyLinear(nn.Cell):
    """torch.nn.LazyLinear: a Dense whose in_features is the last axis of its first input.
    Its weight ``(out_features, in_features)`` and bias, named as torch's, are made and drawn
    as torch's reset_parameters draws them (uniform in +-1/sqrt(in_features)) when the layer
    is first called from Python, before MindSpore runs its construct: a model holding one is
    called once in PYNATIVE mode, or the layer itself once in either mode, before a GRAPH
    call of the model compiles it (as torch needs a first call before its weights exist)."""

    def __init__(self, out_features, bias=True):
        super().__init__()
        self.out_features = out_features
        self.in_features = 0
        self.has_bias = bias

    def __call__(self, *args, **kwargs):
        if self.in_features == 0:
            self._make_parameters(args[0].shape[-1])
        return super().__call__(*args, **kwargs)

    def _make_parameters(self, in_features):
        from mindspore.common.initializer import Uniform, initializer

        self.in_features = in_features
        bound = 1 / in_features ** 0.5 if in_features else 0
        self.weight = ms.Parameter(initializer(Uniform(scale=bound), (self.out_features, in_features), ms.float32)
                                   .init_data(), name="weight")
        self.bias = (ms.Parameter(initializer(Uniform(scale=bound), (self.out_features,), ms.float32).init_data(),
                                  name="bias") if self.has_bias else None)

    def construct(self, input):
        return ops.dense(input, self.weight, self.bias)


class _TorchDataParallel(nn.Cell):
    """torch's nn.DataParallel on one device: the model under .module (its parameters and
    state_dict keys under "module.", as torch's), called through (transpile MS201)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module

    def construct(self, *args, **kwargs):
        return self.module(*args, **kwargs)


# torch's bicubic resampling (aten upsample_bicubic2d): per axis, source position
# (dst + 0.5) * ratio - 0.5 (dst * ratio with align_corners, not clamped), four taps
# around it (indices past an edge repeat the edge) weighted by the cubic convolution
# with A = -0.75. MindSpore's bicubic resize takes other coefficients (off by ~0.3).
def _torch_interpolate_bicubic(input, size=None, scale_factor=None, align_corners=False, recompute_scale_factor=None):
    """torch's bicubic interpolation (cubic coefficient -0.75, edge taps repeated) of a
    4-D input (transpile MS201): MindSpore's bicubic resize weighs otherwise."""
    sizes = size if isinstance(size, (tuple, list)) else (size, size)
    scales = scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor, scale_factor)
    a = -0.75
    out = input
    for axis in (2, 3):
        n_in = input.shape[axis]
        if size is None:
            n_out = int(n_in * scales[axis - 2])  # floor, as torch
            ratio = n_in / n_out if recompute_scale_factor else 1.0 / scales[axis - 2]
        else:
            n_out = sizes[axis - 2]
            ratio = n_in / n_out
        if align_corners:
            ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        dtype = ms.float64 if input.dtype == ms.float64 else ms.float32
        # a Tensor: a Python float would be rounded to float32
        ratio = ms.Tensor(ratio, dtype)
        dst = ops.arange(n_out).astype(dtype)
        src = dst * ratio if align_corners else (dst + 0.5) * ratio - 0.5
        low = ops.floor(src)
        t = src - low
        low = low.astype(ms.int32)
        weights = (
            ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
        )
        total = None
        for k in range(4):
            taps = ops.gather(out, ops.clamp(low + (k - 1), 0, n_in - 1), axis)
            term = taps * weights[k].reshape((-1, 1) if axis == 2 else (-1,)).astype(out.dtype)
            total = term if total is None else total + term
        out = total
    return out


# F.interpolate / nn.Upsample with the mode in a variable (denoising-diffusion's
# interpolate_1d(x, length, mode='bilinear')): what each literal mode converts to, chosen
# when it runs. MindSpore's ops.interpolate takes torch's mode names.
def _torch_interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
    """torch.nn.functional.interpolate with the mode known when it runs (transpile MS201):
    'bicubic' is composed as torch computes it; otherwise a scale factor is made a float
    and, but for 'trilinear' and 'area', the output size is computed from it (floor(in * scale))."""
    if mode == "bicubic":
        return _torch_interpolate_bicubic(input, size, scale_factor, align_corners, recompute_scale_factor)
    if scale_factor is not None:
        if isinstance(scale_factor, (tuple, list)):
            scale_factor = tuple(float(s) for s in scale_factor)
        else:
            scale_factor = float(scale_factor)
        if mode not in ("trilinear", "area"):
            recompute_scale_factor = True
    return ops.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


# Layers whose MindSpore kernel refuses torch's argument values, or that MindSpore lacks:
# Cells computing torch's result from the functions of runtime/nn_ops.py.
class _TorchELU(nn.Cell):
    """torch.nn.ELU with alpha other than 1.0 (MindSpore's Elu kernel takes only 1.0)."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def construct(self, input):
        return _torch_elu(input, self.alpha)


class _TorchSoftplus(nn.Cell):
    """torch.nn.Softplus (mindspore.nn has none): ops.softplus with torch's beta and
    threshold (linear above threshold / beta)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def construct(self, input):
        return ops.softplus(input, self.beta, self.threshold)


class _TorchRReLU(nn.Cell):
    """torch.nn.RReLU: a random slope per negative element in training, the fixed
    (lower + upper) / 2 outside it (MindSpore's nn.RReLU draws in both)."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3):
        super().__init__()
        self.lower = lower
        self.upper = upper

    def construct(self, input):
        return _torch_rrelu(input, self.lower, self.upper, self.training)


class _TorchAlphaDropout(nn.Cell):
    """torch.nn.AlphaDropout: the identity outside training; in training each element
    dropped with probability p to SELU's negative saturation, then mean and variance
    restored (mindspore.nn has no AlphaDropout)."""

    feature = False

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def construct(self, input):
        return _torch_dropout(input, self.p, self.training, alpha=True, feature=self.feature)


class _TorchFeatureAlphaDropout(_TorchAlphaDropout):
    """torch.nn.FeatureAlphaDropout: AlphaDropout of whole channels."""

    feature = True


def _torch_pair_shape(a, b):
    """The shape two shapes broadcast to, in what GRAPH mode compiles (torch's rule: of
    two sizes one is 1 or both are equal)."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    return tuple([n if m == 1 else m for m, n in zip(a, b)])


class _TorchCosineSimilarity(nn.Cell):
    """torch.nn.CosineSimilarity: the inputs broadcast to one shape, then the cosine
    along dim (mindspore.nn.CosineSimilarity is a metric, not a layer)."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def construct(self, x1, x2):
        shape = _torch_pair_shape(x1.shape, x2.shape)
        return ops.cosine_similarity(x1.broadcast_to(shape), x2.broadcast_to(shape), self.dim, self.eps)


class _TorchPairwiseDistance(nn.Cell):
    """torch.nn.PairwiseDistance: the p-norm of x1 - x2 + eps over the last axis (the
    inputs broadcast; mindspore.nn has no such cell)."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def construct(self, x1, x2):
        return ops.vector_norm(x1 - x2 + self.eps, self.norm, -1, self.keepdim)


class _TorchRMSNorm(nn.Cell):
    """torch.nn.RMSNorm (mindspore.nn has none; ops.rms_norm has no CPU kernel): torch's
    rms_norm over the last axes, times a weight of ones named ``weight`` as torch's."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.weight = ms.Parameter(ops.ones(shape, ms.float32), name="weight") if elementwise_affine else None

    def construct(self, input):
        return _torch_rms_norm(input, self.normalized_shape, self.weight, self.eps)


class _TorchEmbedding(nn.Embedding):
    """torch.nn.Embedding with max_norm: the rows a call looks up renormalised in the
    table first, as torch does in place (MindSpore's nn.Embedding has no max_norm)."""

    def __init__(self, vocab_size, embedding_size, padding_idx=None, max_norm=None, norm_type=2.0, **kwargs):
        super().__init__(vocab_size, embedding_size, padding_idx=padding_idx, **kwargs)
        self.max_norm = max_norm
        self.norm_type = norm_type

    def construct(self, ids):
        if self.max_norm is not None:
            ops.assign(self.embedding_table, _torch_embedding_renorm(self.embedding_table, ids, self.max_norm,
                                                                     self.norm_type))
        return super().construct(ids)


# Losses MindSpore lacks on CPU, or whose kernel refuses torch's arguments: Cells calling
# the composed functions of runtime/functional.py.
class _TorchElementLoss(nn.Cell):
    """A loss of (input, target) whose only setting is torch's reduction; a subclass
    computes it. (Copies are written sorted by name: a base sorts before its subclasses.)"""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class _TorchSoftMarginLoss(_TorchElementLoss):
    """torch.nn.SoftMarginLoss (MindSpore's has no CPU kernel)."""

    def construct(self, input, target):
        return _torch_soft_margin_loss(input, target, self.reduction)


class _TorchMultiLabelMarginLoss(_TorchElementLoss):
    """torch.nn.MultiLabelMarginLoss (MindSpore's has no CPU kernel and takes int32 targets only)."""

    def construct(self, input, target):
        return _torch_multilabel_margin_loss(input, target, self.reduction)


class _TorchTripletMarginLoss(nn.Cell):
    """torch.nn.TripletMarginLoss (MindSpore's has no CPU kernel and takes an int p only)."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction="mean"):
        super().__init__()
        self.margin = margin
        self.norm = p
        self.eps = eps
        self.swap = swap
        self.reduction = reduction

    def construct(self, anchor, positive, negative):
        return _torch_triplet_margin_loss(anchor, positive, negative, self.margin, self.norm, self.eps, self.swap,
                                          self.reduction)


class _TorchBCELoss(nn.Cell):
    """torch.nn.BCELoss with a weight, broadcast to the input (MindSpore's CPU kernel
    reads past a weight of another shape)."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.weight = weight
        self.reduction = reduction

    def construct(self, input, target):
        return _torch_binary_cross_entropy(input, target, self.weight, self.reduction)
