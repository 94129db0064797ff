"""Fixture pairs: tests/fixtures/<dir>/<case>.py -> <case>.expected.py.

A case in tests/fixtures/<pass-name>/ runs THAT PASS ALONE, then Imports (every output
needs it: it rewrites the import lines and adds the ones the pass asked for), so its
expected file shows that pass's rewrite and nothing else. Cases whose point is the
interplay of passes live in tests/fixtures/pipeline/ and run the whole pipeline.

Every case runs with debug=True (every replacement must re-parse to the same tree), and
its output, run through the same passes again, must come back unchanged. Regenerate
expected files with TRANSPILE_REGEN=1 and review them.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from transpile.rewrites import ALL_PASSES, default_pipeline, pipeline_of

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p for p in FIXTURES.glob("*/*.py") if not p.name.endswith(".expected.py"))
PASSES = {p.name: p for p in ALL_PASSES}
PIPELINE = "pipeline"  # the directory of whole-pipeline cases

# A pass that cannot show its rewrite alone runs with the passes named here, each with
# the reason. Empty: the passes share no state (what they need to know about the file,
# FileFacts, is gathered before any of them runs, from the original tree), so each one
# runs alone.
NEEDS: dict[str, tuple[str, ...]] = {}


@functools.lru_cache(maxsize=None)
def pipeline_for(directory: str):
    if directory == PIPELINE:
        return default_pipeline()
    return pipeline_of(PASSES[directory], *(PASSES[name] for name in NEEDS.get(directory, ())))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(case: Path) -> None:
    pipeline = pipeline_for(case.parent.name)
    result = pipeline.run(case.read_text(), case.name, debug=True)
    expected = case.with_name(case.stem + ".expected.py")
    if os.environ.get("TRANSPILE_REGEN"):
        expected.write_text(result.code)
    assert expected.exists(), f"missing {expected.name}: run with TRANSPILE_REGEN=1 and review it"
    assert result.code == expected.read_text()
    assert not result.failed
    if case.stem.startswith("unchanged"):
        assert not result.changed
    again = pipeline.run(result.code, case.name, debug=True)
    assert again.code == result.code, "converting the output again changed it"


def test_fixture_directories_name_passes() -> None:
    assert {p.parent.name for p in CASES} <= set(PASSES) | {PIPELINE}
    assert set(NEEDS) <= set(PASSES) and all(set(n) <= set(PASSES) for n in NEEDS.values())


def test_every_pass_has_fixtures() -> None:
    assert set(PASSES) <= {p.parent.name for p in CASES}
