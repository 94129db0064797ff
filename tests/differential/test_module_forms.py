"""Module code whose meaning hangs on a name, converted and run against torch (issue 30, item 4):

* feature detection: ``hasattr(F, "scaled_dot_product_attention")`` keeps torch's branch
  (MS216): the same parameters and buffers, the same outputs, for a model with both
  branches (nanoGPT's attention: the flash call, or a causal mask buffer);
* ``__call__ = forward`` in a Module's class body names the method renamed ``construct``
  (MS101): the class builds and its call runs;
* ``case nn.Linear():`` in a match statement matches the converted layers (MS205 leaves a
  class pattern the class, MS201 names MindSpore's), and its keywords read MindSpore's
  attribute names.

Each converts one torch file and runs the tool's own output in PYNATIVE mode.
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_run

SOURCE = '''
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):  # nanoGPT's, both branches
    def __init__(self, n_embd: int, n_head: int, block_size: int):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.act = nn.SiLU() if hasattr(nn, "SiLU") else nn.ReLU()

    def forward(self, x):
        return self.act(self.proj(x))


class Fast(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, x):
        return self.proj(x) * 2

    __call__ = forward


def describe(layer):
    match layer:
        case nn.Linear(in_features=4, out_features=n):
            return f"linear 4 to {n}"
        case nn.Linear():
            return "linear"
        case nn.Conv2d(in_channels=3):
            return "rgb conv"
        case nn.ReLU() | nn.GELU():
            return "activation"
        case _:
            return "other"


LAYERS = [nn.Linear(4, 2), nn.Linear(3, 2), nn.Conv2d(3, 8, 3), nn.Conv2d(1, 8, 3), nn.GELU(), nn.Tanh()]
'''


@pytest.fixture(scope="module")
def built():
    return converted_and_run(SOURCE, "module_forms.py")


def _same_weights(torch_net, ms_net) -> None:
    import mindspore

    torch_params = dict(torch_net.named_parameters())
    ms_params = dict(ms_net.parameters_and_names())
    assert sorted(ms_params) == sorted(torch_params)
    for name, p in torch_params.items():
        ms_params[name].set_data(mindspore.Tensor(p.detach().numpy()))


def test_feature_detection_keeps_torch_branch(built):
    import mindspore
    import torch

    result, torch_ns, ms_ns = built
    assert "hasattr" not in result.code, result.code
    torch_net = torch_ns["CausalSelfAttention"](8, 2, 6)
    ms_net = ms_ns["CausalSelfAttention"](8, 2, 6)
    assert torch_net.flash and ms_net.flash
    # the flash branch registers no mask buffer, in either
    assert sorted(torch_net.state_dict()) == sorted(n for n, _ in ms_net.parameters_and_names())
    _same_weights(torch_net, ms_net)
    x = np.random.default_rng(4).standard_normal((2, 5, 8)).astype(np.float32)
    with torch.no_grad():
        expected = torch_net(torch.from_numpy(x)).numpy()
    actual = ms_net(mindspore.Tensor(x)).asnumpy()
    np.testing.assert_allclose(actual, expected, atol=1e-5, rtol=1e-5)
    gated_t, gated_m = torch_ns["Gated"](), ms_ns["Gated"]()
    assert type(gated_m.act).__name__ == "SiLU" and type(gated_t.act).__name__ == "SiLU"


def test_call_alias_of_forward_builds_and_runs(built):
    import mindspore
    import torch

    result, torch_ns, ms_ns = built
    assert "__call__ = construct" in result.code, result.code
    torch_net, ms_net = torch_ns["Fast"](), ms_ns["Fast"]()
    _same_weights(torch_net, ms_net)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    with torch.no_grad():
        expected = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(mindspore.Tensor(x)).asnumpy(), expected, atol=1e-5, rtol=1e-5)


def test_class_patterns_match_converted_layers(built):
    _, torch_ns, ms_ns = built
    expected = [torch_ns["describe"](layer) for layer in torch_ns["LAYERS"]]
    assert expected == ["linear 4 to 2", "linear", "rgb conv", "other", "activation", "other"]
    assert [ms_ns["describe"](layer) for layer in ms_ns["LAYERS"]] == expected


# a class decorator in a file that defines no Module (transformers' integrations/moe.py):
# the class is known to be a Module only by its parameter's annotation
DECORATOR = '''
from functools import wraps

import torch


def doubled(cls: type[torch.nn.Module] | None = None):
    def wrapper(cls: type[torch.nn.Module]) -> type[torch.nn.Module]:
        original_forward = cls.forward

        @wraps(original_forward)
        def forward(self, *args, **kwargs):
            return original_forward(self, *args, **kwargs) * 2

        cls.forward = forward
        return cls

    return wrapper(cls) if cls is not None else wrapper


def plus_one(cls: type[torch.nn.Module]):
    inner = getattr(cls, "forward")
    setattr(cls, "forward", lambda self, x: inner(self, x) + 1)
    return cls
'''

DECORATED = '''
import torch.nn as nn


@plus_one
@doubled
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, x):
        return self.proj(x)
'''


def test_class_decorator_wraps_forward_by_name():
    """``cls.forward`` read and written, and ``getattr``/``setattr(cls, "forward")``, on a
    parameter annotated ``type[nn.Module]`` in a file with no Module class, name the method
    renamed ``construct``: the decorated layer runs the wrapper, as torch's does."""
    import mindspore
    import torch
    from transpile import convert_code

    decorator = convert_code(DECORATOR, filename="decorators.py")
    assert "cls.construct" in decorator.code and '"construct"' in decorator.code, decorator.code
    model = convert_code(DECORATED, filename="decorated.py")
    torch_ns: dict = {}
    exec(compile(DECORATOR, "<torch decorators>", "exec"), torch_ns)
    exec(compile(DECORATED, "<torch model>", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(decorator.code, "<decorators>", "exec"), ms_ns)
    exec(compile(model.code, "<model>", "exec"), ms_ns)
    torch_net, ms_net = torch_ns["Scaled"](), ms_ns["Scaled"]()
    _same_weights(torch_net, ms_net)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    with torch.no_grad():
        expected = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(mindspore.Tensor(x)).asnumpy(), expected, atol=1e-5, rtol=1e-5)


NO_GRAD_PAIR = '''
import torch
import torch.nn as nn


class Rotary(nn.Module):  # Llama's rotary embedding: a no_grad forward returning two tensors
    @torch.no_grad()
    def forward(self, x):
        emb = torch.cat((x, x), dim=-1)
        return emb.cos(), emb.sin()
'''


def test_no_grad_forward_returning_a_pair():
    """``@torch.no_grad()`` on a forward returning ``a, b``: the pair is cut from the
    gradient as one tuple (not ``stop_gradient(a, b)``, which takes one argument)."""
    import mindspore
    import torch
    from transpile import convert_code

    result = convert_code(NO_GRAD_PAIR, filename="rotary.py")
    assert "stop_gradient((" in result.code, result.code
    torch_ns: dict = {}
    exec(compile(NO_GRAD_PAIR, "<torch>", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(result.code, "<converted>", "exec"), ms_ns)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    expected = [t.numpy() for t in torch_ns["Rotary"]()(torch.from_numpy(x))]
    actual = [t.asnumpy() for t in ms_ns["Rotary"]()(mindspore.Tensor(x))]
    assert len(actual) == 2
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, atol=1e-6, rtol=1e-6)
