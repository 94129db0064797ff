"""Run-time helpers: torch.nn.utils functions (tables/nn_utils.toml): weight and spectral
normalisation, parametrizations, packed sequences, batch norm folded into a layer.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import nn, ops


# A layer's tensor as torch shapes it: MindSpore's Conv1d and Conv1dTranspose hold
# (out, in, 1, k) where torch holds (out, in, k).
def _torch_shaped(module, name):
    """The layer's tensor `name` in torch's shape (transpile MS201): its MindSpore shape,
    whether it was squeezed, the tensor."""
    weight = getattr(module, name)
    shape = tuple(weight.shape)
    squeeze = isinstance(module, (nn.Conv1d, nn.Conv1dTranspose)) and len(shape) == 4
    value = weight.value()
    return shape, squeeze, value.squeeze(2) if squeeze else value


# MindSpore names a parameter by its path when its cell is attached; parameters added to
# a layer already attached keep their local name (two layers' weight_v would clash in a
# checkpoint). The helpers that change a layer rename its parameters by their paths,
# after the prefix the layer's parameters had.
def _torch_name_prefix(module):
    """The prefix MindSpore gave the names of `module`'s parameters (transpile MS201):
    its path and a dot once attached, else empty."""
    for path, parameter in module.parameters_and_names():
        if parameter.name.endswith(path):
            return parameter.name[: len(parameter.name) - len(path)]
    return ""


def _torch_named_by_paths(module, prefix):
    """`module`'s parameters named by their paths after `prefix` (transpile MS201)."""
    for path, parameter in module.parameters_and_names():
        parameter.name = prefix + path
    return module


# torch's weight normalisation (torch.nn.utils.weight_norm and the parametrization
# nn.utils.parametrizations.weight_norm): the layer's tensor `name` becomes
# g * v / ||v||, recomputed from two Parameters each time it is read; the norm is over
# every axis but `dim` (None or -1: the whole tensor, g a scalar). The Parameters keep
# torch's names and shapes, so torch checkpoints map name for name: `<name>_g`,
# `<name>_v` (torch.nn.utils.weight_norm) or `parametrizations.<name>.original0/1`
# (the parametrization; torch then names the class Parametrized<Layer>). The layer's
# class becomes a subclass reading `name` through a property: the layer's own
# construct uses the recomputed tensor. MindSpore's Conv1d and Conv1dTranspose hold
# (out, in, 1, k) where torch holds (out, in, k): g and v take torch's shape.
def _torch_weight_norm(module, name="weight", dim=0, as_parametrization=False):
    """torch.nn.utils.weight_norm / parametrizations.weight_norm (transpile MS201): the
    layer's `name` is g * v / ||v|| (the norm over every axis but `dim`; None or -1: the
    whole tensor), recomputed from two Parameters with torch's names each time it is read."""
    path_prefix = _torch_name_prefix(module)
    shape, squeeze, v = _torch_shaped(module, name)
    dim = -1 if dim is None else dim
    axes = () if dim == -1 else tuple(a for a in range(v.ndim) if a != dim % v.ndim)

    def norm(t):
        if not axes:
            return ops.sqrt(ops.sum(t * t))
        return ops.sqrt(ops.sum(t * t, dim=axes, keepdim=True))

    delattr(module, name)
    if as_parametrization:
        held = nn.Cell()
        held.original0 = ms.Parameter(norm(v), name="original0")
        held.original1 = ms.Parameter(v, name="original1")
        group = nn.Cell()
        setattr(group, name, held)
        module.parametrizations = group

        def parts(self):
            held = getattr(self.parametrizations, name)
            return held.original0, held.original1

    else:
        setattr(module, name + "_g", ms.Parameter(norm(v), name=name + "_g"))
        setattr(module, name + "_v", ms.Parameter(v, name=name + "_v"))

        def parts(self):
            return getattr(self, name + "_g"), getattr(self, name + "_v")

    def recomputed(self):
        g, v = parts(self)
        w = v * (g / norm(v))
        return w.reshape(shape) if squeeze else w

    base = type(module)
    prefix = "Parametrized" if as_parametrization else ""
    drop = ("parametrizations",) if as_parametrization else (name + "_g", name + "_v")
    marker = (name, as_parametrization, "weight_norm", drop, recomputed, None)
    normed = type(prefix + base.__name__, (base,), {name: property(recomputed), "_torch_parametrized": marker})
    object.__setattr__(module, "__class__", normed)
    return _torch_named_by_paths(module, path_prefix)


