"""Inputs and output comparison: numpy only, no framework imports."""
from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from .spec import InputSpec, MaskRule, ParitySpec

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}


class ComparisonError(ValueError):
    """The outputs cannot be compared (shapes, counts, a mask that tests nothing)."""


@dataclass(frozen=True)
class OutputDiff:
    index: int
    torch_shape: tuple[int, ...]
    ms_shape: tuple[int, ...]
    max_abs_diff: float  # nan when a side holds nan/inf where the other does not


def make_inputs(spec: ParitySpec) -> list[np.ndarray]:
    """The spec's inputs, drawn from one numpy generator seeded with ``spec.seed``."""
    rng = np.random.RandomState(spec.seed)
    return [_draw(rng, s) for s in spec.inputs]


def _draw(rng: np.random.RandomState, s: InputSpec) -> np.ndarray:
    if s.dtype == "bool":
        return rng.uniform(0.0, 1.0, s.shape) < 0.5
    if s.dtype.startswith("float"):
        return rng.uniform(s.low, s.high, s.shape).astype(s.dtype)
    return rng.randint(int(s.low), int(s.high), s.shape).astype(s.dtype)


def mask_of(rule: MaskRule, inputs: list[np.ndarray]) -> np.ndarray:
    return np.asarray(_OPS[rule.op](inputs[rule.input], rule.value), dtype=bool)


def _max_abs(a: np.ndarray, b: np.ndarray) -> float:
    if a.size == 0:
        return 0.0
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    same_special = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    diff = np.where(same_special, 0.0, np.abs(a - b))
    return float("nan") if np.isnan(diff).any() else float(diff.max())


def compare_allclose(torch_out: list[np.ndarray], ms_out: list[np.ndarray]) -> list[OutputDiff]:
    if len(torch_out) != len(ms_out):
        raise ComparisonError(f"torch gave {len(torch_out)} outputs, MindSpore {len(ms_out)}")
    diffs = []
    for i, (t, m) in enumerate(zip(torch_out, ms_out)):
        if t.shape != m.shape:
            raise ComparisonError(f"output {i}: torch shape {t.shape}, MindSpore shape {m.shape}")
        diffs.append(OutputDiff(i, t.shape, m.shape, _max_abs(t, m)))
    return diffs


def compare_mask_rows(
    torch_out: list[np.ndarray], ms_out: list[np.ndarray], mask: np.ndarray
) -> list[OutputDiff]:
    """torch selected the masked rows; MindSpore kept every row and zeroed the others.

    The diff is the larger of: kept rows vs torch's selection, and dropped rows vs 0.
    """
    if len(torch_out) != 1 or len(ms_out) != 1:
        raise ComparisonError("mask_rows compares exactly one output")
    t, m = torch_out[0], ms_out[0]
    if mask.all() or not mask.any():
        raise ComparisonError(f"the mask keeps {int(mask.sum())} of {mask.size} entries: the inputs test nothing")
    if m.shape[: mask.ndim] != mask.shape:
        raise ComparisonError(f"MindSpore shape {m.shape} does not start with the mask's shape {mask.shape}")
    kept = m[mask]
    if t.shape != kept.shape:
        raise ComparisonError(f"torch selected shape {t.shape}, the mask keeps {kept.shape}")
    dropped = m[~mask]
    worst = max(_max_abs(t, kept), _max_abs(dropped, np.zeros_like(dropped)))
    return [OutputDiff(0, t.shape, m.shape, worst)]


def compare(spec: ParitySpec, inputs: list[np.ndarray], torch_out: list[np.ndarray],
            ms_out: list[np.ndarray]) -> list[OutputDiff]:
    if spec.compare == "mask_rows":
        assert spec.mask is not None
        return compare_mask_rows(torch_out, ms_out, mask_of(spec.mask, inputs))
    return compare_allclose(torch_out, ms_out)
