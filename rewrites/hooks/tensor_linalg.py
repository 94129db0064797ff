"""Hooks of tables/tensor_linalg.toml: the Tensor methods share the hooks of their
functions (``torch.svd(a)`` and ``a.svd()`` are one conversion)."""
from __future__ import annotations

from .fft import istft, stft  # noqa: F401
from .linalg import cholesky_inverse, lu_factor, lu_solve, matrix_exp, matrix_power, ormqr, qr_some, svd_some, triangular_solve  # noqa: F401