# torch.nn.utils.spectral_norm and parametrizations.spectral_norm: the layer's tensor
# `name` is W / sigma, sigma = u . (W v) with u, v held beside W (Parameters that take no
# gradient: torch's buffers); W is seen as a matrix with axis `dim` first (None: 1 for
# transposed convolutions, else 0). In training each computation first runs
# n_power_iterations steps of the power method on u and v, without gradient, and keeps
# them: v then u for torch.nn.utils.spectral_norm, u then v for the parametrization
# (which also runs 15 steps when applied). torch.nn.utils.spectral_norm computes the
# tensor once per call of the layer (a forward pre-hook; before any call it is W itself),
# the parametrization at each read. Names: `<name>_orig`, `<name>_u`, `<name>_v`, or
# `parametrizations.<name>.original` and `parametrizations.<name>.0._u/_v`.
def _torch_spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None, as_parametrization=False):
    """torch.nn.utils.spectral_norm / parametrizations.spectral_norm (transpile MS201): the
    layer's `name` is W / (u . W v), u and v held beside W with torch's names and updated
    by the power method in training (n_power_iterations steps each time)."""
    path_prefix = _torch_name_prefix(module)
    shape, squeeze, w = _torch_shaped(module, name)
    if dim is None:
        dim = 1 if isinstance(module, (nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose)) else 0
    dim = dim % w.ndim
    order = (dim,) + tuple(a for a in range(w.ndim) if a != dim)

    def matrix(t):
        return t.permute(order).reshape(t.shape[dim], -1)

    def normalize(t):
        return t / ops.clamp(ops.sqrt(ops.sum(t * t)), min=eps)

    def power(mat, u, v, steps):
        mat = ops.stop_gradient(mat)
        for _ in range(steps):
            if as_parametrization:
                u = normalize(ops.matmul(mat, v))
                v = normalize(ops.matmul(mat.t(), u))
            else:
                v = normalize(ops.matmul(mat.t(), u))
                u = normalize(ops.matmul(mat, v))
        return u, v

    h, rest = matrix(w).shape
    u, v = normalize(ops.standard_normal((h,))), normalize(ops.standard_normal((rest,)))
    delattr(module, name)
    if as_parametrization:
        held = nn.Cell()
        held.original = ms.Parameter(w, name="original")
        vectors = nn.Cell()
        if w.ndim > 1:
            u, v = power(matrix(w), u, v, 15)
            vectors._u = ms.Parameter(u, name="_u", requires_grad=False)
            vectors._v = ms.Parameter(v, name="_v", requires_grad=False)
        setattr(held, "0", vectors)
        group = nn.Cell()
        setattr(group, name, held)
        module.parametrizations = group

        def parts(self):
            held = getattr(self.parametrizations, name)
            vectors = getattr(held, "0")
            return held.original, getattr(vectors, "_u", None), getattr(vectors, "_v", None)

        def original(self):
            return parts(self)[0]

        drop = ("parametrizations",)
    else:
        setattr(module, name + "_orig", ms.Parameter(w, name=name + "_orig"))
        setattr(module, name + "_u", ms.Parameter(u, name=name + "_u", requires_grad=False))
        setattr(module, name + "_v", ms.Parameter(v, name=name + "_v", requires_grad=False))

        def parts(self):
            return tuple(getattr(self, name + part) for part in ("_orig", "_u", "_v"))

        def original(self):
            return getattr(self, name + "_orig")

        drop = (name + "_orig", name + "_u", name + "_v")

    def computed(self, iterate):
        w, u, v = parts(self)
        if u is None:  # the parametrization of a vector
            out = normalize(w)
        else:
            mat = matrix(w)
            if iterate:
                new_u, new_v = power(mat, u, v, n_power_iterations)
                ops.assign(u, new_u)
                ops.assign(v, new_v)
            sigma = ops.sum(ops.stop_gradient(u) * ops.matmul(mat, ops.stop_gradient(v)))
            out = w / sigma
        return out.reshape(shape) if squeeze else out

    base = type(module)
    if as_parametrization:
        members = {name: property(lambda self: computed(self, self.training))}
    else:
        cache = "_torch_spectral_norm_" + name

        def construct(self, *args, **kwargs):
            if self.training:  # the power step, once per call
                object.__setattr__(self, cache, computed(self, True))
            return base.construct(self, *args, **kwargs)

        # in eval u and v stay: the tensor of each call is computed where it is read
        # (which GRAPH mode compiles)
        object.__setattr__(module, cache, w.reshape(shape) if squeeze else w)
        members = {name: property(lambda self: getattr(self, cache) if self.training else computed(self, False)),
                   "construct": construct}
    members["_torch_parametrized"] = (name, as_parametrization, "spectral_norm", drop,
                                      lambda self: computed(self, False), original)
    normed = type(("Parametrized" if as_parametrization else "") + base.__name__, (base,), members)
    object.__setattr__(module, "__class__", normed)
    return _torch_named_by_paths(module, path_prefix)


