"""Fuzzing, bounded: generated programs and mutants of the repo's model files must
convert without an internal error, to code that parses, and converting that code again
must change nothing. The long run is ``make fuzz`` (benchmarks/fuzz.py).

Every API of the tables is also called once with its whole signature. All of it is
reproducible: hypothesis runs derandomized, and each mutant is a fixed
function of (file, seed).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from transpile.engine.diagnostics import Diagnostic, Safety, Severity
from transpile.engine.pipeline import ConversionResult

# benchmarks/ is no package: the fuzzer is loaded from its file (registered, as its
# dataclasses need their module in sys.modules)
_SPEC = importlib.util.spec_from_file_location("benchmarks_fuzz", Path(__file__).parent.parent / "benchmarks" / "fuzz.py")
fuzz = sys.modules.setdefault("benchmarks_fuzz", importlib.util.module_from_spec(_SPEC))
_SPEC.loader.exec_module(fuzz)

MUTATION_SEEDS = (0, 1)


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(st.deferred(fuzz.program_strategy))  # built on first draw: collecting the module stays cheap
def test_generated_programs(code: str) -> None:
    assert fuzz.check(code) == {}


@pytest.mark.parametrize("seed", MUTATION_SEEDS)
def test_mutated_model_files(seed: int) -> None:
    files = fuzz.seed_files(include_work=False)  # samples and fixtures: always in the repo
    failures, tried = {}, 0
    for path in files:
        code = fuzz.mutant(path, seed)
        if code is None:
            continue
        tried += 1
        found = fuzz.check(code)
        if found:
            failures[f"{path.relative_to(fuzz.ROOT)}:{seed}"] = found
    assert tried > len(files) // 2, "most mutants should parse"
    assert failures == {}


def test_every_table_api() -> None:
    """Each API of the tables called with its whole signature, 100 to a file, beside a
    torch use that stays (so that a second conversion runs every pass again)."""
    failures, tried = {}, 0
    for first, code in fuzz.api_programs(per_program=100):
        tried += 1
        found = fuzz.check(code)
        if found:
            failures[first] = found
    assert tried > 10
    assert failures == {}


def test_mutants_are_reproducible_and_parse() -> None:
    path = fuzz.ROOT / "samples" / "resnet.py"
    first = [fuzz.mutant(path, seed) for seed in range(5)]
    assert first == [fuzz.mutant(path, seed) for seed in range(5)]
    made = [code for code in first if code is not None]
    assert made and all(fuzz.parses(code) and code != path.read_text() for code in made)
    assert len(set(made)) == len(made)


def _fake_convert(outputs):
    """A convert_code stand-in returning ``outputs[source]`` (or raising it)."""
    def convert(source, **_):
        out = outputs[source]
        if isinstance(out, Exception):
            raise out
        return out
    return convert


def test_check_reports_each_property(monkeypatch) -> None:
    import transpile

    ok = ConversionResult("y = 1\n", [], True)
    internal = ConversionResult("a\n", [Diagnostic("MS999", Severity.ERROR, "internal error: boom", "f", 0, 0,
                                                   Safety.MANUAL)], False, failed=True)
    broken = ConversionResult("y = (\n", [], True)
    monkeypatch.setattr(transpile, "convert_code", _fake_convert({
        "raises\n": ValueError("bad"), "internal\n": internal, "broken\n": broken,
        "drifts\n": ok, "y = 1\n": ConversionResult("y = 2\n", [], True),
    }))
    assert set(fuzz.check("raises\n")) == {"internal"}
    assert set(fuzz.check("internal\n")) == {"internal"}
    assert set(fuzz.check("broken\n")) == {"unparsable"}
    assert set(fuzz.check("drifts\n")) == {"idempotent"}


def test_minimize_keeps_the_failure() -> None:
    source = "import torch\na = 1\nif a:\n    b = 2\n    boom = 3\nc = 4\n"
    small = fuzz.minimize(source, lambda code: "boom" in code, budget=30)
    assert "boom" in small and fuzz.parses(small)
    assert len(small) < len(source) and "c = 4" not in small


def test_no_hypothesis_needed_without_generated_programs(tmp_path, monkeypatch, capsys) -> None:
    """``--generated-share 0`` asks for no generated programs: the run must not need
    hypothesis (nor hypothesmith); asked for them without it, it says what to install."""
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # import hypothesis -> ImportError
    monkeypatch.setitem(sys.modules, "hypothesmith", None)
    assert fuzz.main(["--minutes", "0", "--generated-share", "0", "--out", str(tmp_path)]) == 0
    assert fuzz.main(["--minutes", "0.001", "--out", str(tmp_path)]) == 2
    assert "hypothesis" in capsys.readouterr().err
