"""MS208 on einops names bound by a loader call given the module's path and the member's name
(``Rearrange, _ = optional_import("einops.layers.torch", name="Rearrange")``, monai's idiom):
lowered as an import of the name would be, so GRAPH mode compiles the layers instead of calling
einops' torch layer as Python (its result, untyped, broke the next reshape: "Invalid input args
for unpack call", or shapes computed wrongly: "negative dimensions are not allowed"). The
converted model runs in PYNATIVE and GRAPH mode against torch on varied shapes."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from .harness import in_mode

SOURCE = '''
import importlib

import torch
import torch.nn as nn


def optional_import(module, version="", name=""):
    loaded = importlib.import_module(module)
    return (getattr(loaded, name) if name else loaded), True


Rearrange, _ = optional_import("einops.layers.torch", name="Rearrange")
rearrange, has_einops = optional_import("einops", name="rearrange")


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.split = Rearrange("b n (qkv h d) -> qkv b h n d", qkv=3, h=heads)
        self.merge = Rearrange("b h n d -> b n (h d)")
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        shape = x.shape
        x = x.reshape(*shape[:2], -1).transpose(1, 2)  # b c h w -> b (h w) c
        qkv = self.split(self.qkv(x))
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = torch.softmax(q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5, dim=-1)
        y = self.out(self.merge(att @ v))
        y = rearrange(y, "b n c -> b c n")
        return y.reshape(shape) + y.reshape(shape).mean()
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from transpile import convert_code

    result = convert_code(SOURCE, filename="model.py")
    assert not result.failed and "# transpile:" not in result.code, result.code
    assert "Rearrange(" not in result.code.split("class Attention")[1], result.code
    assert "rearrange(" not in result.code.split("class Attention")[1], result.code
    root = tmp_path_factory.mktemp("graph_loader_bindings")
    (root / "g_loader_torch.py").write_text(SOURCE)
    (root / "g_loader_ms.py").write_text(result.code)
    sys.path.insert(0, str(root))
    try:
        return result, importlib.import_module("g_loader_torch"), importlib.import_module("g_loader_ms")
    finally:
        sys.path.remove(str(root))


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("shape,heads", [((2, 8, 3, 4), 2), ((1, 12, 5, 2), 3), ((3, 4, 2, 2), 4)])
def test_loader_bound_layers_match_torch(mode, shape, heads, built):
    import mindspore
    import torch

    _, torch_module, ms_module = built
    torch.manual_seed(shape[1] * heads)
    model = torch_module.Attention(shape[1], heads).eval()
    converted = ms_module.Attention(shape[1], heads)
    converted.set_train(False)
    for name, param in converted.parameters_and_names():
        source = {"weight": "weight", "bias": "bias"}[name.rsplit(".", 1)[1]]
        value = dict(model.named_parameters())[name.rsplit(".", 1)[0] + "." + source].detach().numpy()
        param.set_data(mindspore.Tensor(value))
    x = np.random.default_rng(sum(shape)).uniform(-2, 2, shape).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    with in_mode(mode):
        actual = converted(mindspore.Tensor(x)).asnumpy()
    assert actual.shape == expected.shape
    assert np.allclose(actual, expected, atol=1e-5), f"torch:\n{expected}\nmindspore:\n{actual}"
