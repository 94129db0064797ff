"""Edits one by one: recording, declining (by key and by comment), the decisions file, and
``transpile review`` driven through a pseudo-terminal as a person would."""
from __future__ import annotations

import ast
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from transpile import convert_code
from transpile.io.decisions import DecisionStore, DecisionsError, find_root
from transpile.engine.diagnostics import Safety
from transpile.engine.edits import EditKey, ignored_passes

ROOT = Path(__file__).resolve().parent.parent
TRANSPILE = str(Path(sys.executable).parent / "transpile")

HEAD = """\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 4)
        self.act = nn.ReLU()

    def forward(self, x):
        y = self.act(self.proj(x))
        return nn.SyncBatchNorm(4)(y)
"""


def _edit(result, code: str):
    found = [e for e in result.edits if e.code == code]
    assert len(found) == 1, [e.code for e in result.edits]
    return found[0]


def test_edits_are_recorded_with_place_pass_and_safety():
    result = convert_code(HEAD, filename="head.py", record_edits=True)
    dense = _edit(result, "nn.Linear(8, 4)")
    assert (dense.pass_id, dense.line, dense.col, dense.applied) == ("MS201", 8, 20, True)
    assert dense.after == "nn.Dense(in_channels=8, out_channels=4, has_bias=True)"
    assert dense.safety is Safety.SAFE and dense.pass_name
    sync = _edit(result, "nn.SyncBatchNorm(4)")  # a person must finish it
    assert (sync.pass_id, sync.line, sync.safety) == ("MS201", 13, Safety.MANUAL)
    assert "distributed" in sync.reason
    assert "-nn.Linear(8, 4)\n+nn.Dense(" in dense.diff("head.py")
    # without asking, nothing is recorded and the code is the same
    plain = convert_code(HEAD, filename="head.py")
    assert plain.edits == [] and plain.code == result.code


def test_a_declined_edit_keeps_the_code_naming_torch_and_the_file_runs_as_before():
    first = convert_code(HEAD, record_edits=True)
    declined = {_edit(first, "nn.Linear(8, 4)").key}
    result = convert_code(HEAD, declined=declined, record_edits=True)
    assert "self.proj = torch.nn.Linear(8, 4)  # transpile: ignore[MS201]" in result.code
    assert result.code.startswith("try:\n    import torch\n")  # still needed: kept (tried: MS903)
    assert "nn.Dense" not in result.code and "nn.Cell" in result.code  # the other edits stand
    assert result.stats.converted == first.stats.converted - 1
    assert result.stats.unconverted == first.stats.unconverted + 1
    assert [e.applied for e in result.edits if e.code == "nn.Linear(8, 4)"] == [False]
    assert any(d.code == "MS201" and d.line == 8 and "declined by a decision" in d.message for d in result.diagnostics)
    again = convert_code(result.code)  # the comment keeps it on the next run
    assert again.code == result.code


# box_select holds nothing to convert (its selection is left as it is): no edit to decline
SAMPLES = sorted(p.name for p in (ROOT / "samples").glob("*.py") if p.name != "box_select.py")


@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLES)
def test_declining_every_edit_of_a_sample_in_turn_leaves_valid_stable_code(sample):
    """A declined edit never leaves a half-converted file: whichever is declined, the output
    parses, torch is imported where torch is named, and a second run changes nothing."""
    source = (ROOT / "samples" / sample).read_text()
    edits = convert_code(source, record_edits=True).edits
    assert edits
    for edit in edits:
        if not edit.line:
            continue
        result = convert_code(source, declined={edit.key})
        assert not result.failed, (edit, result.diagnostics)
        tree = ast.parse(result.code)
        bound = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                 for a in n.names}
        named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        assert "torch" not in named or "torch" in bound, edit  # torch named: torch imported
        assert convert_code(result.code).code == result.code, edit


def test_ignore_comments_name_all_passes_or_some():
    assert ignored_passes("# transpile: ignore") == frozenset()
    assert ignored_passes("# note  # transpile: ignore[ms301, MS201]") == {"MS301", "MS201"}
    assert ignored_passes("# transpile: MS201 torch.x: no mapping") is None
    assert ignored_passes(None) is None
    source = HEAD.replace("return nn.SyncBatchNorm(4)(y)", "return y[y > 0].sum(dim=0)  # transpile: ignore[MS301]")
    result = convert_code(source)
    assert "return ops.sum(input=y[y > 0], dim=0)  # transpile: ignore[MS301]" in result.code
    whole = convert_code(HEAD.replace("self.act = nn.ReLU()", "self.act = nn.ReLU()  # transpile: ignore"))
    assert "self.act = torch.nn.ReLU()  # transpile: ignore" in whole.code


