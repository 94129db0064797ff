"""Differential tests for torch.nn.utils functions that change a layer
(rewrites/tables/nn_utils.toml): weight normalisation and its removal; packed sequences
around an RNN layer (torch.nn.utils.rnn), compared with torch on varied lengths.

Each case builds a layer in a Module's ``__init__``, applies the call, and runs the
layer; the file is converted by the tool, the torch tensors are copied into the converted
cell by the plan ``transpile weights`` uses (so torch's names, ``weight_g``/``weight_v``
and ``parametrizations.weight.original0/1``, must be the converted cell's), and the
outputs are compared in PYNATIVE mode. Every entry is called in three forms at least.
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import re
import sys

import numpy as np
import pytest

from .harness import Case, Suite, arr, coverage_gaps, ints, pos
from .spellings import import_of, module_paths, respelled

PREFIX = "torch.nn.utils."
TORCH_IMPORT = re.compile(r"^\s*(import|from) torch\b", re.M)
SOURCE = """
import torch
import torch.nn as nn
from torch.nn.utils import parametrizations, parametrize, remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm
from torch.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval, parameters_to_vector, vector_to_parameters


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = {layer}
        {apply}

    def strip(self):
        {remove}
        return self

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


def module_path_cases(cases: list[Case], header: str = SOURCE) -> list[Case]:
    """Each entry's first case whose code calls it, the call made through the module that
    defines the function (``from torch.nn.utils.weight_norm import weight_norm``, run first
    in the method: reexports.toml, as test_generated_forms derives the Suites' cases)."""
    paths, derived = module_paths(), {}
    for c in cases:
        if c.api not in paths or c.api in derived:
            continue
        parts = c.code if isinstance(c.code, tuple) else (c.code,)
        spelled = [respelled(part, c.api, paths[c.api], header) for part in parts]
        if any(s is not None for s in spelled):
            code = tuple(part if s is None else "\n        ".join(filter(None, [import_of(paths[c.api]), s]))
                         for part, s in zip(parts, spelled))
            derived[c.api] = dataclasses.replace(c, code=code if isinstance(c.code, tuple) else code[0], form="module-path")
    return list(derived.values())


CASES += module_path_cases(CASES)


def _ids(cases):
    return [f"{c.api.removeprefix(PREFIX)}-{c.form}" for c in cases]


def _both(c: Case, tmp_path, monkeypatch):
    from transpile import convert_code

    layer, _ = c.inputs
    apply, remove = c.code if isinstance(c.code, tuple) else (c.code, "pass")
    source = SOURCE.format(layer=layer, apply=apply, remove=remove)
    result = convert_code(source)
    assert not result.failed and not TORCH_IMPORT.search(result.code) and "# transpile:" not in result.code, result.code
    name = "nn_utils_case"
    (tmp_path / f"{name}.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    ms_ns = vars(importlib.import_module(name))
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)
    import torch

    torch.manual_seed(0)  # the same tensors each run (spectral norm's u and v are drawn at random)
    return torch_ns["Net"](), ms_ns["Net"]()


@pytest.mark.parametrize("c", CASES, ids=_ids(CASES))
def test_weight_norm_matches_torch(c: Case, tmp_path, monkeypatch) -> None:
    """torch's tensors go into the converted cell under their own names (the plan of
    ``transpile weights``), with g changed so that the norm matters; the layer's output
    and its recomputed weight match torch's."""
    import torch

    torch_net, ms_net = _both(c, tmp_path, monkeypatch)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in torch_net.parameters():  # not g = ||v||: the recomputed weight differs from v
            p.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, tuple(p.shape)).astype("float32")) * p.sign())
    _copy_by_torchs_names(torch_net, ms_net)
    _compare_call(torch_net, ms_net, rng.standard_normal(c.inputs[1]).astype("float32"))


def _copy_by_torchs_names(torch_net, ms_net, renames: bool = False) -> None:
    """torch's tensors into the converted cell by the plan of ``transpile weights`` (under
    torch's own names, unless ``renames``: BatchNorm's weight is gamma)."""
    from transpile.parity.weights import apply_transfer, plan_for_model, torch_state

    plan, targets = plan_for_model(torch_net, ms_net)
    assert plan.complete, plan.to_dict()
    assert renames or all(key == path for key, path in plan.copies), plan.copies  # torch's names, no renames
    apply_transfer(plan, torch_state(torch_net), targets)


