"""Failure classes of the sampled benchmark's ninth draw (issue 29: promoterai-torch,
adamix-gpt2, drn, torchfasttext, svconv), each converted as a general rule and run against
torch:

* ``nn.init.xavier_uniform_(w.view(n, -1).unsqueeze(0).squeeze(0).view(w.shape))``
  (promoterai-torch): torch fills the weight through a view of all of its elements in their
  order; MindSpore has no views: ``_torch_init_fill_view`` draws for the view's shape (its
  fans) and writes the values into the weight (MS201);
* ``nn.LazyLinear(out)`` (drn): MindSpore has no lazy layers; ``_TorchLazyLinear`` makes its
  weight and bias, named as torch's, at its first call from Python (MS201);
* ``class SVConv2d(_ConvNd)`` (svconv): torch's private convolution base is a Module (its
  subclass's forward becomes construct) and becomes ``_TorchConvNd``, a Cell with torch's
  constructor, attributes and initialisation (MS201, MS101);
* drn's MDN, past its LazyLinear: ``class BaseModel(L.LightningModule)`` (lightning is left
  as it is) becomes a Cell on ``_TorchLightningModule`` (save_hyperparameters, hparams;
  ``passes/module_bases.toml``, MS101); its ``_predict`` method, a name a Cell's ``__call__``
  runs on itself (GRAPH: a RecursionError), is renamed ``_predict_`` (MS101); and
  ``nn.Softplus()(x)`` is ``_TorchSoftplus``, ops.softplus with torch's beta and threshold.

lightning is not a dependency of this project: the torch side of the LightningModule cases
runs on a stand-in ``lightning`` module (an nn.Module with lightning's documented
``save_hyperparameters``), put in ``sys.modules`` only while the source is imported.

One torch source is converted by the tool and imported from a file (GRAPH mode reads a
construct's source there); every test reads the two namespaces (one MindSpore process).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_imported, in_mode, same_outputs

pytestmark = pytest.mark.framework

SOURCE = '''
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import init
from torch.nn.modules.conv import _ConvNd
from torch.nn.parameter import Parameter


class ViewInit(nn.Module):  # promoterai-torch: initializers given view chains of weights
    def __init__(self, n, seed):
        super().__init__()
        self.dw_conv = nn.Conv1d(n, n, 5, groups=n, padding=2)
        self.ffn = nn.Linear(4, 6)
        nn.init.xavier_uniform_(
            self.dw_conv.weight.view(self.dw_conv.weight.shape[0], -1).unsqueeze(0).squeeze(0)
            .view(self.dw_conv.weight.shape))
        nn.init.eye_(self.ffn.weight.view(3, 8))
        nn.init.constant_(self.ffn.bias.data.reshape(2, 3), 0.25 * seed)

    def forward(self, x):
        return self.ffn(self.dw_conv(x).transpose(1, 2))


def hidden_layers(sizes):  # drn: a LazyLinear input projection in a Sequential
    layers = [nn.LazyLinear(sizes[0]), nn.LeakyReLU()]
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.LeakyReLU()]
    return nn.Sequential(*layers)


class Lazy(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.hidden = hidden_layers([n, n])
        self.extra = nn.LazyLinear(3, bias=False)
        self.out = nn.Linear(n, 3)

    def forward(self, x):
        h = self.hidden(x)
        return self.out(h) + self.extra(h)


class ScaledConv2d(_ConvNd):  # svconv: a convolution of its own on torch's private base
    def __init__(self, in_channels, out_channels, kernel_size, size, padding=0, groups=1, bias=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(in_channels, out_channels, (kernel_size, kernel_size), (1, 1), padding,
                         (1, 1), False, (0, 0), groups, bias, "zeros", **factory_kwargs)
        self.scale = Parameter(torch.empty((out_channels,) + size))
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if hasattr(self, "scale"):
            init.uniform_(self.scale, 0.5, 1.5)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x):
        out = F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        return out * self.scale + len(self._reversed_padding_repeated_twice)


class PlainConvBase(_ConvNd):  # the base's own reset_parameters and attributes
    def __init__(self, n, padding):
        super().__init__(n, 2 * n, (3,), (1,), padding, (2,), False, (0,), n, True, "zeros")

    def forward(self, x):
        pad = self._reversed_padding_repeated_twice
        return F.conv1d(F.pad(x, pad), self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return converted_and_imported(SOURCE, "unseen_classes_draw9", tmp_path_factory.mktemp("draw9"))


def test_the_three_rules_convert_without_warnings(built):
    result, _, _ = built
    assert result.code.count("_torch_init_fill_view(") == 4, result.code  # the helper and its three calls
    assert "init.xavier_uniform_(" not in result.code and "init.eye_(" not in result.code
    assert result.code.count("_TorchLazyLinear(") == 3  # the class and its two calls
    assert "class ScaledConv2d(_TorchConvNd):" in result.code and "class PlainConvBase(_TorchConvNd):" in result.code
    assert "def forward" not in result.code.split("class ScaledConv2d")[1]
    assert not any(d.severity.name in ("WARNING", "ERROR") for d in result.diagnostics if d.code != "MS507")


def test_an_init_through_a_view_fills_the_weight_as_torch_does(built):
    """Deterministic initializers (eye_ of a 3 x 8 view of a 6 x 4 weight, constant_ of a
    reshaped bias) give torch's values exactly; the xavier bound is the view's (its fans)."""
    _, torch_ns, ms_ns = built
    for seed in (1, 3):
        t, m = torch_ns["ViewInit"](4, seed), ms_ns["ViewInit"](4, seed)
        np.testing.assert_array_equal(m.ffn.weight.asnumpy(), t.ffn.weight.detach().numpy())
        np.testing.assert_array_equal(m.ffn.bias.asnumpy(), t.ffn.bias.detach().numpy())
        w = m.dw_conv.weight.asnumpy()
        bound = math_sqrt(6.0 / (5 + 4 * 5))  # the view (4, 1, 5): fan_in 5, fan_out 4 * 5
        assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2 and np.ptp(w) > 0


def math_sqrt(x):
    import math

    return math.sqrt(x)


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_layers_match_torch_in_both_modes(built, mode):
    _, torch_ns, ms_ns = built
    with in_mode(mode):
        same_outputs(torch_ns["ViewInit"](4, 1), ms_ns["ViewInit"](4, 1), 2, 4, 7)
        same_outputs(torch_ns["ScaledConv2d"](3, 4, 3, (6, 6), padding=(1, 1)), ms_ns["ScaledConv2d"](3, 4, 3, (6, 6), padding=(1, 1)),
                     2, 3, 6, 6, drawn_weights=True)
        same_outputs(torch_ns["ScaledConv2d"](2, 4, 3, (4, 4), padding=(0, 0), groups=2, bias=False),
                     ms_ns["ScaledConv2d"](2, 4, 3, (4, 4), padding=(0, 0), groups=2, bias=False), 2, 2, 6, 6,
                     drawn_weights=True)
        for padding in ((1,), "same", "valid"):
            same_outputs(torch_ns["PlainConvBase"](2, padding), ms_ns["PlainConvBase"](2, padding), 2, 2, 9,
                         drawn_weights=True)


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_a_lazy_layer_is_made_at_its_first_call(built, mode):
    """The weights exist after the first call (the model's in PYNATIVE; in GRAPH, each lazy
    layer's own: a GRAPH call of the model compiles it), with torch's names and shapes, and
    the model then matches torch; the draw is torch's (uniform in +-1/sqrt(in_features))."""
    import mindspore
    import torch

    _, torch_ns, ms_ns = built
    with in_mode(mode):
        t, m = torch_ns["Lazy"](8), ms_ns["Lazy"](8)
        x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
        t(torch.tensor(x))
        if mode == "PYNATIVE_MODE":
            m(mindspore.Tensor(x))
        else:
            m.hidden[0](mindspore.Tensor(x))
            m.extra(mindspore.Tensor(np.zeros((1, 8), np.float32)))
        shapes = {k: tuple(v.shape) for k, v in t.state_dict().items()}
        assert {k: tuple(p.shape) for k, p in m.parameters_and_names()} == shapes
        w = m.hidden[0].weight.asnumpy()
        assert np.abs(w).max() <= 1 / np.sqrt(5) and np.ptp(w) > 0
        same_outputs(t, m, 4, 5)


LIGHTNING_SOURCE = '''
import lightning as L
import torch
import torch.nn as nn


class BaseModel(L.LightningModule):  # drn's BaseModel, MDN: hyperparameters saved before super().__init__()
    def predict(self, x):
        return self._predict(x)


class Mixture(BaseModel):
    def __init__(self, n, components=3, beta=2.0, ignored=None):
        self.save_hyperparameters(ignore=["ignored"])
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(n, 8), nn.LeakyReLU())
        self.mu = nn.Linear(8, components)
        self.pre_sigma = nn.Linear(8, components)

    def forward(self, x):
        h = self.hidden(x)
        sigma = nn.Softplus(beta=self.hparams.beta, threshold=1.0)(self.pre_sigma(h)) + nn.Softplus()(h).mean()
        return torch.cat([self.mu(h), sigma], dim=1)

    def _predict(self, x):
        return self(x).sum(1, keepdim=True)
'''


def _lightning_stand_in():
    """lightning's LightningModule as far as a model built on it needs: an nn.Module whose
    save_hyperparameters records the calling __init__'s arguments (lightning's documented
    behaviour) in hparams, an attribute-access dict."""
    import inspect
    import types

    import torch

    class AttributeDict(dict):
        __getattr__ = dict.__getitem__

    class LightningModule(torch.nn.Module):
        def save_hyperparameters(self, ignore=()):
            info = inspect.getargvalues(inspect.currentframe().f_back)
            object.__setattr__(self, "hparams", AttributeDict(
                {k: info.locals[k] for k in info.args[1:] if k not in ignore}))

    module = types.ModuleType("lightning")
    module.LightningModule = LightningModule
    return module


@pytest.fixture(scope="module")
def lightning_built(tmp_path_factory):
    import sys

    saved = sys.modules.get("lightning")
    sys.modules["lightning"] = _lightning_stand_in()
    try:
        return converted_and_imported(LIGHTNING_SOURCE, "unseen_classes_draw9_lightning",
                                      tmp_path_factory.mktemp("draw9l"))
    finally:
        if saved is None:
            sys.modules.pop("lightning")
        else:
            sys.modules["lightning"] = saved


def test_a_lightning_model_converts_to_a_cell(lightning_built):
    result, _, _ = lightning_built
    assert "class BaseModel(_TorchLightningModule):" in result.code
    assert "def _predict_(self, x):" in result.code and "return self._predict_(x)" in result.code
    assert "_TorchSoftplus(beta=self.hparams.beta, threshold=1.0)" in result.code
    assert "nn.Softplus(" not in result.code


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_a_lightning_model_matches_torch_in_both_modes(lightning_built, mode):
    """Its outputs, its hparams (the ignored argument left out), and its _predict, which
    calls the model (a Cell's own _predict overridden: a RecursionError in GRAPH)."""
    import mindspore
    import torch

    _, torch_ns, ms_ns = lightning_built
    with in_mode(mode):
        t, m = torch_ns["Mixture"](5, ignored=7), ms_ns["Mixture"](5, ignored=7)
        assert dict(m.hparams) == dict(t.hparams) == {"n": 5, "components": 3, "beta": 2.0}
        assert m.hparams.components == 3
        same_outputs(t, m, 4, 5, drawn_weights=True)
        x = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
        with torch.no_grad():
            expected = t.predict(torch.tensor(x)).numpy()
        np.testing.assert_allclose(m.predict(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_the_renamed_private_names_are_those_a_cell_call_runs():
    """CELL_CALL_NAMES: the methods of Cell that Cell.__call__ calls on itself, read from the
    installed MindSpore's source."""
    import inspect
    import re

    from mindspore import nn

    from transpile.rewrites.cell_names import CELL_CALL_NAMES

    called = set(re.findall(r"self\.(_[A-Za-z]\w*)\(", inspect.getsource(nn.Cell.__call__)))
    assert {n for n in called if callable(getattr(nn.Cell, n, None))} == CELL_CALL_NAMES

