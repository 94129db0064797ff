"""Fixture pairs: tests/fixtures/<dir>/<case>.py -> <case>.expected.py.

A case in tests/fixtures/<pass-name>/ runs THAT PASS ALONE, then Imports (every output
needs it: it rewrites the import lines and adds the ones the pass asked for), so its
expected file shows that pass's rewrite and nothing else. Cases whose point is the
interplay of passes live in tests/fixtures/pipeline/ and run the whole pipeline.

Every case runs with debug=True (every replacement must re-parse to the same tree), and
its output, run through the same passes again, must come back unchanged.

Regenerate expected files by hand with ``TRANSPILE_REGEN=1 .venv/bin/python -m pytest
tests/test_fixtures.py`` (without ``-n``: one process sees every change) and review them:
the run ends with a summary of the files it changed and the passes they belong to.
Refused when ``CI`` is set: in CI an expected file is compared, never written.
"""
from __future__ import annotations

import difflib
import functools
import os
import sys
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Regenerated:
    """An expected file TRANSPILE_REGEN wrote: which, for which pass, how much changed."""

    path: Path
    group: str  # the pass's name (its fixture directory), or "pipeline"
    created: bool
    added: int  # lines
    removed: int


REGENERATED: list[Regenerated] = []  # this process's, summarised when the module's tests end


def regenerating() -> bool:
    """Whether expected files are to be written; refused (a failure) when ``CI`` is set."""
    if not os.environ.get("TRANSPILE_REGEN"):
        return False
    if os.environ.get("CI"):
        pytest.fail("TRANSPILE_REGEN is refused when CI is set: expected files are reviewed by hand, "
                    "not written by the run that checks them")
    return True


def regenerate(expected: Path, code: str) -> Regenerated | None:
    """Write ``code`` to ``expected`` when it differs; what changed (None: nothing)."""
    old = expected.read_text() if expected.exists() else None
    if old == code:
        return None
    diff = list(difflib.ndiff((old or "").splitlines(), code.splitlines()))
    expected.write_text(code)
    return Regenerated(expected, expected.parent.name, old is None,
                       sum(ln.startswith("+ ") for ln in diff), sum(ln.startswith("- ") for ln in diff))


def regeneration_summary(changes: list[Regenerated]) -> str:
    """What a TRANSPILE_REGEN run wrote: files changed and created, grouped by pass."""
    if not changes:
        return "TRANSPILE_REGEN: no expected file changed"
    groups = sorted({c.group for c in changes})
    lines = [f"TRANSPILE_REGEN: {len(changes)} expected files written "
             f"({sum(c.created for c in changes)} new), {len(groups)} passes affected: {', '.join(groups)}"]
    for c in sorted(changes, key=lambda c: (c.group, c.path.name)):
        what = "new" if c.created else f"+{c.added} -{c.removed} lines"
        lines.append(f"  {c.group}/{c.path.name}: {what}")
    lines.append("review them (git diff tests/fixtures) before committing")
    return "\n".join(lines)


class _RegenerationReport:
    """Prints the summary at the end of the session (a plugin: a fixture's teardown output
    is captured). Under pytest-xdist each worker's changes stay in the worker."""

    @staticmethod
    def pytest_terminal_summary(terminalreporter) -> None:
        terminalreporter.write_line(regeneration_summary(REGENERATED))


@pytest.fixture(scope="module", autouse=True)
def _regeneration_report(request):
    if os.environ.get("TRANSPILE_REGEN") and not os.environ.get("CI"):
        manager = request.config.pluginmanager
        if not manager.has_plugin("transpile-regeneration-report"):
            manager.register(_RegenerationReport(), "transpile-regeneration-report")


def check_fixture(case: Path, pipeline) -> None:
    result = pipeline.run(case.read_text(), case.name, debug=True)
    expected = case.with_name(case.stem + ".expected.py")
    if regenerating():
        change = regenerate(expected, result.code)
        if change is not None:
            REGENERATED.append(change)
    assert expected.exists(), f"missing {expected.name}: run with TRANSPILE_REGEN=1 and review it"
    assert result.code == expected.read_text()
    assert not result.failed
    if case.stem.startswith("unchanged"):
        assert not result.changed
    again = pipeline.run(result.code, case.name, debug=True)
    assert again.code == result.code, "converting the output again changed it"


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(case: Path) -> None:
    check_fixture(case, pipeline_for(case.parent.name))


def _case_copy(tmp_path: Path, expected_text: str | None) -> Path:
    """A fixture case of the pipeline, copied to ``tmp_path``, with the given expected file."""
    original = FIXTURES / PIPELINE / "abandoned_reference.py"
    case = tmp_path / PIPELINE / original.name
    case.parent.mkdir()
    case.write_text(original.read_text())
    if expected_text is not None:
        case.with_name(case.stem + ".expected.py").write_text(expected_text)
    return case


def test_regeneration_is_refused_under_ci(tmp_path, monkeypatch) -> None:
    case = _case_copy(tmp_path, "stale\n")
    monkeypatch.setenv("TRANSPILE_REGEN", "1")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="refused when CI is set"):
        check_fixture(case, pipeline_for(PIPELINE))
    assert case.with_name(case.stem + ".expected.py").read_text() == "stale\n"


def test_regeneration_by_hand_writes_and_reports(tmp_path, monkeypatch) -> None:
    case = _case_copy(tmp_path, "stale\n")
    monkeypatch.setenv("TRANSPILE_REGEN", "1")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.modules[__name__], "REGENERATED", [])  # this test's own list
    check_fixture(case, pipeline_for(PIPELINE))  # writes the expected file, then passes
    (change,) = REGENERATED
    assert change.group == PIPELINE and change.removed == 1 and not change.created
    check_fixture(case, pipeline_for(PIPELINE))  # now current: nothing more written
    assert len(REGENERATED) == 1
    text = regeneration_summary([change, Regenerated(tmp_path / "api-calls" / "x.expected.py", "api-calls",
                                                     True, 3, 0)])
    assert "2 expected files written (1 new), 2 passes affected: api-calls, pipeline" in text
    assert f"pipeline/{case.stem}.expected.py: +{change.added} -1 lines" in text
    assert regeneration_summary([]) == "TRANSPILE_REGEN: no expected file changed"


def test_fixture_directories_name_passes() -> None:
    assert {p.parent.name for p in CASES} <= set(PASSES) | {PIPELINE}
    assert set(NEEDS) <= set(PASSES) and all(set(n) <= set(PASSES) for n in NEEDS.values())


def test_every_pass_has_fixtures() -> None:
    assert set(PASSES) <= {p.parent.name for p in CASES}
