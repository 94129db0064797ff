"""MS202 on names a loop or a comprehension binds from a list or tuple of tensors written out
(``[t.view(...).transpose(0, 1) for t in [query, key, value]]``: torchaudio's Emformer). Left
as written, ``t.transpose(0, 1)`` is MindSpore's transpose, a full permutation: PYNATIVE
happens to take it, GRAPH_MODE refuses it ("the number of axes must be equal to the dimension
of Tensor"). Known as tensors, the names get torch's meaning (``ops.swapaxes``) in both modes.
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_imported, outputs_in_mode

SOURCE = '''
import torch
import torch.nn as nn


class Heads(nn.Module):
    def forward(self, x):
        query, key, value = x * 2, x + 1, x - 1
        q, k, v = [t.reshape(-1, 2, x.shape[-1]).transpose(0, 1) for t in [query, key, value]]
        out = torch.bmm(q, k.transpose(1, 2))
        for t in (v, q):
            out = out + t.transpose(1, 2).sum()
        return out
'''

SHAPES = [(2, 3), (4, 5), (6, 2)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    result, torch_ns, ms_ns = converted_and_imported(SOURCE, "graph_loop_items_case",
                                                     tmp_path_factory.mktemp("graph_loop_items"))
    assert ".transpose(" not in result.code, result.code
    return result, torch_ns, ms_ns


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("shape", SHAPES)
def test_loop_items_are_tensors_in_both_modes(shape, mode, built):
    x = np.random.default_rng(sum(shape)).uniform(-1, 1, shape).astype(np.float32)
    expected, actual = outputs_in_mode(built[1]["Heads"], built[2]["Heads"], (x,), mode)
    assert expected.shape == actual.shape and np.allclose(actual, expected, atol=1e-5), \
        f"{mode}\ntorch:\n{expected}\nmindspore:\n{actual}"
