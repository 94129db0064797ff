"""The layers and functions composed where MindSpore's kernel refuses torch's argument
values or MindSpore lacks the layer (nn.ELU(alpha != 1), RReLU, AlphaDropout,
FeatureAlphaDropout, Embedding(max_norm=...), CosineSimilarity, PairwiseDistance with
broadcasting, F.elu(alpha != 1), log of integer tensors) and the losses composed (SoftMargin,
TripletMargin, MultiLabelMargin, BCE with a weight, poisson_nll_loss, ...), run in a model in PYNATIVE and
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


class Losses(nn.Module):
    def __init__(self):
        super().__init__()
        self.soft = nn.SoftMarginLoss()
        self.triplet = nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True)
        self.multilabel = nn.MultiLabelMarginLoss(reduction="none")
        self.bce = nn.BCELoss(weight=torch.tensor([0.5, 1.0, 1.5, 2.0, 0.8]))

    def forward(self, x, ids):
        y = torch.sigmoid(x)
        sign = torch.where(x > 0, 1.0, -1.0)
        return (self.soft(x, sign), self.triplet(x, x.flip(0), x * 2), self.multilabel(x, ids[:, :5] % 5),
                self.bce(y, y.flip(0)), F.poisson_nll_loss(x, y * 3, full=True),
                F.triplet_margin_with_distance_loss(x, x.flip(0), x * 2, swap=True),
                F.binary_cross_entropy(y, y.flip(0), torch.tensor([[2.0], [1.0], [0.5]])))
"""


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("model", ["Composed", "Losses"])
def test_composed_layers_run_in_both_modes(model, mode, tmp_path, monkeypatch):
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
    ids = rng.integers(0, 10, (3, 6))
    t_model, m_model = torch_ns[model]().eval(), ms_ns[model]()
    if model == "Composed":
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
    if model == "Composed":
        np.testing.assert_allclose(m_model.emb.embedding_table.asnumpy(), t_model.emb.weight.detach().numpy(), atol=1e-6)
