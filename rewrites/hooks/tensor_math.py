"""Hooks of tables/tensor_math.toml: the Tensor methods share torch_math.py's hooks
(``run_time_helper``, ``same_tensor``) and tensor_methods.py's ``arithmetic_`` (in-place
forms) and ``astype`` (cfloat, cdouble)."""
from __future__ import annotations

from .tensor_methods import arithmetic_, astype  # noqa: F401
from .torch_math import run_time_helper, same_tensor  # noqa: F401
