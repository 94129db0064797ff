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


@hook()
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
    if dim is None:
        low, high = OPS.aminmax(input.reshape(-1), axis=0)
        if keepdim:
            low, high = low.reshape((1,) * input.ndim), high.reshape((1,) * input.ndim)
        return {name}_result(low, high)
    return {name}_result(*OPS.aminmax(input, axis=dim, keepdims=keepdim))
''' + _returns("min max")

HELPERS["kthvalue"] = '''
def {name}(input, k, dim=-1, keepdim=False):
    """torch.kthvalue: the k-th smallest value along dim and its (int64) index."""
    values, indices = OPS.sort(input, axis=dim)
    at = [slice(None)] * input.ndim
    at[dim] = slice(k - 1, k) if keepdim else k - 1
    return {name}_result(values[tuple(at)], indices[tuple(at)].astype(MS.int64))
''' + _returns("values indices")

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
    ones) and the index of its last occurrence."""
    x = OPS.moveaxis(input, dim, -1)
    counts = (OPS.expand_dims(x, -1) == OPS.expand_dims(x, -2)).astype(MS.int32).sum(-1)
    most = counts == OPS.amax(counts, -1, True)
    value = OPS.amin(OPS.where(most, x, OPS.amax(x, -1, True)), -1, True)
    positions = OPS.arange(x.shape[-1], dtype=MS.int64)
    index = OPS.amax(OPS.where(x == value, positions, -1), -1, True)
    if keepdim:
        return {name}_result(OPS.moveaxis(value, -1, dim), OPS.moveaxis(index, -1, dim))
    return {name}_result(value.squeeze(-1), index.squeeze(-1))
''' + _returns("values indices")

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
    elements = elements if isinstance(elements, MS.Tensor) else MS.Tensor(elements)
    tests = test_elements if isinstance(test_elements, MS.Tensor) else MS.Tensor(test_elements)
    found = (OPS.expand_dims(elements, -1) == tests.reshape(-1)).any(-1)
    return OPS.logical_not(found) if invert else found
'''

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
    return OPS.moveaxis(OPS.cumsum(dx * (y[..., 1:] + y[..., :-1]), -1) / 2, -1, dim)
'''

HELPERS["rsub"] = '''
def {name}(input, other, alpha=1):
    """torch.rsub: other - alpha * input."""
    return OPS.sub(other, input * alpha if alpha != 1 else input)
'''

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
