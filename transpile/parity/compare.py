"""Inputs and output comparison: numpy only, no framework imports.

Outputs are compared as trees: a tensor, or tuples, lists and dicts of them (and of
Python scalars, None and strings). Each tree is flattened into named leaves
(``out``, ``out[0]``, ``out['logits']``); both sides must have the same names.
Per leaf: allclose at the tolerance, the share of elements within it, cosine
similarity, max abs and max rel diff.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

from .spec import MaskRule, ParitySpec

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}
ROOT = "out"


class ComparisonError(ValueError):
    """The outputs cannot be compared (structure, counts, a mask that tests nothing)."""


@dataclass(frozen=True)
class OutputDiff:
    index: int
    torch_shape: tuple[int, ...]
    ms_shape: tuple[int, ...]
    max_abs_diff: float  # nan when a side holds nan/inf where the other does not, or shapes differ
    name: str = ROOT
    max_rel_diff: float = 0.0  # |d| / |torch|; inf where torch is 0 and MindSpore is not
    within: float = 1.0  # share of elements with |d| <= atol + rtol * |torch|
    cosine: float = 1.0
    allclose: bool = True
    torch_dtype: str = ""
    ms_dtype: str = ""
    note: str = ""  # why a leaf could not be compared element-wise (shapes differ, ...)

    def to_dict(self) -> dict:
        data = asdict(self)
        for key in ("max_abs_diff", "max_rel_diff", "within", "cosine"):
            value = data[key]
            data[key] = None if math.isnan(value) else (str(value) if math.isinf(value) else value)
        data["torch_shape"], data["ms_shape"] = list(self.torch_shape), list(self.ms_shape)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "OutputDiff":
        data = dict(data)
        for key in ("max_abs_diff", "max_rel_diff", "within", "cosine"):
            data[key] = math.nan if data[key] is None else float(data[key])
        data["torch_shape"], data["ms_shape"] = tuple(data["torch_shape"]), tuple(data["ms_shape"])
        return cls(**data)


# -- inputs -----------------------------------------------------------------------

def make_inputs(spec: ParitySpec) -> list:
    """The spec's inputs, drawn from one numpy generator seeded with ``spec.seed``.

    Each input is evaluated from its ``InputSpec.code()`` with ``np`` and ``rng`` in
    scope, so an emitted test that embeds the same code draws the same values.
    """
    rng = np.random.RandomState(spec.seed)
    out = []
    for i, s in enumerate(spec.inputs):
        try:
            value = eval(s.code("rng"), {"np": np, "rng": rng})  # the user's expression, in the child
        except Exception as exc:
            raise ComparisonError(f"input {i} ({s.label()}): {type(exc).__name__}: {exc}") from exc
        out.append(as_input(value))
    return out


def as_input(value):
    """Arrays (and lists of numbers) become arrays; scalars, None and strings stay."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (np.generic, list, tuple)):
        return np.asarray(value)
    return value


def mask_of(rule: MaskRule, inputs: list[np.ndarray]) -> np.ndarray:
    return np.asarray(_OPS[rule.op](inputs[rule.input], rule.value), dtype=bool)


# -- output trees -------------------------------------------------------------------

def to_tree(value, is_tensor: Callable[[object], bool], to_numpy: Callable[[object], np.ndarray], side: str):
    """A framework's output as a tree of numpy arrays, lists, dicts and plain values."""
    if is_tensor(value):
        return to_numpy(value)
    if isinstance(value, Mapping):
        return {k: to_tree(v, is_tensor, to_numpy, side) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [to_tree(v, is_tensor, to_numpy, side) for v in value]
    if isinstance(value, (bool, int, float, np.generic, np.ndarray)):
        return np.asarray(value)
    if value is None or isinstance(value, str):
        return value
    raise ComparisonError(f"{side} returned a {type(value).__name__}, not tensors (or tuples, lists, dicts of them)")


def flatten(tree, name: str = ROOT) -> list[tuple[str, object]]:
    """Named leaves in order: ``out``, ``out[0]``, ``out['logits']``."""
    if isinstance(tree, dict):
        return [leaf for k, v in tree.items() for leaf in flatten(v, f"{name}[{k!r}]")]
    if isinstance(tree, list):
        return [leaf for i, v in enumerate(tree) for leaf in flatten(v, f"{name}[{i}]")]
    return [(name, tree)]


def _special_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))


