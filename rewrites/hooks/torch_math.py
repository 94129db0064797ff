"""Hooks of tables/torch_math.toml: torch's math and reduction functions (their Tensor
methods in tensor_math.toml use the same hooks).

Compositions are functions emitted beside the code (``run_time_helper`` of
torch_indexing.py, which this module adds its ``HELPERS`` to). Results torch gives as named
tuples (``torch.kthvalue(x, 2).values``) are named tuples of the same fields here.
"""
from __future__ import annotations

import libcst as cst

from .registry import hook
from .torch_indexing import HELPERS, NEEDS, run_time_helper  # noqa: F401


@hook(not_a_value="converted only where it is called (into its argument)")
def same_tensor(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.resolve_conj(x)`` -> ``x``: MindSpore has no lazy conjugate or negative bit
    (its conj and neg compute the values), so resolving them is the tensor itself."""
    return receiver if receiver is not None else args["input"]


# a named tuple type of torch's fields, defined beside the helper returning it
def _returns(fields: str) -> str:
    return f'\n\n{{name}}_result = __import__("collections").namedtuple("{{name}}_result", {fields!r})\n'


HELPERS["aminmax"] = '''
def {name}(input, dim=None, keepdim=False):
    """torch.aminmax: (min, max) over dim, or over all elements when dim is None."""
    if input.dtype == MS.bool_:  # no bool kernel
        return {name}_result(*(OPS.cast(t, MS.bool_) for t in {name}(input.astype(MS.uint8), dim, keepdim)))
    if dim is None:
        low, high = OPS.aminmax(input.reshape(-1), axis=0)
        if keepdim:
            low, high = low.reshape((1,) * input.ndim), high.reshape((1,) * input.ndim)
        return {name}_result(low, high)
    return {name}_result(*OPS.aminmax(input, axis=dim, keepdims=keepdim))
''' + _returns("min max")

HELPERS["sort_nan_last"] = '''
def {name}(x, axis):
    """x sorted along axis, NaN last as torch sorts them (MindSpore's CPU sort leaves a
    NaN where it finds it), and the int64 indices: NaN sorted as infinity, then the
    places of the NaN moved behind the real infinities."""
    nan = OPS.isnan(x).astype(MS.int64)
    order = OPS.sort(OPS.where(nan > 0, OPS.full_like(x, float("inf")), x), axis=axis)[1].astype(MS.int64)
    shape = [1] * x.ndim
    shape[axis] = -1
    key = OPS.arange(x.shape[axis], dtype=MS.int64).reshape(shape) + OPS.gather_elements(nan, axis, order) * x.shape[axis]
    order = OPS.gather_elements(order, axis, OPS.sort(key, axis=axis)[1].astype(MS.int64))
    return OPS.gather_elements(x, axis, order), order
'''

HELPERS["kthvalue"] = '''
def {name}(input, k, dim=-1, keepdim=False):
    """torch.kthvalue: the k-th smallest value along dim (NaN the largest) and its index."""
    dim = dim % input.ndim
    values, indices = _torch_sort_nan_last(input, dim)
    at = [slice(None)] * input.ndim
    at[dim] = slice(k - 1, k) if keepdim else k - 1
    return {name}_result(values[tuple(at)], indices[tuple(at)])
''' + _returns("values indices")
NEEDS["kthvalue"] = ("sort_nan_last",)

HELPERS["nanmedian"] = '''
def {name}(input, dim=None, keepdim=False):
    """torch.nanmedian: the lower median ignoring NaN; over dim a (values, indices) pair."""
    if dim is None:
        return OPS.nanmedian(input.reshape(-1), axis=0)[0]
    return {name}_result(*OPS.nanmedian(input, axis=dim, keepdims=keepdim))
''' + _returns("values indices")

HELPERS["mode"] = '''
def {name}(input, dim=-1, keepdim=False):
    """torch.mode: the most frequent value along dim (the smallest of equally frequent
    ones) and the index of its last occurrence: runs of equal values in sorted order."""
    x = OPS.moveaxis(input, dim, -1)
    axis, n = x.ndim - 1, x.shape[-1]
    values = _torch_sort_nan_last(x, axis)[0]
    at = OPS.arange(n, dtype=MS.int64)
    edge = OPS.ones(values.shape[:-1] + (1,), MS.bool_)
    change = values[..., 1:] != values[..., :-1]
    first = OPS.cummax(OPS.where(OPS.cat((edge, change), axis), at, 0), axis)[0]
    last = OPS.flip(OPS.cummin(OPS.flip(OPS.where(OPS.cat((change, edge), axis), at, n - 1), (-1,)), axis)[0], (-1,))
    length = last - first
    chosen = OPS.amin(OPS.where(length == OPS.amax(length, -1, True), at, n), -1, True)
    value = OPS.gather_elements(values, axis, chosen)
    index = OPS.amax(OPS.where(x == value, at, -1), -1, True)
    if keepdim:
        return {name}_result(OPS.moveaxis(value, -1, dim), OPS.moveaxis(index, -1, dim))
    return {name}_result(value.squeeze(-1), index.squeeze(-1))
''' + _returns("values indices")
NEEDS["mode"] = ("sort_nan_last",)

HELPERS["frexp"] = '''
def {name}(input):
    """torch.frexp: input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1 (int32
    exponent); zeros, infinities and NaN keep themselves with exponent 0. Read off the
    bits (MindSpore's CPU arithmetic may flush subnormals to zero): a subnormal is its
    integer significand, an exact normal float, times a fixed power of two."""
    ints, bits, bias = {MS.float16: (MS.int16, 10, 15), MS.float32: (MS.int32, 23, 127),
                        MS.float64: (MS.int64, 52, 1023)}[input.dtype]
    top = 2 * bias + 1  # the exponent field of infinities and NaN
    raw = input.view(ints)
    field = OPS.bitwise_and(OPS.bitwise_right_shift(raw, bits), top)
    fraction = OPS.bitwise_and(raw, (1 << bits) - 1)
    subnormal = field == 0
    normal = OPS.where(subnormal, fraction.astype(input.dtype), OPS.abs(input)).view(ints)
    exponent = OPS.bitwise_and(OPS.bitwise_right_shift(normal, bits), top) - (bias - 1)
    exponent = exponent + OPS.where(subnormal, 1 - bias - bits, 0).astype(ints)
    mantissa = OPS.bitwise_or(OPS.bitwise_and(normal, (1 << bits) - 1), (bias - 1) << bits).view(input.dtype)
    mantissa = OPS.where(raw < 0, -mantissa, mantissa)
    kept = (field == top) | (subnormal & (fraction == 0))
    return {name}_result(OPS.where(kept, input, mantissa),
                         OPS.where(kept, 0, exponent).astype(MS.int32))
''' + _returns("mantissa exponent")

HELPERS["renorm"] = '''
def {name}(input, p, dim, maxnorm):
    """torch.renorm: ops.renorm wants a float maxnorm."""
    return OPS.renorm(input, p, dim, float(maxnorm))
'''

HELPERS["vdot"] = '''
def {name}(input, other):
    """torch.vdot: the dot product of two 1-D tensors, the first conjugated."""
    if input.is_complex():
        input = OPS.conj(input)
    return (input * other).sum()
'''

HELPERS["unflatten"] = '''
def {name}(input, dim, sizes):
    """torch.unflatten: dimension dim reshaped to sizes."""
    dim = dim % input.ndim
    return input.reshape(input.shape[:dim] + tuple(sizes) + input.shape[dim + 1:])
'''

HELPERS["corrcoef"] = '''
def {name}(input):
    """torch.corrcoef: the covariance matrix over the products of standard deviations,
    clipped to [-1, 1] (torch's own order of operations)."""
    c = OPS.cov(input)
    if c.ndim == 0:
        return c / c
    std = OPS.sqrt(OPS.diagonal(c))
    c = c / OPS.expand_dims(std, 1)
    c = c / OPS.expand_dims(std, 0)
    return OPS.clamp(c, -1, 1)
'''

HELPERS["isin"] = '''
def {name}(elements, test_elements, assume_unique=False, invert=False):
    """torch.isin: whether each element is among test_elements (either may be a number)."""
    if isinstance(test_elements, MS.Tensor):
        elements = _torch_number(elements, test_elements)
    elif isinstance(elements, MS.Tensor):
        test_elements = _torch_number(test_elements, elements)
    elements = elements if isinstance(elements, MS.Tensor) else MS.Tensor(elements)
    tests = test_elements if isinstance(test_elements, MS.Tensor) else MS.Tensor(test_elements)
    found = (OPS.expand_dims(elements, -1) == tests.reshape(-1)).any(-1)
    return OPS.logical_not(found) if invert else found
'''
NEEDS["isin"] = ("number",)

HELPERS["cumulative_trapezoid"] = '''
def {name}(y, x=None, dx=None, dim=-1):
    """torch.cumulative_trapezoid: running trapezoid-rule integrals of y along dim, with
    sample points x (1-D or y's shape) or a constant spacing dx (default 1)."""
    y = OPS.moveaxis(y, dim, -1)
    if x is not None:
        x = OPS.moveaxis(x, dim, -1) if x.ndim > 1 else x
        dx = x[..., 1:] - x[..., :-1]
    elif dx is None:
        dx = 1
    dx = _torch_number(dx, y)
    return OPS.moveaxis(OPS.cumsum(dx * (y[..., 1:] + y[..., :-1]), -1) / 2, -1, dim)
'''
NEEDS["cumulative_trapezoid"] = ("number",)

HELPERS["rsub"] = '''
def {name}(input, other, alpha=1):
    """torch.rsub: other - alpha * input."""
    if alpha != 1:
        input = input * _torch_number(alpha, input)
    return OPS.sub(_torch_number(other, input), input)
'''
NEEDS["rsub"] = ("number",)

HELPERS["scalar_tensor"] = '''
def {name}(s, dtype=None):
    """torch.scalar_tensor: a 0-d tensor, float32 unless dtype says otherwise."""
    return MS.Tensor(s, MS.float32 if dtype is None else dtype)
'''

HELPERS["broadcast_tensors"] = '''
def {name}(*tensors):
    """torch.broadcast_tensors: every tensor broadcast to their common shape."""
    shape = _torch_broadcast_shapes(*(t.shape for t in tensors))
    return tuple(OPS.broadcast_to(t, shape) for t in tensors)
'''
NEEDS["broadcast_tensors"] = ("broadcast_shapes",)

HELPERS["bitwise_not"] = '''
def {name}(input):
    """torch.bitwise_not: ops.invert has no bool kernel; on bools it is logical not."""
    return OPS.logical_not(input) if input.dtype == MS.bool_ else OPS.invert(input)
'''

HELPERS["new_tensor"] = '''
def {name}(input, data, dtype=None):
    """Tensor.new_tensor: a new tensor of data, of input's dtype unless dtype says otherwise."""
    dtype = input.dtype if dtype is None else dtype
    if isinstance(data, MS.Tensor):
        return OPS.cast(data, dtype).copy()
    return MS.Tensor(data, dtype)
'''

HELPERS["sum_to_size"] = '''
def {name}(*size, input):
    """Tensor.sum_to_size: input summed over the dimensions that broadcast to size."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = tuple(size[0])
    lead = input.ndim - len(size)
    axes = tuple(range(lead)) + tuple(lead + k for k, n in enumerate(size) if n == 1 and input.shape[lead + k] != 1)
    out = input.sum(axis=axes, keepdims=True) if axes else input
    return out.reshape(size)
'''

HELPERS["unfold"] = '''
def {name}(input, dimension, size, step):
    """Tensor.unfold: the windows of size along dimension, step apart, as a new last
    dimension (dimension keeps the window count)."""
    x = OPS.moveaxis(input, dimension, -1)
    count = (x.shape[-1] - size) // step + 1
    starts = OPS.arange(count, dtype=MS.int64).reshape(-1, 1) * step
    taken = OPS.gather(x, (starts + OPS.arange(size, dtype=MS.int64)).reshape(-1), x.ndim - 1)
    windows = taken.reshape(x.shape[:-1] + (count, size))
    return OPS.moveaxis(windows, -2, dimension % input.ndim)
'''

HELPERS["quantile"] = '''
def {name}(input, q, dim=None, keepdim=False, interpolation="linear", ignore_nan=False):
    """torch.quantile (nanquantile: ignore_nan): sorted values along dim (all elements when
    dim is None) read at rank q * (count - 1), interpolated as torch does; a q tensor of
    several quantiles gives them along a new first dimension."""
    if dim is None:
        x = input.reshape(-1)
        shape = (1,) * input.ndim if keepdim else ()
    else:
        dim = dim % input.ndim
        x = OPS.moveaxis(input, dim, -1)
        shape = input.shape[:dim] + ((1,) if keepdim else ()) + input.shape[dim + 1:]
    qs = q if isinstance(q, MS.Tensor) else MS.Tensor(q, input.dtype)
    single = qs.ndim == 0
    qs = qs.astype(input.dtype).reshape(-1)
    values = _torch_sort_nan_last(x, x.ndim - 1)[0]
    nan = OPS.isnan(values)
    count = x.shape[-1] - OPS.sum(nan.astype(MS.int64), -1, True)
    if ignore_nan:
        ranks = qs * (count - 1).astype(input.dtype)
        ranks = OPS.where(ranks < 0, OPS.zeros_like(ranks), ranks)
    else:
        last = values.shape[-1] - 1
        ranks = OPS.where(OPS.any(nan, -1, True), OPS.full_like(qs, last), qs * last)
    if interpolation == "lower":
        ranks = OPS.floor(ranks)
    elif interpolation == "higher":
        ranks = OPS.ceil(ranks)
    elif interpolation == "nearest":
        ranks = OPS.round(ranks)
    axis = values.ndim - 1
    below = ranks.astype(MS.int64)
    out = OPS.gather_elements(values, axis, below)
    if interpolation in ("linear", "midpoint"):
        weight = OPS.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below.astype(ranks.dtype)
        above = OPS.gather_elements(values, axis, OPS.ceil(ranks).astype(MS.int64))
        # torch's lerp: from the nearer end
        out = OPS.where(weight < 0.5, out + weight * (above - out), above - (above - out) * (1 - weight))
    out = OPS.moveaxis(out, -1, 0).reshape((qs.shape[0],) + tuple(shape))
    return out[0] if single else out
'''
NEEDS["quantile"] = ("sort_nan_last",)

HELPERS["nanquantile"] = '''
def {name}(input, q, dim=None, keepdim=False, interpolation="linear"):
    """torch.nanquantile: torch.quantile over the values that are not NaN."""
    return _torch_quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)
'''
NEEDS["nanquantile"] = ("quantile",)

HELPERS["bin_edges"] = '''
def {name}(x, bins, low=None, high=None):
    """torch.histogram's edges of the 1-D x: a tensor of bins as given, else bins + 1
    evenly spaced over [low, high] (default: x's min to max, widened by 0.5 when equal),
    computed in x's dtype as torch.linspace does (a Python float would be float32)."""
    if not isinstance(bins, int):
        return bins.astype(x.dtype)
    if low is None:
        low, high = float(x.min()), float(x.max())
    if low == high:
        low, high = low - 0.5, high + 0.5
    low, high = MS.Tensor(low, x.dtype), MS.Tensor(high, x.dtype)
    step = (high - low) / bins
    at = OPS.arange(bins + 1).astype(x.dtype)
    return OPS.where(at < (bins + 1) // 2, low + step * at, high - step * (bins - at))
'''

HELPERS["bin_index"] = '''
def {name}(x, edges):
    """The bin of each element of x (an element falls in the bin whose left edge it
    reaches, the last bin also holds the right edge) and whether it is inside the edges."""
    index = OPS.clamp(OPS.searchsorted(edges, x, right=True) - 1, 0, edges.shape[0] - 2)
    return index.astype(MS.int64), (x >= edges[0]) & (x <= edges[-1])
'''

HELPERS["histogram"] = '''
def {name}(input, bins, range=None, weight=None, density=False):
    """torch.histogram: (hist, bin_edges); elements outside the edges are not counted."""
    x = input.reshape(-1)
    edges = _torch_bin_edges(x, bins, *(range or (None, None)))
    index, inside = _torch_bin_index(x, edges)
    weights = OPS.ones_like(x) if weight is None else weight.reshape(-1).astype(input.dtype)
    weights = OPS.where(inside, weights, OPS.zeros_like(weights))
    hist = OPS.tensor_scatter_add(OPS.zeros(edges.shape[0] - 1, input.dtype), index.reshape(-1, 1), weights)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return {name}_result(hist, edges)
''' + _returns("hist bin_edges")
NEEDS["histogram"] = ("bin_edges", "bin_index")

HELPERS["histogramdd"] = '''
def {name}(input, bins, range=None, weight=None, density=False):
    """torch.histogramdd: the points of input (its last dimension the coordinates) counted
    in a grid of bins, each dimension binned as torch.histogram does; (hist, bin_edges)."""
    dims = input.shape[-1]
    points = input.reshape(-1, dims)
    bins = [bins] * dims if isinstance(bins, int) else list(bins)
    flat = OPS.zeros(points.shape[0], MS.int64)
    inside = OPS.ones(points.shape[0], MS.bool_)
    edges = []
    for d, count in enumerate(bins):
        x = points[:, d]
        span = (None, None) if range is None else (range[2 * d], range[2 * d + 1])
        edges.append(_torch_bin_edges(x, count, *span))
        index, within = _torch_bin_index(x, edges[d])
        flat = flat * (edges[d].shape[0] - 1) + index
        inside = inside & within
    shape = tuple(e.shape[0] - 1 for e in edges)
    weights = OPS.ones(points.shape[0], input.dtype) if weight is None else weight.reshape(-1).astype(input.dtype)
    weights = OPS.where(inside, weights, OPS.zeros_like(weights))
    size = 1
    for n in shape:
        size *= n
    hist = OPS.tensor_scatter_add(OPS.zeros(size, input.dtype), flat.reshape(-1, 1), weights).reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            width = [1] * dims
            width[d] = -1
            hist = hist / (e[1:] - e[:-1]).reshape(width)
    return {name}_result(hist, tuple(edges))
''' + _returns("hist bin_edges")
NEEDS["histogramdd"] = ("bin_edges", "bin_index")

HELPERS["promote_types"] = '''
def {name}(type1, type2):
    """torch.promote_types: the smallest dtype both cast to without leaving their kind; of
    two kinds (bool < integer < float < complex), the higher one's dtype."""
    order = [MS.bool_, MS.uint8, MS.int8, MS.int16, MS.int32, MS.int64, MS.float16, MS.bfloat16,
             MS.float32, MS.float64, MS.complex64, MS.complex128]
    low, high = sorted((type1, type2), key=order.index)
    if (low, high) == (MS.uint8, MS.int8):
        return MS.int16
    if (low, high) == (MS.float16, MS.bfloat16):
        return MS.float32
    if (low, high) == (MS.float64, MS.complex64):
        return MS.complex128
    return high
'''

HELPERS["can_cast"] = '''
def {name}(from_, to):
    """torch.can_cast: no cast to a lower kind (bool < integer < float < complex)."""
    def kind(t):
        if t == MS.bool_:
            return 0
        if t in (MS.complex64, MS.complex128):
            return 3
        return 2 if t in (MS.float16, MS.bfloat16, MS.float32, MS.float64) else 1
    return kind(from_) <= kind(to)
'''

HELPERS["new_empty_strided"] = '''
def {name}(input, size, stride, dtype=None):
    """Tensor.new_empty_strided: a tensor of size whose values are not set (zeros here),
    of input's dtype unless dtype says otherwise; MindSpore tensors keep no strides."""
    return OPS.zeros(tuple(size), input.dtype if dtype is None else dtype)
'''

HELPERS["empty_strided"] = '''
def {name}(size, stride, dtype=None):
    """torch.empty_strided: a float32 (or dtype) tensor of size whose values are not set
    (zeros here); MindSpore tensors keep no strides."""
    return OPS.zeros(tuple(size), MS.float32 if dtype is None else dtype)
'''

HELPERS["result_type"] = '''
def {name}(tensor, other):
    """torch.result_type: dtypes promoted among tensors with dimensions, among 0-d
    tensors and among Python numbers (bool, int64, float32, complex64), then combined:
    a later group counts only where its kind (bool < integer < float < complex) is higher."""
    floats = (MS.float16, MS.bfloat16, MS.float32, MS.float64)
    complexes = (MS.complex64, MS.complex128)
    groups = [None, None, None]  # tensors with dimensions, 0-d tensors, numbers
    for x in (tensor, other):
        if isinstance(x, MS.Tensor):
            group, dtype = (0 if x.ndim else 1), x.dtype
        else:
            group = 2
            dtype = (MS.bool_ if isinstance(x, bool) else MS.int64 if isinstance(x, int)
                     else MS.float32 if isinstance(x, float) else MS.complex64)
        groups[group] = dtype if groups[group] is None else _torch_promote_types(groups[group], dtype)

    def combine(higher, lower):
        if higher is None or lower is None:
            return lower if higher is None else higher
        if higher in complexes:
            return higher
        if lower in complexes:
            return {MS.float32: MS.complex64, MS.float64: MS.complex128}[higher] if higher in floats else lower
        if higher in floats:
            return higher
        if higher == MS.bool_ or lower in floats:
            return _torch_promote_types(higher, lower)
        return higher

    return combine(groups[0], combine(groups[1], groups[2]))
'''
NEEDS["result_type"] = ("promote_types",)

HELPERS["gradient"] = '''
def {name}(input, spacing=1, dim=None, edge_order=1):
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
        if isinstance(h, MS.Tensor) and h.ndim == 1:
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
        out.append(OPS.cat((first, center, last), d))
    return tuple(out)
'''
NEEDS["gradient"] = ("number",)

HELPERS["segment_reduce"] = '''
def {name}(data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """torch.segment_reduce: consecutive segments of data along axis (given by 1-D lengths
    or offsets) reduced by sum, mean, max, min or prod; initial takes part in each
    reduction (the mean still divides by the length) and is an empty segment's value
    (else 0, NaN, -inf, inf, 1); NaN propagates through max and min."""
    if lengths is None:
        lengths = offsets[1:] - offsets[:-1]
    x = OPS.moveaxis(data, axis, 0)
    ends = OPS.cumsum(lengths.astype(MS.int64), 0)
    index = OPS.searchsorted(ends, OPS.arange(x.shape[0], dtype=MS.int64), right=True).reshape(-1, 1)
    shape = (lengths.shape[0],) + x.shape[1:]
    empty = {"sum": 0.0, "mean": float("nan"), "max": float("-inf"), "min": float("inf"), "prod": 1.0}[reduce]
    start = 0.0 if reduce == "mean" and initial is None else empty if initial is None else initial
    scatter = {"sum": OPS.tensor_scatter_add, "mean": OPS.tensor_scatter_add, "max": OPS.tensor_scatter_max,
               "min": OPS.tensor_scatter_min, "prod": OPS.tensor_scatter_mul}[reduce]
    out = scatter(OPS.full(shape, start, dtype=x.dtype), index, x)
    if reduce in ("max", "min"):
        nan = OPS.tensor_scatter_add(OPS.zeros(shape, MS.int32), index, OPS.isnan(x).astype(MS.int32))
        out = OPS.where(nan > 0, OPS.full_like(out, float("nan")), out)
    if reduce == "mean":
        size = lengths.reshape((-1,) + (1,) * (x.ndim - 1)).astype(x.dtype)
        out = OPS.where(size > 0, out / size, OPS.full_like(out, empty if initial is None else initial))
    return OPS.moveaxis(out, 0, axis)
'''