def _compare_call(torch_net, ms_net, x) -> None:
    import mindspore
    import torch

    with torch.no_grad():
        expected = torch_net(torch.from_numpy(x))
    actual = ms_net(mindspore.Tensor(x))
    assert isinstance(actual, tuple) and len(actual) == len(expected), (type(actual), len(expected))
    for e, a in zip(expected, actual):
        # MindSpore's 1-D convolution weight holds an extra unit axis: (out, in, 1, k)
        assert _without_unit_axes(a.shape) == _without_unit_axes(e.shape), (tuple(a.shape), tuple(e.shape))
        np.testing.assert_allclose(a.asnumpy().reshape(e.shape), e.detach().numpy(), atol=1e-5, rtol=1e-5)


def _without_unit_axes(shape) -> tuple[int, ...]:
    return tuple(n for n in shape if n != 1)


@pytest.mark.parametrize("ms_net", [
    lambda x: (x,),  # an output missing
    lambda x: (x, x * 2, x),  # one too many
    lambda x: (x.reshape(4, 6), x * 2),  # the same values under another shape
], ids=["fewer", "more", "reshaped"])
def test_compare_call_checks_the_number_and_shapes_of_outputs(ms_net) -> None:
    x = np.arange(24, dtype="float32").reshape(2, 12)
    _compare_call(lambda t: (t, t * 2), lambda m: (m, m * 2), x)  # the same: passes
    with pytest.raises(AssertionError):
        _compare_call(lambda t: (t, t * 2), ms_net, x)


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


# -- spectral norm: torch's buffers u, v go in too; eval and training (a power step per
# computation, kept) compared over two calls; removals run after the copy (the value
# removed depends on u and v) ------------------------------------------------------------
SN_CASES: list[Case] = []


def sn_case(api: str, apply: str, layer=CONV1D, form: str = "", remove: str = "pass") -> None:
    SN_CASES.append(Case(PREFIX + api, (apply, remove), layer, form))


for api, call in (("spectral_norm", "nn.utils.spectral_norm"), ("parametrizations.spectral_norm", "parametrizations.spectral_norm")):
    sn_case(api, f"self.layer = {call}(self.layer, 'weight', 2, 1e-12, 1)", form="positional")
    sn_case(api, f"self.layer = {call}(module=self.layer, name='weight', n_power_iterations=1, eps=1e-6, dim=0)",
            LINEAR, "keyword")
    sn_case(api, f"self.layer = {call}(self.layer)", CONV2D, "defaults")
    sn_case(api, f"{call}(self.layer)", CONVT, "transposed")  # dim 1 by default
    dim = "dim=-1" if api.startswith("parametrizations") else "dim=3"  # the old one takes no negative dim
    sn_case(api, f"self.layer = {call}(self.layer, {dim})", CONV2D, "last-axis")
    sn_case(api, f"self.layer = {call}(self.layer, n_power_iterations=3)", GROUPED, "grouped")
sn_case("spectral_norm", "self.layer = spectral_norm(self.layer)", form="imported")
sn_case("remove_spectral_norm", "spectral_norm(self.layer)", form="positional", remove="remove_spectral_norm(self.layer, 'weight')")
sn_case("remove_spectral_norm", "spectral_norm(self.layer)", LINEAR, "keyword",
        "nn.utils.remove_spectral_norm(module=self.layer, name='weight')")
sn_case("remove_spectral_norm", "spectral_norm(self.layer, dim=1)", CONV2D, "defaults", "remove_spectral_norm(self.layer)")
sn_case("parametrize.remove_parametrizations", "parametrizations.spectral_norm(self.layer)", form="spectral",
        remove="parametrize.remove_parametrizations(self.layer, 'weight')")
sn_case("parametrize.remove_parametrizations", "parametrizations.spectral_norm(self.layer)", LINEAR, "spectral-original",
        remove="parametrize.remove_parametrizations(self.layer, 'weight', leave_parametrized=False)")

