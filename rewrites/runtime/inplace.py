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


def _torch_write_view_item(tensor, index, value):
    """``_torch_write_item`` into a view of another tensor (``z = x.view(2, -1)`` then
    ``z[:, 1].add_(v)``): the new value of the whole view is stored through the tensor it
    is a view of (``_torch_write_view``); returns the item."""
    whole = tensor.copy()
    whole[index] = value
    _torch_write_view(tensor, whole)
    return tensor[index]


def _torch_view(parent, view):
    """A view of ``parent`` that torch writes through (``z = x[:, 0:4:2]`` or ``x.view(-1)``,
    ``x.transpose(0, 1)``, ``x.chunk(2)[0]``, then ``z.mul_(2)``): ``view(parent)``, noting
    where its elements lie in ``parent`` (``view`` applied to their flat positions), so that
    ``_torch_write_view`` stores a write through ``parent``: on CPU, MindSpore's in-place
    kernels on a view (``copy_``, ``mul_``, ``+=``) leave ``parent`` as it was.

    A view that is ``parent`` itself (MindSpore's ``x[:, :]``), or a copy (an index that is a
    tensor: a copy in torch too; its data lies outside ``parent``'s), gets no note. GRAPH mode keeps
    no note on a tensor and compiles a write into the view as a new value of the view only
    (measured: a different result, without an error): there it raises."""
    result = view(parent)
    if isinstance(result, ms.Tensor) and isinstance(parent, ms.Tensor):
        own = getattr(result, "_torch_view_of", None)
        result._torch_view_of = (parent, view(ops.arange(parent.size).reshape(parent.shape)))
        if getattr(result, "_torch_view_of", None) is None:
            raise RuntimeError("torch writes into this view in place and so changes the tensor it views; compiled "
                               "(GRAPH) code cannot: run it in PYNATIVE mode, or write into the tensor by its own "
                               "name (x[index] = value) (transpile MS513)")
        start = parent.data_ptr()
        if result is parent or not start <= result.data_ptr() < start + max(parent.nbytes, 1):
            result._torch_view_of = own  # parent itself, or a copy (x[tensor_index]): no view of parent
    return result


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
    ``_torch_view_pieces`` or a view ``_torch_view`` noted is stored through its parent
    (recursively, for a piece of a piece), which the piece sees; any other tensor is copied
    into (its data replaced, where it is strided). Returns ``view`` (what is no tensor: ``value``)."""
    if not isinstance(view, ms.Tensor):
        return value
    if not isinstance(value, ms.Tensor):
        value = ms.Tensor(value, view.dtype)
    value = ops.broadcast_to(value.astype(view.dtype), view.shape)
    origin = getattr(view, "_torch_view_of", None)
    if origin is None:
        if view.is_contiguous():
            return view.copy_(value)
        view.assign_value(value)  # copy_ into a strided view leaves it as it was (CPU)
        return view
    parent, index = origin
    if isinstance(index, ms.Tensor):  # the flat positions of the view's elements (_torch_view)
        whole = parent.reshape(-1).copy()
        whole[index.reshape(-1)] = value.reshape(-1)
        whole = whole.reshape(parent.shape)
        if getattr(parent, "_torch_view_of", None) is not None:
            _torch_write_view(parent, whole)
            view.assign_value(value)
        elif parent.is_contiguous():
            parent.copy_(whole)  # the views MindSpore made of parent (view among them) see it
        else:  # copy_ into a strided tensor does not reach it on CPU: its data replaced
            parent.assign_value(whole)
            view.assign_value(value)
    elif getattr(parent, "_torch_view_of", None) is None:
        parent[index] = value
    else:
        whole = parent.copy()
        whole[index] = value
        _torch_write_view(parent, whole)
    return view
