"""Converting a converted file again changes nothing (issue 15: idempotence).

Every fixture input (tests/fixtures/*/*.py, whatever pass its directory names) and every
sample (samples/*.py) goes through the whole pipeline; its output, converted again, must
come back byte for byte, and must not fail where the first conversion did not. The
corpus benchmark (benchmarks/corpora.py) checks the same on whole repositories.
"""
from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from transpile import convert_code

ROOT = Path(__file__).resolve().parent.parent
INPUTS = sorted(
    [p for p in (ROOT / "tests" / "fixtures").glob("*/*.py") if not p.name.endswith(".expected.py")]
    + sorted((ROOT / "samples").glob("*.py"))
)


def _case_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_there_are_inputs() -> None:
    dirs = {p.parent.name for p in INPUTS}
    assert "samples" in dirs and "pipeline" in dirs and len(INPUTS) > 100


@pytest.mark.parametrize("path", INPUTS, ids=_case_id)
def test_second_conversion_changes_nothing(path: Path) -> None:
    first = convert_code(path.read_text(encoding="utf-8"), filename=path.name)
    # a failed conversion returns its input, which would convert to itself: not a pass
    assert not first.failed, [d.format() for d in first.diagnostics]
    again = convert_code(first.code, filename=path.name)
    assert not again.failed, [d.format() for d in again.diagnostics]
    diff = "\n".join(difflib.unified_diff(first.code.splitlines(), again.code.splitlines(),
                                          "first conversion", "converted again", lineterm=""))
    assert again.code == first.code, f"converting the output again changed it:\n{diff}"
