"""The differential harness itself: a loosened tolerance needs a reason."""
from __future__ import annotations

import pytest

from .harness import DEFAULT_TOL, Case


@pytest.mark.parametrize("tol", [{"atol": 1e-4}, {"rtol": 1e-3}, {"atol": 0.5, "rtol": 1e-2}])
def test_a_loosened_tolerance_without_a_reason_is_refused(tol) -> None:
    with pytest.raises(ValueError, match="say why"):
        Case("Tensor.half", "a.half()", **tol)
    with pytest.raises(ValueError, match="say why"):
        Case("Tensor.half", "a.half()", why="  ", **tol)
    assert Case("Tensor.half", "a.half()", why="measured", **tol).why == "measured"


def test_the_default_and_tighter_tolerances_need_no_reason() -> None:
    Case("Tensor.half", "a.half()")
    Case("Tensor.half", "a.half()", atol=0.0, rtol=0.0)
    Case("torch.fft.fftfreq", "torch.fft.fftfreq(9)", atol=1e-15, rtol=DEFAULT_TOL)
