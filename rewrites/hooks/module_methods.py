"""Hooks of tables/module_methods.toml: nn.Module methods (MS103 module-methods)."""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import keyword_call
from .registry import hook


@hook()
def no_op(ctx, entry, args, receiver) -> cst.BaseExpression:
    """A method with nothing to do on a Cell: torch returns None. MS103 removes the call
    where it stands as a statement."""
    return cst.Name("None")


def _helper_call(ctx, name: str, receiver, args) -> cst.Call:
    return keyword_call(runtime_helper(ctx, name), {"cell": receiver, **args})


@hook()
def requires_grad_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m.requires_grad_(False)`` -> ``_requires_grad_(cell=m, requires_grad=False)``."""
    return _helper_call(ctx, "_requires_grad_", receiver, args)


@hook()
def get_submodule(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m.get_submodule("0.fc")`` -> ``_get_submodule(cell=m, target="0.fc")``."""
    return _helper_call(ctx, "_get_submodule", receiver, args)


@hook()
def get_parameter(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m.get_parameter("fc.weight")`` -> ``_get_parameter(cell=m, target="fc.weight")``."""
    return _helper_call(ctx, "_get_parameter", receiver, args)


@hook()
def register_state_dict_hook(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m._register_state_dict_hook(h)`` -> ``_torch_register_state_dict_hook(cell=m, hook=h)``:
    the Cell's post-hook, taking the state dict the hook returns."""
    return _helper_call(ctx, "_torch_register_state_dict_hook", receiver, args)


@hook()
def register_load_state_dict_pre_hook(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m._register_load_state_dict_pre_hook(h, with_module)`` -> the Cell's public pre-hook,
    given the Cell first only when torch would."""
    return _helper_call(ctx, "_torch_register_load_state_dict_pre_hook", receiver, args)
