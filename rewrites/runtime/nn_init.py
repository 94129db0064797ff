"""Run-time helpers: torch.nn.init (tables/nn_init.toml): a tensor filled in place by an
initializer when it is not a name that can be written three times, and the in-place init
functions with torch's signatures, for where one is used as a value
(``{"normal_": torch.nn.init.normal_}``, ``model.apply(partial(init.zeros_))``): a call
through the value binds torch's arguments, which the MindSpore initializer classes do not
take (``Normal(sigma, mean)`` builds an initializer and fills nothing).

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests. The ``generator`` torch's
random initialisers take is not used: MindSpore's initializers draw from its global seed
(the same distribution, never the same numbers as torch).
"""

import mindspore as ms
from mindspore.common.initializer import initializer


def _torch_init_fill(tensor, init, shift=0.0):
    """torch.nn.init's in-place fill of a tensor given by an expression (transpile MS201);
    no shift is added where there is none (it would make an integer tensor float)."""
    data = initializer(init, tensor.shape, tensor.dtype).init_data()
    return tensor.assign_value(data + shift if shift else data)


def _torch_init_fill_view(tensor, view, init, shift=0.0):
    """torch.nn.init's in-place fill of ``view``, a view of all of ``tensor``'s elements in
    their order (``w.view(n, -1)``, ``w.unsqueeze(0)``; transpile MS201): the values are
    drawn for the view's shape (its fans, as torch computes them) and written into
    ``tensor``, reshaped to its shape; the filled tensor is returned in the view's shape."""
    data = initializer(init, view.shape, view.dtype).init_data()
    tensor.assign_value((data + shift if shift else data).reshape(tensor.shape))
    return tensor.reshape(view.shape)


def _torch_nn_init_uniform_(tensor, a=0.0, b=1.0, generator=None):
    """torch.nn.init.uniform_: MindSpore's Uniform(scale) draws from [-scale, scale], shifted to
    [a, b] (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Uniform(scale=(b - a) / 2), (a + b) / 2)


def _torch_nn_init_normal_(tensor, mean=0.0, std=1.0, generator=None):
    """torch.nn.init.normal_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Normal(sigma=std, mean=mean))


def _torch_nn_init_trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """torch.nn.init.trunc_normal_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.TruncatedNormal(sigma=std, mean=mean, a=a, b=b))


def _torch_nn_init_constant_(tensor, val):
    """torch.nn.init.constant_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Constant(value=val))


def _torch_nn_init_ones_(tensor):
    """torch.nn.init.ones_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.One())


def _torch_nn_init_zeros_(tensor):
    """torch.nn.init.zeros_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Zero())


def _torch_nn_init_eye_(tensor):
    """torch.nn.init.eye_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Identity())


def _torch_nn_init_dirac_(tensor, groups=1):
    """torch.nn.init.dirac_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Dirac(groups=groups))


def _torch_nn_init_xavier_uniform_(tensor, gain=1.0, generator=None):
    """torch.nn.init.xavier_uniform_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.XavierUniform(gain=gain))


def _torch_nn_init_xavier_normal_(tensor, gain=1.0, generator=None):
    """torch.nn.init.xavier_normal_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.XavierNormal(gain=gain))


def _torch_nn_init_kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """torch.nn.init.kaiming_uniform_ (transpile MS201)."""
    init = ms.common.initializer.HeUniform(negative_slope=a, mode=mode, nonlinearity=nonlinearity)
    return _torch_init_fill(tensor, init)


def _torch_nn_init_kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """torch.nn.init.kaiming_normal_ (transpile MS201)."""
    init = ms.common.initializer.HeNormal(negative_slope=a, mode=mode, nonlinearity=nonlinearity)
    return _torch_init_fill(tensor, init)


def _torch_nn_init_orthogonal_(tensor, gain=1, generator=None):
    """torch.nn.init.orthogonal_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Orthogonal(gain=gain))


def _torch_nn_init_sparse_(tensor, sparsity, std=0.01, generator=None):
    """torch.nn.init.sparse_ (transpile MS201)."""
    return _torch_init_fill(tensor, ms.common.initializer.Sparse(sparsity=sparsity, sigma=std))
