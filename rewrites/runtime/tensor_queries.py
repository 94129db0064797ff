"""Run-time helpers: tensor queries (tables/tensor_queries.toml): a tensor's device index;
the one resolver of tensor members whose meaning differs in MindSpore, for receivers the
converter cannot type (MS202).

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""
import functools

import mindspore as ms
from mindspore import ops


def _torch_device_index(device):
    """torch's Tensor.get_device() from MindSpore's device name: -1 on the CPU, else the
    index the name gives ("GPU:1"), 0 when it gives none (transpile)."""
    kind, _, index = str(device).partition(":")
    if kind.lower() == "cpu":
        return -1
    return int(index) if index else 0


def _torch_tensor_member(obj, name):
    """torch's ``obj.<name>`` where the converter could not tell whether ``obj`` is a tensor:
    on a MindSpore tensor, the member with torch's meaning where MindSpore's differs or is
    missing; on anything else (a Cell, a numpy array, the package's own object) its own
    member (transpile MS202).

    - ``requires_grad``: a Parameter's flag; a MindSpore tensor records no graph: False;
    - ``to``: ``to(other_tensor)`` takes the other tensor's dtype, ``to(dtype)`` casts,
      devices (strings, indices, None) are ignored (MindSpore places tensors by set_device).
    """
    if not isinstance(obj, ms.Tensor):
        return getattr(obj, name)
    if name == "requires_grad":
        return bool(getattr(obj, "requires_grad", False))
    if name == "to":
        return functools.partial(_torch_tensor_to, obj)
    return getattr(obj, name)


def _torch_tensor_to(tensor, *args, dtype=None, **ignored):
    """torch's Tensor.to on a MindSpore tensor: the dtype of a tensor or dtype given, by
    position or keyword; devices and flags (non_blocking, copy) change nothing here."""
    for arg in args:
        if isinstance(arg, ms.Tensor):
            dtype = arg.dtype
        elif isinstance(arg, ms.dtype.Type):
            dtype = arg
    if dtype is None or dtype == tensor.dtype:
        return tensor
    return tensor.astype(dtype)


def _torch_repeat(obj, *sizes):
    """torch's ``obj.repeat(*sizes)`` where the converter could not tell whether ``obj`` is a
    tensor: a MindSpore tensor is tiled (more sizes than axes add leading axes, as torch's
    repeat does; MindSpore's Tensor.repeat repeats each element, numpy's meaning, and has no
    CPU kernel); anything else (a numpy array) repeats itself (transpile MS202)."""
    if not isinstance(obj, ms.Tensor):
        return obj.repeat(*sizes)
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = sizes[0]
    return ops.tile(obj, tuple(sizes))


def _torch_clone(obj, *args, **kwargs):
    """torch's ``obj.clone()`` where the converter could not tell whether ``obj`` is a
    tensor: a MindSpore tensor is copied by ops.deepcopy (its Tensor.clone has no CPU
    kernel, in either mode; a Parameter's copy is a plain tensor, as torch's is; the memory
    format changes nothing); anything else clones itself (transpile MS202)."""
    if isinstance(obj, ms.Tensor):
        return ops.deepcopy(obj)
    return obj.clone(*args, **kwargs)
