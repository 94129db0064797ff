"""Differential tests for torch behaviours real models rely on that MindSpore lacks:

* torch.cat skipping 1-D empty operands beside tensors of another rank (torchaudio's
  Emformer: ``torch.cat([right_context, utterance, summary])`` with
  ``summary = torch.empty(0)``), in a file that makes such tensors (MS201 cat_operands);
* ``x.device.type``, ``x.is_cuda``, ``x.is_cpu`` (MS209);
* ``map(f, xs)`` in forward, which GRAPH mode rejects over closures (MS304: a comprehension);
* ``^`` of two Python bools, which GRAPH mode rejects (MS305: ``_py_xor``);
* a list's ``pop()`` nested in an expression, which GRAPH mode miscompiles (MS307);
* ``with torch.autocast(..., enabled=False):``, which is its body (MS206);
* ``x.clone()`` on a value not proven a tensor (transformers' ``inv_freq.clone()``): MindSpore's
  Tensor.clone has no CPU kernel; ``_torch_clone`` copies (MS202);
* the claim behind dropping ``reset_parameters()`` while a layer is built (MS103): each
  layer family of ``SAME_INIT``, converted by the tool, draws torch's distributions.

Each runs the tool's own output against torch; the modules run in PYNATIVE and GRAPH
mode. (flatten_parameters and reset_parameters calls: test_module_methods.py.)
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from .harness import Case, Suite, arr

# -- torch.cat with 1-D empty operands --------------------------------------------------
A = arr(2, 3, 4)
B = arr(1, 3, 4)
V = arr(5)
CAT_CASES = [
    Case("torch.cat", "torch.cat([a, torch.empty(0)])", (A,), "positional"),
    Case("torch.cat", "torch.cat(tensors=[torch.empty(0), a, b], dim=0)", (A, B), "keyword"),
    Case("torch.cat", "torch.cat((a, torch.zeros(0), b), -3)", (A, B), "tuple"),
    Case("torch.cat", "torch.cat([torch.empty(0), a], dim=2)", (A,), "other-axis"),
    Case("torch.cat", "ts = [torch.zeros((0,)), a, b]\nreturn torch.cat(ts, 0)", (A, B), "list-variable"),
    Case("torch.cat", "torch.cat([torch.empty(0), torch.empty(0)])", (), "all-empty"),
    Case("torch.cat", "torch.cat([torch.zeros(0), a, torch.tensor([])])", (V,), "one-dimensional"),
    Case("torch.cat", "acc = torch.FloatTensor()\nfor i in range(2):\n    acc = torch.cat([acc, a[i:i + 1]])\nreturn acc",
         (A,), "accumulator"),
    Case("torch.cat", "torch.cat([a.new_zeros(0), a, b])", (A, B), "new-zeros"),
    Case("torch.cat", "torch.cat([a.new_zeros(0)])", (A,), "single"),
    Case("torch.concat", "torch.concat([a, torch.empty(0), b])", (A, B), "positional"),
    Case("torch.concatenate", "torch.concatenate(tensors=[torch.empty(0), b, a], dim=0)", (A, B), "keyword"),
]
CAT_SUITE = Suite(CAT_CASES)


@pytest.mark.parametrize("case", CAT_SUITE.cases, ids=CAT_SUITE.ids)
def test_cat_skips_empty_1d_operands(case: Case) -> None:
    CAT_SUITE.check(case)


# -- x.clone() on a receiver not proven a tensor -------------------------------------------
CLONE_CASES = [
    Case("Tensor.clone", "held = {'w': a}\nc = held['w'].clone()\nc.add_(1.0)\nreturn c, a", (A,), "untyped"),
    Case("Tensor.clone", "store = [nn.Parameter(a)]\nreturn store[0].clone() * 2", (A,), "parameter"),
]
CLONE_SUITE = Suite(CLONE_CASES)


@pytest.mark.parametrize("case", CLONE_SUITE.cases, ids=CLONE_SUITE.ids)
def test_clone_of_untyped_values(case: Case) -> None:
    assert "_torch_clone(" in CLONE_SUITE.converted_case(case)  # the receiver is not typed: the helper copies
    CLONE_SUITE.check(case)


def test_cat_filter_only_where_the_file_makes_empty_tensors() -> None:
    """A file that never writes a 1-D empty tensor keeps plain ``ops.cat``; the note is
    given once, at the first such tensor; a single literal operand is not filtered."""
    from transpile import convert_code

    plain = convert_code("import torch\n\n\ndef f(a, b):\n    return torch.cat([a, b], 1)\n")
    assert "_skip_empty_1d" not in plain.code, plain.code
    src = ("import torch\n\n\ndef f(a, b):\n    e = torch.empty(0)\n    z = torch.zeros(0)\n"
           "    return torch.cat([a, e]), torch.cat([b]), torch.cat([a, z], 1)\n")
    result = convert_code(src)
    assert result.code.count("_skip_empty_1d(") == 3, result.code  # the definition and two cats
    assert "ops.cat(tensors=[b])" in result.code, result.code
    notes = [d for d in result.diagnostics if "1-D empty tensor" in d.message]
    assert [(d.line, d.severity.name) for d in notes] == [(5, "INFO")]


# Emformer's pattern: an optional summary that is torch.empty(0) when memory is off, and a
# state list whose memory starts with no rows.
EMFORMER_LIKE = """
import torch