SN_CASES += module_path_cases(SN_CASES)

@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("c", SN_CASES, ids=_ids(SN_CASES))
def test_spectral_norm_matches_torch(c: Case, training: bool, tmp_path, monkeypatch) -> None:
    """torch's tensors (weight_orig and the buffers weight_u/weight_v, or
    parametrizations.weight.original and .0._u/_v) go into the converted cell under their
    own names; two calls' outputs and weights, and then every tensor, match torch's."""
    from transpile.parity.weights import torch_state

    torch_net, ms_net = _both(c, tmp_path, monkeypatch)
    _copy_by_torchs_names(torch_net, ms_net)
    torch_net.train(training)
    ms_net.set_train(training)
    torch_net, ms_net = torch_net.strip(), ms_net.strip()
    rng = np.random.default_rng(0)
    for _ in range(2):
        _compare_call(torch_net, ms_net, rng.standard_normal(c.inputs[1]).astype("float32"))
    params = dict(ms_net.parameters_and_names())
    state = torch_state(torch_net)
    assert sorted(params) == sorted(state)
    for key, value in state.items():
        np.testing.assert_allclose(params[key].asnumpy().reshape(value.shape), value.numpy(), atol=1e-5, rtol=1e-5)


def test_spectral_norm_trains_the_weight_only(tmp_path, monkeypatch) -> None:
    """The original weight and the bias get gradients; u and v are not trainable."""
    import mindspore

    c = Case(PREFIX + "parametrizations.spectral_norm", "self.layer = parametrizations.spectral_norm(self.layer)", CONV1D)
    _, ms_net = _both(c, tmp_path, monkeypatch)
    ms_net.set_train(True)
    params = ms_net.trainable_params()
    assert sorted(p.name for p in params) == ["layer.bias", "layer.parametrizations.weight.original"]
    grads = mindspore.grad(lambda x: ms_net(x)[0].sum(), grad_position=None, weights=params)(
        mindspore.Tensor(np.ones((1, 4, 8), "float32")))
    assert all(float(abs(g).sum()) > 0 for g in grads)


def test_every_nn_utils_entry_has_cases() -> None:
    gaps = coverage_gaps(["nn_utils.toml"], CASES + PACK_CASES + SN_CASES + SEQUENCE_CASES + LAYER_CASES + TENSOR_CASES)
    assert not any(gaps.values()), gaps


# -- packed sequences around an RNN layer (torch.nn.utils.rnn) ------------------------------
PACK_SOURCE = """
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, unpack_sequence


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = {layer}

    def forward(self, x, lengths):
        {body}
"""
LSTM_BF = "nn.LSTM(4, 3, 1, batch_first=True, bidirectional=True)"
LSTM_TM = "nn.LSTM(4, 3, 2)"  # time-major, two layers
GRU_TM = "nn.GRU(4, 3, 1, bidirectional=True)"
SORTED, UNSORTED, SHORT = [5, 3, 2], [3, 5, 2], [4, 3, 2]  # batch of 3, 5 steps (SHORT: max 4 < 5)
PACK_CASES: list[Case] = []


def pack_case(api: str, body: str, layer: str, lengths: list[int], batch_first: bool, form: str) -> None:
    PACK_CASES.append(Case(PREFIX + api, body, (layer, lengths, batch_first), form))


pack_case("rnn.pack_padded_sequence", "p = pack_padded_sequence(x, lengths, True)\n"
          "        out, (h, c) = self.rnn(p)\n        return pad_packed_sequence(out, True), h, c",
          LSTM_BF, SORTED, True, "positional")
pack_case("rnn.pack_padded_sequence", "p = nn.utils.rnn.pack_padded_sequence(input=x, lengths=lengths.cpu(), "
          "batch_first=True, enforce_sorted=False)\n        out, hidden = self.rnn(p)\n"
          "        return pad_packed_sequence(out, batch_first=True), hidden",
          LSTM_BF, UNSORTED, True, "keyword")
pack_case("rnn.pack_padded_sequence", "p = pack_padded_sequence(x, lengths.tolist())\n"
          "        out, h = self.rnn(p)\n        return pad_packed_sequence(out), h",
          LSTM_TM, SORTED, False, "defaults")
