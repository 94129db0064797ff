"""Run-time helpers: what MindSpore's GRAPH mode compiles otherwise than Python runs it (the
graph-xor, graph-equality, slice-bounds, graph-reduce, graph-partials and graph-param-device
passes): ^ on Python bools, == between a list and a number, a slice that selects nothing, functools.reduce, a functools.partial object called
in construct, the device of a Parameter.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""
import functools

import mindspore as ms


def _py_xor(a, b):
    """a ^ b; GRAPH_MODE's ^ takes no Python bools (transpile MS305)."""
    if isinstance(a, bool) and isinstance(b, bool):
        return a != b
    return a ^ b


def _py_equal(value, literal):
    """value == literal, a number or string (transpile MS334): a list or dict never equals
    one, which GRAPH_MODE knows only at run time (``[1] == 1``), compiling both arms of an if."""
    if isinstance(value, (list, dict)):
        return False
    return value == literal


def _torch_device(tensor):
    """tensor.device, of a Parameter too (transpile MS326): GRAPH_MODE refuses a Parameter's
    .device where the value is used ("the 'Parameter' object's method 'device' is not
    supported"), and reads it of the Parameter's value."""
    if isinstance(tensor, ms.Parameter):
        return tensor.value().device
    return tensor.device


def _torch_selects_nothing(shape, bounds):
    """Whether x[...] of a tensor of this shape, slicing axis a from start to stop for each
    (a, start, stop) of bounds (None: open), selects no element (transpile MS306):
    torch writes nothing there, MindSpore 2.10 PYNATIVE fails (memcpy_s errorno 34)."""
    for n in shape:
        if n == 0:
            return True
    for axis, start, stop in bounds:
        n = shape[axis]
        start = 0 if start is None else (max(start + n, 0) if start < 0 else min(start, n))
        stop = n if stop is None else (max(stop + n, 0) if stop < 0 else min(stop, n))
        if stop <= start:
            return True
    return False


def _py_reduce(function, items, *initial):
    """functools.reduce(function, items[, initial]) as a loop (transpile MS314): GRAPH_MODE's
    reduce changes what the code compiled after it computes."""
    values = initial + tuple(items)
    if not values:
        raise TypeError("reduce() of empty iterable with no initial value")
    result = values[0]
    for value in values[1:]:
        result = function(result, value)
    return result


class _TorchPartial(functools.partial):
    """functools.partial as GRAPH_MODE compiles its call (transpile MS322): what a partial
    object returns in construct has no known rank there; keywords merge as partial's do."""

    def __call__(self, *args, **kwargs):
        keywords = {}
        for key in self.keywords:
            keywords[key] = self.keywords[key]
        for key in kwargs:
            keywords[key] = kwargs[key]
        return self.func(*self.args, *args, **keywords)