class Layer(torch.nn.Module):
    def __init__(self, use_mem: bool):
        super().__init__()
        self.use_mem = use_mem
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, utterance, right_context):
        if self.use_mem:
            summary = utterance[:1]
        else:
            summary = torch.empty(0).to(dtype=utterance.dtype, device=utterance.device)
        query = self.proj(torch.cat([right_context, utterance, summary]))
        state = [torch.zeros(0, utterance.size(1), 4), utterance]
        mems = torch.cat([state[0], state[1]])[-2:]
        return query, mems, torch.cat((query, summary), dim=0)
"""

DEVICE_SOURCE = """
import torch
import torch.nn as nn


class Where(nn.Module):
    def forward(self, x):
        if x.device.type != "meta" and not x.is_cuda:
            y = x + 1
        else:
            y = x - 1
        return y, x.device.type, x.is_cpu, x.is_cuda
"""


def _converted_module(source: str, name: str, tmp_path, monkeypatch):
    from transpile import convert_code

    result = convert_code(source)
    assert not result.failed and "import torch" not in result.code and "# transpile:" not in result.code, result.code
    # GRAPH mode parses construct from its module: the converted code must be one
    (tmp_path / f"{name}.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return vars(importlib.import_module(name))


def _run_both(source: str, name: str, build, inputs, mode, tmp_path, monkeypatch):
    import mindspore
    import torch

    ms_ns = _converted_module(source, name, tmp_path, monkeypatch)
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)
    torch_net, ms_net = build(torch_ns), build(ms_ns)
    if hasattr(torch_net, "state_dict"):  # the same weights on both sides
        for (_, p), (_, q) in zip(torch_net.named_parameters(), ms_net.parameters_and_names()):
            q.set_data(mindspore.Tensor(p.detach().numpy()))
    with torch.no_grad():
        expected = torch_net(*(torch.from_numpy(x) for x in inputs))
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        actual = ms_net(*(mindspore.Tensor(x) for x in inputs))
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    return expected, actual


@pytest.mark.parametrize("use_mem", [False, True])
@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_cat_with_empty_operands_in_both_modes(mode, use_mem, tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    inputs = (rng.standard_normal((3, 2, 4)).astype("float32"), rng.standard_normal((1, 2, 4)).astype("float32"))
    expected, actual = _run_both(EMFORMER_LIKE, "cat_empty_case", lambda ns: ns["Layer"](use_mem), inputs, mode,
                                 tmp_path, monkeypatch)
    for e, a in zip(expected, actual):
        assert tuple(e.shape) == tuple(a.shape)
        np.testing.assert_allclose(a.asnumpy(), e.numpy(), atol=1e-5, rtol=1e-5)


# -- x.device.type, x.is_cuda, x.is_cpu ----------------------------------------------------
DEVICE_CASES = [
    Case("Tensor.device.type", "a.device.type", (arr(2),), "tensor"),
    Case("Tensor.device.type", "a.device.type == 'cpu'", (arr(2),), "comparison"),
    Case("Tensor.device.type", "(a * 2).device.type", (arr(2),), "expression"),
    Case("Tensor.device.type", "p = nn.Parameter(a)\nreturn p.device.type", (arr(2),), "parameter"),
    Case("Tensor.is_cuda", "a.is_cuda", (arr(2),), "tensor"),
    Case("Tensor.is_cuda", "not a.is_cuda", (arr(2),), "negated"),
    Case("Tensor.is_cpu", "a.is_cpu", (arr(2),), "tensor"),
]
DEVICE_SUITE = Suite(DEVICE_CASES)


@pytest.mark.parametrize("case", DEVICE_SUITE.cases, ids=DEVICE_SUITE.ids)
def test_device_queries(case: Case) -> None:
    DEVICE_SUITE.check(case)


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_device_queries_in_both_modes(mode, tmp_path, monkeypatch):
    x = np.arange(3, dtype="float32")
    expected, actual = _run_both(DEVICE_SOURCE, "device_case", lambda ns: ns["Where"](), (x,), mode,
                                 tmp_path, monkeypatch)
    np.testing.assert_allclose(actual[0].asnumpy(), expected[0].numpy())
    assert tuple(actual[1:]) == tuple(expected[1:]) == ("cpu", True, False)


# -- map() in forward (MS304) -------------------------------------------------------------
MAP_SOURCE = '''
from functools import partial

import torch
import torch.nn as nn
from einops import rearrange


def double(t):
    return t * 2


class Attention(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(8, 24, bias=False)
        self.norm = nn.LayerNorm(4)

    def split(self, x):
        return map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), x.chunk(3, dim=-1))

    def forward(self, x):
        h = self.heads
        q, k, v = self.split(self.to_qkv(x))
        q, k = map(lambda t: t * h, (q, k))
        q, k = map(self.norm, (q, k))
        a, b = map(double, (q, k))
        kv, vk = map(partial(torch.cat, dim=-1), ((k, v), (v, k)))
        sums = list(map(lambda s, t: s + t, (q, k), (v, a)))
        total = tuple(map(lambda t: t.sum(), (a, b)))
        mean = 0
        for t in map(lambda t: t.mean(), (kv, vk)):
            mean = mean + t
        return (q @ k.transpose(-1, -2)).softmax(dim=-1) @ v, kv, vk, sums[0], sums[1], total[0], total[1], mean
'''


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_map_in_forward_in_both_modes(mode, tmp_path, monkeypatch):
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype("float32")
    expected, actual = _run_both(MAP_SOURCE, "map_case", lambda ns: ns["Attention"](2), (x,), mode,
                                 tmp_path, monkeypatch)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(a.asnumpy(), e.numpy(), atol=1e-5, rtol=1e-5)


# -- ^ of Python bools (MS305) --------------------------------------------------------------
XOR_SOURCE = '''
import torch
import torch.nn as nn


def exists(v):
    return v is not None


def xnor(x, y):
    return not (x ^ y)


class Net(nn.Module):
    def __init__(self, needs_labels):
        super().__init__()
        self.needs_labels = needs_labels

    def forward(self, x, labels=None):
        assert xnor(exists(labels), self.needs_labels)
        flip = self.needs_labels ^ True
        n = 6
        n ^= 3
        y = x * n if flip else x
        return y, ((x > 0) ^ (x < 1)).int(), x.int() ^ 5
'''


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_xor_of_bools_in_both_modes(mode, tmp_path, monkeypatch):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32") * 3
    expected, actual = _run_both(XOR_SOURCE, "xor_case", lambda ns: ns["Net"](False), (x,), mode,
                                 tmp_path, monkeypatch)
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(a.asnumpy(), e.numpy())


# -- lst.pop() nested in an expression (MS307) ---------------------------------------------
POP_SOURCE = '''
import torch
import torch.nn as nn


class Skips(nn.Module):
    def __init__(self):
        super().__init__()
        self.downs = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.ups = nn.ModuleList([nn.Linear(8, 4) for _ in range(2)])

    def forward(self, x):
        h = []
        for down in self.downs:
            x = down(x)
            h.append(x)
        for up in self.ups:
            x = up(torch.cat((x, h.pop()), dim=1))
        return x - h.pop() * 2
'''


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_nested_list_pop_in_both_modes(mode, tmp_path, monkeypatch):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    expected, actual = _run_both(POP_SOURCE, "pop_case", lambda ns: ns["Skips"](), (x,), mode, tmp_path, monkeypatch)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-5, rtol=1e-5)


# -- with torch.autocast(..., enabled=False) (MS206) ----------------------------------------
AUTOCAST_SOURCE = '''
import torch
import torch.nn as nn


class LiteAttention(nn.Module):
    def forward(self, q, k, v):
        if not torch.jit.is_scripting() and v.device.type != "meta":
            with torch.autocast(device_type=v.device.type, enabled=False):
                out = q @ (k.transpose(-1, -2) @ v)
        else:
            out = q
        return out
'''


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_disabled_autocast_in_both_modes(mode, tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)).astype("float32") for _ in range(3))
    expected, actual = _run_both(AUTOCAST_SOURCE, "autocast_case", lambda ns: ns["LiteAttention"](), (q, k, v), mode,
                                 tmp_path, monkeypatch)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-5, rtol=1e-5)


CHILDREN_SOURCE = '''
import torch.nn as nn


class Stage(nn.Module):
    def __init__(self):
        super().__init__()
        for i in range(3):
            self.add_module(f"block{i}", nn.Linear(4, 4))

    def forward(self, x):
        for block in self.children():
            x = block(x)
        return x, [name for name, _ in self.named_children()]
'''


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_children_in_forward_in_both_modes(mode, tmp_path, monkeypatch):
    """GRAPH mode cannot compile a loop over Cell.cells() ("The pointer[node] is null"):
    children() in forward is the Cell's own dict of children (timm's RegStage)."""
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    (expected, names), (actual, ms_names) = _run_both(CHILDREN_SOURCE, "children_case", lambda ns: ns["Stage"](), (x,),
                                                      mode, tmp_path, monkeypatch)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-5, rtol=1e-5)
    assert list(ms_names) == names


BRANCH_LOCALS_SOURCE = '''
import torch
import torch.nn as nn


class Memory(nn.Module):
    def __init__(self, every):
        super().__init__()
        self.every = every
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        has_memory = self.every > 0
        if has_memory:
            every = self.every
            mem = x[:, :every]
        y = self.proj(x)
        if has_memory:
            y = y + mem.sum() * every
        return y
'''


@pytest.mark.parametrize("every", [0, 2])
@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_branch_locals_in_both_modes(mode, every, tmp_path, monkeypatch):
    """GRAPH mode refuses a local only one branch binds, even where the later read is
    under the same condition (x-transformers' memory tokens): None is bound first."""
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    expected, actual = _run_both(BRANCH_LOCALS_SOURCE, "branch_locals_case", lambda ns: ns["Memory"](every), (x,),
                                 mode, tmp_path, monkeypatch)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-5, rtol=1e-5)