pack_case("rnn.pack_padded_sequence", "p = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)\n"
          "        out, h = self.rnn(p)\n        return pad_packed_sequence(out, batch_first=True), h",
          GRU_TM, UNSORTED, True, "other-layout")  # the layer is time-major, the batch is not
pack_case("rnn.pack_padded_sequence", "h0 = torch.ones(2, x.shape[1], 3)\n"
          "        out, h = self.rnn(pack_padded_sequence(x, lengths, enforce_sorted=False), h0)\n"
          "        return pad_packed_sequence(out), h", GRU_TM, SHORT, False, "initial-state")
pack_case("rnn.pack_sequence", "seqs = [x[: int(n), i] for i, n in enumerate(lengths)]\n"
          "        out, (h, c) = self.rnn(pack_sequence(seqs, enforce_sorted=False))\n"
          "        return pad_packed_sequence(out), h, c, unpack_sequence(out)",
          LSTM_TM, UNSORTED, False, "layer")
pack_case("rnn.pad_packed_sequence", "p = pack_padded_sequence(x, lengths, batch_first=True)\n"
          "        out, _ = self.rnn(p)\n        return pad_packed_sequence(out, True, 0.0, 7)",
          LSTM_BF, SHORT, True, "positional")  # total_length past the input's 5 steps
pack_case("rnn.pad_packed_sequence", "p = pack_padded_sequence(x, lengths, batch_first=True)\n"
          "        out, _ = self.rnn(p)\n"
          "        return pad_packed_sequence(sequence=out, batch_first=True, padding_value=-1.0)",
          LSTM_BF, SHORT, True, "keyword")  # max(lengths) 4 of 5 steps
pack_case("rnn.pad_packed_sequence", "out, _ = self.rnn(pack_padded_sequence(x, lengths, enforce_sorted=False))\n"
          "        return pad_packed_sequence(out)", LSTM_TM, UNSORTED, False, "defaults")
pack_case("rnn.pad_packed_sequence", "p = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)\n"
          "        return pad_packed_sequence(p, padding_value=9.0)", LSTM_BF, UNSORTED, True, "no-layer")


def _flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _flat(item)]
    return [value]


@pytest.mark.parametrize("c", PACK_CASES, ids=_ids(PACK_CASES))
def test_packed_sequences_match_torch(c: Case, tmp_path, monkeypatch) -> None:
    """The converted RNN layer gets torch's weights; outputs (zeros or padding_value past
    each length), final states and lengths match torch's."""
    import mindspore
    import torch

    from transpile import convert_code
    from transpile.parity.weights import apply_transfer, plan_for_model, torch_state

    layer, lengths, batch_first = c.inputs
    source = PACK_SOURCE.format(layer=layer, body=c.code)
    result = convert_code(source)
    assert not result.failed and not TORCH_IMPORT.search(result.code) and "# transpile:" not in result.code, result.code
    (tmp_path / "packing_case.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "packing_case", raising=False)
    ms_net = vars(importlib.import_module("packing_case"))["Net"]()
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)
    torch_net = torch_ns["Net"]()
    plan, targets = plan_for_model(torch_net, ms_net)
    assert plan.complete, plan.to_dict()
    apply_transfer(plan, torch_state(torch_net), targets)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 4) if batch_first else (5, 3, 4)).astype("float32")
    n = np.array(lengths, dtype="int64")
    with torch.no_grad():
        expected = _flat(torch_net(torch.from_numpy(x), torch.from_numpy(n)))
    actual = _flat(ms_net(mindspore.Tensor(x), mindspore.Tensor(n)))
    assert len(expected) == len(actual), result.code
    for e, a in zip(expected, actual):
        assert tuple(e.shape) == tuple(a.shape), (e.shape, a.shape)
        assert str(e.dtype).removeprefix("torch.") == str(a.dtype).lower(), (e.dtype, a.dtype)
        np.testing.assert_allclose(a.asnumpy(), e.detach().numpy(), atol=1e-5, rtol=1e-5)


