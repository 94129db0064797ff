"""Hooks of tables/special_methods.toml: the Tensor methods of torch.special's functions
reuse the torch.special function's composition (``special_helper``: x.polygamma(n) is
torch.special.polygamma(n, x)) and the in-place machinery of tensor_methods.py
(``arithmetic_``)."""
from __future__ import annotations

from .special import special_helper  # noqa: F401 (x.polygamma(n) -> _special_polygamma(input=x, n=n))
from .tensor_methods import arithmetic_  # noqa: F401 (x.polygamma_(n) -> x.copy_(...))
