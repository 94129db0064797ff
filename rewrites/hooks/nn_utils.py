"""Hooks of tables/nn_utils.toml: torch.nn.utils functions that change a layer.

Each call becomes a call of a run-time helper of rewrites/runtime/nn_utils.py (weight and
spectral norms, parametrizations, packed sequences, batch norm folded into a layer),
copied beside the code with the helpers it uses.
"""
from __future__ import annotations

from typing import Any

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible, keyword_call
from .registry import hook

PACKING_CALLS = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"})


def _helper_call(ctx, helper: str, args: dict[str, Any], required: tuple[str, ...]) -> cst.BaseExpression:
    """``helper(**args)``, the run-time helper copied beside the code; ``required`` must be given."""
    if missing := [a for a in required if a not in args]:
        raise Unconvertible(f"{', '.join(missing)} missing")
    return keyword_call(runtime_helper(ctx, helper), args)


@hook()
def weight_norm(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``weight_norm(layer, name, dim)`` -> ``_torch_weight_norm(layer, name, dim)``
    (the parametrization: ``parametrizations=True``, set by the entry)."""
    if "module" not in args:
        raise Unconvertible("module is missing")
    return keyword_call(runtime_helper(ctx, "_torch_weight_norm"), args)


@hook()
def spectral_norm(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``spectral_norm(layer, name, n_power_iterations, eps, dim)`` ->
    ``_torch_spectral_norm(layer, ...)`` (the parametrization: ``parametrizations=True``)."""
    if "module" not in args:
        raise Unconvertible("module is missing")
    return keyword_call(runtime_helper(ctx, "_torch_spectral_norm"), args)


@hook()
def remove_parametrization(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``remove_weight_norm(layer, name)`` / ``remove_spectral_norm(layer, name)`` /
    ``remove_parametrizations(layer, name)`` of a layer a weight or spectral norm changed
    (``kind`` set by the entry; any other parametrization raises when it runs)."""
    if "module" not in args:
        raise Unconvertible("module is missing")
    return keyword_call(runtime_helper(ctx, "_torch_remove_parametrization"), args)


def _emitted_call_hook(name: str, required: tuple[str, ...]):
    """A hook calling the run-time helper ``_torch_<name>`` with the call's arguments."""
    def convert(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
        return _helper_call(ctx, f"_torch_{name}", args, required)
    convert.__doc__ = f"``f(...)`` -> ``_torch_{name}(...)``, emitted beside the code."
    return hook(name)(convert)


pad_sequence = _emitted_call_hook("pad_sequence", ("sequences",))
pack_sequence = _emitted_call_hook("pack_sequence", ("sequences",))
unpad_sequence = _emitted_call_hook("unpad_sequence", ("padded_sequences", "lengths"))
unpack_sequence = _emitted_call_hook("unpack_sequence", ("packed_sequences",))
pack_padded_sequence = _emitted_call_hook("pack_padded_sequence", ("input", "lengths"))
pad_packed_sequence = _emitted_call_hook("pad_packed_sequence", ("sequence",))
parameters_to_vector = _emitted_call_hook("parameters_to_vector", ("parameters",))
vector_to_parameters = _emitted_call_hook("vector_to_parameters", ("vec", "parameters"))
fuse_conv_bn_weights = _emitted_call_hook("fuse_conv_bn_weights",
                                          ("conv_w", "conv_b", "bn_rm", "bn_rv", "bn_eps", "bn_w", "bn_b"))
fuse_linear_bn_weights = _emitted_call_hook("fuse_linear_bn_weights",
                                            ("linear_w", "linear_b", "bn_rm", "bn_rv", "bn_eps", "bn_w", "bn_b"))
fuse_conv_bn_eval = _emitted_call_hook("fuse_conv_bn_eval", ("conv", "bn"))
fuse_linear_bn_eval = _emitted_call_hook("fuse_linear_bn_eval", ("linear", "bn"))
is_parametrized = _emitted_call_hook("is_parametrized", ("module",))
invert_permutation = _emitted_call_hook("invert_permutation", ("permutation",))
# gradient clipping on the parameters' ``.grad`` (a training step's clipping is MS211's)
clip_grad_norm_ = _emitted_call_hook("clip_grad_norm_", ("parameters", "max_norm"))
clip_grad_value_ = _emitted_call_hook("clip_grad_value_", ("parameters", "clip_value"))