# -- sequences of different lengths (pad_sequence, pack_sequence and their inverses) --------
RNN = "torch.nn.utils.rnn."
SEQS = [arr(3, 2), arr(5, 2), arr(1, 2)]  # steps first, unsorted
SORTED_SEQS = [arr(4), arr(4), arr(2)]
INT_SEQS = [ints(2, 3), ints(4, 3)]
SEQUENCE_CASES = [
    Case(RNN + "pad_sequence", "pad_sequence(a, True, -1.0, 'left')", (SEQS,), "positional"),
    Case(RNN + "pad_sequence", "pad_sequence(sequences=a, batch_first=False, padding_value=2.5, padding_side='right')",
         (SEQS,), "keyword"),
    Case(RNN + "pad_sequence", "pad_sequence(a)", (SORTED_SEQS,), "defaults"),
    Case(RNN + "pad_sequence", "nn.utils.rnn.pad_sequence([a, b], batch_first=True, padding_value=7)",
         INT_SEQS, "ints"),  # padding_value takes the sequences' dtype
    Case(RNN + "pad_sequence", "pad_sequence([a[:2], a], padding_side='left')", (arr(4, 2, 3),), "trailing-axes"),
    Case(RNN + "unpad_sequence", "unpad_sequence(pad_sequence(a, True), torch.tensor([3, 5, 1]), True)", (SEQS,),
         "positional"),
    Case(RNN + "unpad_sequence", "unpad_sequence(padded_sequences=a, lengths=b, batch_first=False)",
         (arr(5, 3, 2), np.array([2, 5, 4])), "keyword"),
    Case(RNN + "unpad_sequence", "unpad_sequence(a, b)", (arr(4, 2), np.array([4, 1])), "defaults"),
    Case(RNN + "pack_sequence", "pad_packed_sequence(pack_sequence(a, False))", (SEQS,), "positional"),
    Case(RNN + "pack_sequence", "pad_packed_sequence(pack_sequence(sequences=a, enforce_sorted=True), batch_first=True)",
         (SORTED_SEQS,), "keyword"),
    Case(RNN + "pack_sequence", "pad_packed_sequence(nn.utils.rnn.pack_sequence([a, b]), padding_value=-3.0)",
         (arr(4, 3), arr(2, 3)), "defaults"),
    Case(RNN + "unpack_sequence", "unpack_sequence(pack_sequence(a, enforce_sorted=False))", (SEQS,), "positional"),
    Case(RNN + "unpack_sequence", "unpack_sequence(packed_sequences=pack_padded_sequence(a, b, True, False))",
         (arr(3, 5, 2), np.array([2, 5, 3])), "keyword"),
    Case(RNN + "unpack_sequence", "unpack_sequence(pack_sequence([a, b]))", (arr(4, 3), arr(4, 3)), "equal-lengths"),
]
SEQUENCE_SUITE = Suite(SEQUENCE_CASES, header=(
    "import torch\nimport torch.nn as nn\nfrom torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, "
    "pad_packed_sequence, pad_sequence, unpack_sequence, unpad_sequence\n"))


@pytest.mark.parametrize("case", SEQUENCE_SUITE.cases, ids=SEQUENCE_SUITE.ids)
def test_sequence_utilities_match_torch(case: Case) -> None:
    SEQUENCE_SUITE.check(case)


