"""Hooks of tables/torch_utils.toml: activation checkpointing as plain calls."""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import keyword_call, operand
from .registry import hook
from .torch_indexing import run_time_helper  # noqa: F401  (from_dlpack: composed beside the code)


@hook(consumes=("function", "*"))
def call_directly(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``checkpoint(block, x, y, use_reentrant=False)`` -> ``block(x, y)``."""
    return cst.Call(func=operand(args["function"]), args=[  # (lambda u: ...)(x)
        cst.Arg(v.value, star="*") if isinstance(v, cst.StarredElement) else cst.Arg(v) for v in args.get("*", ())])


@hook(consumes=("functions", "input"))
def call_in_sequence(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``checkpoint_sequential(self.blocks, 2, x)`` -> ``_checkpoint_sequential(functions=self.blocks, input=x)``."""
    return keyword_call(runtime_helper(ctx, "_checkpoint_sequential"),
                        {"functions": args["functions"], "input": args["input"]})
