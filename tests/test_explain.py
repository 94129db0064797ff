"""`transpile passes` and `transpile explain`: the library side and the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewrites import ALL_PASSES
from rewrites.passes.api_calls import ApiCalls
from transpile.engine.diagnostics import Safety
from transpile.engine.edits import Edit
from transpile.explain import (Explanation, PassExplanation, UnknownPassError, explain_file, line_change, pass_doc,
                               pass_docs)

# line 8: nn.Linear -> nn.Dense (MS201); line 9: declined by its comment; line 11: forward
# -> construct (MS101, its code spans lines 11-13); line 13: boolean indexing (MS301: a note, the selection kept)
MODEL = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.act = nn.ReLU()  # transpile: ignore

    def forward(self, x):
        y = self.fc(x)
        return y[y > 0]
"""


def run(*args):
    return subprocess.run([sys.executable, "-m", "transpile", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


# -- transpile passes -----------------------------------------------------------------


def test_pass_docs_follow_the_pipeline() -> None:
    docs = pass_docs()
    assert [d.id for d in docs] == [p.id for p in ALL_PASSES]
    # stage 2: the imports, then the kept torch imports made optional (MS903)
    assert [(d.id, d.stage) for d in docs[-2:]] == [("MS901", 2), ("MS903", 2)] and docs[-2].derived_edits
    assert {d.stage for d in docs[:-2]} == {1}
    api = pass_doc("ms201")  # any case
    assert api.summary == ApiCalls.summary and api.examples == ApiCalls.examples
    assert api.documentation == sys.modules[ApiCalls.__module__].__doc__.strip()


def test_unknown_pass_lists_the_known_ids() -> None:
    with pytest.raises(UnknownPassError) as caught:
        pass_doc("MS999")
    assert set(caught.value.known) == {p.id for p in ALL_PASSES}


def test_passes_text_json_markdown() -> None:
    text = run("passes")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [p.id for p in ALL_PASSES]
    assert all(p.summary in line and p.name in line for p, line in zip(ALL_PASSES, lines))
    data = json.loads(run("passes", "--format", "json").stdout)
    assert [d["id"] for d in data] == [p.id for p in ALL_PASSES]
    assert data[0]["documentation"] and data[0]["examples"]
    markdown = run("passes", "--format", "markdown").stdout.splitlines()
    assert markdown[0].startswith("| id |") and len(markdown) == 2 + len(ALL_PASSES)


def test_one_pass_shown_whole() -> None:
    proc = run("passes", "MS201")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"MS201 {ApiCalls.name} (stage 1): {ApiCalls.summary}")
    assert sys.modules[ApiCalls.__module__].__doc__.strip().splitlines()[0] in proc.stdout
    for example in ApiCalls.examples:  # every example, before and after, indented
        for line in (example.before + example.after).splitlines():
            assert "    " + line in proc.stdout
    data = json.loads(run("passes", "MS201", "--format", "json").stdout)
    assert data["id"] == "MS201" and len(data["examples"]) == len(ApiCalls.examples)


def test_passes_unknown_id_exits_2() -> None:
    proc = run("passes", "MS998")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no pass or code 'MS998'" in proc.stderr and "MS201" in proc.stderr and "MS901" in proc.stderr


# -- explain: the library ---------------------------------------------------------------


def test_explain_groups_edits_by_pass() -> None:
    explanation = explain_file(MODEL, "model.py")
    assert not explanation.failed and explanation.changed and not explanation.has_errors
    by_id = {p.doc.id: p for p in explanation.passes}
    linear = [e for e in by_id["MS201"].edits if e.line == 8]
    assert len(linear) == 1 and "nn.Dense(" in linear[0].after and linear[0].applied
    assert [e.line for e in by_id["MS201"].edits] == sorted(e.line for e in by_id["MS201"].edits)
    assert by_id["MS301"].edits == [] and [d.line for d in by_id["MS301"].diagnostics] == [13]
    firsts = [p.first_line for p in explanation.passes]
    assert firsts == sorted(firsts)


def test_explain_one_line() -> None:
    at_8 = explain_file(MODEL, "model.py", line=8)
    assert [(p.doc.id, [e.line for e in p.edits]) for p in at_8.passes] == [("MS201", [8])]
    at_13 = explain_file(MODEL, "model.py", line=13)  # inside forward: MS101's edit spans it
    assert [p.doc.id for p in at_13.passes] == ["MS101", "MS301"]
    assert [d.line for p in at_13.passes for d in p.diagnostics] == [13]


def test_explain_says_what_a_line_became() -> None:
    at_8 = explain_file(MODEL, "model.py", line=8)
    change = at_8.line_change
    # (three lines down: the kept import torch became a try of four lines, MS903)
    assert (change.first, change.converted_first) == (8, 11) and change.before == (MODEL.splitlines()[7],)
    assert change.after[0].startswith("        self.fc = nn.Dense(")
    assert explain_file(MODEL, "model.py", line=12).line_change is None  # the line is kept as it was
    at_2 = explain_file(MODEL, "model.py", line=2)  # an import: the imports pass (derived edits) changed it
    assert [(p.doc.id, p.edits) for p in at_2.passes] == [("MS901", [])]
    assert at_2.passes[0].doc.derived_edits and at_2.line_change.after == ("import mindspore.nn as nn",)


def test_line_change_blocks() -> None:
    source = "a = 1\nb = 2\nc = 3\nd = 4\n"
    # as many lines on both sides: the line asked about, alone
    assert line_change(source, "a = 1\nB = 2\nC = 3\nd = 4\n", 3).before == ("c = 3",)
    # a line that became two: the whole block
    two = line_change(source, "a = 1\nb = (\n    2)\nc = 3\nd = 4\n", 2)
    assert (two.before, two.after, two.converted_first) == (("b = 2",), ("b = (", "    2)"), 2)
    gone = line_change(source, "a = 1\nc = 3\nd = 4\n", 2)  # removed
    assert gone.before == ("b = 2",) and gone.after == ()
    assert line_change(source, source, 2) is None
    # statements, not lines: one laid out over three lines is one
    laid_out = line_change(source, "a = 1\nb = (\n    2\n)\nc = 3\nD = 4\n", 2)
    assert (laid_out.before, laid_out.after) == (("b = 2",), ("b = (", "    2", ")"))


def test_line_change_pairs_the_statements_of_a_block() -> None:
    source = "y = f(x, 1)\nz = g(y, 2)\nw = h(z, 3)\n"
    code = "y0 = x + 1\ny1 = f2(y0)\ny = y1 * 2\nz = G(y, dim=2)\nw = H(z, dim=3)\n"
    # the statements at the block's edges that look like their counterpart pair off
    assert line_change(source, code, 3).after == ("w = H(z, dim=3)",)
    assert line_change(source, code, 2).after == ("z = G(y, dim=2)",)
    first = line_change(source, code, 1)  # the rest of the block: one statement became three
    assert first.before == ("y = f(x, 1)",) and first.after == ("y0 = x + 1", "y1 = f2(y0)", "y = y1 * 2")


def test_explain_line_outside_the_source() -> None:
    with pytest.raises(ValueError, match="line 14 is outside"):
        explain_file(MODEL, "model.py", line=14)


# -- explain: the command line ------------------------------------------------------------


def test_explain_text(model: Path) -> None:
    proc = run("explain", model)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"{model}: ") and "(1 declined)" in out
    assert f"--- {model}:8 (before MS201)" in out
    assert "    -nn.Linear(4, 2)\n    +nn.Dense(in_channels=4" in out
    assert "model.py:13:16: MS301 info: boolean indexing y[y > 0]" in out  # a note, no edit
    assert out.count("=== MS201 ") == 1  # grouped: one section per pass
    assert "\x1b[" not in out  # piped: no colour


