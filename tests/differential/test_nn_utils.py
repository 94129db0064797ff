"""Differential tests for torch.nn.utils functions that change a layer
(rewrites/tables/nn_utils.toml): weight normalisation and its removal.

Each case builds a layer in a Module's ``__init__``, applies the call, and runs the
layer; the file is converted by the tool, the torch tensors are copied into the converted
cell by the plan ``transpile weights`` uses (so torch's names, ``weight_g``/``weight_v``
and ``parametrizations.weight.original0/1``, must be the converted cell's), and the
outputs are compared in PYNATIVE mode. Every entry is called in three forms at least.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from .harness import Case, coverage_gaps

PREFIX = "torch.nn.utils."
SOURCE = """
import torch
import torch.nn as nn
from torch.nn.utils import parametrizations, parametrize, remove_weight_norm, weight_norm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = {layer}
        {apply}

    def forward(self, x):
        return self.layer(x), self.layer.weight
"""
CONV1D = ("nn.Conv1d(4, 6, 3, padding=1)", (2, 4, 8))
GROUPED = ("nn.Conv1d(4, 4, 4, padding=2, groups=2)", (2, 4, 9))  # wav2vec2's positional embedding
CONV2D = ("nn.Conv2d(3, 5, 3)", (2, 3, 6, 6))
LINEAR = ("nn.Linear(4, 5)", (3, 4))
CONVT = ("nn.ConvTranspose1d(4, 3, 3, stride=2)", (2, 4, 5))

CASES: list[Case] = []


def case(api: str, apply: str, layer=CONV1D, form: str = "") -> None:
    CASES.append(Case(PREFIX + api, apply, layer, form))


for api, call in (("weight_norm", "nn.utils.weight_norm"), ("parametrizations.weight_norm", "parametrizations.weight_norm")):
    case(api, f"self.layer = {call}(self.layer, 'weight', 2)", form="positional")
    case(api, f"self.layer = {call}(module=self.layer, name='weight', dim=0)", form="keyword")
    case(api, f"self.layer = {call}(self.layer)", form="defaults")
    case(api, f"self.layer = {call}(self.layer, dim=None)", LINEAR, "whole")
    case(api, f"self.layer = {call}(self.layer, dim=-1)", CONV2D, "minus-one")  # -1 is the whole tensor too
    case(api, f"self.layer = {call}(self.layer, dim=-2)", CONV1D, "negative")
    case(api, f"self.layer = {call}(self.layer, dim=1)", LINEAR, "linear")
    case(api, f"self.layer = {call}(self.layer, name='weight', dim=2)", GROUPED, "grouped")
    case(api, f"{call}(self.layer, dim=1)", CONVT, "transposed")
case("weight_norm", "self.layer = weight_norm(self.layer, dim=2)", form="imported")
case("remove_weight_norm", "weight_norm(self.layer, dim=2)\n        remove_weight_norm(self.layer, 'weight')", form="positional")
case("remove_weight_norm", "weight_norm(self.layer)\n        nn.utils.remove_weight_norm(module=self.layer, name='weight')",
     LINEAR, "keyword")
case("remove_weight_norm", "weight_norm(self.layer, dim=None)\n        remove_weight_norm(self.layer)", CONV2D, "defaults")
case("parametrize.remove_parametrizations",
     "parametrizations.weight_norm(self.layer, dim=2)\n        parametrize.remove_parametrizations(self.layer, 'weight', True)",
     form="positional")
case("parametrize.remove_parametrizations",
     "parametrizations.weight_norm(self.layer)\n"
     "        parametrize.remove_parametrizations(module=self.layer, tensor_name='weight', leave_parametrized=True)",
     LINEAR, "keyword")
case("parametrize.remove_parametrizations",
     "parametrizations.weight_norm(self.layer, dim=None)\n        parametrize.remove_parametrizations(self.layer, 'weight')",
     CONV2D, "defaults")


def _ids(cases):
    return [f"{c.api.removeprefix(PREFIX)}-{c.form}" for c in cases]


def _both(c: Case, tmp_path, monkeypatch):
    from transpile import convert_code

    layer, _ = c.inputs
    source = SOURCE.format(layer=layer, apply=c.code)
    result = convert_code(source)
    assert not result.failed and "import torch" not in result.code and "# transpile:" not in result.code, result.code
    name = "nn_utils_case"
    (tmp_path / f"{name}.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    ms_ns = vars(importlib.import_module(name))
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)
    return torch_ns["Net"](), ms_ns["Net"]()


@pytest.mark.parametrize("c", CASES, ids=_ids(CASES))
def test_weight_norm_matches_torch(c: Case, tmp_path, monkeypatch) -> None:
    """torch's tensors go into the converted cell under their own names (the plan of
    ``transpile weights``), with g changed so that the norm matters; the layer's output
    and its recomputed weight match torch's."""
    import mindspore
    import torch

    from transpile.parity.weights import apply_transfer, plan_for_model, torch_state

    torch_net, ms_net = _both(c, tmp_path, monkeypatch)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in torch_net.parameters():  # not g = ||v||: the recomputed weight differs from v
            p.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, tuple(p.shape)).astype("float32")) * p.sign())
    plan, targets = plan_for_model(torch_net, ms_net)
    assert plan.complete, plan.to_dict()
    assert all(key == path for key, path in plan.copies), plan.copies  # torch's names, no renames
    apply_transfer(plan, torch_state(torch_net), targets)
    x = rng.standard_normal(c.inputs[1]).astype("float32")
    with torch.no_grad():
        expected = torch_net(torch.from_numpy(x))
    actual = ms_net(mindspore.Tensor(x))
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(a.asnumpy().reshape(e.shape), e.detach().numpy(), atol=1e-5, rtol=1e-5)


def test_weight_norm_keeps_torchs_class_name_and_gradients(tmp_path, monkeypatch) -> None:
    """The parametrized layer's class is named as torch names it (wav2vec2 checks
    ``conv.__class__.__name__ == "ParametrizedConv1d"``); g and v get gradients."""
    import mindspore

    c = Case(PREFIX + "parametrizations.weight_norm", "self.layer = parametrizations.weight_norm(self.layer, dim=2)", CONV1D)
    torch_net, ms_net = _both(c, tmp_path, monkeypatch)
    assert type(ms_net.layer).__name__ == type(torch_net.layer).__name__ == "ParametrizedConv1d"
    params = ms_net.trainable_params()
    grads = mindspore.grad(lambda x: ms_net(x)[0].sum(), grad_position=None, weights=params)(
        mindspore.Tensor(np.ones((1, 4, 8), "float32")))
    assert sorted(p.name for p in params) == ["layer.bias", "layer.parametrizations.weight.original0",
                                              "layer.parametrizations.weight.original1"]
    assert all(float(abs(g).sum()) > 0 for g in grads)


def test_every_nn_utils_entry_has_cases() -> None:
    gaps = coverage_gaps(["nn_utils.toml"], CASES)
    assert not any(gaps.values()), gaps
