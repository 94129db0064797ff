"""Run-time helpers: torch's indexing and scatter functions (tables/torch_indexing.toml,
tensor_indexing.toml) where MindSpore has no kernel of the same meaning: composed of
MindSpore ops, called with torch's arguments by torch's names.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


def _torch_number(value, like):
    """A Python float beside a floating tensor, as a tensor of its dtype: MindSpore reads a
    float scalar as float32 even beside float64 tensors (torch keeps it in double)."""
    if isinstance(value, float) and like.is_floating_point():
        return ms.Tensor(value, like.dtype)
    return value


def _torch_expand_index(index, dim, like):
    """A 1-D index along dim, broadcast to the shape of like (index_copy as a scatter)."""
    shape = [1] * like.ndim
    shape[dim] = -1
    return ops.broadcast_to(index.reshape(shape), like.shape)


def _torch_index_add(input, dim, index, source, alpha=1):
    """torch.index_add: the slices of source (times alpha) added along dim (ops.index_add
    wants int32 indices and has no int64 kernel)."""
    dim = dim % input.ndim
    if alpha != 1:
        source = source * _torch_number(alpha, source)
    return _torch_scatter_reduce(input, dim, _torch_expand_index(index, dim, source), source, "sum")


def _torch_index_fill(input, dim, index, value):
    """torch.index_fill: the slices at index along dim set to value (ops.index_fill has
    no bool kernel)."""
    dim = dim % input.ndim
    n = input.shape[dim]
    chosen = ops.any(ops.arange(n, dtype=ms.int64).reshape(-1, 1) == (index.reshape(1, -1) % n), 1, False)
    shape = [1] * input.ndim
    shape[dim] = n
    return ops.where(chosen.reshape(shape), ops.full_like(input, value), input)


def _torch_index_copy(input, dim, index, source):
    """torch.index_copy: the slices of source scattered along dim."""
    dim = dim % input.ndim
    return ops.tensor_scatter_elements(input, _torch_expand_index(index, dim, source), source, dim)


def _torch_scatter_reduce(input, dim, index, src, reduce, include_self=True):
    """torch.scatter_reduce: each src element reduced into input[..., index, ...] (sum, prod,
    mean, amax, amin), by its coordinates; without include_self the input's own values at
    the written places do not take part."""
    dim = dim % input.ndim
    coords = []
    for axis, n in enumerate(index.shape):
        if axis == dim:
            coords.append(index.astype(ms.int64))
        else:
            shape = [1] * index.ndim
            shape[axis] = n
            coords.append(ops.broadcast_to(ops.arange(n, dtype=ms.int64).reshape(shape), index.shape))
    coords = ops.stack(coords, -1)
    src = src[tuple(slice(0, n) for n in index.shape)]
    if not include_self:
        neutral = {"sum": 0, "mean": 0, "prod": 1, "amax": src.min(), "amin": src.max()}[reduce]
        input = ops.tensor_scatter_update(input, coords, ops.ones_like(src) * neutral)
    scatter = {"sum": ops.tensor_scatter_add, "mean": ops.tensor_scatter_add, "prod": ops.tensor_scatter_mul,
               "amax": ops.tensor_scatter_max, "amin": ops.tensor_scatter_min}[reduce]
    out = scatter(input, coords, src)
    if reduce != "mean":
        return out
    count = ops.ones_like(input)
    if not include_self:
        count = ops.tensor_scatter_update(count, coords, ops.zeros_like(src))
    count = ops.tensor_scatter_add(count, coords, ops.ones_like(src))
    if out.is_floating_point():
        return out / count
    return ops.floor_divide(out, count)


def _torch_index_reduce(input, dim, index, source, reduce, include_self=True):
    """torch.index_reduce: the slices of source reduced into input along dim."""
    dim = dim % input.ndim
    return _torch_scatter_reduce(input, dim, _torch_expand_index(index, dim, source), source, reduce, include_self)


def _torch_index_put(input, indices, values, accumulate=False):
    """torch.index_put: input[indices] = values (+= with accumulate), the indices one
    integer or boolean tensor per leading dimension, broadcast together."""
    coords = []
    for i in indices:
        if i.dtype == ms.bool_:
            coords.extend(ops.unbind(ops.nonzero(i), 1))
        else:
            coords.append(i.astype(ms.int64))
    shape = ()
    for c in coords:
        shape = _torch_broadcast_shapes(shape, c.shape)
    coords = ops.stack([ops.broadcast_to(c, shape) % input.shape[k] for k, c in enumerate(coords)], -1)
    values = ops.broadcast_to(values.astype(input.dtype), tuple(shape) + input.shape[coords.shape[-1]:])
    scatter = ops.tensor_scatter_add if accumulate else ops.tensor_scatter_update
    return scatter(input, coords, values)


def _torch_put(input, index, source, accumulate=False):
    """torch.put: input as if flattened, input[index] = source (+= with accumulate)."""
    flat = input.reshape(-1)
    index = (index.astype(ms.int64) % flat.shape[0]).reshape(-1, 1)
    scatter = ops.tensor_scatter_add if accumulate else ops.tensor_scatter_update
    return scatter(flat, index, source.reshape(-1)).reshape(input.shape)


def _torch_take_along_dim(input, indices, dim=None):
    """torch.take_along_dim: ops.gather_elements after broadcasting every other dimension
    (the flattened input when dim is None)."""
    if dim is None:
        return ops.gather_elements(input.reshape(-1), 0, indices.reshape(-1))
    dim = dim % input.ndim
    shape = [max(a, b) for a, b in zip(input.shape, indices.shape)]
    shape[dim] = input.shape[dim]
    input = ops.broadcast_to(input, tuple(shape))
    shape[dim] = indices.shape[dim]
    return ops.gather_elements(input, dim, ops.broadcast_to(indices, tuple(shape)))


def _torch_nonzero_static(input, size, fill_value=-1):
    """torch.nonzero_static: the first size rows of nonzero(input), padded with fill_value."""
    found = ops.nonzero(input)
    if found.shape[0] >= size:
        return found[:size]
    pad = ops.full((size - found.shape[0], input.ndim), fill_value, dtype=ms.int64)
    return ops.cat((found, pad))


def _torch_unravel_index(indices, shape):
    """torch.unravel_index: flat indices -> one int64 tensor of coordinates per dimension."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    rest = indices.astype(ms.int64)
    coords = []
    for n in reversed(shape):
        coords.append(rest % n)
        rest = rest // n
    return tuple(reversed(coords))


def _torch_broadcast_shapes(*shapes):
    """torch.broadcast_shapes: the shape the given shapes (ints or sequences) broadcast to."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for k, n in enumerate(s, rank - len(s)):
            if n != 1:
                if out[k] not in (1, n):
                    raise RuntimeError(f"shapes {shapes} cannot be broadcast together")
                out[k] = n
    return tuple(out)


def _torch_masked_scatter(input, mask, source):
    """torch.masked_scatter: MindSpore's is a Tensor method (its keywords are not torch's)."""
    return input.masked_scatter(mask, source)