# -- a layer's parameters as one vector, and BatchNorm folded into the layer before it ------
# The call runs after torch's tensors (BatchNorm's running statistics too, made
# non-trivial) are copied in; the changed layer's output and weight match torch's.
BN2D, BN1D = "self.bn = nn.BatchNorm2d(5)\n        ", "self.bn = nn.BatchNorm1d(5)\n        "
CONV2D_5 = ("nn.Conv2d(3, 5, 3)", (2, 3, 6, 6))
LAYER_CASES = [
    Case(PREFIX + "fuse_conv_bn_eval", (BN2D, "self.layer = fuse_conv_bn_eval(self.layer.eval(), self.bn.eval(), False)"),
         CONV2D_5, "positional"),
    Case(PREFIX + "fuse_conv_bn_eval", (BN1D, "self.layer = nn.utils.fuse_conv_bn_eval(conv=self.layer.eval(), "
                                        "bn=self.bn.eval(), transpose=False)"),
         ("nn.Conv1d(4, 5, 3, bias=False)", (2, 4, 8)), "keyword-no-bias"),
    Case(PREFIX + "fuse_conv_bn_eval", (BN1D, "self.layer.eval()\n        self.bn.eval()\n"
                                        "        self.layer = fuse_conv_bn_eval(self.layer, self.bn, transpose=True)"),
         ("nn.ConvTranspose1d(4, 5, 3, stride=2)", (2, 4, 5)), "transposed"),
    Case(PREFIX + "fuse_linear_bn_eval", (BN1D, "self.layer = fuse_linear_bn_eval(self.layer.eval(), self.bn.eval())"),
         ("nn.Linear(4, 5)", (3, 4)), "positional"),
    Case(PREFIX + "fuse_linear_bn_eval", (BN1D, "self.layer = nn.utils.fuse_linear_bn_eval(linear=self.layer.eval(), "
                                          "bn=self.bn.eval())"), ("nn.Linear(4, 5, bias=False)", (3, 4)), "keyword-no-bias"),
    Case(PREFIX + "fuse_linear_bn_eval", ("self.bn = nn.BatchNorm1d(1)\n        ",
                                          "self.layer = fuse_linear_bn_eval(self.layer.eval(), self.bn.eval())"),
         ("nn.Linear(4, 5)", (3, 4)), "one-feature"),
    Case(PREFIX + "vector_to_parameters",
         ("", "vector_to_parameters(parameters_to_vector(self.layer.parameters()) * 2, self.layer.parameters())"),
         CONV1D, "positional"),
    Case(PREFIX + "vector_to_parameters",
         ("", "nn.utils.vector_to_parameters(vec=torch.arange(30.0), parameters=[self.layer.weight, self.layer.bias])"),
         ("nn.Linear(5, 5)", (3, 5)), "keyword"),
    Case(PREFIX + "vector_to_parameters",
         ("", "v = parameters_to_vector(parameters=self.layer.parameters())\n"
              "        vector_to_parameters(v.flip(0), self.layer.parameters())"), CONV2D, "flipped"),
    Case(PREFIX + "parameters_to_vector",
         ("", "vector_to_parameters(parameters_to_vector(self.layer.parameters()).sin(), self.layer.parameters())"),
         LINEAR, "module"),
]
LAYER_CASES += module_path_cases(LAYER_CASES)


@pytest.mark.parametrize("c", LAYER_CASES, ids=_ids(LAYER_CASES))
def test_layer_changes_match_torch(c: Case, tmp_path, monkeypatch) -> None:
    import torch

    torch_net, ms_net = _both(c, tmp_path, monkeypatch)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for name, t in torch_net.state_dict(keep_vars=True).items():
            if t.is_floating_point():
                t.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, tuple(t.shape)).astype("float32")))
    _copy_by_torchs_names(torch_net, ms_net, renames=True)
    torch_net.eval()
    ms_net.set_train(False)
    torch_net, ms_net = torch_net.strip(), ms_net.strip()
    _compare_call(torch_net, ms_net, rng.standard_normal(c.inputs[1]).astype("float32"))


