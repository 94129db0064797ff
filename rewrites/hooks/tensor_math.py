"""Hooks of tables/tensor_math.toml: the Tensor methods share torch_math.py's hooks
(``run_time_helper``, ``same_tensor``) and tensor_methods.py's ``arithmetic_`` (in-place
forms) and ``astype`` (cfloat, cdouble); ``legacy_new`` is Tensor.new's own."""
from __future__ import annotations

import libcst as cst

from ..value_transforms import range_as_list
from .registry import hook
from .tensor_methods import arithmetic_, astype  # noqa: F401
from .torch_math import run_time_helper, same_tensor  # noqa: F401


@hook(not_a_value="converted only where it is called (into a function emitted beside the code)")
def legacy_new(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``x.new(...)`` -> ``_torch_new(..., input=x)`` (run_time_helper), one argument written
    as ``range(...)`` given as its list (transform range_as_list: data, never a size)."""
    values = args.get("*")
    if values is not None and len(values) == 1:
        args = {**args, "*": [range_as_list(values[0], ctx)]}
    return run_time_helper(ctx, entry, args, receiver)