SET_LITERALS_SOURCE = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def scale(self, x):
        if x.ndim not in {2, -1}:
            return x
        return x * 2

    def forward(self, x):
        assert x.ndim in {2, 3}
        if self.mode in {"sum", "add"}:
            x = x + 1
        if self.mode not in {'sum'}:
            x = x - 3
        return self.scale(x)
'''


@pytest.mark.parametrize("net_mode", ["sum", "mean"])
@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_set_literals_in_both_modes(mode, net_mode, tmp_path, monkeypatch):
    """GRAPH mode compiles no set expression (x-transformers' assert ndim in {2, 3})."""
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    expected, actual = _run_both(SET_LITERALS_SOURCE, "set_literals_case", lambda ns: ns["Net"](net_mode), (x,),
                                 mode, tmp_path, monkeypatch)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-6)

# -- reset_parameters: MindSpore's layers are built from torch's distributions ----------
# The constructors, converted by the tool, of each family whose reset_parameters MS103
# drops while a layer is built. Large enough for the bounds and spreads to show.
LAYERS = {
    "Linear": "nn.Linear(400, 1024)", "Bilinear": "nn.Bilinear(20, 30, 1024)",
    "Conv1d": "nn.Conv1d(40, 1024, 5)", "Conv2d": "nn.Conv2d(16, 1024, 3, groups=2)",
    "Conv3d": "nn.Conv3d(8, 1024, 3)", "ConvTranspose1d": "nn.ConvTranspose1d(32, 1024, 3)",
    "ConvTranspose2d": "nn.ConvTranspose2d(32, 1024, 3)", "ConvTranspose3d": "nn.ConvTranspose3d(8, 1024, 3)",
    "BatchNorm1d": "nn.BatchNorm1d(64)", "BatchNorm2d": "nn.BatchNorm2d(64)", "BatchNorm3d": "nn.BatchNorm3d(64)",
    "LayerNorm": "nn.LayerNorm(64)", "GroupNorm": "nn.GroupNorm(4, 64)",
    "InstanceNorm1d": "nn.InstanceNorm1d(64, affine=True)", "InstanceNorm2d": "nn.InstanceNorm2d(64, affine=True)",
    "InstanceNorm3d": "nn.InstanceNorm3d(64, affine=True)",
    "LSTM": "nn.LSTM(64, 256, num_layers=2)", "GRU": "nn.GRU(64, 512)", "RNN": "nn.RNN(64, 1024)",
    "PReLU": "nn.PReLU(8)",
}
# MindSpore's names for torch's parameters (the others are the same)
MS_NAMES = {"gamma": "weight", "beta": "bias", "w": "weight"}


def _stats(values: np.ndarray) -> tuple[float, float, float]:
    v = values.astype(np.float64).ravel()
    return v.min(), v.max(), v.std()


def test_same_init_lists_the_compared_layers() -> None:
    from transpile.rewrites.passes.module_methods import SAME_INIT

    assert SAME_INIT == {f"torch.nn.{n}" for n in LAYERS}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_mindspore_layers_draw_torchs_initial_distributions(name, tmp_path, monkeypatch) -> None:
    """Per parameter: as many values, from the same distribution: constants equal,
    uniform bounds and spreads within what sampling allows (4 standard errors)."""
    import torch

    source = f"import torch\nimport torch.nn as nn\n\n\ndef build():\n    return {LAYERS[name]}\n"
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)
    ms_ns = _converted_module(source, f"init_case_{name.lower()}", tmp_path, monkeypatch)
    import mindspore

    torch.manual_seed(0)
    mindspore.set_seed(0)
    t_params = {n: p.detach().numpy() for n, p in torch_ns["build"]().named_parameters()}
    m_params = {MS_NAMES.get(n.rsplit(".", 1)[-1], n.removeprefix("bn2d.")): p.asnumpy()  # BatchNorm3d holds a bn2d
                for n, p in ms_ns["build"]().parameters_and_names() if not n.endswith(("moving_mean", "moving_variance"))}
    assert set(t_params) == set(m_params)
    for n, t in t_params.items():
        m = m_params[n]
        assert t.size == m.size, n
        (t_lo, t_hi, t_sd), (m_lo, m_hi, m_sd) = _stats(t), _stats(m)
        if t_sd == 0:
            assert m_sd == 0 and t_lo == m_lo, (n, t_lo, m_lo)
            continue
        bound, tol = max(abs(t_lo), abs(t_hi)), 4 / np.sqrt(t.size)
        assert abs(max(abs(m_lo), abs(m_hi)) - bound) <= (0.01 + tol) * bound, (n, bound, m_lo, m_hi)
        assert abs(m_sd - t_sd) <= tol * t_sd, (n, t_sd, m_sd)


def test_embedding_is_left_out_because_its_init_differs(tmp_path, monkeypatch) -> None:
    """torch draws N(0, 1); MindSpore's Embedding N(0, 0.01): reset_parameters is not dropped
    but done by a run-time helper (test_module_methods.py)."""
    source = "import torch.nn as nn\n\n\ndef build():\n    return nn.Embedding(1000, 64)\n"
    ms_ns = _converted_module(source, "init_case_embedding", tmp_path, monkeypatch)
    (_, table), = ms_ns["build"]().parameters_and_names()
    assert table.asnumpy().std() < 0.1


# -- einops calls left to einops (a pattern known only when they run) in GRAPH_MODE ------------
EINOPS_AT_RUN_TIME = """
import torch
from torch import nn
from einops import pack, unpack


def pack_one(t, pattern):
    return pack([t], pattern)


def unpack_one(t, ps, pattern):
    return unpack(t, ps, pattern)[0]


class Net(nn.Module):
    def forward(self, x):
        w, ps = pack_one(x, 'o *')
        w = nn.functional.normalize(w, dim=-1) * 2
        return unpack_one(w, ps, 'o *')
"""


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_einops_at_run_time_in_both_modes(mode, tmp_path, monkeypatch):
    """GRAPH_MODE compiled einops' own Python ('Unsupported exception type: EinopsError'):
    the emitted backend names einops in MS_JIT_IGNORE_MODULES, so MindSpore runs it in Python."""
    x = np.random.default_rng(0).standard_normal((3, 2, 4)).astype("float32")
    expected, actual = _run_both(EINOPS_AT_RUN_TIME, "einops_run_time_case", lambda ns: ns["Net"](), (x,), mode,
                                 tmp_path, monkeypatch)
    assert tuple(expected.shape) == tuple(actual.shape)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-5, rtol=1e-5)


DEVICE_CACHE = '''
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.biases = nn.Parameter(torch.randn(2, n))
        self.register_buffer("idxs", torch.arange(n * n).reshape(n, n) % n)
        self.cache = {}

    def get_biases(self, device):
        if torch.jit.is_tracing() or self.training:
            return self.biases[:, self.idxs]
        else:
            key = str(device)
            if key not in self.cache:
                self.cache[key] = self.biases[:, self.idxs]
            return self.cache[key]

    def forward(self, x):
        return x + self.get_biases(x.device)
