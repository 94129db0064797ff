"""The progress bar of directory runs: drawn on a terminal (a pseudo-terminal here),
redrawn in place and cleared at the end; never when standard error is piped or the
report is JSON."""
from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

SEED = Path(__file__).parent / "data" / "seeds" / "000_mycell_pt.py"
FILES = 5
BAR = re.compile(r"\[([#.]{20})\] +(\d+)/(\d+) files")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    root.mkdir()
    for n in range(FILES):
        (root / f"m{n}.py").write_text(SEED.read_text() + f"\nVARIANT = {n}\n")
    return root


def _convert_on_a_terminal(*args) -> str:
    """Run ``transpile convert ARGS`` with standard error on a pseudo-terminal; what it drew there."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "transpile", "convert", *map(str, args)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        drawn = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal (EIO on Linux)
                break
            if not chunk:
                break
            drawn += chunk
        proc.wait(timeout=120)
    finally:
        os.close(master)
    return drawn.decode()


def _screen(drawn: str) -> list[str]:
    """The lines a terminal shows for ``drawn``: a carriage return goes back to the line's
    start, and what follows overwrites it."""
    lines = []
    for raw in drawn.replace("\r\n", "\n").split("\n"):
        cells: list[str] = []
        column = 0
        for char in raw:
            if char == "\r":
                column = 0
                continue
            cells[column:column + 1] = [char]
            column += 1
        lines.append("".join(cells).rstrip())
    return lines


def test_bar_drawn_and_cleared_on_a_terminal(tree: Path, tmp_path: Path) -> None:
    drawn = _convert_on_a_terminal(tree, "-o", tmp_path / "out", "--jobs", "1", "--no-cache")
    bars = BAR.findall(drawn)
    assert bars, drawn
    cells, done, total = bars[-1]
    assert int(total) == FILES and int(done) == FILES and cells == "#" * 20  # the last draw: all done
    assert all(len(c.rstrip(".")) == 20 * int(d) // int(t) for c, d, t in bars)
    assert "\r" in drawn.replace("\r\n", "")  # redrawn in place, not line by line
    screen = _screen(drawn)
    assert not any(BAR.search(line) for line in screen), screen  # cleared: nothing of it left shown
    assert any("5 converted" in line for line in screen)


def test_no_bar_when_piped(tree: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "transpile", "convert", tree, "-o", tmp_path / "out",
                           "--jobs", "1", "--no-cache"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and not BAR.search(proc.stderr)
    assert "5 converted" in proc.stderr


def test_no_bar_with_a_json_report(tree: Path, tmp_path: Path) -> None:
    drawn = _convert_on_a_terminal(tree, "--diff", "--format", "json", "--jobs", "1", "--no-cache")
    assert '"summary"' in drawn  # the report went to the terminal: a bar would have too
    assert not BAR.search(drawn) and "\r" not in drawn.replace("\r\n", "")
