"""Hooks of tables/tensor_indexing.toml: the Tensor methods share torch_indexing.py's
hooks (``run_time_helper``) and tensor_methods.py's in-place one (``arithmetic_``)."""
from __future__ import annotations

from .tensor_methods import arithmetic_  # noqa: F401
from .torch_indexing import run_time_helper  # noqa: F401
