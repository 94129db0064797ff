"""Hooks of tables/torch_indexing.toml: torch's indexing and scatter functions (their
Tensor methods in tensor_indexing.toml use the same hooks).

Where MindSpore has no CPU kernel of the same meaning (``ops.index_add`` wants int32
indices, scatter reductions other than a sum), the call becomes a call of a small function
written with MindSpore ops and emitted once beside the code (``run_time_helper``): it
takes torch's arguments by torch's names, so the arguments' values are only known when it
runs (a dim held in a variable is fine). Every helper is exact; they are the run-time
helpers ``_torch_<name>`` of rewrites/runtime/indexing.py (torch_math.py's in
runtime/tensor_math.py, torch_rnn_cells.py's in runtime/rnn_cells.py).
"""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import keyword_call
from .registry import hook


@hook(not_a_value="converted only where it is called (into a function emitted beside the code)")
def run_time_helper(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.index_copy(x, 1, i, s)`` / ``x.index_copy(1, i, s)`` ->
    ``_torch_index_copy(input=x, dim=1, index=i, source=s)``, the function emitted once
    beside the code (the run-time helper ``_torch_<name>``, ``name`` the entry's own name)."""
    name = entry.source.rsplit(".", 1)[-1]
    if receiver is not None:
        args = {"input": receiver, **args}
    return keyword_call(runtime_helper(ctx, f"_torch_{name}"), args)
