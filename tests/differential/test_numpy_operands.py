"""Differential tests: a numpy scalar on the left of an arithmetic operator whose right
operand is a tensor (MS202). torch's tensor takes the operation over (the result is a
tensor); MindSpore's tensor does not, numpy's operator runs and gives an ndarray, so the
conversion spells the operation as ``ops.mul(a, t)`` and friends.

whisper's ``sinusoids`` writes ``torch.exp(-np.log(n) / k * torch.arange(c))``.
"""
from __future__ import annotations

import pytest

from .harness import DEFAULT_HEADER, Case, Suite, arr, ints

HEADER = DEFAULT_HEADER + "import numpy as np\n"
CASES = [
    Case("numpy-left.mul", "s = np.log(10000.0) / 3\n        return torch.exp(-s * torch.arange(4))", (), "name-int-tensor"),
    Case("numpy-left.mul", "return np.float64(0.5) * a", (arr(2, 3),), "call"),
    Case("numpy-left.add", "s = np.sqrt(2.0)\n        return s + a", (arr(3),), "add"),
    Case("numpy-left.sub", "s = np.float32(1.5)\n        return s - a", (arr(3),), "sub"),
    Case("numpy-left.div", "s = np.float64(3.0)\n        return s / torch.arange(1, 4)", (), "div-int-tensor"),
    Case("numpy-left.pow", "return np.float32(2.0) ** a", (arr(3),), "pow"),
    Case("numpy-left.floor_divide", "s = np.float64(7.0)\n        return s // (a + 3)", (ints(3, low=1),), "floor-divide"),
]
SUITE = Suite(CASES, header=HEADER)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_numpy_left_operand(case: Case) -> None:
    SUITE.check(case)
