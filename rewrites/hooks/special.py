"""Hooks of tables/special.toml: torch.special.* functions.

Where MindSpore has no kernel for a torch.special function, or its kernel differs from
torch's outside the function's domain, the call becomes a call of an exact composition
emitted once beside the converted code (``_special_<name>``, hook ``special_helper``; the
compositions are the run-time helpers of rewrites/runtime/special.py).
The compositions follow torch's documented values at the edges (NaN outside the domain,
the limits at 0 and infinity) and compute in float64 where float32 would lose digits
(MindSpore's float32 Log1p is log(1 + y): 0 for y = 1e-8).
"""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import keyword_call
from .registry import hook
from .torch_functions import cast_input_dtype, float_input, round_decimals  # noqa: F401 (shared with torch.softmax, torch.log, torch.round)


@hook(not_a_value="as a value (not called) it cannot become the composition emitted for its calls: "
                   "call it where it is used (a lambda calling it converts)")
def special_helper(ctx, entry, args, receiver) -> cst.Call:
    """``torch.special.entr(x)`` -> ``_special_entr(input=x)``, the exact composition (the
    run-time helper of that name) defined once beside the code (keywords: the entry's
    target names)."""
    if receiver is not None:
        args = {entry.receiver or "input": receiver, **args}
    return keyword_call(runtime_helper(ctx, "_special_" + entry.source.rsplit(".", 1)[-1]), args)