TENSOR_CASES = [
    Case(PREFIX + "parameters_to_vector", "parameters_to_vector([a, b])", (arr(2, 3), arr(4)), "positional"),
    Case(PREFIX + "parameters_to_vector", "parameters_to_vector(parameters=(a, b, a))", (arr(3, 1, 2), arr(1)), "keyword"),
    Case(PREFIX + "parameters_to_vector", "parameters_to_vector(t * 2 for t in [a, b])", (arr(2, 2), arr(3)), "generator"),
    Case(PREFIX + "fuse_conv_bn_weights", "fuse_conv_bn_weights(a, b, c, d, 1e-5, e, f, False)",
         (arr(4, 3, 3, 3), arr(4), arr(4), pos(4), arr(4), arr(4)), "positional"),
    Case(PREFIX + "fuse_conv_bn_weights", "fuse_conv_bn_weights(conv_w=a, conv_b=None, bn_rm=b, bn_rv=c, bn_eps=1e-3, "
         "bn_w=None, bn_b=None, transpose=True)", (arr(3, 4, 2, 2), arr(4), pos(4)), "keyword-transposed"),
    Case(PREFIX + "fuse_conv_bn_weights", "fuse_conv_bn_weights(a, b, c, d, 0.1, e, f)",
         (arr(4, 3, 5), arr(4), arr(4), pos(4), arr(4), arr(4)), "defaults"),
    Case(PREFIX + "fuse_linear_bn_weights", "fuse_linear_bn_weights(a, b, c, d, 1e-5, e, f)",
         (arr(4, 3), arr(4), arr(4), pos(4), arr(4), arr(4)), "positional"),
    Case(PREFIX + "fuse_linear_bn_weights", "fuse_linear_bn_weights(linear_w=a, linear_b=None, bn_rm=b, bn_rv=c, "
         "bn_eps=0.01, bn_w=d, bn_b=e)", (arr(4, 3), arr(4), pos(4), arr(4), arr(4)), "keyword"),
    Case(PREFIX + "fuse_linear_bn_weights", "fuse_linear_bn_weights(a, b, c, d, 1e-5, e, f)",
         (arr(4, 3), arr(4), arr(1), pos(1), arr(1), arr(1)), "one-feature"),
    # clipping called on parameters outside a training step: the .grad each holds, in place
    Case(PREFIX + "clip_grad_norm_", "p = nn.Parameter(a * 1)\n    q = nn.Parameter(b * 1)\n    p.grad = a * 3\n    q.grad = b * 2\n    n = nn.utils.clip_grad_norm_([p, q], 1.0)\n    return n, p.grad, q.grad",
         (arr(2, 3), arr(4)), "positional"),
    Case(PREFIX + "clip_grad_norm_", "p = nn.Parameter(a * 1)\n    q = nn.Parameter(b * 1)\n    p.grad = a * 3\n    q.grad = b * 2\n    n = nn.utils.clip_grad_norm_(parameters=[p, q], max_norm=0.5, "
         "norm_type=float('inf'), error_if_nonfinite=True)\n    return n, p.grad, q.grad", (arr(2, 3), arr(4)), "keyword"),
    Case(PREFIX + "clip_grad_norm_", "p = nn.Parameter(a * 1)\n    q = nn.Parameter(b * 1)\n    p.grad = a * 3\n    q.grad = b * 2\n    n = nn.utils.clip_grad_norm_(p, 100.0, 1)\n    return n, p.grad",
         (arr(2, 3), arr(4)), "below-max"),
    Case(PREFIX + "clip_grad_norm_", "p = nn.Parameter(a * 1)\n    return nn.utils.clip_grad_norm_([p], 1.0)", (arr(3),),
         "no-grad"),
    Case(PREFIX + "clip_grad_value_", "p = nn.Parameter(a * 1)\n    q = nn.Parameter(b * 1)\n    p.grad = a * 3\n    q.grad = b * 2\n    nn.utils.clip_grad_value_([p, q], 0.5)\n    return p.grad, q.grad",
         (arr(2, 3), arr(4)), "positional"),
    Case(PREFIX + "clip_grad_value_", "p = nn.Parameter(a * 1)\n    q = nn.Parameter(b * 1)\n    p.grad = a * 3\n    q.grad = b * 2\n    r = nn.utils.clip_grad_value_(parameters=p, clip_value=1.0, foreach=None)\n"
         "    return r is None, p.grad, q.grad", (arr(2, 3), arr(4)), "keyword"),
    Case(PREFIX + "clip_grad_value_", "p = nn.Parameter(a * 1)\n    p.grad = a * 4\n    nn.utils.clip_grad_value_(p, 0.25)\n"
         "    return p.grad", (arr(3, 2),), "one-tensor"),
    Case(PREFIX + "rnn.invert_permutation", "invert_permutation(a)", (np.array([2, 0, 3, 1]),), "positional"),
    Case(PREFIX + "rnn.invert_permutation", "invert_permutation(permutation=a.argsort())",
         (np.array([5, 1, 4, 0, 2, 3]),), "keyword"),
    Case(PREFIX + "rnn.invert_permutation", "invert_permutation(None)", (), "none"),
    Case(PREFIX + "rnn.invert_permutation", "invert_permutation(a)", (np.random.default_rng(3).permutation(50),), "long"),
    Case(PREFIX + "parametrize.is_parametrized",
         "is_parametrized(parametrizations.spectral_norm(nn.Linear(3, 2)), 'weight')", (), "positional"),
    Case(PREFIX + "parametrize.is_parametrized", "is_parametrized(module=nn.Linear(3, 2), tensor_name=None)", (), "keyword"),
    Case(PREFIX + "parametrize.is_parametrized", "is_parametrized(parametrizations.weight_norm(nn.Linear(3, 2)))", (),
         "defaults"),
    Case(PREFIX + "parametrize.is_parametrized", "is_parametrized(nn.utils.weight_norm(nn.Linear(3, 2)))", (),
         "not-a-parametrization"),
    Case(PREFIX + "parametrize.is_parametrized",
         "is_parametrized(parametrizations.weight_norm(nn.Conv1d(2, 2, 1)), tensor_name='bias')", (), "other-tensor"),
]
TENSOR_SUITE = Suite(TENSOR_CASES, header=(
    "import torch\nimport torch.nn as nn\n"
    "from torch.nn.utils import fuse_conv_bn_weights, fuse_linear_bn_weights, parameters_to_vector, parametrizations\n"
    "from torch.nn.utils.parametrize import is_parametrized\nfrom torch.nn.utils.rnn import invert_permutation\n"))


