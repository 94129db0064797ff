"""The layers and functions composed where MindSpore's kernel refuses torch's argument
values or MindSpore lacks the layer (nn.ELU(alpha != 1), RReLU, AlphaDropout,
FeatureAlphaDropout, Embedding(max_norm=...), CosineSimilarity, PairwiseDistance with
broadcasting, F.elu(alpha != 1), log of integer tensors), run in a model in PYNATIVE and
GRAPH mode against torch (evaluation mode: the random ones are the identity or a fixed
slope there). Their call forms are in test_nn_layers.py and test_nn_functional.py.
"""
from __future__ import annotations

import numpy as np
import pytest

SOURCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Composed(nn.Module):
    def __init__(self):
        super().__init__()
        self.elu = nn.ELU(alpha=0.7)
        self.rrelu = nn.RReLU(0.1, 0.3)
        self.drop = nn.AlphaDropout(0.2)
        self.fdrop = nn.FeatureAlphaDropout(p=0.3)
        self.emb = nn.Embedding(10, 4, max_norm=1.5)
        self.cos = nn.CosineSimilarity(dim=-1)
        self.dist = nn.PairwiseDistance(p=1.0, keepdim=True)

    def forward(self, x, ids):
        e = self.emb(ids)
        h = self.fdrop(self.drop(self.rrelu(self.elu(x))))
        return (h, F.elu(x, 2.0), e, self.cos(e, e[:, :1]), self.dist(x, x[:1]),
                torch.log(ids), ids.log2(), torch.log1p(ids))
"""


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_composed_layers_run_in_both_modes(mode, tmp_path, monkeypatch):
    import importlib
    import sys

    import mindspore
    import torch

    from transpile import convert_code
    from transpile.parity.weights import copy_weights

    result = convert_code(SOURCE)
    assert "import torch" not in result.code and "# transpile:" not in result.code, result.code
    torch_ns: dict = {}
    exec(compile(SOURCE, "<torch>", "exec"), torch_ns)
    # GRAPH mode parses construct from its module: the converted code must be one
    (tmp_path / "composed_values_case.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "composed_values_case", raising=False)
    ms_ns = vars(importlib.import_module("composed_values_case"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype("float32") * 3
    ids = rng.integers(0, 10, (3, 4))
    t_model, m_model = torch_ns["Composed"]().eval(), ms_ns["Composed"]()
    with torch.no_grad():
        t_model.emb.weight.mul_(2)  # rows above max_norm
    assert not copy_weights(t_model, m_model)
    m_model.set_train(False)
    with torch.no_grad():
        expected = t_model(torch.from_numpy(x), torch.from_numpy(ids))
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        actual = m_model(mindspore.Tensor(x), mindspore.Tensor(ids))
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert str(e.dtype).removeprefix("torch.") == str(a.dtype).lower()
        np.testing.assert_allclose(a.asnumpy(), e.numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(m_model.emb.embedding_table.asnumpy(), t_model.emb.weight.detach().numpy(), atol=1e-6)
