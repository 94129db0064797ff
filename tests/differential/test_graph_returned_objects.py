"""MS504's claim, run: a Python object built in compiled code (a dataclass, a namedtuple, an
instance) holding tensors makes GRAPH_MODE lose the static shape, rank included, of every
tensor read back from it and of every tensor returned beside it in a tuple (MindSpore 2.10,
CPU). x-transformers' Attend returns ``out, Intermediates(...)``; its caller's einsum, whose
equation is built from ``out.ndim``, then had ``None`` for an equation. The tool's output
computes what torch does in PYNATIVE mode; in GRAPH mode the einsum helper refuses with an
error that names the cause and MS504 (never another answer), and the lint reports the line
that builds the object. What MS504 tells the user to do (the tensors in a tuple or a dict)
compiles and matches torch in both modes.

If a MindSpore release keeps those shapes, ``test_the_shape_is_lost_in_graph_mode`` fails:
MS504's message is then no longer true and changes.
"""
from __future__ import annotations


import numpy as np
import pytest

from .harness import converted_and_imported, definition_spans, outputs_in_mode

SOURCE = '''
from collections import namedtuple
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Intermediates:
    attn: torch.Tensor = None
    sim: torch.Tensor = None


Pair = namedtuple("Pair", ["attn", "sim"])


def rowdot(t):  # an einsum whose equation is built from the tensor's rank
    lhs = "b i d" if t.ndim == 3 else "b h i d"
    return torch.einsum(f"{lhs}, {lhs} -> {lhs[:-2]}", t, t)


def attend(q, k):
    eq = "b j d" if k.ndim == 3 else "b h j d"
    attn = torch.einsum(f"b h i d, {eq} -> b h i j", q, k).softmax(dim=-1)
    return torch.einsum(f"b h i j, {eq} -> b h i d", attn, k), attn


class Beside(nn.Module):  # x-transformers' Attend: the output beside a dataclass
    def forward(self, q, k):
        out, attn = attend(q, k)
        return out, Intermediates(attn=attn)


class BesideCaller(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = Beside()

    def forward(self, q, k):
        out, inter = self.attend(q, k)
        return rowdot(out)


class ReadBack(nn.Module):  # a tensor read back from a namedtuple built in forward
    def forward(self, q, k):
        out, attn = attend(q, k)
        p = Pair(attn, out)
        return rowdot(p.sim)


class InTuple(nn.Module):  # MS504's advice: the tensors in a tuple
    def forward(self, q, k):
        out, attn = attend(q, k)
        return out, (attn,)


class InTupleCaller(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = InTuple()

    def forward(self, q, k):
        out, inter = self.attend(q, k)
        return rowdot(out) + inter[0].sum(dim=-1)


class InDict(nn.Module):  # or in a dict
    def forward(self, q, k):
        out, attn = attend(q, k)
        return out, {"attn": attn}


class InDictCaller(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = InDict()

    def forward(self, q, k):
        out, inter = self.attend(q, k)
        return rowdot(out) * inter["attn"].amax(dim=-1)
'''

REFUSED = ("BesideCaller", "ReadBack")  # GRAPH_MODE: the einsum helper's error, naming MS504
ADVISED = ("InTupleCaller", "InDictCaller")
BUILDERS = {"Beside": "Intermediates", "ReadBack": "Pair"}  # where MS504 is reported, and what it names


def _inputs(seed: int):
    """(q, k) of varied sizes: heads and lengths differ, k of rank 4 or 3 (one key head)."""
    rng = np.random.default_rng(seed)
    b, h, i, j, d = (int(v) for v in rng.integers(1, 5, 5))
    q = rng.normal(size=(b, h, i, d)).astype(np.float32)
    k = rng.normal(size=(b, j, d) if seed % 2 else (b, h, j, d)).astype(np.float32)
    return q, k


SEEDS = (0, 1, 2, 3)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    result, torch_ns, ms_ns = converted_and_imported(SOURCE, "graph_returned_objects_case",
                                                     tmp_path_factory.mktemp("graph_returned_objects"))
    return result, torch_ns, ms_ns


def test_the_lint_reports_each_object_built_in_forward(built):
    result = built[0]
    spans = definition_spans(SOURCE)
    found = [d for d in result.diagnostics if d.code == "MS504"]
    for cls, name in BUILDERS.items():
        first, last = spans[cls]
        assert any(first <= d.line <= last and d.message.startswith(name) and "static shape" in d.message
                   for d in found), f"{cls}: no MS504 naming {name}\n{found}"
    for cls in ADVISED + ("InTuple", "InDict"):
        first, last = spans[cls]
        assert not any(first <= d.line <= last for d in found), f"{cls}: MS504 on a tuple or a dict"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("cls", REFUSED + ADVISED)
def test_pynative_computes_what_torch_does(cls, seed, built):
    expected, actual = outputs_in_mode(built[1][cls], built[2][cls], _inputs(seed), "PYNATIVE_MODE")
    assert np.allclose(actual, expected, atol=1e-5), f"{cls}\ntorch:\n{expected}\nmindspore:\n{actual}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("cls", ADVISED)
def test_the_advice_compiles_and_matches_in_graph_mode(cls, seed, built):
    expected, actual = outputs_in_mode(built[1][cls], built[2][cls], _inputs(seed), "GRAPH_MODE")
    assert np.allclose(actual, expected, atol=1e-5), f"{cls}\ntorch:\n{expected}\nmindspore:\n{actual}"


@pytest.mark.parametrize("cls", REFUSED)
def test_the_shape_is_lost_in_graph_mode(cls, built):
    """The einsum on a tensor that came back beside (or out of) the object is refused with an
    error that says why, not computed otherwise."""
    with pytest.raises(ValueError, match="MS504"):
        outputs_in_mode(built[1][cls], built[2][cls], _inputs(0), "GRAPH_MODE")
