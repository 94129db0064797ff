"""Methods compiled code calls on a submodule of another class of the file are compiled code
too (``facts.submodule_helpers``): the GRAPH rewrites apply there, and the converted model
gives torch's results in both modes. lafhterlearn's AttendingDecoder calls
``self.attention.initial_attention_weights(...)``, a static method of its HybridAttention,
whose ``list(reversed([...]))`` GRAPH_MODE only compiles once MS330 has rewritten it."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_imported

SOURCE = '''
import torch
import torch.nn as nn


class Ramp(nn.Module):
    @staticmethod
    def weights(n):
        w = list(reversed([i / n for i in range(n)]))
        return torch.tensor(w)

    def scaled(self, x):
        return x * self.weights(x.shape[-1])

    def unused(self, n):
        return sorted([i for i in range(n)])

    def forward(self, x):
        return x


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.ramp = Ramp()

    def forward(self, x):
        return self.ramp.scaled(x) + self.ramp.weights(x.shape[-1])
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return converted_and_imported(SOURCE, "submodule_helpers_case", tmp_path_factory.mktemp("submodule_helpers"))


def test_the_submodule_methods_reached_from_forward_are_rewritten_and_no_other(built):
    result, _, _ = built
    lines = {d.line for d in result.diagnostics if d.code == "MS330"}
    source = SOURCE.splitlines()
    assert {source[n - 1].strip() for n in lines} == {"w = list(reversed([i / n for i in range(n)]))"}, result.code
    assert "return sorted([i for i in range(n)])" in result.code  # unused: not compiled, left


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_the_model_gives_torch_results_in_both_modes(built, mode):
    import mindspore
    import torch

    _, torch_ns, ms_ns = built
    x = np.random.default_rng(5).standard_normal((2, 5)).astype(np.float32)
    expected = torch_ns["Decoder"]()(torch.from_numpy(x)).numpy()
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        got = ms_ns["Decoder"]()(mindspore.Tensor(x)).asnumpy()
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