def test_an_ignored_line_gets_no_marker_of_the_ignored_pass():
    source = "import torch\n\n\ndef f(x):\n    return torch.nn.functional.fractional_max_pool2d(x, 2)\n"
    marked = convert_code(source).code
    assert "# transpile: MS201" in marked  # no MindSpore mapping: marked
    quiet = convert_code(source.replace("(x, 2)\n", "(x, 2)  # transpile: ignore[MS201]\n")).code
    assert "# transpile: MS201" not in quiet


def test_decisions_round_trip_and_forget_what_no_longer_matches(tmp_path):
    store = DecisionStore(tmp_path)
    result = convert_code(HEAD, record_edits=True)
    tricky = result.edits[0].__class__(**{**result.edits[0].__dict__, "code": 'a "quoted"\n\tline \x7f é'})
    store.record(tmp_path / "m.py", result.edits[1], False)
    store.record(tmp_path / "m.py", tricky, True)
    path = store.save()
    assert path == tmp_path / ".transpile" / "decisions.toml"
    loaded = DecisionStore.load(tmp_path)
    assert len(loaded) == 2
    assert loaded.declined(tmp_path / "m.py") == {result.edits[1].key}
    assert loaded.decided(tmp_path / "m.py", tricky) is True
    assert loaded.decided(tmp_path / "other.py", tricky) is None
    (tmp_path / "pyproject.toml").write_text("")  # the project's root: the lookup climbs no higher
    assert find_root([tmp_path / "sub" / "x.py"]) == tmp_path.resolve()
    assert loaded.forget_stale(tmp_path / "m.py", result.edits) == 1  # the tricky one matches no edit
    assert len(loaded) == 1


