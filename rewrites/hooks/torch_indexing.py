"""Hooks of tables/torch_indexing.toml: torch's indexing and scatter functions (their
Tensor methods in tensor_indexing.toml use the same hooks).

Where MindSpore has no CPU kernel of the same meaning (``ops.index_add`` wants int32
indices, scatter reductions other than a sum), the call becomes a call of a small function
written with MindSpore ops and emitted once beside the code (``run_time_helper``): it
takes torch's arguments by torch's names, so the arguments' values are only known when it
runs (a dim held in a variable is fine). Every helper is exact; torch_math.py adds its own.
"""
from __future__ import annotations

import libcst as cst

from ..syntax import emitted, keyword_call, spelled
from .registry import hook

# torch name -> the source of the function computing it ({name}: its emitted name;
# MS./OPS.: mindspore and mindspore.ops as the file spells them)
HELPERS: dict[str, str] = {}
# helpers a helper calls (by their emitted name, _torch_<name>)
NEEDS: dict[str, tuple[str, ...]] = {}


def helper_name(ctx, name: str) -> str:
    """``_torch_<name>``, emitted beside the code with the helpers it calls."""
    for needed in NEEDS.get(name, ()):
        helper_name(ctx, needed)
    source = spelled(ctx, HELPERS[name])
    return emitted(ctx, f"_torch_{name}", source).value


