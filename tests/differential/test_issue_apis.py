"""Issue 33's Done-when as a test (issue_audit.py, issue_apis.toml): every API the issue
names is converted with a differential case in each form it names, or marked unsupported
with a reason in its table entry."""
from __future__ import annotations

import ast

import numpy as np
import pytest

from . import form_coverage, issue_audit


@pytest.fixture(scope="module")
def rows() -> list[issue_audit.Row]:
    return issue_audit.audit(form_coverage.differential_cases())


def test_every_named_api_is_covered_or_marked(rows) -> None:
    assert not [r for r in rows if r.verdict == "missing"], issue_audit.report(rows)


def test_a_mark_says_why(rows) -> None:
    assert all(r.why for r in rows if r.verdict in ("marked", "pass"))


def test_a_pass_accounts_only_for_what_it_names() -> None:
    assert issue_audit.pass_converts("MS213", "torch.inference_mode", [])
    assert issue_audit.pass_converts("MS211", "Tensor.backward", [])
    assert not issue_audit.pass_converts("MS213", "torch.autograd.grad", [])
    assert not issue_audit.pass_converts("MS211", "Tensor.to_sparse", [])
    assert not issue_audit.pass_converts("MS999", "torch.inference_mode", [])


def test_every_form_named_is_one_the_audit_reads(rows) -> None:
    # an unknown form raises; a typo in an API name shows as "no table entry"
    assert {r.form.partition(":")[0] for r in rows} <= issue_audit.CODE_FORMS | {"case", "float64", "broadcast", "arg", "path", "pass"}


def test_forms_are_read_from_the_code() -> None:
    shows = issue_audit.case_shows
    params = ("input", "dim", "keepdim")
    code = "def case():\n    return torch.max(a, 1, keepdim=True)\n"
    assert shows("arg:dim", "torch.max", params, code, [])
    assert shows("arg:keepdim=True", "torch.max", params, code, [])
    assert not shows("arg:keepdim=False", "torch.max", params, code, [])
    assert not shows("arg:dim", "torch.max", params, "def case():\n    return torch.max(a)\n", [])
    assert shows("path:torch.functional.unique", "torch.unique", (), "torch.functional.unique(a)", [])
    assert not shows("path:torch.functional.unique", "torch.unique", (), "torch.unique(a)", [])
    assert shows("broadcast", "torch.cdist", (), "", [np.zeros((2, 3)), np.zeros((1, 3))])
    assert not shows("broadcast", "torch.cdist", (), "", [np.zeros((2, 3)), np.zeros((2, 3))])
    assert shows("float64", "torch.cdist", (), "", [(np.zeros(2), np.zeros(2, "float64"))])
    call = ast.parse("f(*xs, 2)").body[0].value
    assert issue_audit.argument(call, ("a", "b"), "b") is None