# torch.nn.utils.remove_weight_norm / remove_spectral_norm and
# parametrize.remove_parametrizations (of a weight or spectral norm): the tensor becomes a
# plain Parameter again (torch's removals: the parametrized value; the old spectral norm's
# without a power step; leave_parametrized=False: the original), the held tensors go, the
# layer gets its class back.
def _torch_remove_parametrization(module, name="weight", leave_parametrized=True, as_parametrization=False, kind=None):
    """torch.nn.utils.remove_weight_norm / remove_spectral_norm / parametrize.remove_parametrizations
    of a weight or spectral norm (transpile MS201): `name` is a Parameter again."""
    normed = type(module)
    held = vars(normed).get("_torch_parametrized")
    if held is None or held[0] != name or held[1] != as_parametrization or kind not in (None, held[2]):
        raise ValueError((kind or "parametrization") + " of '" + name + "' not found in " + normed.__name__)
    _, _, found, drop, computed, original = held
    if leave_parametrized:
        weight = getattr(module, name) if as_parametrization else computed(module)
    elif found == "weight_norm":
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                         "parametrized in terms of a sequence of tensors.")
    else:
        weight = original(module)
    shape = tuple(getattr(module, name).shape)
    path_prefix = _torch_name_prefix(module)
    for attr in drop:
        delattr(module, attr)
    object.__setattr__(module, "__class__", normed.__bases__[0])
    setattr(module, name, ms.Parameter(weight.reshape(shape), name=name))
    return _torch_named_by_paths(module, path_prefix)


# torch's packed sequences (torch.nn.utils.rnn): MindSpore's RNN layers take the padded
# batch and a `seq_length` tensor instead, and give torch's results for it (outputs zero
# past each length, the last state at each length, lengths in any order). A packed value
# is the padded batch as given, its lengths and its layout (a tagged tuple); an RNN layer called on one
# runs with seq_length (rnn_call), and unpacking keeps max(lengths) steps (or
# total_length) with padding_value past each length. enforce_sorted is not checked.
def _torch_packed_sequence(padded, lengths, batch_first):
    """torch's PackedSequence (transpile MS201): the padded batch as given, its lengths and
    its layout, in a tagged tuple (GRAPH_MODE loses the tensors held by an object made in
    construct); an RNN layer reads the lengths as seq_length."""
    return ("torch PackedSequence", padded, lengths, batch_first)


def _torch_is_packed(value):
    """Whether value is a packed sequence (_torch_packed_sequence) (transpile MS201)."""
    return isinstance(value, tuple) and len(value) == 4 and isinstance(value[0], str) and value[0] == "torch PackedSequence"


def _torch_pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """torch.nn.utils.rnn.pack_padded_sequence (transpile MS201): the padded batch kept
    with its lengths (an int64 tensor)."""
    if not isinstance(lengths, ms.Tensor):
        lengths = ms.Tensor(lengths)
    return _torch_packed_sequence(input, lengths.astype(ms.int64), batch_first)


