"""The HTML report (transpile.report.render_report and `transpile convert --report`), without a browser."""
import json
import re
from html.parser import HTMLParser

import pytest

from transpile.api import convert_code
from transpile.io.files import FileOutcome, PathReport, convert_paths
from transpile.cli.main import main
from transpile.report import fold, group_unconverted, parity_rows, read_parity_results, render_report, side_by_side

CONVERTED = """\
import torch


def f(a, b):
    return torch.cat([a, b], 1)
"""
UNSUPPORTED = """\
import torch

TAG = "<script>alert('x')</script> & more"


def g(x):
    y = torch.foo_bar(x)
    return torch.foo_bar(y)
"""
BROKEN = "import torch\ndef h(:\n    return 1\n"
PLAIN = "x = 1\n"


class _Page(HTMLParser):
    """Every element's attributes, the ids and the text of elements with a data-count."""

    def __init__(self, html: str):
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.counts: dict[str, str] = {}
        self._count = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
        self._count = attrs.get("data-count")

    def handle_data(self, data):
        if self._count and data.strip():
            self.counts[self._count] = data.strip()
            self._count = None

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.elements if "id" in a}

    def with_class(self, name: str) -> list[dict]:
        return [a for _, a in self.elements if name in (a.get("class") or "").split()]


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    for name, text in (("a.py", CONVERTED), ("b.py", UNSUPPORTED), ("c.py", BROKEN), ("d.py", PLAIN)):
        (root / name).write_text(text)
    return root


def _render(root, **kw):
    report = convert_paths([root], write=False, cache=False, jobs=1)
    sources = {str(f.source): f.source.read_text() for f in report.files}
    return report, render_report(report, sources, **kw)


def test_code_is_escaped(tree):
    _, html = _render(tree)
    assert "<script>alert(" not in html
    assert "&lt;script&gt;alert(" in html
    assert html.count("<script>") == 1  # the page's own


