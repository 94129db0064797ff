"""Hooks of tables/optim_methods.toml: lr schedulers' methods (through MS103)."""
from __future__ import annotations

import libcst as cst

from ..syntax import Unconvertible, operand_code
from .registry import hook


@hook()
def last_lr_floats(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``sched.get_last_lr()`` -> ``[float(lr) for lr in sched.get_last_lr()]``: torch
    gives floats, MindSpore 0-d Tensors, which ``f"{lr:.6f}"`` refuses (TypeError)."""
    return cst.parse_expression(f"[float(lr) for lr in {operand_code(receiver)}.get_last_lr()]")


@hook()
def refused(ctx, entry, args, receiver) -> cst.BaseExpression:
    """An entry MS103 must mark (its ``unsupported`` reason): MS103 applies only the
    module_method entries that have a hook, and refuses this one before calling it."""
    raise Unconvertible(entry.unsupported or "no MindSpore counterpart")
