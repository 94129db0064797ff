"""The real-model benchmark's verdict (benchmarks/models/verdict.py): pure numpy, no
framework. Non-finite torch outputs, constant and nearly constant outputs, and models
returning a constant tensor beside a scalar loss."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

MODELS = Path(__file__).parent.parent / "benchmarks" / "models"


def _load(name: str, file: str):
    # benchmarks/ is no package: load from the file; ms_side and run import ``verdict``
    # by its bare name (their folder is first on sys.path when they run as scripts)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, MODELS / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


verdict = _load("verdict", "verdict.py")
_load("no_torch", "no_torch.py")  # ms_side imports it by its bare name too (nothing runs on import)
REL, FACTOR = 1e-4, 10.0


def judge(got, want, errors=None):
    got = [np.asarray(g, dtype=np.float32) for g in got]
    want = [np.asarray(w, dtype=np.float32) for w in want]
    return verdict.judge(got, want, errors if errors is not None else [None] * len(want), REL, FACTOR)


RNG = np.random.default_rng(0)
VALUES = RNG.normal(size=(4, 8)).astype(np.float32)


# -- the ordinary case ------------------------------------------------------------------
def test_equal_outputs_match_and_a_wrong_one_does_not():
    assert judge([VALUES], [VALUES])["match"]
    assert judge([VALUES + 5e-5], [VALUES])["match"]  # within 1e-4 * max(1, max|torch|)
    assert not judge([VALUES + 1e-2], [VALUES])["match"]


def test_tolerance_scales_with_the_output_and_torchs_own_float32_error():
    assert verdict.tolerance(0.5, None, REL, FACTOR) == pytest.approx(1e-4)
    assert verdict.tolerance(300.0, None, REL, FACTOR) == pytest.approx(3e-2)
    assert verdict.tolerance(1.0, 1e-3, REL, FACTOR) == pytest.approx(1e-2)
    # a yardstick that is not a number adds nothing; neither does a non-finite scale
    assert verdict.tolerance(1.0, float("nan"), REL, FACTOR) == pytest.approx(1e-4)
    assert verdict.tolerance(float("inf"), float("inf"), REL, FACTOR) == pytest.approx(1e-4)


# -- non-finite torch outputs ---------------------------------------------------------
def test_an_inf_in_torchs_output_does_not_make_the_tolerance_infinite():
    want = VALUES.copy()
    want[0, 0] = np.inf
    wrong = VALUES + 1.0
    wrong[0, 0] = np.inf
    result = judge([wrong], [want])
    assert np.isfinite(result["tolerances"][0])
    assert not result["match"]
    right = VALUES.copy()
    right[0, 0] = np.inf
    assert judge([right], [want])["match"]


def test_non_finite_positions_must_match_in_position_and_value():
    want = VALUES.copy()
    want[1, 2], want[2, 3], want[3, 4] = np.nan, np.inf, -np.inf
    same = want.copy()
    assert judge([same], [want])["match"]
    for position, value in [((1, 2), 0.0), ((2, 3), -np.inf), ((3, 4), np.nan), ((2, 3), 1e30)]:
        got = want.copy()
        got[position] = value
        result = judge([got], [want])
        assert not result["match"], (position, value)
        assert result["nonfinite_mismatches"] == [1]
    moved = want.copy()
    moved[1, 2], moved[1, 3] = VALUES[1, 2], np.nan  # the nan one place to the right
    assert not judge([moved], [want])["match"]


def test_a_non_finite_value_where_torch_is_finite_is_a_mismatch():
    for value in (np.nan, np.inf):
        got = VALUES.copy()
        got[0, 1] = value
        result = judge([got], [VALUES])
        assert not result["match"]
        assert result["diffs"][0] == np.inf


# -- constant and nearly constant outputs -----------------------------------------------------
def test_a_constant_output_is_refused():
    zeros = np.zeros((4, 8))
    with pytest.raises(verdict.Refused, match="constant"):
        judge([zeros], [zeros])


def test_a_nearly_constant_output_is_refused_not_matched():
    # spread 1e-6, under the 1e-4 tolerance: the old guard (spread exactly 0) let it
    # match any conversion that reached a constant
    nearly = 0.25 + 1e-6 * RNG.random((4, 8))
    with pytest.raises(verdict.Refused, match="constant"):
        judge([np.full((4, 8), 0.25)], [nearly])
    assert not verdict.informative(nearly, verdict.tolerance(0.25, None, REL, FACTOR))


def test_an_output_spread_just_over_the_tolerance_is_judged():
    want = np.zeros((4, 8))
    want[0, 0] = 3e-4
    assert judge([want], [want])["match"]
    with pytest.raises(verdict.Refused):
        judge([np.zeros((4, 8))], [np.zeros((4, 8)) + 5e-5 * (np.arange(32).reshape(4, 8) % 2)])


def test_empty_and_all_nan_outputs_prove_nothing():
    with pytest.raises(verdict.Refused):
        judge([np.zeros((0, 3))], [np.zeros((0, 3))])
    nans = np.full((2, 2), np.nan)
    with pytest.raises(verdict.Refused):
        judge([nans], [nans])
    with pytest.raises(verdict.Refused):  # one value, not finite: no value to compare
        judge([np.array(np.nan)], [np.array(np.nan)])


# -- mixed outputs ------------------------------------------------------------------------------
def test_a_constant_tensor_beside_a_scalar_loss_is_judged_by_the_loss():
    constant, loss = np.zeros((4, 8)), np.array(2.5)
    result = judge([constant, loss], [constant, loss])
    assert result["match"]
    assert result["uninformative"] == [0]
    assert not judge([constant, loss + 1.0], [constant, loss])["match"]


def test_the_constant_part_of_a_mixed_output_must_still_match():
    constant, loss = np.zeros((4, 8)), np.array(2.5)
    assert not judge([constant + 1.0, loss], [constant, loss])["match"]


def test_a_constant_tensor_beside_a_varying_one_is_judged():
    constant = np.ones((4, 8))
    result = judge([VALUES, constant], [VALUES, constant])
    assert result["match"] and result["uninformative"] == [1]
    assert not judge([VALUES + 1.0, constant], [VALUES, constant])["match"]


def test_output_count_and_shapes_must_agree():
    with pytest.raises(verdict.Refused, match="outputs"):
        judge([VALUES], [VALUES, VALUES])
    with pytest.raises(verdict.Refused, match="shape"):
        judge([VALUES.T], [VALUES])


def test_integer_outputs_are_compared_as_numbers():
    ids = np.arange(12).reshape(3, 4)
    assert verdict.judge([ids], [ids], [0.0], REL, FACTOR)["match"]
    assert not verdict.judge([ids + 1], [ids], [0.0], REL, FACTOR)["match"]


# -- one rule, in one place ----------------------------------------------------------------
def test_the_benchmark_scripts_use_this_verdict():
    ms_side = _load("bench_models_ms_side", "ms_side.py")
    _load("lint_agreement", "lint_agreement.py")  # run imports it by its bare name too
    run = _load("bench_models_run", "run.py")
    assert ms_side.judge is verdict.judge
    assert run.tolerance is verdict.tolerance
    assert not hasattr(ms_side, "tolerance")
