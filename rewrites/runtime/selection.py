"""Run-time helpers: torch's selection functions in the forms no MindSpore op takes as
torch does (tables/torch_functions.toml, tensor_methods.toml, tensor_inplace.toml):
``scatter`` with a number, ``value=`` or ``reduce=``, ``unique`` with its inverse and
``dim``, ``max``/``min`` whose second argument is a tensor or a dim as the code runs.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops

from .indexing import _torch_scatter_reduce


def _torch_scatter(input, dim, index, src=None, value=None, reduce=None):
    """torch.scatter: src written into input along dim at index. src is read in index's
    shape from its corner (torch allows a larger src; MindSpore's kernel does not), or is
    a number (``value=``, or a number passed as src) filling that shape. reduce="add" or
    "multiply" accumulates every write into the input's values."""
    if src is None:
        src = value
    if isinstance(src, ms.Tensor):
        src = src[tuple(slice(0, n) for n in index.shape)].astype(input.dtype)
    else:
        src = ops.full(index.shape, src, dtype=input.dtype)
    if reduce is None:
        # (not ops.scatter: after other scatters in the process, it has written an int64
        # index's first element only)
        return ops.tensor_scatter_elements(input, index, src, dim)
    return _torch_scatter_reduce(input, dim, index, src, {"add": "sum", "multiply": "prod"}[reduce])


def _torch_unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: the distinct values of the flattened input (dim None) or the distinct
    slices along dim, ascending (torch sorts on CPU whatever sorted= says), with where
    each element or slice went (inverse, int64) and how often each occurs (counts, int64)
    when asked. Slices are ordered lexicographically. Bool tensors are sorted as integers
    (no bool sort kernel)."""
    if dim is None:
        keys = input.reshape(-1)
        ordered, order = ops.sort(keys.astype(ms.int32) if keys.dtype == ms.bool_ else keys)
        values, run, counts = ops.unique_consecutive(ordered, return_inverse=True, return_counts=True)
        values = values.astype(input.dtype)
        inverse_shape = input.shape
    else:
        dim = dim % input.ndim
        moved = ops.moveaxis(input, dim, 0)
        rows = moved.reshape(moved.shape[0], -1)
        if rows.dtype == ms.bool_:
            rows = rows.astype(ms.int32)
        # each row's rank among the rows by the columns so far (equal rows, equal ranks):
        # the next column refines it (no stable sort kernel on CPU to sort column by column)
        n = rows.shape[0]
        rank = ops.zeros(n, ms.int64)
        for column in range(rows.shape[1]):
            rank = _torch_rank(rank * n + _torch_rank(rows[:, column]))
        order = ops.sort(rank)[1]
        values, run, counts = ops.unique_consecutive(moved[order], return_inverse=True, return_counts=True, dim=0)
        values = ops.moveaxis(values, 0, dim)
        inverse_shape = (input.shape[dim],)
    result = [values]
    if return_inverse:
        # run[k] is where the k-th element in sorted order went; order[k] is where it came from
        result.append(ops.gather(run, ops.argsort(order), 0).reshape(inverse_shape).astype(ms.int64))
    if return_counts:
        result.append(counts.astype(ms.int64))
    return result[0] if len(result) == 1 else tuple(result)


def _torch_rank(values):
    """The rank of each element of the 1-D values among them, ties sharing the lowest (int64)."""
    return ops.searchsorted(ops.sort(values)[0], values).astype(ms.int64)


def _torch_max(input, second):
    """torch.max(x, second), whose second argument only the running code shows: a tensor
    gives the elementwise maximum, a dim the (values, indices) over it."""
    if isinstance(second, ms.Tensor):
        return ops.maximum(input, second)
    return ops.max(input, second)


def _torch_min(input, second):
    """torch.min(x, second): the elementwise minimum with a tensor, (values, indices) over a dim."""
    if isinstance(second, ms.Tensor):
        return ops.minimum(input, second)
    return ops.min(input, second)
