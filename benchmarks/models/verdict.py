"""The real-model benchmark's verdict: does MindSpore's output match torch's?

One place for the rule (``ms_side.py`` applies it, ``run.py`` reports it, the tests in
``tests/test_model_verdict.py`` pin it). Pure numpy: no framework is imported here.

Per output (torch's ``want``, MindSpore's ``got``, same shape):

- **Non-finite values match exactly.** Where torch gave ``nan``, ``inf`` or ``-inf``,
  MindSpore must give the same value at the same position. A non-finite value never
  enters the tolerance (``inf`` there would let any finite output match).
- **Finite values match within the tolerance**
  ``max(rel * max(1, max|finite torch value|), factor * e32)``, where ``e32`` is torch's
  own float32 rounding error (its distance from a float64 run). An ``e32`` that is not a
  finite number (the float64 run overflowed, or there was none) adds nothing. Where torch
  is finite, a non-finite MindSpore value is a mismatch (``nan`` never passes).
- **Informative outputs.** An output of more than one value whose finite values spread
  over no more than the tolerance (a constant, or nearly: a gain initialised to 0) would
  match any conversion that reaches a constant of the right value, so it proves nothing.
  A one-value output (a loss, a score) is a value to compare: it is informative when it
  is finite. An empty output, or one with fewer than two finite values, is not.

The model matches when every output matches (uninformative ones too: they must still be
right) and at least one output is informative. A model whose outputs are all
uninformative is refused (an error, never a match): that is the honest reading of a
constant tensor next to a scalar loss too — the loss is compared and decides, the
constant tensor must match but is listed as proving nothing.
"""
from __future__ import annotations

import math

import numpy as np


class Refused(Exception):
    """The outputs cannot be judged (count or shapes differ, nothing informative)."""


def tolerance(max_abs: float | None, float32_error: float | None, rel: float, factor: float) -> float:
    """``max(rel * max(1, max_abs), factor * float32_error)``; a missing or non-finite
    ``max_abs`` scales by 1, a missing or non-finite ``float32_error`` adds nothing."""
    scale = max_abs if max_abs is not None and math.isfinite(max_abs) else 0.0
    err = float32_error if float32_error is not None and math.isfinite(float32_error) else 0.0
    return max(rel * max(1.0, scale), factor * err)


def _finite_max_abs(want: np.ndarray) -> float:
    finite = want[np.isfinite(want)]
    return float(np.abs(finite).max()) if finite.size else 0.0


def informative(want: np.ndarray, tol: float) -> bool:
    """Whether matching ``want`` within ``tol`` says anything about the conversion."""
    want = np.asarray(want, dtype=np.float64)
    finite = want[np.isfinite(want)]
    if want.size == 1:
        return finite.size == 1
    if finite.size < 2:
        return False
    return float(np.ptp(finite)) > tol


def compare_output(got, want, float32_error: float | None, rel: float, factor: float) -> dict:
    """One output: ``diff`` (the largest distance at torch's finite positions; ``inf``
    where MindSpore is non-finite there), ``nonfinite_mismatches`` (torch's non-finite
    positions MindSpore does not reproduce), ``tolerance``, ``match``, ``informative``."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        raise Refused(f"output shape {tuple(got.shape)}, torch gave {tuple(want.shape)}")
    got = got.astype(np.float64)
    want = want.astype(np.float64)
    tol = tolerance(_finite_max_abs(want), float32_error, rel, factor)
    finite = np.isfinite(want)
    if finite.any():
        gap = np.abs(got[finite] - want[finite])
        diff = float(np.where(np.isnan(gap), np.inf, gap).max())
    else:
        diff = 0.0
    odd_want, odd_got = want[~finite], got[~finite]
    same = (odd_got == odd_want) | (np.isnan(odd_got) & np.isnan(odd_want))
    mismatches = int((~same).sum())
    return {"diff": diff, "nonfinite_mismatches": mismatches, "tolerance": tol,
            "match": diff <= tol and mismatches == 0, "informative": informative(want, tol)}


def judge(got: list, want: list, float32_errors: list, rel: float, factor: float) -> dict:
    """The verdict of a model: ``match``, per-output ``diffs``/``tolerances``/
    ``nonfinite_mismatches``, ``uninformative`` (indices of outputs that prove nothing)
    and ``max_abs_diff``. Raises Refused when the outputs cannot be judged."""
    if len(got) != len(want):
        raise Refused(f"{len(got)} outputs, torch gave {len(want)}")
    if len(float32_errors) != len(want):
        raise Refused(f"{len(float32_errors)} float32 errors for {len(want)} outputs")
    parts = [compare_output(g, w, e, rel, factor) for g, w, e in zip(got, want, float32_errors)]
    if not any(p["informative"] for p in parts):
        raise Refused("every torch output is constant within the tolerance (or empty, or not finite): "
                      "matching it would prove nothing")
    diffs = [p["diff"] for p in parts]
    return {
        "match": all(p["match"] for p in parts),
        "diffs": diffs,
        "tolerances": [p["tolerance"] for p in parts],
        "nonfinite_mismatches": [p["nonfinite_mismatches"] for p in parts],
        "uninformative": [i for i, p in enumerate(parts) if not p["informative"]],
        "max_abs_diff": max(diffs) if diffs else 0.0,
    }