def diff_leaves(t, m, *, index: int = 0, name: str = ROOT, atol: float = 0.0, rtol: float = 0.0) -> OutputDiff:
    """Every metric for one pair of leaves (torch ``t``, MindSpore ``m``)."""
    if not isinstance(t, np.ndarray) or not isinstance(m, np.ndarray):
        same = type(t) is type(m) and t == m
        return OutputDiff(index, (), (), 0.0 if same else math.nan, name, 0.0 if same else math.nan,
                          1.0 if same else 0.0, 1.0 if same else 0.0, bool(same), type(t).__name__,
                          type(m).__name__, "" if same else f"torch gave {t!r}, MindSpore {m!r}")
    dtypes = (t.dtype.name, m.dtype.name)
    if t.shape != m.shape:
        return OutputDiff(index, t.shape, m.shape, math.nan, name, math.nan, 0.0, math.nan, False, *dtypes,
                          note=f"shapes differ: torch {tuple(t.shape)}, MindSpore {tuple(m.shape)}")
    if t.size == 0:
        return OutputDiff(index, t.shape, m.shape, 0.0, name, 0.0, 1.0, 1.0, True, *dtypes)
    a, b = t.astype(np.float64), m.astype(np.float64)
    special = _special_equal(a, b)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.where(special, 0.0, np.abs(a - b))
        close = special | (diff <= atol + rtol * np.abs(a))
        rel = np.where(diff == 0, 0.0, diff / np.abs(a))
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        if na == 0 and nb == 0:
            cosine = 1.0
        elif na == 0 or nb == 0:
            cosine = 0.0
        else:
            cosine = float(np.clip(np.dot(a.ravel(), b.ravel()) / (na * nb), -1.0, 1.0))
    nan = bool(np.isnan(diff).any())
    return OutputDiff(
        index, t.shape, m.shape, math.nan if nan else float(diff.max()), name,
        math.nan if nan else float(rel.max()), float(close.mean()), cosine, bool(close.all()), *dtypes,
    )


def compare_trees(torch_tree, ms_tree, *, atol: float = 0.0, rtol: float = 0.0) -> list[OutputDiff]:
    """Leaf by leaf; the two trees must have the same leaves (ComparisonError)."""
    t_leaves, m_leaves = flatten(torch_tree), flatten(ms_tree)
    t_names, m_names = [n for n, _ in t_leaves], [n for n, _ in m_leaves]
    if t_names != m_names:
        raise ComparisonError(f"the outputs differ in structure: torch gave {_names(t_names)}, "
                              f"MindSpore {_names(m_names)}")
    return [diff_leaves(t, m, index=i, name=n, atol=atol, rtol=rtol)
            for i, ((n, t), (_, m)) in enumerate(zip(t_leaves, m_leaves))]


def _names(names: list[str], most: int = 6) -> str:
    shown = ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
    return f"{len(names)} output{'s' if len(names) != 1 else ''} ({shown})"


def compare_mask_rows(torch_out: list, ms_out: list, mask: np.ndarray, *, atol: float = 0.0,
                      rtol: float = 0.0) -> list[OutputDiff]:
    """torch selected the masked rows; MindSpore kept every row and zeroed the others.

    torch's rows are put back where the mask keeps them, zeros elsewhere, and that is
    compared with MindSpore's result: kept rows against torch's selection, dropped
    rows against 0.
    """
    if len(torch_out) != 1 or len(ms_out) != 1:
        raise ComparisonError("mask_rows compares exactly one output")
    t, m = np.asarray(torch_out[0]), np.asarray(ms_out[0])
    if mask.all() or not mask.any():
        raise ComparisonError(f"the mask keeps {int(mask.sum())} of {mask.size} entries: the inputs test nothing")
    if m.shape[: mask.ndim] != mask.shape:
        raise ComparisonError(f"MindSpore shape {m.shape} does not start with the mask's shape {mask.shape}")
    kept = m[mask]
    if t.shape != kept.shape:
        raise ComparisonError(f"torch selected shape {t.shape}, the mask keeps {kept.shape}")
    placed = np.zeros(m.shape, dtype=t.dtype)
    placed[mask] = t
    d = diff_leaves(placed, m, atol=atol, rtol=rtol)
    return [OutputDiff(**{**asdict(d), "torch_shape": t.shape})]


def compare(spec: ParitySpec, inputs: list, torch_tree, ms_tree) -> list[OutputDiff]:
    """The spec's comparison of the two output trees."""
    if spec.compare == "mask_rows":
        assert spec.mask is not None
        t, m = [v for _, v in flatten(torch_tree)], [v for _, v in flatten(ms_tree)]
        return compare_mask_rows(t, m, mask_of(spec.mask, inputs), atol=spec.tolerance, rtol=spec.rtol)
    return compare_trees(torch_tree, ms_tree, atol=spec.tolerance, rtol=spec.rtol)
