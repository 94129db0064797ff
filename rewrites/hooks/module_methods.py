"""Hooks of tables/module_methods.toml: nn.Module methods (MS103 module-methods)."""
from __future__ import annotations

import libcst as cst

from .registry import hook


@hook()
def no_op(ctx, entry, args, receiver) -> cst.BaseExpression:
    """A method with nothing to do on a Cell: torch returns None. MS103 removes the call
    where it stands as a statement."""
    return cst.Name("None")
