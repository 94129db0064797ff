"""Run-time helpers: what torch code reads or writes on a converted layer in torch's terms:
its window read back as torch holds it (the layer-geometry pass, MS217), a parameter set
by a name known at run time (MS218), its forward read in a mixin (MS219).

MindSpore's Conv1d keeps its kernel size, stride and dilation as 2-d tuples ``(1, s)``
and its padding as ``(0, 0, p, p)``; Conv2d and Conv3d keep an int padding; torch keeps
one value per spatial axis (``conv.stride[0]`` is ``s``).

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import re

from mindspore import nn

from .cells import _torch_set_layer_attribute
from .module_methods import _TORCH_PARAMETER_NAMES


def _torch_layer_geometry(layer, name, dims):
    """``layer.<name>`` (kernel_size, stride, padding, dilation) as torch's layer of ``dims``
    spatial axes holds it: a tuple of one value per axis, or the padding mode torch was given
    as a string ('same', 'valid') (transpile MS217)."""
    value = getattr(layer, name)
    if name == "padding":
        mode = str(getattr(layer, "pad_mode", "pad")).lower()
        if mode in ("same", "valid"):
            return mode
        if not isinstance(value, int):
            # MindSpore pads each axis on both sides, (begin, end) pairs; torch's padding is
            # the same on both sides: the begins of the last ``dims`` axes
            value = tuple(value)[0::2][-dims:]
    if isinstance(value, int):
        return (value,) * dims
    return tuple(value)[-dims:]


# torch's per-layer weight names of a recurrent layer (nn.RNN, nn.LSTM, nn.GRU); MindSpore's
# layer registers its parameters under the same names and shapes but computes with the
# tuples w_ih_list, w_hh_list, b_ih_list, b_hh_list (one item per layer and direction)
_TORCH_RNN_WEIGHT = re.compile(r"(weight|bias)_(ih|hh)_l(\d+)(_reverse)?")


def _torch_rnn_weight_slot(layer, name):
    """Where a MindSpore recurrent layer computes with its weight of torch's ``name``
    (``weight_hh_l1_reverse``): (the tuple attribute, the index in it), or None for any other
    name or object. Layer k, direction d is item k * directions + d (MindSpore's order)."""
    if not (isinstance(name, str) and isinstance(layer, (nn.RNN, nn.LSTM, nn.GRU))):
        return None
    match = _TORCH_RNN_WEIGHT.fullmatch(name)
    if match is None:
        return None
    kind, gates, k, reverse = match.groups()
    directions = 2 if layer.bidirectional else 1
    index = int(k) * directions + (1 if reverse else 0)
    tuple_name = ("w" if kind == "weight" else "b") + "_" + gates + "_list"
    if reverse and directions == 1 or index >= len(getattr(layer, tuple_name)):
        return None
    return tuple_name, index


def _torch_setattr(obj, name, value):
    """setattr(obj, name, value) with a name known only when the code runs (weight tying over
    torch's parameter names kept as data: ``setattr(parent, "weight", shared)``): on a
    converted layer, a torch parameter name is written under the name the layer has (an
    Embedding's weight is its embedding_table); on a recurrent layer, a weight of torch's
    name (``weight_hh_l0``: weight drop replaces it by a dropped-out copy each forward) is
    also put where the layer computes with it; anything else is set as setattr sets it
    (transpile MS218)."""
    slot = _torch_rnn_weight_slot(obj, name)
    if slot is not None:
        items = list(getattr(obj, slot[0]))
        items[slot[1]] = value
        setattr(obj, slot[0], tuple(items))
        return setattr(obj, name, value)
    if isinstance(obj, nn.Cell) and name in _TORCH_PARAMETER_NAMES:
        return _torch_set_layer_attribute(obj, name, _TORCH_PARAMETER_NAMES[name], value)
    return setattr(obj, name, value)


def _torch_forward(obj):
    """``obj.forward`` as torch code reads it in a class mixed into Modules (transformers'
    GenerationMixin: ``inspect.signature(self.forward)``): a converted Cell has no forward,
    its construct is that method (transpile MS219)."""
    forward = getattr(obj, "forward", None)
    return forward if forward is not None else obj.construct


def _torch_set_forward(obj, fn):
    """torch code replacing an object's ``forward`` (torchnlp's weight drop wraps a module's
    forward): a Cell's call runs its ``construct``, so that is replaced on a Cell; anything
    else gets ``forward`` (transpile MS219)."""
    setattr(obj, "construct" if isinstance(obj, nn.Cell) else "forward", fn)
