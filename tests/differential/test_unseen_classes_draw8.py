"""Failure classes of the sampled benchmark's eighth draw (issue 29: prosper-nn,
parametric-umap, bclm-pytorch, llms-from-scratch, qbi-radon), each converted as a general
rule and run against torch:

* ``torch.tensor([[c, s, 0], [-s, c, 0]], dtype=...)`` with ``c``, ``s`` one-element tensors
  (qbi-radon's rotation matrices): torch reads each as its number, MindSpore's Tensor refuses
  a tensor inside a list; a list written out with an item that may be a tensor is stacked by
  ``_torch_tensor_items`` (MS201), its dtype promoted as torch infers it when none is given;
* ``device = self.init_state.device`` in forward, handed on (prosper-nn's HCNN): GRAPH_MODE
  refuses a Parameter's ``.device`` whose value is used; ``_torch_device`` reads it of the
  Parameter's value (MS326);
* ``isinstance(state, Tuple)`` with ``typing.Tuple`` (prosper-nn's ECNN cell): GRAPH_MODE
  refuses a typing alias there; the builtin it stands for is written (MS327).

One torch source is converted by the tool and imported from a file (GRAPH mode reads a
construct's source there); every test reads the two namespaces (one MindSpore process).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_imported, in_mode, same_outputs

pytestmark = pytest.mark.framework

SOURCE = '''
from typing import List, Tuple

import numpy as np
import torch
import torch.nn as nn


class Rotation(nn.Module):  # qbi-radon's Radon: affine matrices of one-element tensors and numbers
    def __init__(self, n):
        super().__init__()
        self.thetas = torch.tensor(np.linspace(0.0, 3.0, n)[:, None, None], dtype=torch.float32)

    def forward(self, x):
        cos, sin = self.thetas.cos(), self.thetas.sin()
        rotations = []
        for c, s in zip(cos, sin):
            rotations.append(torch.tensor([[c, s, 0], [-s, c, 0]], dtype=torch.float32))
        return x @ torch.stack(rotations).sum(0)


class Items(nn.Module):  # no dtype: a float item beside ints and a shape gives float32, as in torch
    def forward(self, x):
        scale = torch.tensor([x[0, 0], 2, x.shape[1]])
        size = torch.as_tensor([[x.shape[0], 1], [x.shape[1], 2]])
        return x[:, :3] * scale + size.sum()


class InitialState(nn.Module):  # prosper-nn's HCNN: a learned state's device, handed to a method
    def __init__(self, n):
        super().__init__()
        self.init_state = nn.Parameter(torch.randn(1, n))

    def reset(self, batch, device, dtype):
        return torch.zeros((batch, self.init_state.shape[1]), device=device, dtype=dtype)

    def forward(self, y):
        device = self.init_state.device
        dtype = self.init_state.dtype
        state = self.reset(y.shape[0], device, dtype) + self.init_state
        return torch.tanh(state + y)


class StateCell(nn.Module):  # prosper-nn's ECNN cell: an LSTM's (h, c) told apart from a tensor
    def __init__(self, n):
        super().__init__()
        self.C = nn.Linear(n, n)

    def step(self, state):
        if isinstance(state, Tuple):
            return self.C(state[0]) + state[1]
        if isinstance(state, (List, torch.Tensor)):
            return self.C(state)
        return state

    def forward(self, x):
        return self.step((x, x)) + self.step(x)


class Placed(nn.Module):  # torchaudio's WavLM: a device only handed over as a placement
    def __init__(self, n):
        super().__init__()
        self.embed = nn.Embedding(8, n)

    def buckets(self, q):
        position = torch.arange(q)[:, None] - torch.arange(q)[None, :]
        return position.abs() % 8

    def forward(self, y):
        bucket = self.buckets(y.shape[1]).to(self.embed.weight.device)
        extra = torch.zeros(y.shape[1], device=self.embed.weight.device)
        return y @ self.embed(bucket).sum(0) + extra
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return converted_and_imported(SOURCE, "unseen_classes_draw8", tmp_path_factory.mktemp("draw8"))


def test_lists_of_items_are_stacked_and_numbers_only_stay_data(built):
    result, _, _ = built
    assert result.code.count("_torch_tensor_items(") >= 5, result.code
    assert "device = _torch_device(self.init_state)" in result.code
    assert "_torch_device(self.embed" not in result.code  # a placement is left to the pass that drops it
    assert "isinstance(state, tuple)" in result.code and "isinstance(state, (list, ms.Tensor))" in result.code
    assert "torch.tensor(" not in result.code and "torch.as_tensor(" not in result.code
    assert not any(d.severity.name in ("WARNING", "ERROR") for d in result.diagnostics if d.code != "MS507")


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("name, args, shape", [
    ("Rotation", (4,), (2, 5, 2)),
    ("Items", (), (4, 3)),
    ("InitialState", (3,), (2, 3)),
    ("StateCell", (3,), (2, 3)),
    ("Placed", (3,), (2, 3)),
])
def test_layers_match_torch_in_both_modes(built, name, args, shape, mode):
    _, torch_ns, ms_ns = built
    with in_mode(mode):
        same_outputs(torch_ns[name](*args), ms_ns[name](*args), *shape)


def test_the_helper_infers_torch_dtypes():
    """Without dtype, the items' dtypes promote as torch infers a list's: a Python int is
    int64, a float float32, a bool bool; a float64 tensor item keeps float64."""
    import mindspore as ms
    import torch
    from rewrites.runtime.construction import _torch_tensor_items

    f64 = torch.tensor(1.5, dtype=torch.float64)
    cases = [([2, 3], [2, 3]), ([True, False], [True, False]), ([1, 2.5], [1, 2.5]),
             ([f64, 1], [ms.Tensor(1.5, ms.float64), 1]), ([torch.tensor(3, dtype=torch.int32)], [ms.Tensor(3, ms.int32)])]
    for torch_items, ms_items in cases:
        expected, got = torch.tensor(torch_items), _torch_tensor_items(ms_items)
        assert str(expected.dtype).split(".")[-1] == str(got.dtype).lower(), (torch_items, got.dtype)
        np.testing.assert_array_equal(got.asnumpy(), expected.numpy())
