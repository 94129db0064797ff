"""Run-time helpers: torch's math and reduction functions (tables/torch_math.toml,
tensor_math.toml) composed of MindSpore ops; results torch gives as named tuples are named
tuples of the same fields.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops

from .indexing import _torch_broadcast_shapes, _torch_number


def _torch_aminmax(input, dim=None, keepdim=False):
    """torch.aminmax: (min, max) over dim, or over all elements when dim is None."""
    if input.dtype == ms.bool_:  # no bool kernel
        return _torch_aminmax_result(*(ops.cast(t, ms.bool_) for t in _torch_aminmax(input.astype(ms.uint8), dim, keepdim)))
    if dim is None:
        low, high = ops.aminmax(input.reshape(-1), axis=0)
        if keepdim:
            low, high = low.reshape((1,) * input.ndim), high.reshape((1,) * input.ndim)
        return _torch_aminmax_result(low, high)
    return _torch_aminmax_result(*ops.aminmax(input, axis=dim, keepdims=keepdim))


_torch_aminmax_result = __import__("collections").namedtuple("_torch_aminmax_result", 'min max')


def _torch_sort_nan_last(x, axis):
    """x sorted along axis, NaN last as torch sorts them (MindSpore's CPU sort leaves a
    NaN where it finds it), and the int64 indices: NaN sorted as infinity, then the
    places of the NaN moved behind the real infinities."""
    nan = ops.isnan(x).astype(ms.int64)
    order = ops.sort(ops.where(nan > 0, ops.full_like(x, float("inf")), x), axis=axis)[1].astype(ms.int64)
    shape = [1] * x.ndim
    shape[axis] = -1
    key = ops.arange(x.shape[axis], dtype=ms.int64).reshape(shape) + ops.gather_elements(nan, axis, order) * x.shape[axis]
    order = ops.gather_elements(order, axis, ops.sort(key, axis=axis)[1].astype(ms.int64))
    return ops.gather_elements(x, axis, order), order


def _torch_kthvalue(input, k, dim=-1, keepdim=False):
    """torch.kthvalue: the k-th smallest value along dim (NaN the largest) and its index."""
    dim = dim % input.ndim
    values, indices = _torch_sort_nan_last(input, dim)
    at = [slice(None)] * input.ndim
    at[dim] = slice(k - 1, k) if keepdim else k - 1
    return _torch_kthvalue_result(values[tuple(at)], indices[tuple(at)])


_torch_kthvalue_result = __import__("collections").namedtuple("_torch_kthvalue_result", 'values indices')


def _torch_nanmedian(input, dim=None, keepdim=False):
    """torch.nanmedian: the lower median ignoring NaN; over dim a (values, indices) pair."""
    if dim is None:
        return ops.nanmedian(input.reshape(-1), axis=0)[0]
    return _torch_nanmedian_result(*ops.nanmedian(input, axis=dim, keepdims=keepdim))


_torch_nanmedian_result = __import__("collections").namedtuple("_torch_nanmedian_result", 'values indices')


def _torch_mode(input, dim=-1, keepdim=False):
    """torch.mode: the most frequent value along dim (the smallest of equally frequent
    ones) and the index of its last occurrence: runs of equal values in sorted order."""
    x = ops.moveaxis(input, dim, -1)
    axis, n = x.ndim - 1, x.shape[-1]
    values = _torch_sort_nan_last(x, axis)[0]
    at = ops.arange(n, dtype=ms.int64)
    edge = ops.ones(values.shape[:-1] + (1,), ms.bool_)
    change = values[..., 1:] != values[..., :-1]
    first = ops.cummax(ops.where(ops.cat((edge, change), axis), at, 0), axis)[0]
    last = ops.flip(ops.cummin(ops.flip(ops.where(ops.cat((change, edge), axis), at, n - 1), (-1,)), axis)[0], (-1,))
    length = last - first
    chosen = ops.amin(ops.where(length == ops.amax(length, -1, True), at, n), -1, True)
    value = ops.gather_elements(values, axis, chosen)
    index = ops.amax(ops.where(x == value, at, -1), -1, True)
    if keepdim:
        return _torch_mode_result(ops.moveaxis(value, -1, dim), ops.moveaxis(index, -1, dim))
    return _torch_mode_result(value.squeeze(-1), index.squeeze(-1))


_torch_mode_result = __import__("collections").namedtuple("_torch_mode_result", 'values indices')


def _torch_frexp(input):
    """torch.frexp: input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1 (int32
    exponent); zeros, infinities and NaN keep themselves with exponent 0. Read off the
    bits (MindSpore's CPU arithmetic may flush subnormals to zero): a subnormal is its
    integer significand, an exact normal float, times a fixed power of two."""
    ints, bits, bias = {ms.float16: (ms.int16, 10, 15), ms.float32: (ms.int32, 23, 127),
                        ms.float64: (ms.int64, 52, 1023)}[input.dtype]
    top = 2 * bias + 1  # the exponent field of infinities and NaN
    raw = input.view(ints)
    field = ops.bitwise_and(ops.bitwise_right_shift(raw, bits), top)
    fraction = ops.bitwise_and(raw, (1 << bits) - 1)
    subnormal = field == 0
    normal = ops.where(subnormal, fraction.astype(input.dtype), ops.abs(input)).view(ints)
    exponent = ops.bitwise_and(ops.bitwise_right_shift(normal, bits), top) - (bias - 1)
    exponent = exponent + ops.where(subnormal, 1 - bias - bits, 0).astype(ints)
    mantissa = ops.bitwise_or(ops.bitwise_and(normal, (1 << bits) - 1), (bias - 1) << bits).view(input.dtype)
    mantissa = ops.where(raw < 0, -mantissa, mantissa)
    kept = (field == top) | (subnormal & (fraction == 0))
    return _torch_frexp_result(ops.where(kept, input, mantissa),
                         ops.where(kept, 0, exponent).astype(ms.int32))


_torch_frexp_result = __import__("collections").namedtuple("_torch_frexp_result", 'mantissa exponent')


def _torch_renorm(input, p, dim, maxnorm):
    """torch.renorm: ops.renorm wants a float maxnorm."""
    return ops.renorm(input, p, dim, float(maxnorm))


def _torch_vdot(input, other):
    """torch.vdot: the dot product of two 1-D tensors, the first conjugated."""
    if input.is_complex():
        input = ops.conj(input)
    return (input * other).sum()


def _torch_unflatten(input, dim, sizes):
    """torch.unflatten: dimension dim reshaped to sizes."""
    dim = dim % input.ndim
    return input.reshape(input.shape[:dim] + tuple(sizes) + input.shape[dim + 1:])


def _torch_corrcoef(input):
    """torch.corrcoef: the covariance matrix over the products of standard deviations,
    clipped to [-1, 1] (torch's own order of operations)."""
    c = ops.cov(input)
    if c.ndim == 0:
        return c / c
    std = ops.sqrt(ops.diagonal(c))
    c = c / ops.expand_dims(std, 1)
    c = c / ops.expand_dims(std, 0)
    return ops.clamp(c, -1, 1)


def _torch_isin(elements, test_elements, assume_unique=False, invert=False):
    """torch.isin: whether each element is among test_elements (either may be a number)."""
    if isinstance(test_elements, ms.Tensor):
        elements = _torch_number(elements, test_elements)
    elif isinstance(elements, ms.Tensor):
        test_elements = _torch_number(test_elements, elements)
    elements = elements if isinstance(elements, ms.Tensor) else ms.Tensor(elements)
    tests = test_elements if isinstance(test_elements, ms.Tensor) else ms.Tensor(test_elements)
    found = (ops.expand_dims(elements, -1) == tests.reshape(-1)).any(-1)
    return ops.logical_not(found) if invert else found


def _torch_cumulative_trapezoid(y, x=None, dx=None, dim=-1):
    """torch.cumulative_trapezoid: running trapezoid-rule integrals of y along dim, with
    sample points x (1-D or y's shape) or a constant spacing dx (default 1)."""
    y = ops.moveaxis(y, dim, -1)
    if x is not None:
        x = ops.moveaxis(x, dim, -1) if x.ndim > 1 else x
        dx = x[..., 1:] - x[..., :-1]
    elif dx is None:
        dx = 1
    dx = _torch_number(dx, y)
    return ops.moveaxis(ops.cumsum(dx * (y[..., 1:] + y[..., :-1]), -1) / 2, -1, dim)


def _torch_rsub(input, other, alpha=1):
    """torch.rsub: other - alpha * input."""
    if alpha != 1:
        input = input * _torch_number(alpha, input)
    return ops.sub(_torch_number(other, input), input)


def _torch_scalar_tensor(s, dtype=None):
    """torch.scalar_tensor: a 0-d tensor, float32 unless dtype says otherwise."""
    return ms.Tensor(s, ms.float32 if dtype is None else dtype)


def _torch_broadcast_tensors(*tensors):
    """torch.broadcast_tensors: every tensor broadcast to their common shape."""
    shape = _torch_broadcast_shapes(*(t.shape for t in tensors))
    return tuple(ops.broadcast_to(t, shape) for t in tensors)


def _torch_bitwise_not(input):
    """torch.bitwise_not: ops.invert has no bool kernel; on bools it is logical not."""
    return ops.logical_not(input) if input.dtype == ms.bool_ else ops.invert(input)


def _torch_new_tensor(input, data, dtype=None):
    """Tensor.new_tensor: a new tensor of data, of input's dtype unless dtype says otherwise."""
    dtype = input.dtype if dtype is None else dtype
    if isinstance(data, ms.Tensor):
        return ops.cast(data, dtype).copy()
    return ms.Tensor(data, dtype)


def _torch_new(*args, input):
    """Tensor.new, torch's legacy constructor, in input's dtype: ``x.new(2, 3)`` and
    ``x.new(size)`` a tensor of that size (zeros: MindSpore has none uninitialised; a tuple
    of ints is a size, as the torch.Size a converted ``.shape`` stands for), ``x.new(data)``
    the data (a list, a tensor: a copy), ``x.new()`` an empty one."""
    if not args:
        return ops.zeros((0,), input.dtype)
    if len(args) == 1 and not isinstance(args[0], int):
        if isinstance(args[0], tuple) and all(isinstance(n, int) for n in args[0]):
            return ops.zeros(args[0], input.dtype)
        return _torch_new_tensor(input, args[0])
    return ops.zeros(args, input.dtype)


def _torch_sum_to_size(*size, input):
    """Tensor.sum_to_size: input summed over the dimensions that broadcast to size."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = tuple(size[0])
    lead = input.ndim - len(size)
    axes = tuple(range(lead)) + tuple(lead + k for k, n in enumerate(size) if n == 1 and input.shape[lead + k] != 1)
    out = input.sum(axis=axes, keepdims=True) if axes else input
    return out.reshape(size)


def _torch_unfold(input, dimension, size, step):
    """Tensor.unfold: the windows of size along dimension, step apart, as a new last
    dimension (dimension keeps the window count)."""
    x = ops.moveaxis(input, dimension, -1)
    count = (x.shape[-1] - size) // step + 1
    starts = ops.arange(count, dtype=ms.int64).reshape(-1, 1) * step
    taken = ops.gather(x, (starts + ops.arange(size, dtype=ms.int64)).reshape(-1), x.ndim - 1)
    windows = taken.reshape(x.shape[:-1] + (count, size))
    return ops.moveaxis(windows, -2, dimension % input.ndim)


def _torch_quantile(input, q, dim=None, keepdim=False, interpolation="linear", ignore_nan=False):
    """torch.quantile (nanquantile: ignore_nan): sorted values along dim (all elements when
    dim is None) read at rank q * (count - 1), interpolated as torch does; a q tensor of
    several quantiles gives them along a new first dimension."""
    if dim is None:
        x = input.reshape(-1)
        shape = (1,) * input.ndim if keepdim else ()
    else:
        dim = dim % input.ndim
        x = ops.moveaxis(input, dim, -1)
        shape = input.shape[:dim] + ((1,) if keepdim else ()) + input.shape[dim + 1:]
    qs = q if isinstance(q, ms.Tensor) else ms.Tensor(q, input.dtype)
    single = qs.ndim == 0
    qs = qs.astype(input.dtype).reshape(-1)
    values = _torch_sort_nan_last(x, x.ndim - 1)[0]
    nan = ops.isnan(values)
    count = x.shape[-1] - ops.sum(nan.astype(ms.int64), -1, True)
    if ignore_nan:
        ranks = qs * (count - 1).astype(input.dtype)
        ranks = ops.where(ranks < 0, ops.zeros_like(ranks), ranks)
    else:
        last = values.shape[-1] - 1
        ranks = ops.where(ops.any(nan, -1, True), ops.full_like(qs, last), qs * last)
    if interpolation == "lower":
        ranks = ops.floor(ranks)
    elif interpolation == "higher":
        ranks = ops.ceil(ranks)
    elif interpolation == "nearest":
        ranks = ops.round(ranks)
    axis = values.ndim - 1
    below = ranks.astype(ms.int64)
    out = ops.gather_elements(values, axis, below)
    if interpolation in ("linear", "midpoint"):
        weight = ops.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below.astype(ranks.dtype)
        above = ops.gather_elements(values, axis, ops.ceil(ranks).astype(ms.int64))
        # torch's lerp: from the nearer end
        out = ops.where(weight < 0.5, out + weight * (above - out), above - (above - out) * (1 - weight))
    out = ops.moveaxis(out, -1, 0).reshape((qs.shape[0],) + tuple(shape))
    return out[0] if single else out


def _torch_nanquantile(input, q, dim=None, keepdim=False, interpolation="linear"):
    """torch.nanquantile: torch.quantile over the values that are not NaN."""
    return _torch_quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


def _torch_bin_edges(x, bins, low=None, high=None):
    """torch.histogram's edges of the 1-D x: a tensor of bins as given, else bins + 1
    evenly spaced over [low, high] (default: x's min to max, widened by 0.5 when equal),
    computed in x's dtype as torch.linspace does (a Python float would be float32)."""
    if not isinstance(bins, int):
        return bins.astype(x.dtype)
    if low is None:
        low, high = float(x.min()), float(x.max())
    if low == high:
        low, high = low - 0.5, high + 0.5
    low, high = ms.Tensor(low, x.dtype), ms.Tensor(high, x.dtype)
    step = (high - low) / bins
    at = ops.arange(bins + 1).astype(x.dtype)
    return ops.where(at < (bins + 1) // 2, low + step * at, high - step * (bins - at))


def _torch_bin_index(x, edges):
    """The bin of each element of x (an element falls in the bin whose left edge it
    reaches, the last bin also holds the right edge) and whether it is inside the edges."""
    index = ops.clamp(ops.searchsorted(edges, x, right=True) - 1, 0, edges.shape[0] - 2)
    return index.astype(ms.int64), (x >= edges[0]) & (x <= edges[-1])


def _torch_histogram(input, bins=100, range=None, weight=None, density=False):
    """torch.histogram: (hist, bin_edges); elements outside the edges are not counted."""
    x = input.reshape(-1)
    edges = _torch_bin_edges(x, bins, *(range or (None, None)))
    index, inside = _torch_bin_index(x, edges)
    weights = ops.ones_like(x) if weight is None else weight.reshape(-1).astype(input.dtype)
    weights = ops.where(inside, weights, ops.zeros_like(weights))
    hist = ops.tensor_scatter_add(ops.zeros(edges.shape[0] - 1, input.dtype), index.reshape(-1, 1), weights)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return _torch_histogram_result(hist, edges)


_torch_histogram_result = __import__("collections").namedtuple("_torch_histogram_result", 'hist bin_edges')


def _torch_histogramdd(input, bins, range=None, weight=None, density=False):
    """torch.histogramdd: the points of input (its last dimension the coordinates) counted
    in a grid of bins, each dimension binned as torch.histogram does; (hist, bin_edges)."""
    dims = input.shape[-1]
    points = input.reshape(-1, dims)
    bins = [bins] * dims if isinstance(bins, int) else list(bins)
    flat = ops.zeros(points.shape[0], ms.int64)
    inside = ops.ones(points.shape[0], ms.bool_)
    edges = []
    for d, count in enumerate(bins):
        x = points[:, d]
        span = (None, None) if range is None else (range[2 * d], range[2 * d + 1])
        edges.append(_torch_bin_edges(x, count, *span))
        index, within = _torch_bin_index(x, edges[d])
        flat = flat * (edges[d].shape[0] - 1) + index
        inside = inside & within
    shape = tuple(e.shape[0] - 1 for e in edges)
    weights = ops.ones(points.shape[0], input.dtype) if weight is None else weight.reshape(-1).astype(input.dtype)
    weights = ops.where(inside, weights, ops.zeros_like(weights))
    size = 1
    for n in shape:
        size *= n
    hist = ops.tensor_scatter_add(ops.zeros(size, input.dtype), flat.reshape(-1, 1), weights).reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            width = [1] * dims
            width[d] = -1
            hist = hist / (e[1:] - e[:-1]).reshape(width)
    return _torch_histogramdd_result(hist, tuple(edges))


_torch_histogramdd_result = __import__("collections").namedtuple("_torch_histogramdd_result", 'hist bin_edges')


def _torch_promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both cast to without leaving their kind; of
    two kinds (bool < integer < float < complex), the higher one's dtype."""
    order = [ms.bool_, ms.uint8, ms.int8, ms.int16, ms.int32, ms.int64, ms.float16, ms.bfloat16,
             ms.float32, ms.float64, ms.complex64, ms.complex128]
    low, high = sorted((type1, type2), key=order.index)
    if (low, high) == (ms.uint8, ms.int8):
        return ms.int16
    if (low, high) == (ms.float16, ms.bfloat16):
        return ms.float32
    if (low, high) == (ms.float64, ms.complex64):
        return ms.complex128
    return high


def _torch_can_cast(from_, to):
    """torch.can_cast: no cast to a lower kind (bool < integer < float < complex)."""
    def kind(t):
        if t == ms.bool_:
            return 0
        if t in (ms.complex64, ms.complex128):
            return 3
        return 2 if t in (ms.float16, ms.bfloat16, ms.float32, ms.float64) else 1
    return kind(from_) <= kind(to)


def _torch_new_empty_strided(input, size, stride, dtype=None):
    """Tensor.new_empty_strided: a tensor of size whose values are not set (zeros here),
    of input's dtype unless dtype says otherwise; MindSpore tensors keep no strides."""
    return ops.zeros(tuple(size), input.dtype if dtype is None else dtype)


def _torch_empty_strided(size, stride, dtype=None):
    """torch.empty_strided: a float32 (or dtype) tensor of size whose values are not set
    (zeros here); MindSpore tensors keep no strides."""
    return ops.zeros(tuple(size), ms.float32 if dtype is None else dtype)


def _torch_result_type(tensor, other):
    """torch.result_type: dtypes promoted among tensors with dimensions, among 0-d
    tensors and among Python numbers (bool, int64, float32, complex64), then combined:
    a later group counts only where its kind (bool < integer < float < complex) is higher."""
    floats = (ms.float16, ms.bfloat16, ms.float32, ms.float64)
    complexes = (ms.complex64, ms.complex128)
    groups = [None, None, None]  # tensors with dimensions, 0-d tensors, numbers
    for x in (tensor, other):
        if isinstance(x, ms.Tensor):
            group, dtype = (0 if x.ndim else 1), x.dtype
        else:
            group = 2
            dtype = (ms.bool_ if isinstance(x, bool) else ms.int64 if isinstance(x, int)
                     else ms.float32 if isinstance(x, float) else ms.complex64)
        groups[group] = dtype if groups[group] is None else _torch_promote_types(groups[group], dtype)

    def combine(higher, lower):
        if higher is None or lower is None:
            return lower if higher is None else higher
        if higher in complexes:
            return higher
        if lower in complexes:
            return {ms.float32: ms.complex64, ms.float64: ms.complex128}[higher] if higher in floats else lower
        if higher in floats:
            return higher
        if higher == ms.bool_ or lower in floats:
            return _torch_promote_types(higher, lower)
        return higher

    return combine(groups[0], combine(groups[1], groups[2]))


def _torch_gradient(input, spacing=1, dim=None, edge_order=1):
    """torch.gradient: central differences inside, one-sided ones (first or second order)
    at the ends, along each dim; spacing is one number, a number per dim, or the sample
    coordinates per dim (1-D tensors). torch's formulas, in its order of operations."""
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if isinstance(spacing, (int, float)):
        spacing = [spacing] * len(dims)

    def part(d, start, stop=None):
        at = [slice(None)] * input.ndim
        at[d] = slice(start, stop)
        return input[tuple(at)]

    out = []
    for d, h in zip(dims, spacing):
        d = d % input.ndim
        if isinstance(h, ms.Tensor) and h.ndim == 1:
            dx = h[1:] - h[:-1]
            shape = [1] * input.ndim
            shape[d] = -1
            dx1, dx2 = dx[:-1], dx[1:]
            a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
            b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
            c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
            center = a * part(d, 0, -2) + b * part(d, 1, -1) + c * part(d, 2)
            if edge_order == 1:
                first = (part(d, 1, 2) - part(d, 0, 1)) / dx[0]
                last = (part(d, -1) - part(d, -2, -1)) / dx[-1]
            else:
                a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
                b = (dx[0] + dx[1]) / (dx[0] * dx[1])
                c = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
                first = a * part(d, 0, 1) + b * part(d, 1, 2) + c * part(d, 2, 3)
                a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
                b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
                c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
                last = a * part(d, -3, -2) + b * part(d, -2, -1) + c * part(d, -1)
        else:
            h = _torch_number(h, input)
            center = (part(d, 2) - part(d, 0, -2)) / h / 2
            if edge_order == 1:
                first = (part(d, 1, 2) - part(d, 0, 1)) / h
                last = (part(d, -1) - part(d, -2, -1)) / h
            else:
                first = (-1.5 * part(d, 0, 1) + 2 * part(d, 1, 2) - 0.5 * part(d, 2, 3)) / h
                last = (0.5 * part(d, -3, -2) - 2 * part(d, -2, -1) + 1.5 * part(d, -1)) / h
        out.append(ops.cat((first, center, last), d))
    return tuple(out)


def _torch_segment_reduce(data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """torch.segment_reduce: consecutive segments of data along axis (given by 1-D lengths
    or offsets) reduced by sum, mean, max, min or prod; initial takes part in each
    reduction (the mean still divides by the length) and is an empty segment's value
    (else 0, NaN, -inf, inf, 1); NaN propagates through max and min."""
    if lengths is None:
        lengths = offsets[1:] - offsets[:-1]
    x = ops.moveaxis(data, axis, 0)
    ends = ops.cumsum(lengths.astype(ms.int64), 0)
    index = ops.searchsorted(ends, ops.arange(x.shape[0], dtype=ms.int64), right=True).reshape(-1, 1)
    shape = (lengths.shape[0],) + x.shape[1:]
    empty = {"sum": 0.0, "mean": float("nan"), "max": float("-inf"), "min": float("inf"), "prod": 1.0}[reduce]
    start = 0.0 if reduce == "mean" and initial is None else empty if initial is None else initial
    scatter = {"sum": ops.tensor_scatter_add, "mean": ops.tensor_scatter_add, "max": ops.tensor_scatter_max,
               "min": ops.tensor_scatter_min, "prod": ops.tensor_scatter_mul}[reduce]
    out = scatter(ops.full(shape, start, dtype=x.dtype), index, x)
    if reduce in ("max", "min"):
        nan = ops.tensor_scatter_add(ops.zeros(shape, ms.int32), index, ops.isnan(x).astype(ms.int32))
        out = ops.where(nan > 0, ops.full_like(out, float("nan")), out)
    if reduce == "mean":
        size = lengths.reshape((-1,) + (1,) * (x.ndim - 1)).astype(x.dtype)
        out = ops.where(size > 0, out / size, ops.full_like(out, empty if initial is None else initial))
    return ops.moveaxis(out, 0, axis)


def _torch_via_float(op, via=None, **kwargs):
    """``op(**kwargs)`` where torch computes an integer or bool tensor in its own dtype (floor,
    ceil, nan_to_num, relu6, ger, isposinf, ...) and MindSpore's CPU kernel takes floats only:
    the integer tensors cast in to ``via`` (float64, exact for integers below 2**53, unless the
    kernel takes no float64) and a floating result cast back to the first tensor's dtype (a
    bool result kept). Floating and complex tensors go straight to ``op``."""
    tensors = [v for v in kwargs.values() if isinstance(v, ms.Tensor)]
    if all(t.is_floating_point() or t.is_complex() for t in tensors):
        return op(**kwargs)
    via = ms.float64 if via is None else via
    result = op(**{k: v.astype(via) if isinstance(v, ms.Tensor) and not v.is_floating_point() else v
                   for k, v in kwargs.items()})
    return result.astype(tensors[0].dtype) if result.is_floating_point() else result


def _torch_bool_via_float(op, **kwargs):
    """``op(**kwargs)`` where torch computes bool tensors (sort, cummax, amax, sign, minimum,
    diagflat, repeat_interleave, ...) and MindSpore's CPU kernel has none for bool: the bool
    tensors cast in as float32 (0 and 1, exact) and, when every tensor was bool, the floating
    results cast back to bool as torch returns them (indices kept). Beside a tensor of another
    dtype a bool one takes that dtype, as torch promotes it. Other calls go straight to ``op``.
    Written as GRAPH mode compiles it (lists, no generators)."""
    tensors = [v for v in kwargs.values() if isinstance(v, ms.Tensor)]
    bools = [t for t in tensors if t.dtype == ms.bool_]
    if not bools:
        return op(**kwargs)
    others = [t for t in tensors if t.dtype != ms.bool_]
    via = others[0].dtype if others else ms.float32
    result = op(**{k: v.astype(via) if isinstance(v, ms.Tensor) and v.dtype == ms.bool_ else v
                   for k, v in kwargs.items()})
    if others:
        return result
    if isinstance(result, tuple):
        return tuple([r.astype(ms.bool_) if r.is_floating_point() else r for r in result])
    return result.astype(ms.bool_) if result.is_floating_point() else result


def _torch_bool_as_int64(op, **kwargs):
    """``op(**kwargs)`` where torch promotes a bool tensor to int64 (clamped to numbers,
    squared) and MindSpore's CPU kernel has no bool: the bool tensors cast in as int64,
    whose result MindSpore types as torch does (int64; float32 clamped to a float)."""
    return op(**{k: v.astype(ms.int64) if isinstance(v, ms.Tensor) and v.dtype == ms.bool_ else v
                 for k, v in kwargs.items()})


def _torch_requires_grad_(input, requires_grad=True):
    """Tensor.requires_grad_: a Parameter's flag set (a frozen one is left out of
    MindSpore's gradients and updates); the tensor returned as torch returns it (MindSpore's
    requires_grad_ returns None). A plain tensor records no graph: nothing to mark."""
    if isinstance(input, ms.Parameter):
        input.requires_grad = requires_grad
    return input


def _torch_coefficient(tensor, value):
    """A scalar factor (beta, alpha, value) as torch applies it with ``tensor``: an integer
    or bool tensor truncates a float factor to an integer (``addmm(c, a, b, beta=0.5)`` on
    int64 tensors scales ``c`` by 0); a floating tensor takes it as it is."""
    if isinstance(value, float) and not (tensor.is_floating_point() or tensor.is_complex()):
        return int(value)
    return value


def _torch_float_input(input):
    """An integer or bool tensor as float32, torch's default dtype, which torch's float-only
    math (log, exp, sin, sigmoid, erf, ...) computes in; MindSpore's CPU kernels take floats only.
    A float or complex tensor passes as it is."""
    if input.is_floating_point() or input.is_complex():
        return input
    return input.astype(ms.float32)