def _torch_pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """torch.nn.utils.rnn.pad_packed_sequence (transpile MS201): the padded batch, max(lengths)
    steps long (or total_length), padding_value past each length; and the lengths."""
    _, out, lengths, packed_batch_first = sequence
    if packed_batch_first != batch_first:
        out = ops.swapaxes(out, 0, 1)
    axis = 1 if batch_first else 0
    steps = int(lengths.max()) if total_length is None else int(total_length)
    if steps < out.shape[axis]:
        out = out[:, :steps] if batch_first else out[:steps]
    elif steps > out.shape[axis]:
        shape = list(out.shape)
        shape[axis] = steps - out.shape[axis]
        out = ops.cat([out, ops.zeros(tuple(shape), out.dtype)], axis)
    time = ops.arange(steps).astype(lengths.dtype)
    keep = time.reshape(1, -1) < lengths.reshape(-1, 1) if batch_first else time.reshape(-1, 1) < lengths.reshape(1, -1)
    keep = keep.reshape(keep.shape + (1,) * (out.ndim - 2))
    return ops.where(keep, out, ops.full_like(out, padding_value)), lengths


def _torch_rnn_call(layer, input, hx=None):
    """An RNN layer called on a packed sequence (transpile MS201): the padded batch with
    seq_length, the output packed again; any other input passes as it is."""
    if not _torch_is_packed(input):
        return layer(input, hx)
    _, x, lengths, batch_first = input
    swap = batch_first != layer.batch_first
    if swap:
        x = ops.swapaxes(x, 0, 1)
    out, h = layer(x, hx, seq_length=lengths.astype(ms.int32))
    if swap:
        out = ops.swapaxes(out, 0, 1)
    return _torch_packed_sequence(out, lengths, batch_first), h


