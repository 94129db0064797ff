"""Hooks of tables/torch_math.toml: torch's math and reduction functions (their Tensor
methods in tensor_math.toml use the same hooks).

Compositions are functions emitted beside the code (``run_time_helper`` of
torch_indexing.py; the helpers are in rewrites/runtime/tensor_math.py). Results torch gives
as named tuples (``torch.kthvalue(x, 2).values``) are named tuples of the same fields here.
"""
from __future__ import annotations

import libcst as cst

from .registry import hook
from .torch_indexing import run_time_helper  # noqa: F401  (the entries' hook)


@hook(not_a_value="converted only where it is called (into its argument)")
def same_tensor(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.resolve_conj(x)`` -> ``x``: MindSpore has no lazy conjugate or negative bit
    (its conj and neg compute the values), so resolving them is the tensor itself."""
    return receiver if receiver is not None else args["input"]
