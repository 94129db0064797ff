"""benchmarks/corpora.py counts a conversion that died as an internal error: killed by a
signal (a negative exit code), exit 123, or no JSON report. A fake ``transpile`` stands in
for the real one (no corpus is fetched or converted)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parent.parent / "benchmarks"


def _load(name: str):
    # benchmarks/ is no package; corpora.py imports ``throughput`` by its bare name
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_load("throughput")
corpora = _load("corpora")

FAKES = {
    "killed": "kill -9 $$\n",  # as the kernel's OOM killer would
    "segfault": "kill -SEGV $$\n",
    "exit-123": "echo '{\"diagnostics\": [], \"files\": [], \"summary\": {}}'\nexit 123\n",
    "no-report": "echo 'Traceback (most recent call last):' >&2\nexit 1\n",
}
REPORT = json.dumps({"diagnostics": [], "files": [], "summary": {"converted_uses": 1, "unconverted_uses": 0}})


def _fake_transpile(bin_dir: Path, body: str) -> None:
    bin_dir.mkdir()
    script = bin_dir / "transpile"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)


def _measure(tmp_path, monkeypatch, body: str):
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text("import torch\nx = torch.zeros(2)\n")
    _fake_transpile(tmp_path / "bin", body)
    monkeypatch.setattr(corpora, "BIN", tmp_path / "bin")
    monkeypatch.setattr(corpora, "fetch", lambda corpus: src)
    monkeypatch.setattr(corpora, "corpus_dir", lambda corpus: tmp_path / "work")
    return corpora.measure(corpora.CORPORA["torch/nn"], determinism=False)


@pytest.mark.parametrize("fake", FAKES, ids=list(FAKES))
def test_a_run_that_died_is_an_internal_error(fake, tmp_path, monkeypatch):
    row = _measure(tmp_path, monkeypatch, FAKES[fake])
    assert row.internal_errors == 1
    assert row.problems >= 1


def test_a_clean_run_has_no_problem(tmp_path, monkeypatch):
    # copies the tree as its output and reports success: nothing to count
    body = f"mkdir -p \"$4\" && cp -r \"$2\"/. \"$4\"\necho '{REPORT}'\n"
    row = _measure(tmp_path, monkeypatch, body)
    assert (row.internal_errors, row.problems) == (0, 0)
    assert row.rate == 1.0


def test_a_signal_is_a_negative_exit_code(tmp_path, monkeypatch):
    _fake_transpile(tmp_path / "bin", FAKES["killed"])
    monkeypatch.setattr(corpora, "BIN", tmp_path / "bin")
    run = corpora.convert(tmp_path, tmp_path / "out")
    assert run.exit_code < 0 and run.crashed
