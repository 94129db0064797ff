"""A GRAPH run that does not match cites the graph-mode lint in its verdict."""
from __future__ import annotations

from pathlib import Path

from transpile.parity import runner
from transpile.parity.spec import load_spec

SOURCE = """import numpy as np
import torch.nn as nn


class M(nn.Module):
    def forward(self, x):
        return x * np.exp(x.detach().numpy())
"""


def _spec(tmp_path: Path):
    (tmp_path / "m.py").write_text(SOURCE)
    (tmp_path / "m.parity.toml").write_text('entry = "M()"\n[[inputs]]\nshape = [2]\ndtype = "float32"\n')
    return load_spec(tmp_path / "m.parity.toml")


def test_graph_failure_cites_the_lint(tmp_path, monkeypatch) -> None:
    spec = _spec(tmp_path)
    monkeypatch.setattr(runner, "_run_mode", lambda spec, conv, mode, **kw: runner.ModeResult(mode, "error: compile failed"))
    result = runner.run_mode(spec, tmp_path / "m.py", "GRAPH")
    assert result.verdict.startswith("error: compile failed [GRAPH_MODE lint: MS501 line 7:")
    assert "MS502 line 7" in result.verdict


def test_pynative_and_matches_are_left_alone(tmp_path, monkeypatch) -> None:
    spec = _spec(tmp_path)
    monkeypatch.setattr(runner, "_run_mode", lambda spec, conv, mode, **kw: runner.ModeResult(mode, "error: x"))
    assert runner.run_mode(spec, tmp_path / "m.py", "PYNATIVE").verdict == "error: x"
    monkeypatch.setattr(runner, "_run_mode", lambda spec, conv, mode, **kw: runner.ModeResult(mode, "match", 0.0))
    assert runner.run_mode(spec, tmp_path / "m.py", "GRAPH").verdict == "match"
