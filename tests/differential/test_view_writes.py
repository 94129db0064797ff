"""In-place writes that torch makes through a view, which MindSpore's CPU kernels do not
make (a write into a piece of ``split``/``chunk``, or into an item ``x[i]``, leaves the
tensor it came from unchanged), converted as general rules and run against torch (MS202):

* pieces of ``split``/``chunk``/``torch.split`` written in place, in a loop over
  ``zip``/``enumerate`` of them, directly or through a local name (ring-attention's
  blockwise softmax accumulation: ``row_splits = zip(...)``), or
  unpacked (``a, b = x.chunk(2); a.add_(1)``), pieces of pieces included;
* in-place methods on an item (``w.data[i].zero_()``, ``x[:, 1].mul_(2)``);
* chains of in-place methods (``o.mul_(k).add_(v)``: torch returns ``o``).

One torch source is converted by the tool, both sides are exec'd once (one MindSpore
process for all cases).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_run

SOURCE = '''
import torch
import torch.nn as nn


def blockwise_attention(q, k, v, bucket):
    """Softmax attention accumulated block by block into split views of the outputs."""
    o = torch.zeros_like(q)
    sums = torch.zeros(q.shape[0], 1)
    maxes = torch.full((q.shape[0], 1), -1e30)
    for kc, vc in zip(k.split(bucket, dim=0), v.split(bucket, dim=0)):
        row_splits = zip(q.split(bucket, dim=0), o.split(bucket, dim=0), sums.split(bucket, dim=0),
                         torch.split(maxes, bucket, 0))
        for ind, (qc, oc, row_sums, row_maxes) in enumerate(row_splits):
            w = qc @ kc.t()
            new_maxes = torch.maximum(w.amax(dim=-1, keepdim=True), row_maxes)
            e = torch.exp(w - new_maxes)
            diff = torch.exp(row_maxes - new_maxes)
            oc.mul_(diff).add_(e @ vc)
            row_sums.copy_(diff * row_sums + e.sum(dim=-1, keepdim=True))
            row_maxes.copy_(new_maxes)
    o.div_(sums)
    return o


def chunk_halves(x):
    a, b = x.chunk(2, dim=1)
    a.add_(1.0)
    b.mul_(3.0).sub_(a)
    return x


def nested_pieces(x):
    for i, row in enumerate(x.split(2, dim=0)):
        left, right = row.chunk(2, dim=-1)
        right.fill_(float(i))
    return x


def item_writes(x, i):
    x[0].add_(1.0)
    x[:, 1].mul_(2.0)
    x[i, 2:].clamp_(min=0.0)
    return x


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4, padding_idx=2)
        self.proj = nn.Linear(4, 3)
        self.emb.weight.data.normal_(mean=0.0, std=0.5)
        self.emb.weight.data[self.emb.padding_idx].zero_()

    def forward(self, ids):
        return self.proj(self.emb(ids))
'''

CONVERSION, TORCH_NS, MS_NS = converted_and_run(SOURCE, "view_writes.py")


def _np(value):
    return value.detach().numpy() if hasattr(value, "detach") else value.asnumpy()


def _both(name, *arrays):
    import mindspore as ms
    import torch

    expected = TORCH_NS[name](*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays])
    actual = MS_NS[name](*[ms.Tensor(a) if isinstance(a, np.ndarray) else a for a in arrays])
    return _np(expected), _np(actual)


RNG = np.random.default_rng(29)


@pytest.mark.parametrize("bucket", [2, 3, 8])
def test_split_views_accumulate_like_torch(bucket):
    q, k, v = (RNG.standard_normal((8, 4)).astype(np.float32) for _ in range(3))
    expected, actual = _both("blockwise_attention", q, k, v, bucket)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    scores = q @ k.T
    softmax = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(actual, (softmax / softmax.sum(-1, keepdims=True)) @ v, rtol=1e-4, atol=1e-5)


def test_unpacked_chunks_write_their_tensor():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    expected, actual = _both("chunk_halves", x)
    assert not np.allclose(expected, x)
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_pieces_of_pieces_write_the_first_tensor():
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    expected, actual = _both("nested_pieces", x)
    np.testing.assert_allclose(actual, expected)


def test_item_writes_reach_the_tensor():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    expected, actual = _both("item_writes", x, 1)
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_padding_row_zeroed_through_data_item():
    import mindspore as ms

    model = MS_NS["Tied"]()
    table = model.emb.embedding_table.asnumpy()
    assert np.all(table[2] == 0) and np.any(table[3] != 0)
    ids = np.array([[2, 1, 2]], dtype=np.int64)
    assert model(ms.Tensor(ids)).shape == (1, 3, 3)


def test_conversion_uses_the_view_helpers():
    code = CONVERSION.code
    assert code.count("_torch_view_pieces(") >= 6 and "_torch_write_view(" in code and "_torch_write_item(" in code
    assert ".add_(" not in code and ".sub_(" not in code