@hook(not_a_value="converted only where it is called (into a function emitted beside the code)")
def run_time_helper(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.index_copy(x, 1, i, s)`` / ``x.index_copy(1, i, s)`` ->
    ``_torch_index_copy(input=x, dim=1, index=i, source=s)``, the function emitted once
    beside the code (``HELPERS[name]``, the entry's own name without a trailing ``_``)."""
    name = entry.source.rsplit(".", 1)[-1]
    if receiver is not None:
        args = {"input": receiver, **args}
    return keyword_call(cst.Name(helper_name(ctx, name)), args)


HELPERS["number"] = '''
def {name}(value, like):
    """A Python float beside a floating tensor, as a tensor of its dtype: MindSpore reads a
    float scalar as float32 even beside float64 tensors (torch keeps it in double)."""
    if isinstance(value, float) and like.is_floating_point():
        return MS.Tensor(value, like.dtype)
    return value
'''

HELPERS["expand_index"] = '''
def {name}(index, dim, like):
    """A 1-D index along dim, broadcast to the shape of like (index_copy as a scatter)."""
    shape = [1] * like.ndim
    shape[dim] = -1
    return OPS.broadcast_to(index.reshape(shape), like.shape)
'''

HELPERS["index_add"] = '''
def {name}(input, dim, index, source, alpha=1):
    """torch.index_add: the slices of source (times alpha) added along dim (ops.index_add
    wants int32 indices and has no int64 kernel)."""
    dim = dim % input.ndim
    if alpha != 1:
        source = source * _torch_number(alpha, source)
    return _torch_scatter_reduce(input, dim, _torch_expand_index(index, dim, source), source, "sum")
'''
NEEDS["index_add"] = ("expand_index", "scatter_reduce", "number")

HELPERS["index_fill"] = '''
def {name}(input, dim, index, value):
    """torch.index_fill: the slices at index along dim set to value (ops.index_fill has
    no bool kernel)."""
    dim = dim % input.ndim
    n = input.shape[dim]
    chosen = OPS.any(OPS.arange(n, dtype=MS.int64).reshape(-1, 1) == (index.reshape(1, -1) % n), 1, False)
    shape = [1] * input.ndim
    shape[dim] = n
    return OPS.where(chosen.reshape(shape), OPS.full_like(input, value), input)
'''

HELPERS["index_copy"] = '''
def {name}(input, dim, index, source):
    """torch.index_copy: the slices of source scattered along dim."""
    dim = dim % input.ndim
    return OPS.tensor_scatter_elements(input, _torch_expand_index(index, dim, source), source, dim)
'''
NEEDS["index_copy"] = ("expand_index",)

HELPERS["scatter_reduce"] = '''
def {name}(input, dim, index, src, reduce, include_self=True):
    """torch.scatter_reduce: each src element reduced into input[..., index, ...] (sum, prod,
    mean, amax, amin), by its coordinates; without include_self the input's own values at
    the written places do not take part."""
    dim = dim % input.ndim
    coords = []
    for axis, n in enumerate(index.shape):
        if axis == dim:
            coords.append(index.astype(MS.int64))
        else:
            shape = [1] * index.ndim
            shape[axis] = n
            coords.append(OPS.broadcast_to(OPS.arange(n, dtype=MS.int64).reshape(shape), index.shape))
    coords = OPS.stack(coords, -1)
    src = src[tuple(slice(0, n) for n in index.shape)]
    if not include_self:
        neutral = {"sum": 0, "mean": 0, "prod": 1, "amax": src.min(), "amin": src.max()}[reduce]
        input = OPS.tensor_scatter_update(input, coords, OPS.ones_like(src) * neutral)
    scatter = {"sum": OPS.tensor_scatter_add, "mean": OPS.tensor_scatter_add, "prod": OPS.tensor_scatter_mul,
               "amax": OPS.tensor_scatter_max, "amin": OPS.tensor_scatter_min}[reduce]
    out = scatter(input, coords, src)
    if reduce != "mean":
        return out
    count = OPS.ones_like(input)
    if not include_self:
        count = OPS.tensor_scatter_update(count, coords, OPS.zeros_like(src))
    count = OPS.tensor_scatter_add(count, coords, OPS.ones_like(src))
    if out.is_floating_point():
        return out / count
    return OPS.floor_divide(out, count)
'''

HELPERS["index_reduce"] = '''
def {name}(input, dim, index, source, reduce, include_self=True):
    """torch.index_reduce: the slices of source reduced into input along dim."""
    dim = dim % input.ndim
    return _torch_scatter_reduce(input, dim, _torch_expand_index(index, dim, source), source, reduce, include_self)
'''
NEEDS["index_reduce"] = ("expand_index", "scatter_reduce")

HELPERS["index_put"] = '''
def {name}(input, indices, values, accumulate=False):
    """torch.index_put: input[indices] = values (+= with accumulate), the indices one
    integer or boolean tensor per leading dimension, broadcast together."""
    coords = []
    for i in indices:
        if i.dtype == MS.bool_:
            coords.extend(OPS.unbind(OPS.nonzero(i), 1))
        else:
            coords.append(i.astype(MS.int64))
    shape = ()
    for c in coords:
        shape = _torch_broadcast_shapes(shape, c.shape)
    coords = OPS.stack([OPS.broadcast_to(c, shape) % input.shape[k] for k, c in enumerate(coords)], -1)
    values = OPS.broadcast_to(values.astype(input.dtype), tuple(shape) + input.shape[coords.shape[-1]:])
    scatter = OPS.tensor_scatter_add if accumulate else OPS.tensor_scatter_update
    return scatter(input, coords, values)
'''
NEEDS["index_put"] = ("broadcast_shapes",)

HELPERS["put"] = '''
def {name}(input, index, source, accumulate=False):
    """torch.put: input as if flattened, input[index] = source (+= with accumulate)."""
    flat = input.reshape(-1)
    index = (index.astype(MS.int64) % flat.shape[0]).reshape(-1, 1)
    scatter = OPS.tensor_scatter_add if accumulate else OPS.tensor_scatter_update
    return scatter(flat, index, source.reshape(-1)).reshape(input.shape)
'''

HELPERS["take_along_dim"] = '''
def {name}(input, indices, dim=None):
    """torch.take_along_dim: ops.gather_elements after broadcasting every other dimension
    (the flattened input when dim is None)."""
    if dim is None:
        return OPS.gather_elements(input.reshape(-1), 0, indices.reshape(-1))
    dim = dim % input.ndim
    shape = [max(a, b) for a, b in zip(input.shape, indices.shape)]
    shape[dim] = input.shape[dim]
    input = OPS.broadcast_to(input, tuple(shape))
    shape[dim] = indices.shape[dim]
    return OPS.gather_elements(input, dim, OPS.broadcast_to(indices, tuple(shape)))
'''

HELPERS["nonzero_static"] = '''
def {name}(input, size, fill_value=-1):
    """torch.nonzero_static: the first size rows of nonzero(input), padded with fill_value."""
    found = OPS.nonzero(input)
    if found.shape[0] >= size:
        return found[:size]
    pad = OPS.full((size - found.shape[0], input.ndim), fill_value, dtype=MS.int64)
    return OPS.cat((found, pad))
'''

HELPERS["unravel_index"] = '''
def {name}(indices, shape):
    """torch.unravel_index: flat indices -> one int64 tensor of coordinates per dimension."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    rest = indices.astype(MS.int64)
    coords = []
    for n in reversed(shape):
        coords.append(rest % n)
        rest = rest // n
    return tuple(reversed(coords))
'''

HELPERS["broadcast_shapes"] = '''
def {name}(*shapes):
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
'''

HELPERS["masked_scatter"] = '''
def {name}(input, mask, source):
    """torch.masked_scatter: MindSpore's is a Tensor method (its keywords are not torch's)."""
    return input.masked_scatter(mask, source)
'''
