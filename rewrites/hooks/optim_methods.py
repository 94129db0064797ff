"""Hooks of tables/optim_methods.toml: lr schedulers' methods (through MS103)."""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible
from .registry import hook


@hook()
def last_lr_floats(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``sched.get_last_lr()`` -> ``_torch_last_lr(sched)``: a helper, not the list built
    in place, so that converting the output again finds no get_last_lr() call to wrap."""
    return cst.Call(func=runtime_helper(ctx, "_torch_last_lr"), args=[cst.Arg(receiver)])


@hook()
def refused(ctx, entry, args, receiver) -> cst.BaseExpression:
    """An entry MS103 must mark (its ``unsupported`` reason): MS103 applies only the
    module_method entries that have a hook, and refuses this one before calling it."""
    raise Unconvertible(entry.unsupported or "no MindSpore counterpart")
