"""Layer attributes read and written where the layer's class is not visible at the access
site (issue 29, class 1), converted and run against torch:

* the tree's type index decides: a layer built in a base class's helper method, by a
  module-level helper, inside ``nn.ModuleDict(dict(...))``, in a Sequential filled in a
  loop and read by a negative index, weight tying (``a.weight = b.weight``), init
  functions on those (``nn.init.normal_(self.tok.weight)``);
* the index cannot decide (a helper returning one of two layer classes, an
  ``_init_weights(self, module)`` handed to ``self.apply``): the converted code looks the
  parameter up at run time, by torch's name (``_torch_layer_attribute``), and writes it
  the same way (``_torch_set_layer_attribute``);
* a package: a layer built in one file, its ``.weight`` read in another (``convert_paths``).

Each converts torch source once and runs the tool's own output in PYNATIVE mode; the
weights are copied by torch's names (``transpile.parity.weights``).
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from .harness import converted_and_run

pytestmark = pytest.mark.framework

SOURCE = '''
import torch
import torch.nn as nn


def make_norm(dim):
    return nn.LayerNorm(dim)


def pick(kind, vocab, dim):
    if kind == "embedding":
        return nn.Embedding(vocab, dim)
    return nn.Linear(dim, vocab)


class Base(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.tok = self._embedding(vocab, dim)

    def _embedding(self, vocab, dim):
        return nn.Embedding(vocab, dim)


class LM(Base):
    def __init__(self, vocab=11, dim=4, kind="embedding"):
        super().__init__(vocab, dim)
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(vocab, dim), ln_f=make_norm(dim)))
        blocks = []
        for _ in range(2):
            blocks.append(nn.Linear(dim, dim))
        self.body = nn.Sequential(*blocks, nn.BatchNorm1d(dim))
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.transformer.wte.weight  # tied
        self.extra = pick(kind, vocab, dim)
        self.extra.weight = self.head.weight  # tied, the layer's class known only at run time
        nn.init.normal_(self.tok.weight, 0.0, 0.5)
        nn.init.constant_(self.body[-1].weight, 1.5)
        nn.init.constant_(self.transformer.ln_f.bias, 0.25)
        for i in range(2):
            self.add_module(f"norm{i}", nn.LayerNorm(dim))
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)
        if type(module) is nn.BatchNorm1d:
            nn.init.ones_(module.weight)

    def forward(self, ids):
        x = self.transformer.wte(ids) + self.tok(ids) + self.tok.weight[ids]
        x = self.body(x.mean(1)) * self.body[-1].weight + self.extra.weight.sum()
        x = self.transformer.ln_f(x) + self.transformer.ln_f.weight
        x = self.norm0(x) * self.norm1.weight
        return self.head(x)


def tied_pair():
    net = nn.Sequential(nn.Embedding(6, 3), nn.Linear(3, 6, bias=False))
    net[-1].weight = net[0].weight
    return net
'''

PACKAGE = {
    "__init__.py": "",
    "layers.py": '''
import torch.nn as nn


class Norm(nn.LayerNorm):
    def shifted(self, x):
        return super().forward(x) + 1.0


class Encoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids):
        return self.norm(self.emb(ids))
''',
    "model.py": '''
import torch.nn as nn

from .layers import Encoder, Norm


class Model(nn.Module):
    def __init__(self, vocab=9, dim=4):
        super().__init__()
        self.enc = Encoder(vocab, dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.enc.emb.weight
        nn.init.constant_(self.enc.norm.weight, 2.0)

    def forward(self, ids):
        return self.out(self.enc(ids)) + self.enc.emb.weight.sum() + self.enc.norm.bias.sum()


class Tied(Encoder):
    def forward(self, ids):
        return self.emb(ids) @ self.emb.weight.t() + self.norm.weight.sum()


class ScaledNorm(Norm):  # a torch layer's subclass of a subclass in another file
    def forward(self, x):
        return self.shifted(x) * self.weight + self.bias
''',
}


@pytest.fixture(scope="module")
def converted():
    return converted_and_run(SOURCE, "layer_attributes.py")


def _copy(torch_net, ms_net) -> None:
    from transpile.parity.weights import copy_weights

    assert copy_weights(torch_net, ms_net) == []


def _run(torch_net, ms_net, ids: np.ndarray):
    import mindspore
    import torch

    torch_net.eval()
    ms_net.set_train(False)
    with torch.no_grad():
        expected = torch_net(torch.from_numpy(ids)).numpy()
    return expected, ms_net(mindspore.Tensor(ids)).asnumpy()


@pytest.mark.parametrize("kind", ["embedding", "linear"])
def test_layers_the_index_finds_and_those_looked_up_at_run_time(converted, kind):
    import torch

    result, torch_ns, ms_ns = converted
    torch.manual_seed(0)
    torch_net, ms_net = torch_ns["LM"](kind=kind), ms_ns["LM"](kind=kind)
    # what the init functions wrote, before any copy: the same constants on both sides
    assert np.allclose(ms_net.body[-1].gamma.asnumpy(), 1.0)  # ones_ in _init_weights, after constant_ 1.5
    assert np.allclose(ms_net.transformer.ln_f.beta.asnumpy(), 0.25)
    assert np.allclose(ms_net.body[0].bias.asnumpy(), 0.0)
    assert ms_net.head.weight is ms_net.transformer.wte.embedding_table  # tied
    extra = ms_net.extra.embedding_table if kind == "embedding" else ms_net.extra.weight
    assert extra is ms_net.head.weight  # tied by the run-time writer
    _copy(torch_net, ms_net)
    ids = np.array([[1, 2, 3], [4, 5, 10]], dtype=np.int32)
    expected, actual = _run(torch_net, ms_net, ids.astype(np.int64))
    assert np.allclose(actual, expected, atol=1e-5), (actual, expected)


def test_the_conversion_says_where_it_looks_up_at_run_time(converted):
    result = converted[0]
    notes = [d for d in result.diagnostics if d.code == "MS204" and "run time" in d.message]
    lines = {d.line for d in notes}
    source_lines = SOURCE.splitlines()
    assert any("self.extra.weight = self.head.weight" in source_lines[n - 1] for n in lines), notes
    assert any("module.weight" in source_lines[n - 1] for n in lines), notes
    assert '_torch_layer_attribute(self.extra,"weight"' in "".join(result.code.split())
    assert "self.body[-1].gamma" in result.code and "self.transformer.ln_f.beta" in result.code


def test_tied_pair_through_negative_index(converted):
    _, torch_ns, ms_ns = converted
    ms_net = ms_ns["tied_pair"]()
    assert ms_net[-1].weight is ms_net[0].embedding_table


def test_package_layer_built_in_another_file(tmp_path):
    import torch

    from transpile import convert_paths

    src, out = tmp_path / "torch_side" / "tiedpkg", tmp_path / "ms_side" / "tiedpkg"
    src.mkdir(parents=True)
    for name, text in PACKAGE.items():
        (src / name).write_text(text)
    report = convert_paths([src], output=out, cache=False, jobs=1)
    model_text = (out / "model.py").read_text()
    assert "self.enc.emb.embedding_table" in model_text and "self.enc.norm.gamma" in model_text, model_text
    assert "self.emb.embedding_table.t()" in model_text, model_text
    assert "* self.gamma + self.beta" in model_text, model_text
    assert not any(f.result is not None and f.result.failed for f in report.files)

    def load(root):
        for key in [k for k in sys.modules if k == "tiedpkg" or k.startswith("tiedpkg.")]:
            del sys.modules[key]
        sys.path.insert(0, str(root))
        try:
            return importlib.import_module("tiedpkg.model")
        finally:
            sys.path.remove(str(root))

    torch_mod = load(src.parent)
    ms_mod = load(out.parent)
    ids = np.array([[0, 3, 8], [1, 2, 7]], dtype=np.int64)
    for name in ("Model", "Tied"):
        torch.manual_seed(1)
        torch_net = torch_mod.Model() if name == "Model" else torch_mod.Tied(9, 4)
        ms_net = ms_mod.Model() if name == "Model" else ms_mod.Tied(9, 4)
        if name == "Model":
            assert np.allclose(ms_net.enc.norm.gamma.asnumpy(), 2.0)
        _copy(torch_net, ms_net)
        expected, actual = _run(torch_net, ms_net, ids)
        assert np.allclose(actual, expected, atol=1e-4), (name, actual, expected)
    torch.manual_seed(2)
    torch_norm, ms_norm = torch_mod.ScaledNorm(4), ms_mod.ScaledNorm(4)
    with torch.no_grad():
        torch_norm.weight.uniform_(0.5, 1.5)
        torch_norm.bias.uniform_(-1.0, 1.0)
    _copy(torch_norm, ms_norm)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    expected, actual = _run(torch_norm, ms_norm, x)
    assert np.allclose(actual, expected, atol=1e-5), (actual, expected)