# pad_sequence stacks sequences of different lengths (padding_value after each, or
# before: padding_side='left'); pack_sequence packs what it pads (time-major, lengths
# in the order given); unpad_sequence and unpack_sequence cut each back to its length.
def _torch_pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """torch.nn.utils.rnn.pad_sequence (transpile MS201): the sequences (steps first) stacked,
    each filled with padding_value to the longest (after it; before: padding_side='left')."""
    steps = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        if s.shape[0] < steps:
            fill = ops.full((steps - s.shape[0],) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = ops.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        rows.append(s)
    return ops.stack(rows, 0 if batch_first else 1)


def _torch_pack_sequence(sequences, enforce_sorted=True):
    """torch.nn.utils.rnn.pack_sequence (transpile MS201): the sequences padded (time-major)
    and kept with their lengths."""
    lengths = ms.Tensor([s.shape[0] for s in sequences], ms.int64)
    return _torch_packed_sequence(_torch_pad_sequence(sequences), lengths, False)


def _torch_unpad_sequence(padded_sequences, lengths, batch_first=False):
    """torch.nn.utils.rnn.unpad_sequence (transpile MS201): each sequence of the batch cut
    back to its length."""
    if not batch_first:
        padded_sequences = ops.swapaxes(padded_sequences, 0, 1)
    return [padded_sequences[i, : int(n)] for i, n in enumerate(lengths)]


def _torch_unpack_sequence(packed_sequences):
    """torch.nn.utils.rnn.unpack_sequence (transpile MS201): the sequences of a packed batch,
    each its own length."""
    padded, lengths = _torch_pad_packed_sequence(packed_sequences, batch_first=True)
    return _torch_unpad_sequence(padded, lengths, batch_first=True)


# torch.nn.utils.parameters_to_vector / vector_to_parameters: the tensors flattened into
# one vector, and a vector's slices written back into the parameters (in place).
def _torch_parameters_to_vector(parameters):
    """torch.nn.utils.parameters_to_vector (transpile MS201): the tensors flattened, one
    after another."""
    return ops.cat([p.reshape(-1) for p in parameters])


def _torch_vector_to_parameters(vec, parameters):
    """torch.nn.utils.vector_to_parameters (transpile MS201): consecutive slices of vec
    written into the parameters, each reshaped to its parameter."""
    if not isinstance(vec, ms.Tensor):
        raise TypeError(f"expected Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        size = param.size
        param.set_data(vec[pointer : pointer + size].reshape(param.shape))
        pointer += size


# torch.nn.utils.fuse_conv_bn_* / fuse_linear_bn_*: a BatchNorm in eval folded into the
# layer before it (torch's formulas); the fused layer is a copy holding the new weight
# and bias (a bias it lacked is added: MindSpore's Dense makes its BiasAdd only with one).
def _torch_fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """torch.nn.utils.fuse_conv_bn_weights (transpile MS201): the weight scaled per output
    channel (axis 1 if transpose) by bn_w / sqrt(bn_rv + bn_eps), the bias moved alike."""
    weight_dtype = conv_w.dtype
    bias_dtype = weight_dtype if conv_b is None else conv_b.dtype
    conv_b = ops.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ops.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = ops.zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = ops.rsqrt(bn_rv + bn_eps)
    shape = ((1, -1) if transpose else (-1, 1)) + (1,) * (conv_w.ndim - 2)
    w = (conv_w * (bn_w * rsqrt).reshape(shape)).astype(weight_dtype)
    b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).astype(bias_dtype)
    return (ms.Parameter(w, requires_grad=isinstance(conv_w, ms.Parameter) and conv_w.requires_grad),
            ms.Parameter(b, requires_grad=isinstance(conv_b, ms.Parameter) and conv_b.requires_grad))


def _torch_fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """torch.nn.utils.fuse_linear_bn_weights (transpile MS201): the weight's rows scaled by
    bn_w / sqrt(bn_rv + bn_eps), the bias moved alike."""
    weight_dtype = linear_w.dtype
    bias_dtype = weight_dtype if linear_b is None else linear_b.dtype
    linear_b = ops.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
    w = linear_w * scale.unsqueeze(-1).astype(weight_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).astype(bias_dtype)
    return (ms.Parameter(w, requires_grad=isinstance(linear_w, ms.Parameter) and linear_w.requires_grad),
            ms.Parameter(b, requires_grad=isinstance(linear_b, ms.Parameter) and linear_b.requires_grad))


def _torch_fused_layer(layer, bn, fuse, **options):
    """A copy of `layer` holding the weight and bias `fuse` folds the BatchNorm `bn` into
    (transpile MS201: torch.nn.utils.fuse_conv_bn_eval / fuse_linear_bn_eval)."""
    import copy

    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(layer)
    bias = fused.bias if fused.has_bias else None
    weight, bias = fuse(fused.weight, bias, bn.moving_mean, bn.moving_variance, bn.eps, bn.gamma, bn.beta, **options)
    fused.weight = ms.Parameter(weight, name="weight", requires_grad=weight.requires_grad)
    fused.bias = ms.Parameter(bias, name="bias", requires_grad=bias.requires_grad)
    if not fused.has_bias:
        fused.has_bias = True
        fused.bias_add = ops.BiasAdd()
    return fused


def _torch_fuse_conv_bn_eval(conv, bn, transpose=False):
    """torch.nn.utils.fuse_conv_bn_eval (transpile MS201): a copy of conv with bn folded in."""
    return _torch_fused_layer(conv, bn, _torch_fuse_conv_bn_weights, transpose=transpose)


def _torch_fuse_linear_bn_eval(linear, bn):
    """torch.nn.utils.fuse_linear_bn_eval (transpile MS201): a copy of linear with bn folded in."""
    if not (linear.out_channels == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1")
    return _torch_fused_layer(linear, bn, _torch_fuse_linear_bn_weights)


# parametrize.is_parametrized: the layers weight_norm / spectral_norm changed as
# parametrizations (torch.nn.utils.parametrizations) are; torch.nn.utils.weight_norm and
# spectral_norm are hooks, not parametrizations.
def _torch_is_parametrized(module, tensor_name=None):
    """torch.nn.utils.parametrize.is_parametrized (transpile MS201): whether a
    parametrizations.weight_norm / spectral_norm changed the layer (its tensor_name)."""
    held = vars(type(module)).get("_torch_parametrized")
    if held is None or not held[1]:
        return False
    return tensor_name is None or tensor_name == held[0]


# rnn.invert_permutation: the inverse of a permutation is its argsort.
def _torch_invert_permutation(permutation):
    """torch.nn.utils.rnn.invert_permutation (transpile MS201): output[permutation[i]] = i."""
    if permutation is None:
        return None
    return ops.argsort(permutation).astype(permutation.dtype)
