"""MS333's claim, run: a list that holds lists changed after it is made (``masks = [a, b]``,
then ``a.append(m)`` in a loop: torchaudio's Emformer) computes what torch does in both
modes once the converter makes it again after the lists' last change. Without the rewrite,
GRAPH_MODE keeps the holder's lists as they were when it was made (MindSpore 2.10, CPU):
``test_graph_mode_copies_held_lists`` runs the unconverted form and fails the day GRAPH_MODE
keeps them, when MS333 and MS509 can go. A holder read between its making and the last change
is not made again: MS509 reports it on its line.
"""
from __future__ import annotations


import numpy as np
import pytest

from .harness import converted_and_imported, definition_spans, outputs_in_mode

SOURCE = '''
import torch
import torch.nn as nn


class Branches(nn.Module):  # torchaudio's Emformer: the holder made in an if/else, filled in a helper's loop
    use_mem = True

    def masks(self, x):
        rc = []
        q = []
        s = []
        if self.use_mem:
            masks = [rc, q, s]
        else:
            masks = [rc, q]
        for i in range(x.shape[0]):
            rc.append(x[i] * 2)
            q.append(x[i] + 1)
            if self.use_mem:
                s.append(x[i] - 3)
        return torch.cat([torch.stack(m) for m in masks])

    def forward(self, x):
        return self.masks(x) * 0.5


class BranchesNoMem(Branches):
    use_mem = False


class OneHolder(nn.Module):  # a tuple holding a list and a tensor; items set and appended
    def forward(self, x):
        a = [x]
        held = (a, x)
        for i in range(3):
            a.append(x * i)
        a[0] = x + 5
        return torch.cat(held[0]) + held[1].sum()


class Untouched(nn.Module):  # made after the changes already: nothing to do
    def forward(self, x):
        a = []
        for i in range(2):
            a.append(x - i)
        held = [a]
        return torch.cat(held[0])


class ReadBetween(nn.Module):  # read before the last change: left to MS509
    def forward(self, x):
        a = []
        held = [a]
        a.append(x)
        n = len(held[0])
        a.append(x * 2)
        return torch.cat(held[0]) * n
'''

REMADE = ("Branches", "BranchesNoMem", "OneHolder")
KEPT = ("Untouched",)
SHAPES = [(3, 4), (1, 2), (5, 3)]


def _inputs(shape):
    rng = np.random.default_rng(sum(shape))
    return (rng.uniform(-2, 2, shape).astype(np.float32),)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    result, torch_ns, ms_ns = converted_and_imported(SOURCE, "graph_list_holders_case",
                                                     tmp_path_factory.mktemp("graph_list_holders"))
    assert "# transpile:" not in result.code, result.code
    return result, torch_ns, ms_ns


def _lines(result, code):
    return {d.line for d in result.diagnostics if d.code == code}


def test_each_stale_holder_is_remade_or_reported(built):
    result = built[0]
    spans = definition_spans(SOURCE)
    remade, reported = _lines(result, "MS333"), _lines(result, "MS509")
    for cls in ("Branches", "OneHolder"):
        first, last = spans[cls]
        assert any(first <= line <= last for line in remade), f"{cls}: no MS333\n{result.code}"
        assert not any(first <= line <= last for line in reported), f"{cls}: MS509 on a holder MS333 makes again"
    first, last = spans["ReadBetween"]
    assert any(first <= line <= last for line in reported), f"ReadBetween: no MS509\n{result.code}"
    assert not any(first <= line <= last for line in remade), "ReadBetween: made again though read before"
    first, last = spans["Untouched"]
    assert not any(first <= line <= last for line in remade | reported)


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("cls", REMADE + KEPT)
def test_remade_holders_compute_what_torch_does(cls, shape, mode, built):
    expected, actual = outputs_in_mode(built[1][cls], built[2][cls], _inputs(shape), mode)
    assert expected.shape == actual.shape and np.allclose(actual, expected, atol=1e-6), \
        f"{cls} {mode}\ntorch:\n{expected}\nmindspore:\n{actual}"


def test_graph_mode_copies_held_lists():
    """The unconverted form of OneHolder, written in MindSpore: GRAPH_MODE's holder keeps the
    one item its list had when it was made (Python's has four)."""
    import mindspore
    from mindspore import nn, ops

    class Stale(nn.Cell):
        def construct(self, x):
            a = [x]
            held = [a]
            for i in range(3):
                a.append(x * i)
            return ops.cat(held[0])

    x = _inputs((2, 3))[0]
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    try:
        out = Stale()(mindspore.Tensor(x)).asnumpy()
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    assert out.shape == (2, 3), f"GRAPH_MODE now keeps the held lists ({out.shape}): MS333 and MS509 can go"
