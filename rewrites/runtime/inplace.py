"""Run-time helpers: torch's in-place tensor methods and functions (tables/tensor_inplace.toml,
torch_inplace.toml) MindSpore lacks or has no CPU kernel for, as functions returning the new
value (the call site assigns it).

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


def _torch_resized(input, shape):
    """torch's Tensor.resize_ out of place: the elements in order, cut or lengthened with
    zeros (torch leaves new elements uninitialized) to the new shape."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    numel = 1
    for size in shape:
        numel *= size
    flat = input.reshape(-1)
    have = flat.shape[0]
    if have >= numel:
        flat = flat[:numel]
    else:
        flat = ops.cat((flat, ops.zeros(numel - have, input.dtype)))
    return flat.reshape(shape)


def _torch_filled_diagonal(input, fill_value, wrap=False):
    """torch's Tensor.fill_diagonal_ out of place: fill_value where all indices are equal;
    a 2-D matrix taller than wide with wrap=True starts again every width + 1 rows (the
    flat positions that are multiples of the sum of the contiguous strides)."""
    shape = input.shape
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) > 1):
        raise ValueError("fill_diagonal_: at least 2 dimensions, all of one length beyond 2")
    step, numel = 0, 1
    for size in reversed(shape):
        step += numel
        numel *= size
    flat = ops.arange(numel)
    on = flat % step == 0
    if not (wrap and len(shape) == 2):
        on = ops.logical_and(on, flat < min(shape[0], shape[1]) * step)
    return ops.where(on.reshape(shape), ops.full_like(input, fill_value), input)


def _torch_applied(input, callable, *others):
    """torch's Tensor.apply_ / map_ / map2_ out of place: callable on each element as a
    Python number, with the elements of others broadcast to input's shape, in input's dtype."""
    columns = [input.reshape(-1).tolist()]
    columns += [ops.broadcast_to(other, input.shape).reshape(-1).tolist() for other in others]
    values = [callable(*elements) for elements in zip(*columns)]
    return ms.Tensor(values, dtype=input.dtype).reshape(input.shape)


def _torch_renormed(input, indices, max_norm, norm_type):
    """torch.embedding_renorm_ out of place: each row named in indices whose norm exceeds
    max_norm, scaled by max_norm / (norm + 1e-7); the other rows as they are."""
    norms = ops.norm(input, norm_type, dim=1)
    named = ops.zeros(input.shape[0], ms.bool_)
    named[indices.reshape(-1)] = True
    scale = ops.where(ops.logical_and(named, norms > max_norm), max_norm / (norms + 1e-7), 1.0)
    return input * scale.reshape(-1, 1).astype(input.dtype)


def _torch_out(result, out):
    """torch's ``out=`` argument: the result written into ``out`` in place and ``out``
    returned (a tuple of outs for an op with several results: each written, the same
    named tuple type returned). As in torch, ``out`` takes the result's shape when it
    differs (torch resizes it) and keeps its own dtype (the result is cast to it).
    ``Tensor.assign_value`` replaces the tensor's data in the same object, so every
    name bound to ``out`` sees it; GRAPH mode does not compile it."""
    if isinstance(out, (tuple, list)):
        for part, target in zip(result, out):
            target.assign_value(part.astype(target.dtype))
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    out.assign_value(result.astype(out.dtype))
    return out


def _torch_write_item(tensor, index, value):
    """torch's in-place method on an item (``w.data[i].zero_()``, ``x[:, 0].mul_(2)``):
    MindSpore's item is a copy, so the new value is stored into ``tensor`` at ``index``;
    returns the item, as torch returns the view it changed."""
    tensor[index] = value
    return tensor[index]


def _torch_view_pieces(pieces, parent):
    """The pieces of ``split``/``chunk`` of ``parent`` (views in torch), each noting where
    it lies in ``parent``: MindSpore's pieces share the storage but an in-place write into
    one does not reach ``parent`` on CPU, so ``_torch_write_view`` stores through ``parent``.
    The pieces are consecutive along the one axis where their lengths differ from
    ``parent``'s (none: a single piece, the whole tensor)."""
    start = 0
    for piece in pieces:
        axis = next((d for d in range(parent.ndim) if piece.shape[d] != parent.shape[d]), None)
        if axis is None:
            piece._torch_view_of = (parent, ...)
            continue
        index = (slice(None),) * axis + (slice(start, start + piece.shape[axis]),)
        piece._torch_view_of = (parent, index)
        start += piece.shape[axis]
    return pieces


def _torch_write_view(view, value):
    """torch's in-place write into ``view`` (``view.copy_(value)``, ``view.mul_(k)``): a piece
    ``_torch_view_pieces`` noted is stored through its parent (recursively, for a piece of a
    piece), which the piece sees; any other tensor is copied into. Returns ``view``."""
    if not isinstance(value, ms.Tensor):
        value = ms.Tensor(value, view.dtype)
    value = ops.broadcast_to(value.astype(view.dtype), view.shape)
    origin = getattr(view, "_torch_view_of", None)
    if origin is None:
        return view.copy_(value)
    parent, index = origin
    if getattr(parent, "_torch_view_of", None) is None:
        parent[index] = value
    else:
        whole = parent.copy()
        whole[index] = value
        _torch_write_view(parent, whole)
    return view
