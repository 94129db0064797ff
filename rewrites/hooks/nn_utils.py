"""Hooks of tables/nn_utils.toml: torch.nn.utils functions that change a layer."""
from __future__ import annotations

from typing import Any

import libcst as cst

from ..syntax import Unconvertible, emitted, keyword_call, module_spellings
from .registry import hook

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
WEIGHT_NORM = """def {name}(module, name="weight", dim=0, parametrizations=False):
    \"\"\"torch.nn.utils.weight_norm / parametrizations.weight_norm (transpile MS201): the
    layer's `name` is g * v / ||v|| (the norm over every axis but `dim`; None or -1: the
    whole tensor), recomputed from two Parameters with torch's names each time it is read.\"\"\"
    weight = getattr(module, name)
    shape = tuple(weight.shape)
    squeeze = isinstance(module, (NN.Conv1d, NN.Conv1dTranspose)) and len(shape) == 4
    v = weight.value()
    if squeeze:
        v = v.squeeze(2)
    dim = -1 if dim is None else dim
    axes = () if dim == -1 else tuple(a for a in range(v.ndim) if a != dim % v.ndim)

    def norm(t):
        if not axes:
            return OPS.sqrt(OPS.sum(t * t))
        return OPS.sqrt(OPS.sum(t * t, dim=axes, keepdim=True))

    delattr(module, name)
    if parametrizations:
        held = NN.Cell()
        held.original0 = MS.Parameter(norm(v), name="original0")
        held.original1 = MS.Parameter(v, name="original1")
        group = NN.Cell()
        setattr(group, name, held)
        module.parametrizations = group

        def parts(self):
            held = getattr(self.parametrizations, name)
            return held.original0, held.original1

    else:
        setattr(module, name + "_g", MS.Parameter(norm(v), name=name + "_g"))
        setattr(module, name + "_v", MS.Parameter(v, name=name + "_v"))

        def parts(self):
            return getattr(self, name + "_g"), getattr(self, name + "_v")

    def recomputed(self):
        g, v = parts(self)
        w = v * (g / norm(v))
        return w.reshape(shape) if squeeze else w

    base = type(module)
    prefix = "Parametrized" if parametrizations else ""
    normed = type(prefix + base.__name__, (base,), {name: property(recomputed), "_torch_weight_norm": (name, parametrizations)})
    object.__setattr__(module, "__class__", normed)
    return module
"""

# torch.nn.utils.remove_weight_norm and parametrize.remove_parametrizations of a weight
# norm: the recomputed tensor becomes a plain Parameter again, g and v go, the layer
# gets its class back.
REMOVE_WEIGHT_NORM = """def {name}(module, name="weight", leave_parametrized=True, parametrizations=False):
    \"\"\"torch.nn.utils.remove_weight_norm / parametrize.remove_parametrizations of a
    weight norm (transpile MS201): `name` is a Parameter again, holding g * v / ||v||.\"\"\"
    normed = type(module)
    held = vars(normed).get("_torch_weight_norm")
    if held is None or held[0] != name or held[1] != parametrizations:
        raise ValueError("weight_norm of '" + name + "' not found in " + type(module).__name__)
    if not leave_parametrized:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                         "parametrized in terms of a sequence of tensors.")
    weight = getattr(module, name)
    if parametrizations:
        delattr(module, "parametrizations")
    else:
        delattr(module, name + "_g")
        delattr(module, name + "_v")
    object.__setattr__(module, "__class__", normed.__bases__[0])
    setattr(module, name, MS.Parameter(weight, name=name))
    return module
"""


def _emitted(ctx, name: str, source: str) -> cst.Name:
    ms_, ops_, nn_ = module_spellings(ctx)
    return emitted(ctx, name, source.replace("MS.", f"{ms_}.").replace("OPS.", f"{ops_}.").replace("NN.", f"{nn_}."))


@hook()
def weight_norm(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``weight_norm(layer, name, dim)`` -> ``_torch_weight_norm(layer, name, dim)``
    (the parametrization: ``parametrizations=True``, set by the entry)."""
    if "module" not in args:
        raise Unconvertible("module is missing")
    return keyword_call(_emitted(ctx, "_torch_weight_norm", WEIGHT_NORM), args)


@hook()
def remove_weight_norm(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """``remove_weight_norm(layer, name)`` / ``remove_parametrizations(layer, name)`` of a
    layer ``weight_norm`` changed (any other parametrization raises when it runs)."""
    if "module" not in args:
        raise Unconvertible("module is missing")
    return keyword_call(_emitted(ctx, "_torch_remove_weight_norm", REMOVE_WEIGHT_NORM), args)
