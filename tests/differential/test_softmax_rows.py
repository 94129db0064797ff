"""softmax where a row may be -inf everywhere (rewrites/hooks/torch_functions.py
``softmax_rows_guarded``): in a file that writes an infinity, F.softmax, torch.softmax and
Tensor.softmax go through ``_torch_softmax``, since MindSpore 2.10's CPU softmax over such a
row gives it zeros and, depending on the run, other numbers in other rows (torch: NaN in
that row, the others their own). This module's file writes one (its cases fill a mask
with -inf), so every softmax in it is guarded; the other modules' softmax cases run the
plain ``ops.softmax``. Without the guard the float32 cases with dead rows fail (4 of the 7
here, measured); the float64 ones passed in the probes, and a softmax along another axis
meets no dead row."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import Case, Suite, arr

# scores above 4 are masked (arr draws from [-2, 2)): three whole rows, and part of one
SCORES = arr(4, 6, 9)
SCORES[0, 2] = SCORES[1, 5] = SCORES[3, 0] = 5.0
SCORES[2, 1, :4] = 5.0
FILL = 'a.masked_fill(a > 4.0, float("-inf"))'

CASES = [
    Case("torch.nn.functional.softmax", f"F.softmax({FILL}, dim=-1)", (SCORES,), "dead_rows"),
    Case("torch.nn.functional.softmax", f"F.softmax({FILL}, -1, dtype=torch.float64)", (SCORES,), "dead_rows_dtype"),
    Case("torch.softmax", f"torch.softmax({FILL}, -1)", (SCORES,), "dead_rows"),
    Case("torch.softmax", f"torch.softmax({FILL}, 2, dtype=torch.float64)", (SCORES,), "dead_rows_dtype"),
    Case("Tensor.softmax", f"({FILL}).softmax(dim=-1)", (SCORES,), "dead_rows"),
    Case("Tensor.softmax", f"{FILL}.softmax(-1)", (SCORES,), "dead_rows_chained"),
    # a softmax over another axis: the dead rows are along the last one, so none along axis 1
    Case("torch.softmax", f"torch.softmax({FILL}, 1)", (SCORES,), "other_axis"),
]
SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_softmax_rows(case: Case) -> None:
    SUITE.check(case)
