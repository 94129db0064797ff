"""Run-time helpers: torch functions (tables/torch_functions.toml) whose MindSpore counterpart
differs: cat's empty operands, einsum's equation read when it runs, torch.save and
torch.load.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import numpy

import mindspore as ms
from mindspore import ops

# parts of a helper, copied with it as one definition
COPIED_WITH = {"_einsum_at_run_time_plan": "_einsum_at_run_time", "_einsum_at_run_time_apply": "_einsum_at_run_time"}


# torch.cat skips operands of shape (0,) beside tensors of another rank (a legacy rule
# torchaudio's Emformer relies on: its summary and memory start as torch.empty(0));
# MindSpore's concat refuses them ("element rank must be same"). Shapes are constants
# when GRAPH mode compiles, so the filter costs nothing there.
def _skip_empty_1d(tensors):
    """torch.cat's operands without the 1-D empty ones, which torch skips beside tensors
    of another rank and MindSpore's concat refuses (transpile MS201)."""
    kept = [t for t in tensors if t.shape != (0,)]
    if not kept:
        return tensors
    return kept


def _torch_diag(input, diagonal=0):
    """torch.diag of an expression (transpile MS201): a vector becomes a matrix with it on
    the diagonal ``diagonal``, a matrix gives that diagonal; the rank is read when it runs,
    the input evaluated once."""
    if input.ndim == 1:
        return ops.diagflat(input, diagonal)
    return ops.diagonal(input, diagonal)


# An einsum the conversion cannot write out (its equation known only when it runs, an
# ellipsis, more than two operands): this function, emitted beside the code, reads the
# equation and the operands' shapes when it runs (in MindSpore's constexpr, so GRAPH mode
# compiles the plan as constants) and computes it with sums, permutes, reshapes and one
# matmul per operand after the first. Shared by torch.einsum and einops.einsum (named=True).
@ms.constexpr
def _einsum_at_run_time_plan(equation, named, shapes):
    """The steps of ``_einsum_at_run_time``, from the equation and the operands' shapes only (a constant
    in GRAPH mode): each operand's broadcast shape, then per operand after the first
    (sum, permute, reshape) of the product so far and of that operand and the product's
    shape, then the result's (sum, permute)."""
    if equation is None or not isinstance(shapes, tuple) or not all(isinstance(s, tuple) for s in shapes):
        # GRAPH mode hands a constexpr None for a value it does not know when it compiles, and
        # a tensor for a shape whose rank it does not know (measured on MindSpore 2.10)
        raise ValueError("einsum(): GRAPH_MODE does not know the equation or the operands' ranks when it "
                         "compiles. A tensor read from a Python object built in compiled code (a dataclass, "
                         "a namedtuple, an instance), or returned beside one in a tuple, has no static "
                         "shape: return such tensors as a tuple or a dict (transpile MS504)")
    lhs, arrow, rhs = equation.partition("->")
    sides = lhs.split(",")
    if len(sides) != len(shapes):
        raise ValueError("einsum(): the equation " + repr(equation) + " names " + str(len(sides))
                         + " operands, " + str(len(shapes)) + " were given")

    def parse(side):
        if named:
            return side.split()
        side = side.replace(" ", "").replace("...", ".")
        return ["..." if c == "." else c for c in side]

    inputs = []
    sizes = {}
    widest = 0
    for side, shape in zip(sides, shapes):
        names = parse(side)
        if "..." in names:
            k = names.index("...")
            width = len(shape) - len(names) + 1
            widest = max(widest, width)
            names = names[:k] + ["..." + str(width - t) for t in range(width)] + names[k + 1:]
        if len(names) != len(shape):
            raise ValueError("einsum(): " + repr(side.strip()) + " does not match a tensor of "
                             + str(len(shape)) + " dimensions")
        if len(set(names)) != len(names):
            raise ValueError("einsum(): a repeated index in one operand (a diagonal) is not supported")
        for n, s in zip(names, shape):
            if sizes.get(n, 1) != 1 and s != 1 and sizes[n] != s:
                raise ValueError("einsum(): axis " + repr(n) + " has sizes " + str(sizes[n]) + " and " + str(s))
            sizes[n] = max(sizes.get(n, 1), s)
        inputs.append(names)
    dots = ["..." + str(widest - t) for t in range(widest)]
    out = []
    if arrow:
        for n in parse(rhs):
            out.extend(dots if n == "..." else [n])
    elif named:
        raise ValueError("einops.einsum(): the pattern needs '->'")
    else:
        every = []
        for names in inputs:
            every.extend(names)
        out = dots + sorted(n for n in set(every) if every.count(n) == 1 and not n.startswith("..."))
    for n in out:
        if n not in sizes:
            raise ValueError("einsum(): the output names " + repr(n) + ", which no operand has")

    def size(names):
        total = 1
        for n in names:
            total *= sizes[n]
        return total

    def summed(have, keep):
        return tuple(i for i, n in enumerate(have) if n not in keep), [n for n in have if n in keep]

    def permutation(have, want):
        return None if have == want else tuple(have.index(n) for n in want)

    broadcast = []
    for names, shape in zip(inputs, shapes):
        full = tuple(sizes[n] for n in names)
        broadcast.append(None if tuple(shape) == full else full)  # size-1 axes against the others'
    steps = []
    la = inputs[0]
    for i in range(1, len(inputs)):
        lb = inputs[i]
        needed = set(out)
        for names in inputs[i + 1:]:
            needed.update(names)
        sum_a, la = summed(la, needed | set(lb))
        sum_b, lb = summed(lb, needed | set(la))
        batch = [n for n in la if n in lb and n in needed]
        inner = [n for n in la if n in lb and n not in needed]
        left = [n for n in la if n not in lb]
        right = [n for n in lb if n not in la]
        steps.append((sum_a, permutation(la, batch + left + inner), (size(batch), size(left), size(inner)),
                      sum_b, permutation(lb, batch + inner + right), (size(batch), size(inner), size(right)),
                      tuple(sizes[n] for n in batch + left + right)))
        la = batch + left + right
    sum_out, la = summed(la, set(out))
    return tuple(broadcast), tuple(steps), sum_out, permutation(la, out)


