"""Run-time helpers: einops' pack and unpack with a pattern known only when they run
(``def pack_one(t, pattern): return pack([t], pattern)``; transpile MS208 lowers the calls
whose pattern is a literal).

einops itself can run them on MindSpore tensors (the backend MS208 emits), but in GRAPH mode
it runs in Python, outside the graph: its results have no static shape there, and a layer
built from one fails to compile (denoising-diffusion's Karras U-Nets: "When creating an
instance of 'Conv2D', all arguments are required to be constants"). These read the pattern
with Python's str methods, which GRAPH mode runs on the constant pattern when it compiles,
so the shapes stay constants.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

from mindspore import ops


def _einops_pack_layout(pattern):
    """(axes before '*', axes after it) of an einops pack/unpack pattern such as 'b * d'."""
    axes = pattern.split()
    if axes.count("*") != 1:
        raise ValueError("einops pack/unpack: the pattern " + repr(pattern) + " needs exactly one '*'")
    k = axes.index("*")
    return k, len(axes) - k - 1


def _einops_pack_at_run_time(tensors, pattern):
    """einops.pack(tensors, pattern): each tensor's axes at '*' flattened into one, the
    tensors concatenated along it; returns (the packed tensor, the shapes flattened)."""
    k, m = _einops_pack_layout(pattern)
    flat = []
    shapes = []
    for t in tensors:
        if t.ndim < k + m:
            raise ValueError("einops.pack: a tensor of " + str(t.ndim) + " dimensions does not match " + repr(pattern))
        shape = tuple(t.shape)
        middle = shape[k:len(shape) - m]
        size = 1
        for n in middle:
            size *= n
        flat.append(ops.reshape(t, shape[:k] + (size,) + shape[len(shape) - m:]))
        shapes.append(middle)
    return ops.cat(flat, k), shapes


def _einops_unpack_at_run_time(tensor, packed_shapes, pattern):
    """einops.unpack(tensor, packed_shapes, pattern): the inverse of pack, as a list; one of
    the shapes may hold a -1 (its size is what the others leave)."""
    k, m = _einops_pack_layout(pattern)
    shape = tuple(tensor.shape)
    if len(shape) != k + m + 1:
        raise ValueError("einops.unpack: a tensor of " + str(len(shape)) + " dimensions does not match " + repr(pattern))
    sizes = []
    unknown = -1
    known = 0
    for i, packed in enumerate(packed_shapes):
        size = 1
        for n in packed:
            size *= n
        if -1 in tuple(packed):
            unknown = i
            size = -1
        else:
            known += size
        sizes.append(size)
    if unknown >= 0:
        rest = 1
        for n in packed_shapes[unknown]:
            if n != -1:
                rest *= n
        sizes[unknown] = shape[k] - known
        filled = []
        for n in packed_shapes[unknown]:
            filled.append((shape[k] - known) // rest if n == -1 else n)
        packed_shapes = list(packed_shapes)
        packed_shapes[unknown] = tuple(filled)
    # ops.narrow, not ops.split: GRAPH mode runs split's own axis check in Python and fails
    # there ("name 'axis' is not defined") once the sizes came through several functions
    parts = []
    start = 0
    for size, packed in zip(sizes, packed_shapes):
        part = ops.narrow(tensor, k, start, size)
        parts.append(ops.reshape(part, shape[:k] + tuple(packed) + shape[k + 1:]))
        start += size
    return parts
