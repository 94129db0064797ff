"""Hooks of tables/torch_utils.toml: activation checkpointing as plain calls."""
from __future__ import annotations

import libcst as cst

from ..syntax import emitted, keyword_call, operand
from .registry import hook


@hook(consumes=("function", "*"))
def call_directly(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``checkpoint(block, x, y, use_reentrant=False)`` -> ``block(x, y)``."""
    return cst.Call(func=operand(args["function"]), args=[  # (lambda u: ...)(x)
        cst.Arg(v.value, star="*") if isinstance(v, cst.StarredElement) else cst.Arg(v) for v in args.get("*", ())])


CALL_IN_SEQUENCE = '''
def {name}(functions, input):
    """torch's checkpoint_sequential without the checkpoints: a list of blocks in turn,
    a sequential container as itself."""
    if isinstance(functions, (list, tuple)):
        for function in functions:
            input = function(input)
        return input
    return functions(input)
'''


@hook(consumes=("functions", "input"))
def call_in_sequence(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``checkpoint_sequential(self.blocks, 2, x)`` -> ``_checkpoint_sequential(functions=self.blocks, input=x)``."""
    return keyword_call(emitted(ctx, "_checkpoint_sequential", CALL_IN_SEQUENCE),
                        {"functions": args["functions"], "input": args["input"]})
