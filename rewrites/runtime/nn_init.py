"""Run-time helpers: torch.nn.init (tables/nn_init.toml): a tensor filled in place by an
initializer when it is not a name that can be written three times.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

from mindspore.common.initializer import initializer


def _torch_init_fill(tensor, init, shift=0.0):
    """torch.nn.init's in-place fill of a tensor given by an expression (transpile MS201)."""
    return tensor.assign_value(initializer(init, tensor.shape, tensor.dtype).init_data() + shift)
