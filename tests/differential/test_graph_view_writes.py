"""MS513's claim, run: a write torch sees through another name (a view, an alias, a
helper's parameter) is computed by the tool's output as torch does in PYNATIVE mode and
differently in GRAPH mode, without an error (MindSpore 2.10, CPU); the lint reports each
such write on its line. The writes it leaves alone compute what torch does in both modes.

Where the written name is bound to a view (a slice, ``view``, ...), the converted code notes
the view (``_torch_view``, tests/differential/test_view_inplace_writes.py) and GRAPH mode
refuses it with an error; an alias or a helper's parameter written is still computed
differently, without an error: MS513's warning is what the user gets.

If a MindSpore release makes GRAPH_MODE keep these writes, ``test_flagged_writes_differ_in_graph_mode``
fails: MS513 is then no longer true and goes.
"""
from __future__ import annotations


import numpy as np
import pytest

from .harness import converted_and_imported, definition_spans, outputs_in_mode

SOURCE = '''
import torch
import torch.nn as nn


def scan_in_place(a, x):  # mambapy's parallel scan: the parameter changed through views
    xa = x
    for _ in range(2):
        xa = xa.view(x.shape[0], -1, 2)
        xa[:, :, 1].add_(xa[:, :, 0] * a[0, 0])
        xa = xa[:, :, 1]


def bump(x):
    x[:, 0] = x[:, 0] + 1.0


def bumped(x):  # returns what it changes: MS207 assigns it back, no MS513
    x[:, 0] = x[:, 0] + 1.0
    return x


class ViewWrite(nn.Module):
    def forward(self, x):
        x = x.clone()
        y = x.view(-1)
        y[0] = 7.0
        return x


class SliceWrite(nn.Module):
    def forward(self, x):
        x = x.clone()
        z = x[:, 0:4:2]
        z[:, 1] = z[:, 1] * 2.0
        z.mul_(2.0)
        return x


class KeptAlias(nn.Module):
    def forward(self, x):
        x = x.clone()
        y = x
        x[:, 1] = 0.0
        return y


class ParamWrite(nn.Module):
    def forward(self, x):
        x = x.clone()
        bump(x)
        return x


class Scan(nn.Module):
    def forward(self, a, x):
        x = x.clone()
        scan_in_place(a, x)
        return x


class OwnWrites(nn.Module):  # no other name sees these writes: no MS513
    def forward(self, x):
        x = x.clone()
        w = x * 2.0
        v = w.view(-1)
        v[1] = 3.0
        x[:, 0] = 5.0
        x = bumped(x)
        return x + v.view(x.shape)
'''

FLAGGED = ("ViewWrite", "SliceWrite", "KeptAlias", "ParamWrite", "Scan")
REFUSED = ("ViewWrite", "SliceWrite", "Scan")  # a view written: _torch_view raises in GRAPH mode
KEPT = ("OwnWrites",)


def _inputs(cls: str):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 8)).astype(np.float32)
    a = rng.uniform(0.5, 1, (2, 8)).astype(np.float32)
    return (a, x) if cls == "Scan" else (x,)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    result, torch_ns, ms_ns = converted_and_imported(SOURCE, "graph_view_writes_case",
                                                     tmp_path_factory.mktemp("graph_view_writes"))
    assert "# transpile:" not in result.code, result.code
    return result, torch_ns, ms_ns


def _outputs(cls, torch_ns, ms_ns, mode):
    return outputs_in_mode(torch_ns[cls], ms_ns[cls], _inputs(cls), mode)


def test_the_lint_reports_each_shared_write_and_no_other(built):
    result = built[0]
    spans = definition_spans(SOURCE, ("ClassDef", "FunctionDef"))
    lines = {d.line for d in result.diagnostics if d.code == "MS513"}
    helpers = {"ParamWrite": "bump", "Scan": "scan_in_place"}
    for cls in FLAGGED:
        first, last = spans[helpers.get(cls, cls)]
        assert any(first <= line <= last for line in lines), f"{cls}: no MS513\n{result.code}"
    for name in (*KEPT, "bumped"):
        first, last = spans[name]
        assert not any(first <= line <= last for line in lines), f"{name}: MS513 where no other name sees the write"


@pytest.mark.parametrize("cls", FLAGGED + KEPT)
def test_pynative_computes_what_torch_does(cls, built):
    expected, actual = _outputs(cls, built[1], built[2], "PYNATIVE_MODE")
    assert np.allclose(actual, expected, atol=1e-6), f"{cls}\ntorch:\n{expected}\nmindspore:\n{actual}"


@pytest.mark.parametrize("cls", KEPT)
def test_unflagged_writes_match_in_graph_mode(cls, built):
    expected, actual = _outputs(cls, built[1], built[2], "GRAPH_MODE")
    assert np.allclose(actual, expected, atol=1e-6), f"{cls}\ntorch:\n{expected}\nmindspore:\n{actual}"


@pytest.mark.parametrize("cls", REFUSED)
def test_written_views_are_refused_in_graph_mode(cls, built):
    with pytest.raises(RuntimeError, match="PYNATIVE"):
        _outputs(cls, built[1], built[2], "GRAPH_MODE")


@pytest.mark.parametrize("cls", [c for c in FLAGGED if c not in REFUSED])
def test_flagged_writes_differ_in_graph_mode(cls, built):
    expected, actual = _outputs(cls, built[1], built[2], "GRAPH_MODE")
    assert not np.allclose(actual, expected, atol=1e-6), f"{cls}: GRAPH_MODE now keeps the write; MS513 can go"
