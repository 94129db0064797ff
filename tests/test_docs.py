"""The documentation stays true: the README is short and links to files that exist, and
every quoted run of a read-only command (`$ transpile passes | head -3` followed by what
it printed) prints that today."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/user-guide.md", "docs/reference.md", "docs/benchmarks.md", "docs/training.md",
        "benchmarks/README.md")
# Commands that only read (run here as quoted, from the repository's root)
READ_ONLY = re.compile(r"^transpile (passes|apis|explain samples/)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def quoted_runs(text: str) -> list[tuple[str, list[str]]]:
    """(command, the lines it printed) of each fenced block that is one ``$ command`` run."""
    runs = []
    for block in FENCE.findall(text):
        lines = block.rstrip("\n").split("\n")
        if lines and lines[0].startswith("$ ") and not any(ln.startswith("$ ") for ln in lines[1:]):
            runs.append((lines[0][2:], lines[1:]))
    return runs


def differs(expected: list[str], printed: list[str]) -> str | None:
    """Where ``printed`` differs from a quoted output (None: it does not). A quoted line
    ``...`` ends the comparison; a line ending in ``...`` is abridged: its beginning."""
    for number, want in enumerate(expected):
        if want.strip() == "...":
            return None
        got = printed[number] if number < len(printed) else "(nothing)"
        same = got.startswith(want[:-3]) if want.endswith("...") else got.rstrip() == want.rstrip()
        if not same:
            return f"line {number + 1}: quoted {want!r}, printed {got!r}"
    return None


def _all_runs() -> list[tuple[str, str, list[str]]]:
    return [(doc, command, output) for doc in DOCS for command, output in
            quoted_runs((ROOT / doc).read_text(encoding="utf-8")) if READ_ONLY.match(command)]


def test_the_quoted_runs_are_found() -> None:
    commands = [command for _, command, _ in _all_runs()]
    assert "transpile passes | head -3" in commands and len(commands) >= 2, commands


@pytest.mark.parametrize("doc, command, output", _all_runs(), ids=lambda v: v if isinstance(v, str) else None)
def test_a_quoted_run_prints_what_is_quoted(doc, command, output) -> None:
    env = {**os.environ, "NO_COLOR": "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert differs(output, proc.stdout.split("\n")) is None, f"{doc}: `{command}`: {differs(output, proc.stdout.split(chr(10)))}"


def test_the_comparison_catches_a_stale_quote() -> None:
    assert differs(["a", "b..."], ["a", "bc", "d"]) is None
    assert differs(["a", "..."], ["a", "anything"]) is None
    assert differs(["a", "b"], ["a", "c"]) is not None
    assert differs(["a", "b"], ["a"]) is not None


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines < 300, f"README.md has {lines} lines: move details to docs/"


def test_links_between_the_documents_lead_somewhere() -> None:
    missing = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
            if not (ROOT / doc).parent.joinpath(target).exists():
                missing.append(f"{doc}: {target}")
    assert not missing, missing