'''


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_dict_cache_on_self_in_both_modes(mode, tmp_path, monkeypatch):
    # timm's LeViT / EfficientFormer / TinyViT: attention biases cached per device in eval
    def build(ns):
        net = ns["Attention"](3)
        return net.set_train(False) if hasattr(net, "set_train") else net.eval()

    x = np.random.default_rng(0).standard_normal((4, 2, 3, 3)).astype("float32")
    expected, actual = _run_both(DEVICE_CACHE, "dict_cache_case", build, (x,), mode, tmp_path, monkeypatch)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-5, rtol=1e-5)


# -- assert all(f(x) for x in xs) in forward (GRAPH_MODE: all() sees no module names) --------
ASSERT_ALL = """
import torch
from torch import nn


def divisible_by(numer, denom):
    return (numer % denom) == 0


class Net(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        assert all([divisible_by(d, self.factor) for d in x.shape[-2:]]), "not divisible"
        assert all(s > 0 for s in x.shape)
        return x * 2
"""


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_assert_all_in_both_modes(mode, tmp_path, monkeypatch):
    """denoising-diffusion's Unet: 'NameError: name 'divisible_by' is not defined' in GRAPH_MODE."""
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype("float32")
    expected, actual = _run_both(ASSERT_ALL, "assert_all_case", lambda ns: ns["Net"](2), (x,), mode,
                                 tmp_path, monkeypatch)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-6)
    import mindspore

    net = _converted_module(ASSERT_ALL, "assert_all_case", tmp_path, monkeypatch)["Net"](4)
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        with pytest.raises((AssertionError, RuntimeError)):  # 6 is not divisible by 4
            net(mindspore.Tensor(x))
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