@pytest.mark.parametrize("case", TENSOR_SUITE.cases, ids=TENSOR_SUITE.ids)
def test_tensor_utilities_match_torch(case: Case) -> None:
    TENSOR_SUITE.check(case)


# -- torch checkpoints through `transpile weights` ------------------------------------------
CHECKPOINT_NET = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import fuse_conv_bn_eval, parametrizations, spectral_norm, weight_norm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv1d(4, 4, 3, padding=1)
        self.b = nn.Conv1d(4, 4, 3, padding=1, padding_mode="reflect")
        self.c = nn.Linear(4, 3)
        self.d = nn.Linear(3, 3)
        weight_norm(self.a)  # changed once attached
        parametrizations.weight_norm(self.b, dim=2)
        spectral_norm(self.c)
        parametrizations.spectral_norm(self.d)
        self.e = nn.ModuleList([weight_norm(nn.Conv1d(4, 4, 1)), spectral_norm(nn.Conv1d(4, 4, 1))])  # before

    def forward(self, x):
        for layer in self.e:
            x = F.relu(layer(x))
        return self.d(self.c(self.b(self.a(x)).mean(-1)))
"""


def test_checkpoints_map_through_transpile_weights(tmp_path) -> None:
    """A torch checkpoint of weight- and spectral-normed layers (changed before and after
    they are attached) becomes a MindSpore checkpoint that loads by name into the
    converted model, every parameter named by its path, and reproduces torch in eval."""
    import subprocess

    import mindspore
    import torch

    from transpile import convert_code

    (tmp_path / "net.py").write_text(CHECKPOINT_NET, encoding="utf-8")
    (tmp_path / "net_ms.py").write_text(convert_code(CHECKPOINT_NET, filename="net.py").code, encoding="utf-8")
    torch_ns: dict = {}
    exec(compile(CHECKPOINT_NET, "<torch>", "exec"), torch_ns)
    torch.manual_seed(0)
    net = torch_ns["Net"]().eval()
    torch.save(net.state_dict(), tmp_path / "net.pt")
    proc = subprocess.run([sys.executable, "-m", "transpile", "weights", "net.pt", "-o", "net.ckpt", "--source", "net.py",
                           "--model", "Net()", "--converted", "net_ms.py"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    spec = importlib.util.spec_from_file_location("_nn_utils_ckpt_ms", tmp_path / "net_ms.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ms_net = module.Net()
    assert all(path == p.name for path, p in ms_net.parameters_and_names())
    not_loaded, _ = mindspore.load_param_into_net(ms_net, mindspore.load_checkpoint(str(tmp_path / "net.ckpt")))
    assert not_loaded == []
    ms_net.set_train(False)
    x = np.random.default_rng(0).standard_normal((2, 4, 8)).astype("float32")
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(mindspore.Tensor(x)).asnumpy(), expected, atol=1e-5, rtol=1e-5)
