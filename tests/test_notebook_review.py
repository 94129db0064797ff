"""Notebooks in ``transpile review`` and ``transpile explain``: edits placed by cell and line,
declined edits left out of the converted notebook, decisions kept across runs."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from transpile import convert_code, convert_notebook
from transpile.io.decisions import DecisionStore
from transpile.engine.edits import EditKey
from transpile.explain import explain_notebook

ROOT = Path(__file__).resolve().parent.parent
TRANSPILE = str(Path(sys.executable).parent / "transpile")

# cells: 1 markdown, 2 the imports (with a magic), 3 markdown, 4 the model (a shell line in
# __init__ and in forward)
IMPORTS = "%matplotlib inline\nimport torch\nimport torch.nn as nn"
MODEL = """\
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 4)
        self.act = nn.ReLU()

    def forward(self, x):
        !nvidia-smi
        y = self.act(self.proj(x))
        return nn.SyncBatchNorm(4)(y)"""
CELLS = (("markdown", "# A model"), ("code", IMPORTS), ("markdown", "nn.Linear in prose stays"), ("code", MODEL))


def notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({
        "cells": [{"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True),
                   **({"outputs": [], "execution_count": None} if kind == "code" else {})} for kind, src in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })


def cell_sources(text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"]]


def the_edit(edits, code: str):
    found = [e for e in edits if e.code == code]
    assert len(found) == 1, [e.code for e in edits]
    return found[0]


def run(*args, cwd: Path, answers: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([TRANSPILE, *map(str, args)], cwd=cwd, input=answers, capture_output=True, text=True,
                          stdin=None if answers is not None else subprocess.DEVNULL)


# -- the library ---------------------------------------------------------------------------


def test_edits_are_placed_by_cell_and_line_in_that_cell() -> None:
    result = convert_notebook(notebook(*CELLS), filename="nb.ipynb", record_edits=True)
    assert result.edits and not result.failed
    lines = MODEL.split("\n")
    for edit in result.edits:
        assert edit.cell == 4, edit  # every edit is in the model's cell, the 4th of the notebook
        assert lines[edit.line - 1][edit.col:].startswith(edit.code.split("\n")[0]), edit
    linear = the_edit(result.edits, "nn.Linear(8, 4)")
    assert (linear.cell, linear.line, linear.end_line) == (4, 4, 4)
    assert linear.diff("nb.ipynb").startswith("--- nb.ipynb cell 4 line 4 (before MS201)")
    assert linear.to_dict()["cell"] == 4
    # the edit of forward spans the shell line: shown as the cell has it, not as it was parked
    forward = the_edit(result.edits, "\n".join(line[4:] for line in lines[6:]))
    assert "!nvidia-smi" in forward.code and "__transpile" not in forward.code + forward.before + forward.after
    # diagnostics name the same cell, by the same count
    (sync,) = [d for d in result.diagnostics if d.code == "MS201" and "SyncBatchNorm" in d.message]
    assert (sync.filename, sync.line) == ("nb.ipynb[cell 4]", 10)
    # without asking, nothing is recorded and the notebook is the same
    plain = convert_notebook(notebook(*CELLS), filename="nb.ipynb")
    assert plain.edits == [] and plain.code == result.code


def test_a_declined_edit_is_not_made_in_the_notebook_and_keys_are_stable() -> None:
    text = notebook(*CELLS)
    first = convert_notebook(text, record_edits=True)
    again = convert_notebook(text, record_edits=True)
    assert [e.key for e in first.edits] == [e.key for e in again.edits]
    linear = the_edit(first.edits, "nn.Linear(8, 4)")
    forward = next(e for e in first.edits if e.pass_id == "MS101")
    result = convert_notebook(text, record_edits=True, declined={linear.key, forward.key})
    imports, model = cell_sources(result.code)[1], cell_sources(result.code)[3]
    assert "self.proj = torch.nn.Linear(8, 4)  # transpile: ignore[MS201]" in model
    assert "def forward(self, x):" in model and "def construct" not in model  # declined through its shell line
    assert "        !nvidia-smi\n" in model
    assert "import torch\n" in imports and imports.startswith("%matplotlib inline\n")  # torch still needed
    assert "class Head(nn.Cell):" in model and "nn.Dense" not in model  # the other edits stand
    assert {(e.code, e.applied) for e in result.edits if not e.applied} == {(linear.code, False), (forward.code, False)}
    assert cell_sources(result.code)[2] == "nn.Linear in prose stays"


def split_at_definitions(source: str) -> list[tuple[int, str]]:
    """``source`` cut before each top-level def and class: (first line, text) of each part."""
    tree = ast.parse(source)
    starts = sorted({1} | {min([n.lineno] + [d.lineno for d in n.decorator_list]) for n in tree.body
                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))})
    lines = source.splitlines()
    bounds = starts + [len(lines) + 1]
    return [(first, "\n".join(lines[first - 1:end - 1])) for first, end in zip(bounds, bounds[1:])]


# box_select holds nothing to convert (its selection is left as it is): no edit to place
@pytest.mark.parametrize("sample", sorted(p.name for p in (ROOT / "samples").glob("*.py") if p.name != "box_select.py"))
def test_a_sample_cut_into_cells_has_the_edits_of_the_file_at_the_same_places(sample: str) -> None:
    """Each part of a sample in a code cell after a markdown cell: the notebook's edits are the
    file's (same keys, so a decision carries over), each at the cell and line holding the file's line."""
    source = (ROOT / "samples" / sample).read_text()
    parts = split_at_definitions(source)
    cells = [cell for _, text in parts for cell in (("markdown", "notes"), ("code", text))]
    result = convert_notebook(notebook(*cells), record_edits=True)
    first_line = {2 * i + 2: first for i, (first, _) in enumerate(parts)}  # cell number -> its line in the file
    placed = sorted((e.key, first_line[e.cell] + e.line - 1 if e.line else 0, e.col, e.applied) for e in result.edits)
    expected = sorted((e.key, e.line, e.col, e.applied) for e in convert_code(source, record_edits=True).edits)
    assert placed == expected and expected


def test_explain_a_notebook_by_cell_and_line() -> None:
    text = notebook(*CELLS)
    whole = explain_notebook(text, "nb.ipynb")
    assert whole.notebook and whole.cell is None
    assert {e.cell for p in whole.passes for e in p.edits} == {4}
    at = explain_notebook(text, "nb.ipynb", cell=4, line=4)
    assert [e.code for p in at.passes for e in p.edits] == ["nn.Linear(8, 4)"]
    assert at.line_change.before == ("        self.proj = nn.Linear(8, 4)",) and at.line_change.cell == 4
    assert "nn.Dense(" in at.line_change.after[0]
    assert at.line_change.diff("nb.ipynb").startswith("--- nb.ipynb cell 4 line 4\n")
    data = at.to_dict()
    assert (data["cell"], data["line"]) == (4, 4)
    imports = explain_notebook(text, "nb.ipynb", cell=2, line=3)  # an import: changed by MS901
    assert imports.line_change.after == ("import mindspore.nn as nn",)
    assert [p.doc.id for p in imports.passes] == ["MS901"]
    # declined in cell 4, the torch import of cell 2 is kept: said there, not in cell 4
    declined = {EditKey("MS201", "nn.Linear(8, 4)", 0)}
    kept = explain_notebook(text, "nb.ipynb", cell=2, declined=declined)
    assert [(p.doc.id, d.filename, d.line) for p in kept.passes for d in p.diagnostics] == [
        ("MS901", "nb.ipynb[cell 2]", 2)]
    assert "MS901" not in [p.doc.id for p in explain_notebook(text, "nb.ipynb", cell=4, declined=declined).passes]
    for cell, line, said in [(1, None, "is a markdown cell"), (5, None, "cell 5 is outside"),
                             (4, 11, "line 11 is outside cell 4"), (None, 2, "needs its cell")]:
        with pytest.raises(ValueError, match=said):
            explain_notebook(text, "nb.ipynb", cell=cell, line=line)


# -- the command line ----------------------------------------------------------------------


def test_review_a_notebook_then_convert_and_review_again(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(notebook(*CELLS))
    # piped answers: Module->Cell yes, Linear no, ReLU yes, forward yes, SyncBatchNorm (manual) Enter: no
    proc = run("review", "nb.ipynb", "-o", "out.ipynb", cwd=tmp_path, answers="y\nn\ny\ny\n\n")
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout
    assert "[2/5] nb.ipynb cell 4 line 4 col 21  MS201" in shown and "-nn.Linear(8, 4)" in shown
    assert "--- nb.ipynb cell 4 line 4 (before MS201)" in shown
    assert "[5/5] nb.ipynb cell 4 line 10 col 16  MS201" in shown and "[y/N/a/d/q/?]" in shown
    assert "5 of 5 edits decided" in shown

    model = cell_sources((tmp_path / "out.ipynb").read_text())[3]
    assert "self.proj = torch.nn.Linear(8, 4)  # transpile: ignore[MS201]" in model  # declined: not made
    assert "return torch.nn.SyncBatchNorm(4)(y)  # transpile: ignore[MS201]" in model
    assert "class Head(nn.Cell):" in model and "def construct(self, x):" in model  # accepted: made
    store = DecisionStore.load(tmp_path)
    assert store.declined(tmp_path / "nb.ipynb") == {EditKey("MS201", "nn.Linear(8, 4)", 0),
                                                      EditKey("MS201", "nn.SyncBatchNorm(4)", 0)}
    saved = (tmp_path / ".transpile" / "decisions.toml").read_text()
    assert 'file = "nb.ipynb"\ncell = 4\nline = 4\npass = "MS201"' in saved

    # convert honours the decisions (the same notebook); review has nothing left to ask
    converted = run("convert", "nb.ipynb", "-o", "out2.ipynb", cwd=tmp_path)
    assert converted.returncode == 0, converted.stderr
    assert (tmp_path / "out2.ipynb").read_text() == (tmp_path / "out.ipynb").read_text()
    quiet = run("review", "nb.ipynb", cwd=tmp_path)
    assert quiet.returncode == 0 and "no edit to decide" in quiet.stdout

    # explain sees them too, and carries the cell in JSON
    data = json.loads(run("explain", "nb.ipynb", "--cell", "4", "--line", "4", "--format", "json", cwd=tmp_path).stdout)
    assert data["cell"] == 4 and data["line"] == 4
    [edit] = [e for p in data["passes"] for e in p["edits"]]
    assert (edit["cell"], edit["line"], edit["applied"], edit["why_not"]) == (4, 4, False, "a decision")

    # the code at a decided place changes: asked again, the stale decision dropped
    changed = MODEL.replace("nn.Linear(8, 4)", "nn.Linear(8, 6)")
    (tmp_path / "nb.ipynb").write_text(notebook(*CELLS[:3], ("code", changed)))
    asked = run("review", "nb.ipynb", cwd=tmp_path, answers="q\n")
    assert asked.returncode == 0, asked.stderr
    assert "[1/1] nb.ipynb cell 4 line 4 col 21  MS201" in asked.stdout and "-nn.Linear(8, 6)" in asked.stdout
    assert DecisionStore.load(tmp_path).declined(tmp_path / "nb.ipynb") == {EditKey("MS201", "nn.SyncBatchNorm(4)", 0)}


def test_review_a_notebook_in_place_asks_in_cell_order(tmp_path: Path) -> None:
    first = IMPORTS + "\nx = torch.zeros(2)"
    (tmp_path / "nb.ipynb").write_text(notebook(("code", first), ("markdown", "text"), ("code", MODEL)))
    proc = run("review", "nb.ipynb", "--in-place", "--unsafe-only", cwd=tmp_path, answers="y\n")
    assert proc.returncode == 0, proc.stderr
    assert "[1/1] nb.ipynb cell 3 line 10 col 16  MS201" in proc.stdout  # the one edit a person must finish
    sources = cell_sources((tmp_path / "nb.ipynb").read_text())
    assert "# transpile: MS201" in sources[2] and "nn.Dense(" in sources[2] and "ops.zeros(" in sources[0]
    (tmp_path / "nb2.ipynb").write_text(notebook(("code", first), ("markdown", "text"), ("code", MODEL)))
    places = run("review", "nb2.ipynb", cwd=tmp_path, answers="q\n" * 9)
    assert "[1/6] nb2.ipynb cell 1 line 4 " in places.stdout  # cell 1 before cell 3


@pytest.mark.parametrize("args, said", [
    (["nb.ipynb", "--line", "4"], "--line 4 needs --cell"),
    (["nb.ipynb", "--cell", "1"], "is a markdown cell"),
    (["nb.ipynb", "--cell", "4", "--line", "40"], "line 40 is outside cell 4"),
    (["m.py", "--cell", "2"], "--cell is for a notebook"),
])
def test_explain_notebook_usage_errors(tmp_path: Path, args: list[str], said: str) -> None:
    (tmp_path / "nb.ipynb").write_text(notebook(*CELLS))
    (tmp_path / "m.py").write_text("import torch\n")
    proc = run("explain", *args, cwd=tmp_path)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr


def test_explain_notebook_text(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(notebook(*CELLS))
    out = run("explain", "nb.ipynb", "--cell", "4", "--color", "never", cwd=tmp_path).stdout
    assert out.startswith("nb.ipynb, cell 4: 5 edits by 2 passes; 1 diagnostic")
    assert "cell 4 line 4, col 21: applied; safe" in out and "--- nb.ipynb cell 4 line 4 (before MS201)" in out
    assert "[cell 2]" not in out  # the kept-import diagnostic of cell 2 is not this cell's
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{}")
    proc = run("explain", broken, cwd=tmp_path)
    assert proc.returncode == 1 and "not a notebook" in proc.stdout + proc.stderr
