"""Hooks of tables/special_methods.toml: the Tensor methods of torch.special's functions
reuse the torch function's hook (``polygamma``: the order as a tensor) and the in-place
machinery of tensor_methods.py (``arithmetic_``)."""
from __future__ import annotations

from .tensor_methods import arithmetic_  # noqa: F401 (x.polygamma_(n) -> x.copy_(...))
from .torch_functions import polygamma  # noqa: F401 (shared with torch.polygamma)
