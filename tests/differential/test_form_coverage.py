"""The call forms the differential cases cover (tests/differential/form_coverage.py), the
file ``transpile apis`` reads them from, and two rules: an entry whose torch signature has
``out`` has an ``out=`` case; an entry fed floating-point tensors has an integer-input case,
or is listed with why in form_gaps.toml (a list that only shrinks)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from transpile.rewrites.table_calls import tables

from . import form_coverage

GAPS_FILE = Path(__file__).with_name("form_gaps.toml")


@pytest.fixture(scope="module")
def cases() -> list:
    return form_coverage.differential_cases()


@pytest.fixture(scope="module")
def covered(cases) -> dict[str, dict]:
    return form_coverage.coverage(cases)


def _converted():
    return [e for e in tables().all_entries() if not e.unsupported]


def test_coverage_file_is_what_the_cases_give(cases) -> None:
    """rewrites/tables/differential_coverage.json is current (``make docs`` rewrites it)."""
    assert form_coverage.COVERAGE_FILE.read_text(encoding="utf-8") == form_coverage.coverage_text(cases), \
        "stale: run `python -m tests.differential.form_coverage` (or make docs)"


def test_every_entry_taking_out_has_an_out_case(covered) -> None:
    missing = [e.source for e in _converted() if "out" in e.source_args()
               and "out" not in covered.get(e.source, {}).get("forms", [])]
    assert not missing, missing


def test_entries_fed_floats_have_an_integer_case_or_a_listed_reason(covered) -> None:
    with GAPS_FILE.open("rb") as fh:
        listed = {name: reason for reason, names in tomllib.load(fh)["integer"].items() for name in names}
    owing = {e.source for e in _converted() if {"float"} == set(covered.get(e.source, {}).get("forms", [])) & {"float", "integer"}}
    # an entry whose table says why integer inputs do not give torch's result owes no case
    # (test_generated_forms checks that its derived case still fails)
    marked = {e.source for e in _converted() if e.integer_inputs}
    assert not sorted(owing - set(listed) - marked), \
        "no integer-input case: add one, or list the entry with why in form_gaps.toml"
    assert not sorted(set(listed) - (owing - marked)), \
        "listed in form_gaps.toml but no longer owing an integer case (or marked in its table): delete the line"


def test_entries_fed_floats_have_a_bool_case_or_a_listed_reason(covered) -> None:
    with GAPS_FILE.open("rb") as fh:
        listed = {name for names in tomllib.load(fh)["bool"].values() for name in names}
    owing = {e.source for e in _converted() if "float" in covered.get(e.source, {}).get("forms", [])
             and "bool" not in covered[e.source]["forms"]}
    assert not sorted(owing - listed), "no bool-input case: add one, or list the entry with why in form_gaps.toml"
    assert not sorted(listed - owing), "listed in form_gaps.toml [bool] but no longer owing a bool case: delete the line"


def test_forms_are_read_from_the_code() -> None:
    """Each form from what a case's code and inputs show, not from its label."""
    import numpy as np

    forms = form_coverage.code_forms
    ints, floats = {"i"}, {"f"}
    assert forms("torch.add", "def f():\n    return torch.add(a, b, alpha=2, out=o)", floats) == {"keyword", "out", "float"}
    assert forms("torch.add", "def f():\n    return torch.add(a, b)", ints) == {"integer"}
    assert forms("torch.where", "def f():\n    return torch.where(m, a, b)", {"b", "f"}) == {"integer", "bool", "float"}
    assert forms("Tensor.add", "def f():\n    return a.add(other=b)", floats) == {"keyword", "float"}
    assert forms("torch.nn.L1Loss", "torch.nn.modules.loss.L1Loss()", set()) == {"module-path"}
    assert forms("torch.optim.Adam", "from torch.optim.adam import Adam\nAdam([p])", set()) == {"module-path"}
    assert forms("torch.optim.Adam", "from torch.optim import Adam\nAdam([p])", set()) == set()
    assert forms("torch.nn.functional.relu", "def f():\n    return F.relu(a)", set()) == set()
    assert form_coverage.input_kinds((np.zeros(2, "int32"), [np.zeros(2, bool)])) == {"i", "b"}


def test_apis_reports_the_shares(covered) -> None:
    """``transpile apis`` counts, per family, the entries whose cases show each form."""
    from transpile.api import form_shares, list_apis

    apis = list_apis()
    shares = form_shares(apis)
    linalg = [e for e in _converted() if e.source.startswith("torch.linalg.")]
    taking_out = [e for e in linalg if "out" in e.source_args()]
    assert shares["torch.linalg"]["out"] == (sum("out" in covered.get(e.source, {}).get("forms", []) for e in taking_out),
                                             len(taking_out))
    recorded = json.loads(form_coverage.COVERAGE_FILE.read_text())["torch.linalg.svd"]["forms"]
    assert [f for f in recorded if f != "float"] == list(next(a for a in apis if a.source == "torch.linalg.svd").forms)