def _einsum_at_run_time_apply(x, axes, permutation, shape):
    if axes:
        x = ops.sum(x, dim=axes)
    if permutation is not None:
        x = ops.permute(x, permutation)
    if shape is not None:
        x = ops.reshape(x, shape)
    return x


def _einsum_at_run_time(equation, operands, named=False):
    """einsum with an equation known only when it runs (or an ellipsis, or more than two
    operands), as sums, permutes, reshapes and one matmul per operand after the first
    (transpile MS201): MindSpore's ops.einsum has no CPU kernel. ``named``: einops'
    spelling (axis names separated by spaces), else torch's (one letter per axis)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    broadcast, steps, axes, permutation = _einsum_at_run_time_plan(equation, named, tuple([x.shape for x in operands]))
    x = operands[0]
    if broadcast[0] is not None:
        x = ops.broadcast_to(x, broadcast[0])
    for i in range(len(steps)):
        b = operands[i + 1]
        if broadcast[i + 1] is not None:
            b = ops.broadcast_to(b, broadcast[i + 1])
        sum_a, perm_a, shape_a, sum_b, perm_b, shape_b, shape = steps[i]
        a = _einsum_at_run_time_apply(x, sum_a, perm_a, shape_a)
        b = _einsum_at_run_time_apply(b, sum_b, perm_b, shape_b)
        x = ops.reshape(ops.matmul(a, b), shape)
    return _einsum_at_run_time_apply(x, axes, permutation, None)


# -- serialisation: torch.save / torch.load of anything but a bare state_dict ------------------
# save_checkpoint takes parameters (a Cell, {name: Parameter}) and, through append_dict,
# numbers and strings; a checkpoint dict ({"model": sd, "optimizer": sd, "epoch": 3}) is
# stored as its tensors under dotted paths plus a JSON layout of the rest, read back whole.
def _torch_save(obj, path):
    """torch.save of any nesting of dicts, lists and tuples of tensors, numbers and strings
    (a checkpoint dict of state_dicts) as a MindSpore checkpoint: the tensors under their
    dotted paths, the structure as JSON; _torch_load reads it back (transpile MS201)."""
    import json

    if isinstance(obj, ms.nn.Cell):
        ms.save_checkpoint(obj, path)
        return
    tensors = {}

    def layout(value, key):
        if isinstance(value, ms.Tensor):
            tensors[key] = value if isinstance(value, ms.Parameter) else ms.Parameter(value, name=key)
            return {"tensor": key}
        if isinstance(value, dict):
            return {"dict": [[k, layout(v, f"{key}.{k}" if key else str(k))] for k, v in value.items()]}
        if isinstance(value, (list, tuple)):
            items = [layout(v, f"{key}.{i}" if key else str(i)) for i, v in enumerate(value)]
            return {"tuple" if isinstance(value, tuple) else "list": items}
        if value is None or isinstance(value, (bool, int, float, str)):
            return {"value": value}
        raise TypeError(f"torch.save of a {type(value).__name__} has no MindSpore checkpoint form")

    structure = json.dumps(layout(obj, ""))
    ms.save_checkpoint(tensors, path, append_dict={"_torch_save_layout": structure})


def _torch_load(path):
    """torch.load of a MindSpore checkpoint: what _torch_save stored (a checkpoint dict), else
    the checkpoint's dict of name -> Parameter (a state_dict) (transpile MS201)."""
    import json

    tensors = ms.load_checkpoint(path)
    structure = tensors.pop("_torch_save_layout", None)
    if structure is None:
        return tensors

    def rebuild(node):
        (kind, value), = node.items()
        if kind == "tensor":
            return tensors[value]
        if kind == "dict":
            return {k: rebuild(v) for k, v in value}
        if kind in ("list", "tuple"):
            items = [rebuild(v) for v in value]
            return tuple(items) if kind == "tuple" else items
        return value

    return rebuild(json.loads(structure))