def test_a_broken_decisions_file_is_a_clear_error(tmp_path):
    (tmp_path / ".transpile").mkdir()
    (tmp_path / ".transpile" / "decisions.toml").write_text("[[decision]]\nfile = 3\n")
    with pytest.raises(DecisionsError, match="decisions.toml"):
        DecisionStore.load(tmp_path)
    (tmp_path / "m.py").write_text(HEAD)
    proc = subprocess.run([TRANSPILE, "convert", "m.py", "-o", "out.py"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2 and "cannot read the decisions" in proc.stderr
    assert not (tmp_path / "out.py").exists()


class _Terminal:
    """A program on a pseudo-terminal: read what it shows, type keys."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
        self.proc = subprocess.Popen(args, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 60.0) -> str:
        end = time.monotonic() + timeout
        while text not in self.seen:
            left = end - time.monotonic()
            assert left > 0, f"waited for {text!r}; the screen shows:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the program ended
                    chunk = ""
                if not chunk and self.proc.poll() is not None:
                    assert text in self.seen, f"ended before {text!r}:\n{self.seen}"
                self.seen += chunk.replace("\r\n", "\n")
        shown, self.seen = self.seen[:self.seen.index(text) + len(text)], self.seen[self.seen.index(text) + len(text):]
        return shown

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self, timeout: float = 120.0) -> int:
        try:
            while True:
                ready, _, _ = select.select([self.master], [], [], 1.0)
                if ready:
                    try:
                        chunk = os.read(self.master, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
                elif self.proc.poll() is not None:
                    break
            return self.proc.wait(timeout)
        finally:
            os.close(self.master)


def test_review_session_through_a_terminal(tmp_path):
    """Answers (a line each) in, decisions and files out; a second review asks nothing; a changed place is asked again."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "head.py").write_text(HEAD)
    term = _Terminal([TRANSPILE, "review", "src", "-o", "out"], tmp_path)
    screen = term.expect("[Y/n/a/d/q/?] ")
    assert "[1/5] src/head.py:5:" in screen and "MS201" in screen and "+nn.Cell" in screen
    term.type("y\r")
    screen = term.expect("[Y/n/a/d/q/?] ")
    assert "[2/5] src/head.py:8:" in screen and "-nn.Linear(8, 4)" in screen
    term.type("n\r")
    screen = term.expect("[Y/n/a/d/q/?] ")
    assert "[3/5] src/head.py:9:" in screen and "nn.ReLU()" in screen
    term.type("?\r")
    assert "apply the rest in this file" in term.expect("[Y/n/a/d/q/?] ")
    term.type("y\r")
    screen = term.expect("[Y/n/a/d/q/?] ")
    assert "[4/5] src/head.py:11:" in screen and "+def construct(self, x):" in screen
    term.type("y\r")
    screen = term.expect("[y/N/a/d/q/?] ")  # a person must finish it: the default is no
    assert "[5/5] src/head.py:13:" in screen and "manual" in screen and "distributed" in screen
    term.type("\r")
    assert term.finish() == 0, term.seen
    assert "5 of 5 edits decided" in term.seen

    store = DecisionStore.load(tmp_path)
    assert store.declined(tmp_path / "src" / "head.py") == {
        EditKey("MS201", "nn.Linear(8, 4)", 0), EditKey("MS201", "nn.SyncBatchNorm(4)", 0)}
    out = (tmp_path / "out" / "head.py").read_text()
    assert "self.proj = torch.nn.Linear(8, 4)  # transpile: ignore[MS201]" in out
    assert "return torch.nn.SyncBatchNorm(4)(y)  # transpile: ignore[MS201]" in out
    assert "class Head(nn.Cell):" in out and "def construct(self, x):" in out

    # convert honours the decisions; review has nothing left to ask
    again = subprocess.run([TRANSPILE, "convert", "src", "-o", "out2"], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "out2" / "head.py").read_text() == out
    quiet = subprocess.run([TRANSPILE, "review", "src"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
    assert quiet.returncode == 0 and "no edit to decide" in quiet.stdout

    # the code at a decided place changes: asked again (q keeps what was decided)
    (tmp_path / "src" / "head.py").write_text(HEAD.replace("nn.Linear(8, 4)", "nn.Linear(8, 6)"))
    term = _Terminal([TRANSPILE, "review", "src"], tmp_path)
    screen = term.expect("[Y/n/a/d/q/?] ")
    assert "[1/1] src/head.py:8:" in screen and "-nn.Linear(8, 6)" in screen
    term.type("q\r")
    assert term.finish() == 0
    store = DecisionStore.load(tmp_path)
    assert store.declined(tmp_path / "src" / "head.py") == {EditKey("MS201", "nn.SyncBatchNorm(4)", 0)}  # stale one dropped


def test_review_rest_of_file_keys_and_piped_answers(tmp_path):
    (tmp_path / "a.py").write_text(HEAD)
    (tmp_path / "b.py").write_text(HEAD)
    # piped: one answer per line; 'd' declines the rest of a.py, 'a' applies the rest of b.py
    proc = subprocess.run([TRANSPILE, "review", "a.py", "b.py"], cwd=tmp_path, input="y\nd\na\n",
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    store = DecisionStore.load(tmp_path)
    assert len(store.declined(tmp_path / "a.py")) == 4
    assert store.declined(tmp_path / "b.py") == frozenset()
    assert "10 of 10 edits decided" in proc.stdout


def test_review_unsafe_only_and_bad_input(tmp_path):
    (tmp_path / "m.py").write_text(HEAD)
    proc = subprocess.run([TRANSPILE, "review", "m.py", "--unsafe-only"], cwd=tmp_path, input="y\n",
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "[1/1] m.py:13:" in proc.stdout
    missing = subprocess.run([TRANSPILE, "review", "nope.py"], cwd=tmp_path, capture_output=True, text=True)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_an_answer_is_a_line_and_answers_only_the_edit_shown(tmp_path):
    """``y`` then Enter answers the edit on the screen; the Enter is not taken as the
    (default) answer to the next one before the person has seen it."""
    (tmp_path / "m.py").write_text(HEAD)
    term = _Terminal([TRANSPILE, "review", "m.py"], tmp_path)
    assert "[1/5] m.py:5:" in term.expect("[Y/n/a/d/q/?] ")
    term.type("y\r")
    assert "[2/5] m.py:8:" in term.expect("[Y/n/a/d/q/?] ")
    term.type("q\r")
    assert term.finish() == 0, term.seen
    assert "1 of 5 edits decided" in term.seen
    assert DecisionStore.load(tmp_path).declined(tmp_path / "m.py") == frozenset()
    assert len(DecisionStore.load(tmp_path)) == 1


def test_quitting_with_an_output_says_nothing_was_written_and_how_to_apply(tmp_path):
    (tmp_path / "m.py").write_text(HEAD)
    proc = subprocess.run([TRANSPILE, "review", "m.py", "-o", "out"], cwd=tmp_path, input="n\nq\n",
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "out").exists()
    assert "nothing written to out" in proc.stdout
    assert "transpile convert m.py -o out" in proc.stdout and "transpile review m.py -o out" in proc.stdout
    assert len(DecisionStore.load(tmp_path).declined(tmp_path / "m.py")) == 1  # the n is kept


def test_review_of_a_file_that_is_not_text_fails_with_a_message(tmp_path):
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\xff\xfe binary")
    proc = subprocess.run([TRANSPILE, "review", "blob.py"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "blob.py" in proc.stderr and "not UTF-8" in proc.stderr, proc
