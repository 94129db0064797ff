"""Fixture pairs per pass: tests/fixtures/<pass-name>/<case>.py -> <case>.expected.py.

Each case runs the whole pipeline with debug=True (every pass's output must
re-parse to the same tree). Regenerate expected files with TRANSPILE_REGEN=1.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from transpile import convert_code

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p for p in FIXTURES.glob("*/*.py") if not p.name.endswith(".expected.py"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(case: Path) -> None:
    result = convert_code(case.read_text(), filename=case.name, debug=True)
    expected = case.with_name(case.stem + ".expected.py")
    if os.environ.get("TRANSPILE_REGEN"):
        expected.write_text(result.code)
    assert expected.exists(), f"missing {expected.name}: run with TRANSPILE_REGEN=1 and review it"
    assert result.code == expected.read_text()
    if case.stem.startswith("unchanged"):
        assert not result.changed


def test_every_pass_has_fixtures() -> None:
    from transpile.rewrites import ALL_PASSES

    names = {p.parent.name for p in CASES}
    assert {p.name for p in ALL_PASSES} <= names | {"api-calls"}