def _torch_python_number(value):
    """A numpy scalar (an element of a numpy array) as the Python number it holds; any
    other value as it is (a tensor, an array of several items: an element of a list of
    arrays): MindSpore's arange refuses numpy integers, torch's takes them (transpile MS201)."""
    if (not isinstance(value, ms.Tensor) and hasattr(value, "item") and hasattr(value, "dtype")
            and getattr(value, "ndim", 0) == 0):
        return value.item()
    return value



class _FloatLimits:
    """torch.finfo's answer for a dtype numpy does not know (transpile MS201)."""

    def __init__(self, name, bits, eps, largest, tiny, resolution):
        self.dtype = name
        self.bits = bits
        self.eps = eps
        self.max = largest
        self.min = -largest
        self.tiny = self.smallest_normal = tiny
        self.resolution = resolution


def _torch_finfo(dtype=None):
    """torch.finfo: numpy's finfo of the dtype's name (a MindSpore dtype prints as
    Float32, a torch one as torch.float32); bfloat16 and float8, which numpy lacks, from
    their formats (transpile MS201)."""
    # (bits, eps, max, smallest normal, resolution): bfloat16 has 8 exponent and 7 mantissa
    # bits; float8 e4m3fn has no infinity (448 is its largest), e5m2 is IEEE-like
    formats = {
        "bfloat16": (16, 2.0**-7, 3.3895313892515355e38, 2.0**-126, 0.01),
        "float8e4m3fn": (8, 2.0**-3, 448.0, 2.0**-6, 1.0),
        "float8e5m2": (8, 2.0**-2, 57344.0, 2.0**-14, 1.0),
    }
    name = "float32" if dtype is None else str(dtype).lower().rsplit(".", 1)[-1]
    key = name.replace("_", "")  # MindSpore's Float8E4M3FN, torch's float8_e4m3fn
    if key in formats:
        return _FloatLimits(name, *formats[key])
    return numpy.finfo(name)


def _torch_refused_argument(message):
    """A torch argument MindSpore has no counterpart for, given a value other than None
    when the call runs (transpile: the conversion noted it)."""
    raise ValueError(message)
