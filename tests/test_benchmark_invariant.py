"""Issue 29's invariant, on the recorded results of both model benchmarks: every model that
fails to build or run has, in its conversion, a warning naming the line that causes it.

The benchmarks record, for each failed run, the innermost frame of its traceback in converted
code and whether the conversion's diagnostics hold a warning (or an error) on the source
statement that line came from (``site`` in results.json; the rule is
``benchmarks/models/run.py::source_statement``). A run with no such frame, or with no site
recorded, has no warned line either. The runs that break the invariant today are listed in
``benchmarks/known_gaps.toml``; the list may only shrink (but for the breakers of models a
full run measures for the first time, added with that run): a new breaker fails this test,
and so does a listed run that no longer breaks (take it off the list). No model is run here."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

BENCH = Path(__file__).parent.parent / "benchmarks"
RESULTS = {"models": BENCH / "models" / "results.json", "sampled": BENCH / "sampled" / "results.json"}
KNOWN = BENCH / "known_gaps.toml"


def breakers(results: dict) -> dict[str, str]:
    """Failed runs (import, build, weights or run; not a mismatch) with no warning on the
    statement that broke: ``model MODE`` -> why."""
    out = {}
    for row in results["rows"]:
        if row.get("torch_error"):
            continue  # the torch side failed: nothing was converted to fail
        for mode, res in sorted(row["results"].items()):
            error = res.get("error")
            if not error or error.startswith("compare"):
                continue
            site = res.get("site")
            if "site" not in res:
                out[f"{row['name']} {mode}"] = "no site recorded (results older than the invariant)"
            elif site is None:
                out[f"{row['name']} {mode}"] = "no frame in converted code: " + error[:120]
            elif not site.get("warned"):
                out[f"{row['name']} {mode}"] = (f"{site['file']}:{site['line']} (source lines "
                                               f"{site.get('source_lines')}) `{site.get('code', '')}`")
    return out


@pytest.mark.parametrize("bench", sorted(RESULTS))
def test_every_failed_run_has_a_warning_on_its_line_or_is_a_known_gap(bench):
    results = json.loads(RESULTS[bench].read_text(encoding="utf-8"))
    found = breakers(results)
    known = set(tomllib.loads(KNOWN.read_text(encoding="utf-8")).get(bench, {}).get("gaps", []))
    new = sorted(set(found) - known)
    fixed = sorted(known - set(found))
    assert not new, f"{len(new)} failed runs with no warning on the line that broke:\n" + "\n".join(
        f"  {k}: {found[k]}" for k in new)
    assert not fixed, f"no longer breaking the invariant, take them off {KNOWN.name}: {fixed}"


def test_the_rule_recognises_a_warned_and_an_unwarned_failure():
    rows = [{"name": "a", "torch_error": None, "results": {
        "PYNATIVE": {"error": "build: KeyError: 'x'", "site": {"file": "p/m.py", "line": 3, "warned": True}},
        "GRAPH": {"error": "run (GRAPH): TypeError", "site": {"file": "p/m.py", "line": 9, "warned": False}}}},
        {"name": "b", "torch_error": None, "results": {
            "PYNATIVE": {"error": "copy weights: Failure: 2 parameters", "site": None},
            "GRAPH": {"error": "compare: Failure: every torch output is constant"}}},
        {"name": "c", "torch_error": "build: ImportError", "results": {}}]
    assert sorted(breakers({"rows": rows})) == ["a GRAPH", "b PYNATIVE"]


def _harness():
    import importlib.util
    import sys

    sys.path.insert(0, str(BENCH / "models"))  # run.py imports verdict from its folder
    try:
        spec = importlib.util.spec_from_file_location("bench_models_run_for_test", BENCH / "models" / "run.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH / "models"))
    return module


SOURCE = """import torch


class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.randn(
            3,
            generator=None,
        )
        if x.new(2).sum() > 0:
            return x
        return y
"""
CONVERTED = """import mindspore
import mindspore.mint as mint


class Net(mindspore.nn.Cell):
    def construct(self, x):
        y = torch.randn(3, generator=None)
        if x.new(2).sum() > 0:
            return x
        return y


def _emitted_helper():
    return 0
"""


def test_a_converted_line_maps_to_the_source_statement_it_came_from():
    statement = _harness().source_statement
    assert statement(SOURCE, CONVERTED, 7) == (6, 9)  # a rewritten call: the whole source statement
    assert statement(SOURCE, CONVERTED, 8) == (10, 10)  # an unchanged line: the header of its `if`
    assert statement(SOURCE, CONVERTED, 10) == (12, 12)
    assert statement(SOURCE, CONVERTED, 2) == (1, 1)  # the import it was rewritten from
    assert statement(SOURCE, CONVERTED, 14) is None  # a line only the converter wrote