def test_explain_declined_by_comment(model: Path) -> None:
    proc = run("explain", model, "--line", "9")
    assert proc.returncode == 0, proc.stderr
    assert "line 9, col 20: NOT applied: declined by a '# transpile: ignore' comment" in proc.stdout
    data = json.loads(run("explain", model, "--line", "9", "--format", "json").stdout)
    [edit] = data["passes"][0]["edits"]
    assert edit["applied"] is False and "ignore" in edit["why_not"]


def test_explain_line_filter_and_json(model: Path) -> None:
    proc = run("explain", model, "--line", "8", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["line"] == 8 and [p["id"] for p in data["passes"]] == ["MS201"]
    [edit] = data["passes"][0]["edits"]
    assert edit["line"] == 8 and edit["before"] == "nn.Linear(4, 2)" and edit["after"].startswith("nn.Dense(")
    assert "-nn.Linear(4, 2)" in edit["diff"]
    assert data["passes"][0]["examples"][0]["before"] == ApiCalls.examples[0].before
    assert data["line_change"]["before"] == ["        self.fc = nn.Linear(4, 2)"]
    text = run("explain", model, "--line", "8").stdout
    assert "MS301" not in text and "MS101" not in text and "the rule (MS201):" in text
    assert "what the conversion made of it" in text and "    -        self.fc = nn.Linear(4, 2)\n" in text


def test_explain_colour_on_request(model: Path) -> None:
    out = run("explain", model, "--line", "8", "--color", "always").stdout
    assert "\x1b[31m-nn.Linear(4, 2)\x1b[0m" in out


@pytest.mark.parametrize("case, status, said", [
    ("missing", 1, "no such file or directory"),
    ("directory", 2, "is a directory"),
    ("past_end", 2, "line 99 is outside"),
    ("syntax", 1, "MS000 error: syntax error"),
    ("notebook", 2, "is a notebook"),
    ("empty", 1, "empty file"),
])
def test_explain_bad_input(tmp_path: Path, model: Path, case: str, status: int, said: str) -> None:
    args = {
        "missing": [tmp_path / "nope.py"],
        "directory": [tmp_path],
        "past_end": [model, "--line", "99"],
        "syntax": [tmp_path / "bad.py"],
        "notebook": [tmp_path / "nb.ipynb", "--line", "3"],  # a line of which cell?
        "empty": [tmp_path / "empty.py"],
    }[case]
    (tmp_path / "bad.py").write_text("import torch\ndef f(:\n    pass\n")
    (tmp_path / "nb.ipynb").write_text("{}")
    (tmp_path / "empty.py").write_text("")
    proc = run("explain", *args)
    assert proc.returncode == status
    assert said in proc.stderr + proc.stdout


def test_explain_failed_file_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\ndef f(:\n    pass\n")
    proc = run("explain", bad, "--format", "json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["failed"] and data["passes"] == [] and data["diagnostics"][0]["code"] == "MS000"


def test_edits_in_written_code_are_said_not_hidden() -> None:
    from transpile.cli.explain import _explanation_text

    doc = pass_doc("MS201")
    written = Edit("MS201", 0, 0, "torch.cat(x)", "torch.cat(x)", "ops.cat(x)", doc.summary, Safety.SAFE, 0)
    whole = Explanation("m.py", None, False, True, [PassExplanation(doc, [written])], [])
    assert "in code an earlier pass wrote (no line in the input)" in _explanation_text(whole, color=False)
    at_line = Explanation("m.py", 3, False, True, [], [], unplaced_edits=1)
    assert "not shown: 1 edit in code an earlier pass wrote" in _explanation_text(at_line, color=False)


def test_explain_shows_edits_declined_by_a_review_decision(model: Path) -> None:
    decisions = pytest.importorskip("transpile.io.decisions")
    linear = next(e for e in explain_file(MODEL, str(model), line=8).passes[0].edits)
    store = decisions.DecisionStore.load(model.parent)
    store.record(model, linear, False)
    store.save()
    data = json.loads(run("explain", model, "--line", "8", "--format", "json").stdout)
    [edit] = data["passes"][0]["edits"]
    assert edit["applied"] is False and edit["why_not"] == "a decision"
    decisions.decisions_path(model.parent).write_text("[[decision]\n")  # not TOML
    proc = run("explain", model)
    assert proc.returncode == 2 and "cannot read the decisions" in proc.stderr
