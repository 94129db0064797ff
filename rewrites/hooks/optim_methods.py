"""Hooks of tables/optim_methods.toml: lr schedulers' methods (through MS103)."""
from __future__ import annotations

import libcst as cst

from ..syntax import Unconvertible, emitted
from .registry import hook


LAST_LR = '''
def {name}(scheduler):
    """torch's scheduler.get_last_lr(): a list of floats (MindSpore's gives 0-d Tensors,
    which a format spec like :.6f refuses)."""
    return [float(lr) for lr in scheduler.get_last_lr()]
'''


@hook()
def last_lr_floats(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``sched.get_last_lr()`` -> ``_torch_last_lr(sched)``: a helper, not the list built
    in place, so that converting the output again finds no get_last_lr() call to wrap."""
    return cst.Call(func=emitted(ctx, "_torch_last_lr", LAST_LR), args=[cst.Arg(receiver)])


@hook()
def refused(ctx, entry, args, receiver) -> cst.BaseExpression:
    """An entry MS103 must mark (its ``unsupported`` reason): MS103 applies only the
    module_method entries that have a hook, and refuses this one before calling it."""
    raise Unconvertible(entry.unsupported or "no MindSpore counterpart")
