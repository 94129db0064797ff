"""Run-time helpers: torch.autograd.functional (tables/autograd.toml) onto MindSpore's
ops.vjp and mindspore.grad, which differentiate the function given, as torch's functional
API does, and return torch's structures: a tensor for one input, a tuple for a tuple of
inputs. (ops.jacrev, ops.jacfwd and ops.jvp compile the function from its source and
refuse a lambda written inside a call, the way these are mostly called: the Jacobian is
built here from one vector-Jacobian product per output element instead; the Hessian needs
the compiled transforms, see _autograd_hessian.)

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


def _autograd_jacobians(func, args):
    """func(*args) and, per argument, its Jacobian: output dims then the argument's dims
    (from one ops.vjp pullback per output element)."""
    output, pullback = ops.vjp(func, *args)
    basis = ops.eye(output.size, output.size, output.dtype).reshape((output.size,) + output.shape)
    rows = [pullback(basis[i]) for i in range(output.size)]
    return output, tuple(ops.stack([row[k] for row in rows]).reshape(output.shape + x.shape) for k, x in enumerate(args))


def _autograd_jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """torch.autograd.functional.jacobian of a function with one output: the Jacobian
    (output dims then input dims), one per input for a tuple of inputs."""
    several = isinstance(inputs, (tuple, list))
    _, jacobians = _autograd_jacobians(func, tuple(inputs) if several else (inputs,))
    return jacobians if several else jacobians[0]


def _autograd_hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """torch.autograd.functional.hessian of a function with one scalar output (one input:
    torch's tuple of tuples for several is not built): ops.jacfwd of ops.jacrev, compiled
    (a pullback of mindspore.grad run op by op gives 0 through a reduction over an axis in
    MindSpore 2.10), so func must be a def or a lambda on a line of its own."""
    if isinstance(inputs, (tuple, list)):
        raise ValueError("hessian: several inputs (torch's tuple of tuples of blocks) are not converted")
    return ops.jacfwd(ops.jacrev(func))(inputs)


def _autograd_jvp(func, inputs, v=None, create_graph=False, strict=False):
    """torch.autograd.functional.jvp: (func(inputs), J v), summed over the inputs of a
    tuple; v defaults to ones for an input of one element, as torch allows."""
    several = isinstance(inputs, (tuple, list))
    args = tuple(inputs) if several else (inputs,)
    vs = tuple(v) if several and v is not None else (v,) if v is not None else tuple(ops.ones_like(x) for x in args)
    output, jacobians = _autograd_jacobians(func, args)
    product = sum(ops.matmul(j.reshape(output.size, x.size), t.reshape(x.size)) for j, x, t in zip(jacobians, args, vs))
    return output, product.reshape(output.shape)


def _autograd_vjp(func, inputs, v=None, create_graph=False, strict=False):
    """torch.autograd.functional.vjp: (func(inputs), v^T J), the second a tensor for one
    input and a tuple for several; v defaults to ones (a scalar output)."""
    several = isinstance(inputs, (tuple, list))
    output, pullback = ops.vjp(func, *(tuple(inputs) if several else (inputs,)))
    grads = pullback(ops.ones_like(output) if v is None else v)
    return output, (tuple(grads) if several else grads[0])
