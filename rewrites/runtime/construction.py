"""Run-time helpers: torch's construction and elementwise functions where no MindSpore op
takes torch's arguments (tables/torch_functions.toml, tensor_methods.toml, torch_utils.toml):
``logspace`` with any base, the legacy constructor's one argument (a size or data),
a list of tensors and numbers given to ``torch.tensor``, ``fmin``, ``round`` with ``decimals``, ``as_strided``, ``frombuffer``, ``from_dlpack``;
sparse COO tensors kept dense (``sparse_coo_tensor``, ``indices()``, ``values()``).

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
import numpy as np
from mindspore import ops
from mindspore.utils import dlpack

from .tensor_math import _torch_promote_types


def _torch_logspace(start, end, steps, base=10.0, dtype=None):
    """torch.logspace: steps powers of base whose exponents run evenly from start to end,
    computed in float64 and given dtype (float32 by default). ops.logspace takes integer
    bases only and tensors for start and end."""
    exponents = ops.linspace(ms.Tensor(float(start), ms.float64), ms.Tensor(float(end), ms.float64), steps)
    values = ops.pow(ms.Tensor(float(base), ms.float64), exponents)
    return values.astype(ms.float32 if dtype is None else dtype)


def _torch_legacy_tensor(value, dtype):
    """torch's legacy constructor (``torch.Tensor(v)``, ``torch.FloatTensor(v)``) with one
    argument the converter could not tell apart: an int is a size (a 1-D tensor of that many
    elements; zeros, since MindSpore has no uninitialised tensor), anything else is data."""
    if isinstance(value, int):
        return ops.zeros((value,), dtype)
    return ms.Tensor(value, dtype)


def _torch_tensor_items(items, dtype=None, rows=False):
    """torch.tensor of a list written out whose items may be tensors (transpile MS201):
    torch reads a one-element tensor there as its number, MindSpore's Tensor refuses a
    tensor inside a list. Each item (a number, a one-element tensor, or with rows=True the
    tensor of an inner list made the same way) becomes a 0-d tensor (a row), and they are
    stacked; without dtype, the items' dtypes promoted as torch infers the list's (a Python
    int as int64, a float as float32, a bool as bool)."""
    values = [(item if rows else item.reshape(())) if isinstance(item, ms.Tensor) else ms.Tensor(item)
              for item in items]
    if dtype is None:
        dtype = values[0].dtype
        for value in values[1:]:
            dtype = _torch_promote_types(dtype, value.dtype)
    return ops.stack([value.astype(dtype) for value in values])


def _torch_fmin(input, other):
    """torch.fmin: the elementwise minimum where a NaN loses to a number (NaN where both
    are). ops.fmin has no CPU kernel."""
    low = ops.minimum(input, other)
    if not low.is_floating_point():
        return low
    input, other = ops.broadcast_to(input.astype(low.dtype), low.shape), ops.broadcast_to(other.astype(low.dtype), low.shape)
    return ops.where(ops.isnan(input), other, ops.where(ops.isnan(other), input, low))


def _torch_round(input, decimals=0):
    """torch.round(x, decimals=d): halves to even at the d-th decimal (left of the point
    for d < 0), as torch computes it: x scaled by 10**d in x's dtype, rounded, scaled back.
    MindSpore's Round kernel takes decimals=0 only on CPU."""
    if decimals == 0 or not input.is_floating_point():
        return ops.round(input)
    scale = ms.Tensor(10.0 ** abs(decimals), input.dtype)
    if decimals > 0:
        return ops.round(input * scale) / scale
    return ops.round(input / scale) * scale


def _torch_as_strided(input, size, stride, storage_offset=0):
    """torch.as_strided read off the input's elements in row-major order (the storage of a
    contiguous tensor): element (i, j, ...) is flat[storage_offset + i * stride[0] + j *
    stride[1] + ...]. A copy: torch's result is a view whose writes reach the input."""
    index = ops.full(tuple(size), storage_offset, dtype=ms.int64)
    for axis, (n, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = n
        index = index + (ops.arange(n, dtype=ms.int64) * step).reshape(shape)
    return ops.gather(input.reshape(-1), index.reshape(-1), 0).reshape(tuple(size))


def _torch_frombuffer(buffer, dtype, count=-1, offset=0):
    """torch.frombuffer: the buffer's bytes read as dtype, from byte offset, count elements
    (all when -1). A copy: torch's tensor shares the buffer's memory."""
    return ms.Tensor(np.frombuffer(buffer, dtype=ms.dtype_to_nptype(dtype), count=count, offset=offset))


def _torch_from_dlpack(ext_tensor):
    """torch.from_dlpack: a tensor from a DLPack capsule or from an object that exports one
    (``__dlpack__``: a numpy array, read through numpy: MindSpore's from_dlpack crashes on
    numpy's capsule); a MindSpore tensor is returned as it is (torch's result shares its
    memory)."""
    if isinstance(ext_tensor, ms.Tensor):
        return ext_tensor
    if hasattr(ext_tensor, "__dlpack__"):
        return ms.Tensor(np.from_dlpack(ext_tensor))
    return dlpack.from_dlpack(ext_tensor)


# Sparse COO tensors are kept dense (MindSpore's COOTensor is no Tensor: no buffer, no
# arithmetic, no indexing); a dense tensor reads as the sparse one through every dense use.
def _torch_sparse_coo_tensor(indices, values, size=None, dtype=None):
    """torch.sparse_coo_tensor as the dense tensor it stands for: values[k] added at the
    position indices[:, k] (torch sums the duplicates when it coalesces); the size, when
    not given, the largest index + 1 along each sparse dimension, then values' own dims."""
    indices = ms.Tensor(indices) if not isinstance(indices, ms.Tensor) else indices
    values = ms.Tensor(values) if not isinstance(values, ms.Tensor) else values
    if dtype is not None:
        values = values.astype(dtype)
    if values.dtype == ms.bool_:  # no bool scatter kernel: duplicates or-ed, as torch's sum of bools
        return _torch_sparse_coo_tensor(indices, values.astype(ms.int32), size) != 0
    indices = indices.astype(ms.int64)
    if size is None:
        sparse = [int(n) + 1 for n in indices.max(axis=1).asnumpy()] if indices.shape[1] else [0] * indices.shape[0]
        size = tuple(sparse) + tuple(values.shape[1:])
    dense = ops.zeros(tuple(size), values.dtype)
    if indices.shape[1] == 0:
        return dense
    return ops.tensor_scatter_add(dense, indices.T, values)


def _torch_indices(input):
    """Tensor.indices() of a sparse tensor kept dense: the positions of its nonzero
    elements, one column each, in row-major order (int64, shape (ndim, nnz)). An element
    torch stores with the value 0 is not seen."""
    return ops.nonzero(input).T.astype(ms.int64)


def _torch_values(input):
    """Tensor.values() of a sparse tensor kept dense: its nonzero elements in row-major
    order (those indices() gives)."""
    return ops.masked_select(input, input != 0)