def test_folded_code_is_escaped(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    lines = ["import torch", "y = torch.cat([a, b])"] + [f"v{i} = {i}" for i in range(30)]
    lines[20] = "s = '</script><b>bold</b><!--'"  # far from the change: folded
    (root / "long.py").write_text("\n".join(lines) + "\n")
    report, html = _render(root)
    assert report.count("converted") == 1 and 'class="fold"' in html
    assert "</script><b>" not in html and "<!--'" not in html
    assert html.count("</script>") == html.count("<script")


def test_self_contained(tree):
    _, html = _render(tree)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert "@import" not in html and not re.search(r"url\(\s*['\"]?(?:https?:)?//", html)
    assert not re.search(r"<(?:link|script)[^>]*\b(?:src|href)=[\"'](?!data:)", html)


def test_summary_is_the_runs(tree):
    report, html = _render(tree)
    page = _Page(html)
    for status in ("converted", "unchanged", "failed", "copied"):
        assert page.counts[status] == str(report.count(status))
    assert page.counts["files"] == str(len(report.files))
    assert page.counts["converted_uses"] == str(report.converted_uses)
    assert page.counts["measured_uses"] == str(report.converted_uses + report.unconverted_uses)
    assert f"{report.conversion_rate:.1%}" in html


def test_sections_links_and_badges(tree):
    report, html = _render(tree)
    page = _Page(html)
    sections = [a for t, a in page.elements if t == "section"]
    assert [s["data-path"] for s in sections] == [str(f.source) for f in report.files]
    ids = page.ids()
    links = page.with_class("diag-link")
    assert len(links) == len(report.diagnostics)
    for link in links + page.with_class("badge") + page.with_class("api-place"):
        assert link["href"][1:] in ids
    # each unconverted use is a badge on its input line
    b = next(s for s in sections if s["data-path"].endswith("b.py"))
    marked = {d.line for d in report.diagnostics if d.filename.endswith("b.py") and d.code == "MS201"}
    assert marked and {f"{b['id']}-L{n}" for n in marked} <= {a["href"][1:] for a in page.with_class("diag-link")}


def test_unchanged_collapsed_changed_open(tree):
    _, html = _render(tree)
    diffs = re.findall(r'<section class="file"[^>]*data-status="(\w+)".*?<details class="diff"( open)?', html, re.S)
    assert dict(diffs) == {"converted": " open", "unchanged": "", "failed": ""}


def test_unconverted_apis_grouped_with_counts(tree):
    report, html = _render(tree)
    groups = {g.name: g.count for g in group_unconverted(report)}
    assert groups["torch.foo_bar"] == UNSUPPORTED.count("torch.foo_bar(")
    row = re.search(r'data-api="torch.foo_bar">.*?class="api-count">(\d+)<', html, re.S)
    assert row and int(row.group(1)) == groups["torch.foo_bar"]


def test_recorded_edits_are_listed(tmp_path):
    source = tmp_path / "e.py"
    source.write_text(CONVERTED)
    result = convert_code(CONVERTED, filename=str(source), record_edits=True)
    assert result.edits
    html = render_report(PathReport([FileOutcome(source, None, result)]), {str(source): CONVERTED})
    assert f"{len(result.edits)} edit(s) recorded" in html
    for edit in result.edits:
        assert f"<td>{edit.pass_id}</td>" in html


def test_notebook_diagnostics_link_to_the_file(tmp_path):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": ["import torch\n", "y = torch.foo_bar(1)\n"]}]
    root = tmp_path / "nb"
    root.mkdir()
    (root / "n.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    report, html = _render(root)
    assert any("[cell" in d.filename for d in report.diagnostics)
    links = _Page(html).with_class("diag-link")
    assert links and {a["href"] for a in links} == {"#f0-top"}  # cell lines are not lines of the JSON
    assert not _Page(html).with_class("badge")


def test_hand_edits_merged_and_conflicts_are_shown(tmp_path):
    source = tmp_path / "h.py"
    source.write_text(CONVERTED)
    result = convert_code(CONVERTED, filename=str(source))
    files = [FileOutcome(source, tmp_path / "out/h.py", result, merged=True),
             FileOutcome(source, tmp_path / "out/h.py", result, conflict=tmp_path / "out/h.py.new")]
    page = _Page(render_report(PathReport(files), {str(source): CONVERTED}))
    assert page.counts["merged"] == "1" and page.counts["conflicts"] == "1"
    assert len(page.with_class("merged")) == 1 and len(page.with_class("conflict")) == 1


def test_side_by_side_rows():
    rows = side_by_side(["a", "b", "c"], ["a", "B", "c", "d"])
    assert [(r.kind, r.left_no, r.right_no) for r in rows] == [
        ("equal", 1, 1), ("replace", 2, 2), ("equal", 3, 3), ("insert", None, 4)]


def test_fold_keeps_changes_and_marked_lines_with_context():
    before = [f"line {i}" for i in range(1, 31)]
    after = list(before)
    after[14] = "changed"  # line 15
    rows = side_by_side(before, after)
    runs = fold(rows, keep={28}, context=2)
    shown = [r.left_no for folded, run in runs if not folded for r in run]
    assert [folded for folded, _ in runs] == [True, False, True, False]
    assert shown == [13, 14, 15, 16, 17, 26, 27, 28, 29, 30]
    assert [r for _, run in runs for r in run] == rows  # every row, in order
    # a run no longer than the context is not folded
    assert [f for f, _ in fold(side_by_side(before[:8], before[:3] + ["x"] + before[4:8]), set(), context=2)] == [False]


PARITY = [
    {"sample": "net", "entry": "Net()", "verdict": "mismatch", "ok": False, "notes": [],
     "modes": {"PYNATIVE": {"verdict": "mismatch", "outputs": [{"max_abs_diff": 0.25, "max_rel_diff": "inf"}]},
               "GRAPH": {"verdict": "error", "outputs": [], "detail": "boom"}}},
    {"sample": "ok_net", "entry": "Ok()", "verdict": "match", "ok": True, "notes": [],
     "modes": {"PYNATIVE": {"verdict": "match", "outputs": [{"max_abs_diff": 1e-7, "max_rel_diff": 2e-7}]}}},
]


def test_parity_rows_and_page(tree):
    rows = parity_rows(PARITY)
    assert [(r["name"], r["ok"]) for r in rows] == [("net", False), ("ok_net", True)]
    assert rows[0]["modes"][0]["max_abs"] == "0.25" and rows[0]["modes"][0]["max_rel"] == "inf"
    _, html = _render(tree, parity=PARITY)
    page = _Page(html)
    assert [(a["data-model"], a["data-ok"]) for a in page.with_class("parity-row")] == [
        ("net", "false"), ("net", "false"), ("ok_net", "true")]
    _, without = _render(tree)
    assert 'id="parity-results"' not in without


def test_read_parity_results(tmp_path):
    good = tmp_path / "p.json"
    good.write_text(json.dumps(PARITY[0]))
    assert read_parity_results(good) == PARITY[0]
    for text in ("not json", "[1, 2]"):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(ValueError, match="transpile parity --json"):
            read_parity_results(bad)


def test_cli_report_alone_writes_only_the_report(tree, tmp_path, capsys):
    before = {p.name: p.read_text() for p in tree.iterdir()}
    out = tmp_path / "r.html"
    assert main(["convert", str(tree / "a.py"), "--report", str(out)]) == 0
    assert capsys.readouterr().out == ""  # the converted code is not printed
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert {p.name: p.read_text() for p in tree.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "tree"]


def test_cli_report_in_place_shows_the_input(tree, tmp_path):
    out = tmp_path / "r.html"
    parity = tmp_path / "parity.json"
    parity.write_text(json.dumps(PARITY))
    status = main(["convert", str(tree), "--in-place", "--force", "--no-cache", "-j", "1", "--report", str(out),
                   "--parity-results", str(parity)])
    assert status == 1  # c.py does not parse
    html = out.read_text()
    assert "torch.cat" not in (tree / "a.py").read_text()
    assert "return torch.cat([a, b], 1)" in html  # the input as it was, left
    assert 'data-model="ok_net"' in html


@pytest.mark.parametrize("args, message", [
    (["--diff", "--parity-results", "p.json"], "--parity-results goes with --report"),
    (["--report", "no/such/dir/r.html"], "no such directory"),
    (["--report", "model.py"], "the report is an HTML file"),
    (["--report", "r.html", "--parity-results", "missing.json"], "cannot read parity results"),
])
def test_cli_report_usage(tree, tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(["convert", str(tree), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_no_rate_when_nothing_was_converted(tmp_path):
    """A tree whose torch uses all lack a mapping says so, as the command line does, rather
    than "conversion rate 0.0%" (issue 30, item 8)."""
    root = tmp_path / "t"
    root.mkdir()
    (root / "b.py").write_text(UNSUPPORTED)
    report, html = _render(root)
    assert report.converted_uses == 0 and report.unconverted_uses == 2
    rate = html[html.index('id="conversion-rate"'):]
    rate = rate[:rate.index("</div>")]
    assert "0.0%" not in rate
    assert "no torch use converted" in " ".join(rate.split())
    assert _Page(html).counts["measured_uses"] == "2"
