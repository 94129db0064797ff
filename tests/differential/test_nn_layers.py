"""Differential tests for torch.nn layers and losses (rewrites/tables/nn_layers.toml,
nn_losses.toml): construct the torch layer and the CONVERTED MindSpore cell, copy the
weights, run both on the same inputs and compare (see layer_harness.py).

Every converted entry needs cases; entries that take arguments need at least three
call forms (all positional, all keyword, defaults omitted): ``forms`` writes them.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from .layer_harness import (
    Input, LayerCase, const, convert_cases, coverage, forms, log_probs, probs, rand, randint, randn,
    run_case, sign, signature_problems,
)

TABLES = Path(__file__).resolve().parents[2] / "rewrites" / "tables"
C = LayerCase
# Dropout in training: the dropped fraction (p, not MindSpore's keep_prob) and the
# scale of the kept values (1 / (1 - p)), from a tensor of ones.
DROP_STATS = "((m(a) == 0).float().mean(), m(a).max())"
DROP_WHY = "random mask: compares the dropped fraction (about 1000 draws) and the kept scale"
RRELU_STATS = "((-m(a)).min(), (-m(a)).max(), (-m(a)).mean())"
RRELU_WHY = "random slopes (4096 draws): compares their least, greatest and mean"
ALPHA_STATS = "(m(a).mean(), m(a).std())"
ALPHA_WHY = "random mask: compares the mean and spread alpha dropout keeps (8192 draws)"
INSTANCE_NORM_EXTRA = ("gamma", "beta")
INSTANCE_NORM_WHY = "converted to GroupNorm(C, C), which keeps fixed gamma=1/beta=0 when affine=False"
X1 = randn(2, 4, 16)
X2 = randn(2, 4, 8, 8)
X3 = randn(2, 4, 4, 6, 6)

# attention masks: True = ignore (torch's bool convention)
PAD_MASK = Input(lambda r: np.array([[False] * 6, [False] * 4 + [True] * 2]), "key_padding_mask")
ATTN_MASK = Input(lambda r: np.triu(np.ones((5, 6), dtype=bool), k=2), "attn_mask")
SRC_MASK = Input(lambda r: np.triu(np.ones((5, 5), dtype=bool), k=1), "src_mask")

# loss inputs
P = randn(4, 5)  # predictions / logits
T = randn(4, 5)  # regression targets
LABELS = randint(5, 4)
LABELS32 = randint(5, 4, ms_dtype="int32")
INT32_WHY = "MindSpore takes these labels as int32 only (the entry's note says so)"
W5 = "torch.tensor([0.5, 1.0, 1.5, 2.0, 0.8])"  # a class weight, written in torch
PROB = rand(4, 5, low=0.05, high=0.95)
TPROB = rand(4, 5)
BINARY = Input(lambda r: (r.random((4, 5)) < 0.5).astype("float32"), "binary(4, 5)")
CTC_INPUTS = (
    log_probs(10, 2, 5),
    Input(lambda r: r.integers(1, 5, (2, 4)).astype("int64"), "ctc_targets"),
    const([10, 8], "int64"),
    const([4, 3], "int64"),
)


def module(name: str, init: str, forward: str, *, args: str = "x") -> str:
    """A torch Module subclass (prelude) whose __init__ body and forward return are given."""
    body = "\n".join("        " + line for line in init.strip().splitlines())
    return (
        f"class {name}(nn.Module):\n"
        f"    def __init__(self):\n"
        f"        super().__init__()\n{body}\n\n"
        f"    def forward(self, {args}):\n"
        f"        return {forward}\n"
    )


# layer classes looked up by name: getattr(torch.nn, <known at run time>) and a literal name
GETATTR_LAYERS = (
    "class _Val6(nn.Module):\n"
    "    def __init__(self, norm_name):\n"
    "        super().__init__()\n"
    "        self.norm = getattr(torch.nn, norm_name)(4, eps=1e-6)\n"
    "        self.act = getattr(nn, 'GELU')()\n\n"
    "    def forward(self, x):\n"
    "        return self.act(self.norm(x))\n")


def unpool_inputs(dims: int) -> tuple[Input, Input]:
    """Pooled values and valid max-pool indices (kernel 2, stride 2) for MaxUnpool*d."""
    import numpy as np

    out_spatial = (3,) * dims
    in_spatial = tuple(2 * s for s in out_spatial)

    def indices(r):
        idx = np.zeros((1, 2, *out_spatial), dtype=np.int64)
        for pos in np.ndindex(*out_spatial):
            offs = r.integers(0, 2, dims)
            coord = [2 * p + o for p, o in zip(pos, offs)]
            flat = int(np.ravel_multi_index(coord, in_spatial))
            idx[(0, slice(None), *pos)] = flat
        return idx

    return randn(1, 2, *out_spatial), Input(indices, "unpool_indices")


CASES: list[LayerCase] = [
    # -- containers --------------------------------------------------------------
    C("nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))", (randn(2, 4),)),
    C("nn.Sequential(nn.Conv2d(4, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU())", (X2,)),
    C("nn.Sequential()", (randn(2, 4),)),
    C("nn.Sequential(collections.OrderedDict([('fc', nn.Linear(4, 3)), ('bn', nn.BatchNorm1d(3)), ('act', nn.ReLU())]))",
      (randn(5, 4),), prelude="import collections"),
    C("_Seq()", (randn(3, 5),), primary="torch.nn.Module",
      prelude=module("_Seq", "self.fc = nn.Linear(5, 2)\nself.act = nn.Tanh()", "self.act(self.fc(x))")),
    C("_MList()", (randn(3, 5),), primary="torch.nn.ModuleList",
      prelude=module("_MList", "self.layers = nn.ModuleList([nn.Linear(5, 5), nn.Linear(5, 3)])",
                     "self.layers[1](self.layers[0](x))")),
    # any iterable: a generator (litgpt's blocks), a tuple, by keyword, empty then appended
    C("_MList2()", (randn(3, 5),), primary="torch.nn.ModuleList",
      prelude=module("_MList2", "self.layers = nn.ModuleList(nn.Linear(5, 5) for _ in range(3))",
                     "self.layers[2](self.layers[1](self.layers[0](x)))")),
    C("_MList3()", (randn(3, 5),), primary="torch.nn.ModuleList",
      prelude=module("_MList3", "pair = (nn.Linear(5, 4), nn.ReLU())\nself.layers = nn.ModuleList(modules=pair)",
                     "self.layers[1](self.layers[0](x))")),
    C("_MList4()", (randn(3, 5),), primary="torch.nn.ModuleList",
      prelude=module("_MList4", "self.layers = nn.ModuleList()\nself.layers.append(nn.Linear(5, 2))",
                     "self.layers[0](x)")),
    C("_MDict()", (randn(3, 5),), primary="torch.nn.ModuleDict",
      prelude=module("_MDict", "self.layers = nn.ModuleDict({'a': nn.Linear(5, 4), 'b': nn.Sigmoid()})",
                     "self.layers['b'](self.layers['a'](x))")),
    C("_Par1()", (randn(3, 4),), primary="torch.nn.Parameter",
      prelude=module("_Par1", "self.w = nn.Parameter(torch.ones(4) * 0.5)", "x * self.w")),
    C("_Par2()", (randn(3, 4),), primary="torch.nn.Parameter",
      prelude=module("_Par2", "self.w = nn.Parameter(data=torch.ones(4), requires_grad=False)", "x * self.w")),
    C("_Par3()", (randn(3, 4),), primary="torch.nn.Parameter",
      prelude=module("_Par3", "self.w = nn.Parameter(torch.ones(4), False)", "x + self.w")),
    C("_Par4()", (randn(3, 4),), primary="torch.nn.parameter.Parameter",
      prelude=module("_Par4", "self.w = nn.parameter.Parameter(torch.ones(4))", "x * self.w")),
    C("_Par5()", (randn(3, 4),), primary="torch.nn.parameter.Parameter",
      prelude=module("_Par5", "self.w = nn.parameter.Parameter(data=torch.ones(4), requires_grad=True)", "x * self.w")),
    C("_Par6()", (randn(3, 4),), primary="torch.nn.parameter.Parameter",
      prelude=module("_Par6", "self.w = nn.parameter.Parameter(torch.ones(4), False)", "x * self.w")),
    C("_Buf1()", (randn(3, 4),), primary="torch.nn.Buffer",
      prelude=module("_Buf1", "self.b = nn.Buffer(torch.ones(4) * 0.5)", "x * self.b")),
    C("_Buf2()", (randn(3, 4),), primary="torch.nn.Buffer",
      prelude=module("_Buf2", "self.b = nn.Buffer(data=torch.ones(4), persistent=True)", "x + self.b")),
    C("_Buf3()", (randn(3, 4),), primary="torch.nn.Buffer",
      prelude=module("_Buf3", "self.b = nn.Buffer(torch.arange(4.0))", "x - self.b")),
    C("_Buf4()", (randn(3, 4),), primary="torch.nn.parameter.Buffer",
      prelude=module("_Buf4", "self.b = nn.parameter.Buffer(torch.ones(4) * 0.5)", "x * self.b")),
    C("_Buf5()", (randn(3, 4),), primary="torch.nn.parameter.Buffer",
      prelude=module("_Buf5", "self.b = nn.parameter.Buffer(data=torch.ones(4), persistent=True)", "x + self.b")),
    C("_Buf6()", (randn(3, 4),), primary="torch.nn.parameter.Buffer",
      prelude=module("_Buf6", "self.b = nn.parameter.Buffer(torch.arange(4.0))", "x - self.b")),
    # persistent=False: a plain tensor attribute (torch leaves it out of state_dict; no Parameter to load)
    C("_Buf7()", (randn(3, 4),), primary="torch.nn.Buffer",
      prelude=module("_Buf7", "self.b = nn.Buffer(torch.arange(4.0), persistent=False)", "x * self.b")),
    C("_Buf8()", (randn(3, 4),), primary="torch.nn.parameter.Buffer",
      prelude=module("_Buf8", "self.b = nn.parameter.Buffer(torch.ones(4) * 0.5, persistent=False)", "x + self.b")),
    C("nn.Identity()", (randn(2, 3),)),
    C("nn.Identity(54, unused_argument1=0.1)", (randn(2, 3),)),
    # -- linear ------------------------------------------------------------------
    *forms("nn.Linear", [("in_features", "5"), ("out_features", "3"), ("bias", "False")], 2, (randn(4, 5),)),
    # on one device DataParallel calls its module (torch's too, without CUDA)
    *forms("nn.DataParallel", [("module", "nn.Linear(5, 3)"), ("device_ids", "None"), ("output_device", "None"),
                               ("dim", "0")], 1, (randn(4, 5),)),
    *forms("nn.parallel.DataParallel", [("module", "nn.Conv2d(4, 6, 3)"), ("device_ids", "None"),
                                        ("output_device", "None"), ("dim", "0")], 1, (X2,)),
    C("nn.Linear(5, 3, bias=True)", (randn(2, 7, 5),)),
    *forms("nn.Bilinear", [("in1_features", "4"), ("in2_features", "3"), ("out_features", "2"), ("bias", "False")], 3,
           (randn(5, 4), randn(5, 3))),
    C("nn.Bilinear(4, 3, 2, bias=True)", (randn(5, 4), randn(5, 3))),
    # -- convolution -------------------------------------------------------------
    *forms("nn.Conv1d", [("in_channels", "4"), ("out_channels", "6"), ("kernel_size", "3"), ("stride", "2"),
                         ("padding", "1"), ("dilation", "2"), ("groups", "2"), ("bias", "False"),
                         ("padding_mode", "'zeros'")], 3, (X1,)),
    C("nn.Conv1d(4, 6, 3, padding='same')", (X1,)),
    C("nn.Conv1d(4, 6, 5, padding='valid', bias=True)", (X1,)),
    *forms("nn.Conv2d", [("in_channels", "4"), ("out_channels", "6"), ("kernel_size", "(3, 2)"), ("stride", "(2, 1)"),
                         ("padding", "(1, 2)"), ("dilation", "1"), ("groups", "2"), ("bias", "False"),
                         ("padding_mode", "'zeros'")], 3, (X2,)),
    C("nn.Conv2d(4, 6, 3, padding='same', dilation=2)", (X2,)),
    C("nn.Conv2d(4, 8, 3, padding=1, groups=4)", (X2,)),
    *forms("nn.Conv3d", [("in_channels", "4"), ("out_channels", "2"), ("kernel_size", "3"), ("stride", "1"),
                         ("padding", "(1, 0, 1)"), ("dilation", "1"), ("groups", "2"), ("bias", "False"),
                         ("padding_mode", "'zeros'")], 3, (X3,)),
    C("nn.Conv3d(4, 2, 3, padding=1, stride=2)", (X3,)),
    # padding_mode: the input padded as torch pads it, then a convolution with no padding
    C("nn.Conv1d(4, 6, 3, 1, 2, 2, 2, True, 'reflect')", (X1,)),
    C("nn.Conv1d(4, 6, 4, padding='same', padding_mode='replicate')", (X1,)),  # even kernel: the extra one after
    C("nn.Conv2d(in_channels=4, out_channels=6, kernel_size=(3, 2), padding=(1, 2), padding_mode='replicate')", (X2,)),
    C("nn.Conv2d(4, 6, 3, stride=2, padding=1, padding_mode='circular')", (X2,)),
    C("nn.Conv2d(4, 6, 3, padding='same', dilation=2, padding_mode='reflect')", (X2,)),
    C("nn.Conv2d(4, 6, 3, padding='valid', padding_mode='reflect', bias=False)", (X2,)),
    C("nn.Conv3d(4, 2, 3, padding=(1, 0, 1), padding_mode='reflect')", (X3,)),  # ops.pad: no 5-D reflect on CPU
    C("nn.Conv3d(4, 2, 3, padding=1, groups=2, padding_mode='circular')", (X3,)),
    # sizes as lists: MindSpore takes an int or a tuple only; [k] stands for every axis
    C("nn.Conv2d(4, 6, [3, 2], stride=[2], padding=[1, 0], dilation=[1, 1])", (X2,)),
    C("nn.Conv1d(4, 6, (3,), stride=[2])", (X1,)),
    C("nn.MaxPool2d([3, 2], stride=[1, 2])", (X2,)),
    C("_List1([3, 1, 3], [1, 2, 1])", (X3,), primary="torch.nn.Conv3d", prelude=(
        "from typing import List\n\n\n"
        "class _List1(nn.Module):\n"
        "    def __init__(self, kernel: List[int], stride: list[int]):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv3d(4, 2, kernel, stride, padding=[k // 2 for k in kernel])\n\n"
        "    def forward(self, x):\n"
        "        return self.conv(x)\n")),
    C("_List3(_Cfg([2, 1, 2]))", (X3,), primary="torch.nn.MaxPool3d", prelude=(
        "from dataclasses import dataclass\n"
        "from typing import List\n\n\n"
        "@dataclass\n"
        "class _Cfg:\n"
        "    stride_q: List[int]\n\n\n"
        "class _List3(nn.Module):\n"
        "    def __init__(self, cnf):\n"
        "        super().__init__()\n"
        "        kernel = [s + 1 if s > 1 else s for s in cnf.stride_q]\n"
        "        padding = [k // 2 for k in kernel]\n"
        "        self.pool = nn.MaxPool3d(kernel, stride=cnf.stride_q, padding=padding)\n\n"
        "    def forward(self, x):\n"
        "        return self.pool(x)\n")),
    C("_List2(4, 6, 3, [2])", (X2,), primary="torch.nn.Conv2d", prelude=(
        "class _List2(nn.Conv2d):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n")),
    *forms("nn.ConvTranspose1d", [("in_channels", "4"), ("out_channels", "6"), ("kernel_size", "3"), ("stride", "2"),
                                  ("padding", "1"), ("output_padding", "0"), ("groups", "2"), ("bias", "False"),
                                  ("dilation", "1"), ("padding_mode", "'zeros'")], 3, (X1,)),
    *forms("nn.ConvTranspose2d", [("in_channels", "4"), ("out_channels", "6"), ("kernel_size", "3"), ("stride", "2"),
                                  ("padding", "1"), ("output_padding", "1"), ("groups", "1"), ("bias", "False"),
                                  ("dilation", "1"), ("padding_mode", "'zeros'")], 3, (X2,)),
    C("nn.ConvTranspose2d(4, 2, (3, 2), stride=2, padding=(1, 0))", (X2,)),
    *forms("nn.ConvTranspose3d", [("in_channels", "4"), ("out_channels", "2"), ("kernel_size", "3"), ("stride", "2"),
                                  ("padding", "1"), ("output_padding", "1"), ("groups", "1"), ("bias", "False"),
                                  ("dilation", "1"), ("padding_mode", "'zeros'")], 3, (X3,)),
    # -- normalisation -----------------------------------------------------------
    *forms("nn.BatchNorm1d", [("num_features", "4"), ("eps", "1e-3"), ("momentum", "0.2"), ("affine", "True"),
                              ("track_running_stats", "True")], 1, (randn(8, 4),)),
    C("nn.BatchNorm1d(4)", (X1,)),
    C("nn.BatchNorm1d(4, affine=False)", (randn(8, 4),), extra_ms_params=("gamma", "beta"),
      why="MindSpore keeps fixed gamma=1/beta=0 parameters when affine=False"),
    C("nn.BatchNorm1d(4, track_running_stats=False)", (randn(8, 4),),
      extra_ms_params=("moving_mean", "moving_variance"),
      why="use_batch_statistics=True: MindSpore keeps unused moving statistics"),
    *forms("nn.BatchNorm2d", [("num_features", "4"), ("eps", "1e-3"), ("momentum", "0.2"), ("affine", "True"),
                              ("track_running_stats", "True")], 1, (X2,)),
    C("nn.BatchNorm2d(4, momentum=0.01, bias=True)", (X2,)),
    # without parameters or running statistics, in 2-D and 3-D, evaluated and training
    C("nn.BatchNorm2d(4, affine=False)", (X2,), extra_ms_params=("gamma", "beta"),
      why="MindSpore keeps fixed gamma=1/beta=0 parameters when affine=False"),
    C("nn.BatchNorm3d(4, affine=False, track_running_stats=False)", (X3,),
      extra_ms_params=("bn2d.gamma", "bn2d.beta", "bn2d.moving_mean", "bn2d.moving_variance"),
      why="affine=False and use_batch_statistics=True: MindSpore keeps fixed gamma/beta and unused moving statistics"),
    C("nn.BatchNorm2d(4, track_running_stats=False)", (X2,), train=True,
      extra_ms_params=("moving_mean", "moving_variance"),
      why="use_batch_statistics=True: MindSpore keeps unused moving statistics"),
    # training: batch statistics, and running statistics updated with torch's momentum
    C("nn.BatchNorm1d(4, momentum=0.3)", (randn(8, 4),), train=True, compare_state=True),
    C("nn.BatchNorm2d(4)", (X2,), train=True, compare_state=True),
    C("nn.BatchNorm2d(4, 1e-3, 0.25)", (X2,), train=True, compare_state=True),
    C("nn.BatchNorm3d(4, momentum=0.5)", (X3,), train=True, compare_state=True),
    *forms("nn.BatchNorm3d", [("num_features", "4"), ("eps", "1e-3"), ("momentum", "0.2"), ("affine", "True"),
                              ("track_running_stats", "True")], 1, (X3,)),
    *forms("nn.LayerNorm", [("normalized_shape", "[8]"), ("eps", "1e-6"), ("elementwise_affine", "True"),
                            ("bias", "True")], 1, (X2,)),
    C("nn.LayerNorm(8)", (randn(2, 8) ,)),
    # RMSNorm: the emitted Cell (torch's rms_norm; eps None is the dtype's epsilon)
    *forms("nn.RMSNorm", [("normalized_shape", "[8]"), ("eps", "1e-5"), ("elementwise_affine", "True")], 1, (X2,)),
    C("nn.RMSNorm((8, 8), elementwise_affine=False)", (X2,)),
    C("nn.RMSNorm(8, device='cpu', dtype=torch.float32)", (randn(3, 8),)),
    C("nn.LayerNorm(normalized_shape=(8,), eps=1e-3)", (X2,)),
    # without weight or bias, or over several axes: the emitted Cell with torch's parameters only
    C("nn.LayerNorm(8, elementwise_affine=False)", (X2,)),
    C("nn.LayerNorm(8, bias=False)", (X2,)),
    C("nn.LayerNorm([8, 8])", (X2,)),
    C("nn.LayerNorm((4, 8, 8), eps=1e-3, bias=False)", (X2,)),
    C("_LNAff()", (randn(3, 4, 6),), primary="torch.nn.LayerNorm",
      prelude=module("_LNAff", "d, affine = 6, False\nself.norm = nn.LayerNorm((4, d), elementwise_affine=affine)",
                     "self.norm(x)")),
    C("_LNVar()", (randn(3, 4, 6),), primary="torch.nn.LayerNorm",
      prelude=module("_LNVar", "d_model = 6\nself.norm = nn.LayerNorm(d_model, eps=1e-6)", "self.norm(x)")),
    *forms("nn.GroupNorm", [("num_groups", "2"), ("num_channels", "4"), ("eps", "1e-3"), ("affine", "True")], 2, (X2,)),
    *forms("nn.InstanceNorm1d", [("num_features", "4"), ("eps", "1e-3"), ("momentum", "0.1"), ("affine", "True"),
                                 ("track_running_stats", "False")], 1, (X1,), extra_ms_params=INSTANCE_NORM_EXTRA,
           why=INSTANCE_NORM_WHY),
    *forms("nn.InstanceNorm2d", [("num_features", "4"), ("eps", "1e-3"), ("momentum", "0.1"), ("affine", "True"),
                                 ("track_running_stats", "False")], 1, (X2,), extra_ms_params=INSTANCE_NORM_EXTRA,
           why=INSTANCE_NORM_WHY),
    *forms("nn.InstanceNorm3d", [("num_features", "4"), ("eps", "1e-3"), ("momentum", "0.1"), ("affine", "True"),
                                 ("track_running_stats", "False")], 1, (X3,), extra_ms_params=INSTANCE_NORM_EXTRA,
           why=INSTANCE_NORM_WHY),
    *forms("nn.LocalResponseNorm", [("size", "3"), ("alpha", "0.01"), ("beta", "0.5"), ("k", "2.0")], 1, (X2,)),
    C("nn.LocalResponseNorm(5)", (randn(2, 8, 4, 4),)),
    # -- activations -------------------------------------------------------------
    *forms("nn.ReLU", [("inplace", "False")], 0, (X2,)),
    *forms("nn.ReLU6", [("inplace", "False")], 0, (randn(3, 10),)),
    *forms("nn.LeakyReLU", [("negative_slope", "0.1"), ("inplace", "False")], 0, (X2,)),
    *forms("nn.PReLU", [("num_parameters", "4"), ("init", "0.1")], 0, (X2,)),
    *forms("nn.ELU", [("alpha", "1.0"), ("inplace", "False")], 0, (X2,)),
    # alpha other than 1.0: MindSpore's Elu kernel refuses it, the layer is composed
    *forms("nn.ELU", [("alpha", "0.8"), ("inplace", "False")], 0, (X2,), minimal="0.8"),
    C("nn.ELU(alpha=2.5)", (Input(lambda r: r.standard_normal((3, 5)).astype("float64") * 40, "randn(3, 5) * 40 f64"),)),
    # RReLU: the fixed slope (lower + upper) / 2 outside training; in training a slope per
    # element drawn uniformly in [lower, upper] (read off an input of -1: -m(a) is the slopes)
    *forms("nn.RReLU", [("lower", "0.1"), ("upper", "0.3"), ("inplace", "False")], 0, (X2,)),
    C("nn.RReLU(0.2, 0.6)", (const(-np.ones((64, 64))),), train=True, call=RRELU_STATS, atol=0.01, rtol=0.0,
      why=RRELU_WHY),
    C("nn.RReLU()", (const(-np.ones((64, 64))),), train=True, call=RRELU_STATS, atol=0.01, rtol=0.0, why=RRELU_WHY),
    *forms("nn.SELU", [("inplace", "False")], 0, (X2,)),
    *forms("nn.CELU", [("alpha", "0.5"), ("inplace", "False")], 0, (X2,)),
    *forms("nn.GELU", [("approximate", "'tanh'")], 0, (X2,)),
    C("nn.GELU(approximate='none')", (X2,)),
    *forms("nn.SiLU", [("inplace", "False")], 0, (X2,)),
    *forms("nn.Mish", [("inplace", "False")], 0, (X2,)),
    C("nn.Sigmoid()", (X2,)),
    C("nn.Tanh()", (X2,)),
    C("nn.LogSigmoid()", (X2,)),
    C("nn.Softsign()", (X2,)),
    *forms("nn.Softplus", [("beta", "2.0"), ("threshold", "1.0")], 0, (rand(4, 10, low=-3, high=3),)),
    C("nn.Tanhshrink()", (X2,)),
    C("nn.Softmax2d()", (X2,)),
    C("nn.Softmax(1)", (X2,)),
    C("nn.Softmax(dim=-1)", (X2,)),
    C("nn.Softmax(-2)", (randn(3, 5),)),
    C("nn.LogSoftmax(1)", (randn(3, 5),)),
    C("nn.LogSoftmax(dim=-1)", (X2,)),
    C("nn.LogSoftmax(0)", (randn(3, 5),)),
    C("nn.Softmin(1)", (randn(3, 5),)),
    C("nn.Softmin(dim=-1)", (X2,)),
    C("nn.Softmin(0)", (randn(3, 5),)),
    *forms("nn.Hardswish", [("inplace", "False")], 0, (rand(4, 10, low=-5, high=5),)),
    *forms("nn.Hardsigmoid", [("inplace", "False")], 0, (rand(4, 10, low=-5, high=5),)),
    *forms("nn.Hardtanh", [("min_val", "-0.5"), ("max_val", "2.0"), ("inplace", "False")], 0,
           (rand(4, 10, low=-3, high=3),)),
    *forms("nn.Hardshrink", [("lambd", "0.3")], 0, (X2,)),
    *forms("nn.Softshrink", [("lambd", "0.3")], 0, (X2,)),
    *forms("nn.Threshold", [("threshold", "0.1"), ("value", "20.0"), ("inplace", "False")], 2, (X2,)),
    *forms("nn.GLU", [("dim", "1")], 0, (X2,)),
    # -- pooling -----------------------------------------------------------------
    *forms("nn.MaxPool1d", [("kernel_size", "3"), ("stride", "2"), ("padding", "1"), ("dilation", "1"),
                            ("return_indices", "False"), ("ceil_mode", "True")], 1, (X1,)),
    C("nn.MaxPool1d(2, return_indices=True)", (X1,)),
    *forms("nn.MaxPool2d", [("kernel_size", "3"), ("stride", "2"), ("padding", "1"), ("dilation", "1"),
                            ("return_indices", "False"), ("ceil_mode", "True")], 1, (X2,)),
    C("nn.MaxPool2d((2, 3), stride=(1, 2), padding=(1, 1))", (X2,)),
    C("nn.MaxPool2d(2, return_indices=True)", (X2,)),
    C("nn.MaxPool2d(3, 1, 1, dilation=2)", (X2,)),
    *forms("nn.MaxPool3d", [("kernel_size", "3"), ("stride", "2"), ("padding", "1"), ("dilation", "1"),
                            ("return_indices", "False"), ("ceil_mode", "True")], 1, (X3,)),
    *forms("nn.AvgPool1d", [("kernel_size", "3"), ("stride", "2"), ("padding", "1"), ("ceil_mode", "True"),
                            ("count_include_pad", "False")], 1, (X1,)),
    *forms("nn.AvgPool2d", [("kernel_size", "3"), ("stride", "2"), ("padding", "1"), ("ceil_mode", "True"),
                            ("count_include_pad", "False"), ("divisor_override", "None")], 1, (X2,)),
    C("nn.AvgPool2d(2, divisor_override=3)", (X2,)),
    C("nn.AvgPool2d((2, 4), stride=(2, 1), padding=(1, 2))", (X2,)),
    *forms("nn.AvgPool3d", [("kernel_size", "3"), ("stride", "2"), ("padding", "1"), ("ceil_mode", "True"),
                            ("count_include_pad", "False"), ("divisor_override", "None")], 1, (X3,)),
    C("nn.AdaptiveAvgPool1d(4)", (X1,)),
    C("nn.AdaptiveAvgPool1d(output_size=8)", (X1,)),
    C("nn.AdaptiveAvgPool1d(2)", (X1,)),
    C("nn.AdaptiveAvgPool2d((3, 4))", (X2,)),
    C("nn.AdaptiveAvgPool2d(output_size=1)", (X2,)),
    C("nn.AdaptiveAvgPool2d((None, 3))", (X2,)),
    C("nn.AdaptiveAvgPool3d(2)", (X3,)),
    C("nn.AdaptiveAvgPool3d(output_size=(1, 3, 2))", (X3,)),
    C("nn.AdaptiveAvgPool3d((2, 3, None))", (X3,)),
    C("nn.AdaptiveMaxPool1d(4)", (X1,)),
    C("nn.AdaptiveMaxPool1d(output_size=2, return_indices=False)", (X1,)),
    C("nn.AdaptiveMaxPool1d(8, False)", (X1,)),
    *forms("nn.AdaptiveMaxPool2d", [("output_size", "(3, 4)"), ("return_indices", "True")], 1, (X2,)),
    *forms("nn.AdaptiveMaxPool3d", [("output_size", "(2, 3, 2)"), ("return_indices", "False")], 1, (X3,)),
    C("nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True)", (X3,), check_dtype=False,
      why="MindSpore returns int32 indices (the entry's note says so)"),
    *forms("nn.LPPool1d", [("norm_type", "2"), ("kernel_size", "3"), ("stride", "2"), ("ceil_mode", "False")], 2, (X1,)),
    *forms("nn.LPPool2d", [("norm_type", "2"), ("kernel_size", "2"), ("stride", "2"), ("ceil_mode", "False")], 2, (X2,)),
    *forms("nn.MaxUnpool1d", [("kernel_size", "2"), ("stride", "2"), ("padding", "0")], 1, unpool_inputs(1)),
    *forms("nn.MaxUnpool2d", [("kernel_size", "2"), ("stride", "2"), ("padding", "0")], 1, unpool_inputs(2)),
    *forms("nn.MaxUnpool3d", [("kernel_size", "2"), ("stride", "2"), ("padding", "0")], 1, unpool_inputs(3)),
    # -- dropout -----------------------------------------------------------------
    *forms("nn.Dropout", [("p", "0.2"), ("inplace", "False")], 0, (X2,)),
    C("nn.Dropout(0.3)", (randn(64, 64),), train=True, compare="shape", why="random mask"),
    C("nn.Dropout(0.3)", (const(np.ones((64, 64))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    C("nn.Dropout(p=0.7)", (const(np.ones((64, 64))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    *forms("nn.Dropout1d", [("p", "0.2"), ("inplace", "False")], 0, (X1,)),
    C("nn.Dropout1d(0.3)", (X1,), train=True, compare="shape", why="random mask"),
    C("nn.Dropout1d(0.3)", (const(np.ones((16, 64, 4))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    C("nn.Dropout1d(p=0.7)", (const(np.ones((16, 64, 4))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    *forms("nn.Dropout2d", [("p", "0.2"), ("inplace", "False")], 0, (X2,)),
    C("nn.Dropout2d(0.3)", (X2,), train=True, compare="shape", why="random mask"),
    C("nn.Dropout2d(0.3)", (const(np.ones((16, 64, 2, 2))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    C("nn.Dropout2d(p=0.7)", (const(np.ones((16, 64, 2, 2))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    *forms("nn.Dropout3d", [("p", "0.2"), ("inplace", "False")], 0, (X3,)),
    C("nn.Dropout3d(0.3)", (X3,), train=True, compare="shape", why="random mask"),
    C("nn.Dropout3d(0.3)", (const(np.ones((16, 64, 2, 2, 1))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    C("nn.Dropout3d(p=0.7)", (const(np.ones((16, 64, 2, 2, 1))),), train=True, call=DROP_STATS, atol=0.05, rtol=0.0, why=DROP_WHY),
    # alpha dropout: the identity outside training; in training mean and variance kept
    # (self-normalising: of a standard normal input, about 0 and 1)
    *forms("nn.AlphaDropout", [("p", "0.2"), ("inplace", "False")], 0, (X2,)),
    C("nn.AlphaDropout(0.3)", (randn(128, 64),), train=True, call=ALPHA_STATS, atol=0.05, rtol=0.0, why=ALPHA_WHY),
    C("nn.AlphaDropout(0.3)", (randn(16, 8),), train=True, compare="shape", why="random mask"),
    *forms("nn.FeatureAlphaDropout", [("p", "0.2"), ("inplace", "False")], 0, (X2,)),
    C("nn.FeatureAlphaDropout(0.4)", (randn(64, 128, 4),), train=True, call=ALPHA_STATS, atol=0.05, rtol=0.0,
      why=ALPHA_WHY),
    C("nn.FeatureAlphaDropout(0.5)", (const(np.ones((32, 64, 3))),), train=True,
      call="(lambda y: (y.std(-1).max(), (y[:, :, 0] > 1).float().mean()))(m(a))", atol=0.05, rtol=0.0,
      why="random mask: whole channels dropped or kept (each channel constant), about half kept of 2048"),
    # -- embedding ---------------------------------------------------------------
    # max_norm: the rows a call looks up renormalised in the table first (the table compared after the call)
    *forms("nn.Embedding", [("num_embeddings", "10"), ("embedding_dim", "3"), ("padding_idx", "0"),
                            ("max_norm", "1.0"), ("norm_type", "2.0")], 2, (randint(10, 2, 5),),
           minimal="10, 3, max_norm=1.0", compare_state=True),
    C("nn.Embedding(10, 4, max_norm=0.5, norm_type=1.0)", (randint(10, 3, 4),), compare_state=True),
    C("nn.Embedding(6, 4, max_norm=5.0)", (randint(6, 7),), compare_state=True),
    *forms("nn.Embedding", [("num_embeddings", "10"), ("embedding_dim", "3"), ("padding_idx", "0"),
                            ("max_norm", "None"), ("norm_type", "2.0"), ("scale_grad_by_freq", "False"),
                            ("sparse", "False")], 2, (randint(10, 2, 5),)),
    C("nn.Embedding(10, 3, sparse=True)", (randint(10, 4),)),
    # -- distances (the inputs broadcast) -------------------------------------------
    *forms("nn.CosineSimilarity", [("dim", "1"), ("eps", "1e-6")], 0, (randn(4, 5), randn(4, 5))),
    C("nn.CosineSimilarity(dim=-1)", (randn(3, 1, 5), randn(1, 4, 5))),
    C("nn.CosineSimilarity(0)", (randn(5, 3), randn(5, 1))),
    C("nn.CosineSimilarity()", (randn(2, 6, 3), randn(6, 3))),
    *forms("nn.PairwiseDistance", [("p", "1.0"), ("eps", "1e-4"), ("keepdim", "True")], 0, (randn(4, 5), randn(4, 5))),
    C("nn.PairwiseDistance(p=3.0)", (randn(3, 1, 5), randn(1, 4, 5))),
    C("nn.PairwiseDistance()", (randn(4, 5), randn(1, 5))),
    C("nn.PairwiseDistance(keepdim=True)", (randn(4, 5), randn(5))),
    # -- recurrent ---------------------------------------------------------------
    *forms("nn.RNN", [("input_size", "4"), ("hidden_size", "5"), ("num_layers", "2"), ("nonlinearity", "'relu'"),
                      ("bias", "True"), ("batch_first", "True"), ("dropout", "0.0"), ("bidirectional", "True")], 2,
           (randn(3, 6, 4),)),
    C("nn.RNN(4, 5, bias=False)", (randn(6, 3, 4), randn(1, 3, 5))),
    *forms("nn.LSTM", [("input_size", "4"), ("hidden_size", "5"), ("num_layers", "2"), ("bias", "True"),
                       ("batch_first", "True"), ("dropout", "0.0"), ("bidirectional", "True"), ("proj_size", "0")], 2,
           (randn(3, 6, 4),)),
    C("nn.LSTM(4, 5, bias=False)", (randn(6, 3, 4),)),
    C("nn.LSTM(4, 5, 2, batch_first=True)", (randn(3, 6, 4), randn(2, 3, 5), randn(2, 3, 5)), call="m(a, (b, c))"),
    *forms("nn.GRU", [("input_size", "4"), ("hidden_size", "5"), ("num_layers", "2"), ("bias", "True"),
                      ("batch_first", "True"), ("dropout", "0.0"), ("bidirectional", "True")], 2, (randn(3, 6, 4),)),
    C("nn.GRU(4, 5, bias=False)", (randn(6, 3, 4), randn(1, 3, 5))),
    *forms("nn.RNNCell", [("input_size", "4"), ("hidden_size", "5"), ("bias", "False"), ("nonlinearity", "'relu'")], 2,
           (randn(3, 4), randn(3, 5))),
    *forms("nn.LSTMCell", [("input_size", "4"), ("hidden_size", "5"), ("bias", "False")], 2,
           (randn(3, 4), randn(3, 5), randn(3, 5)), call="m(a, (b, c))"),
    *forms("nn.GRUCell", [("input_size", "4"), ("hidden_size", "5"), ("bias", "False")], 2,
           (randn(3, 4), randn(3, 5))),
    # -- attention ---------------------------------------------------------------
    *forms("nn.MultiheadAttention", [("embed_dim", "8"), ("num_heads", "2"), ("dropout", "0.0"), ("bias", "True"),
                                     ("add_bias_kv", "False"), ("add_zero_attn", "False"), ("kdim", "None"),
                                     ("vdim", "None"), ("batch_first", "True")], 2,
           (randn(2, 5, 8), randn(2, 5, 8), randn(2, 5, 8))),
    C("nn.MultiheadAttention(8, 4, bias=False)", (randn(5, 2, 8), randn(5, 2, 8), randn(5, 2, 8))),
    C("nn.MultiheadAttention(8, 2, batch_first=True)", (randn(2, 5, 8), randn(2, 6, 8), randn(2, 6, 8), PAD_MASK),
      call="m(a, b, c, key_padding_mask=d)"),
    C("nn.MultiheadAttention(8, 2, batch_first=True)", (randn(2, 5, 8), randn(2, 6, 8), randn(2, 6, 8), ATTN_MASK),
      call="m(a, b, c, attn_mask=d, need_weights=False)[0]"),
    C("nn.MultiheadAttention(8, 2, kdim=6, vdim=4)", (randn(5, 2, 8), randn(7, 2, 6), randn(7, 2, 4))),
    C("nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)", (randn(5, 2, 8), randn(5, 2, 8), randn(5, 2, 8))),
    # transformer layers (weights copied with the tables' renames: linear1 -> dense1, ...)
    *forms("nn.TransformerEncoderLayer", [("d_model", "8"), ("nhead", "2"), ("dim_feedforward", "16"),
                                          ("dropout", "0.1"), ("activation", "'gelu'"), ("layer_norm_eps", "1e-6"),
                                          ("batch_first", "True"), ("norm_first", "True"), ("bias", "True")], 2,
           (randn(5, 2, 8),)),
    C("nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, activation=F.gelu)", (randn(2, 5, 8), SRC_MASK),
      call="m(a, src_mask=b)"),
    # calls of the built layers: torch's mask= is MindSpore's src_mask=, is_causal (a hint
    # that the mask given is causal) is dropped (MS203, from the tables' call_rename/call_drop)
    C("_Enc2()", (randn(2, 5, 8),), primary="torch.nn.TransformerEncoder", prelude=module(
        "_Enc2", "self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)",
        "self.enc(x, mask=torch.triu(torch.ones(x.shape[1], x.shape[1]), diagonal=1).bool(), is_causal=True)")),
    C("_Att2()", (randn(2, 5, 8),), primary="torch.nn.MultiheadAttention", prelude=module(
        "_Att2", "self.attn = nn.MultiheadAttention(8, 2, batch_first=True)",
        "self.attn(x, x, x, attn_mask=torch.triu(torch.ones(x.shape[1], x.shape[1]), diagonal=1).bool(), is_causal=True)[0]")),
    # query/key/value as keywords: MindSpore's __call__ indexes args, so they go by position
    C("_Att3()", (randn(2, 5, 8),), primary="torch.nn.MultiheadAttention", prelude=module(
        "_Att3", "self.attn = nn.MultiheadAttention(8, 2, batch_first=True)",
        "self.attn(query=x, key=x * 2, value=x, need_weights=False)[0] + self.attn(x, value=x, key=x)[0]")),
    *forms("nn.TransformerDecoderLayer", [("d_model", "8"), ("nhead", "2"), ("dim_feedforward", "16"),
                                          ("dropout", "0.1"), ("activation", "'relu'"), ("layer_norm_eps", "1e-5"),
                                          ("batch_first", "False"), ("norm_first", "False"), ("bias", "True")], 2,
           (randn(5, 2, 8), randn(6, 2, 8))),
    *forms("nn.TransformerEncoder", [("encoder_layer", "nn.TransformerEncoderLayer(8, 2, 16)"), ("num_layers", "2"),
                                     ("norm", "nn.LayerNorm(8)"), ("enable_nested_tensor", "True"),
                                     ("mask_check", "True")], 2, (randn(5, 2, 8),)),
    *forms("nn.TransformerDecoder", [("decoder_layer", "nn.TransformerDecoderLayer(8, 2, 16)"), ("num_layers", "2"),
                                     ("norm", "nn.LayerNorm(8)")], 2, (randn(5, 2, 8), randn(6, 2, 8))),
    *forms("nn.Transformer", [("d_model", "8"), ("nhead", "2"), ("num_encoder_layers", "1"),
                              ("num_decoder_layers", "1"), ("dim_feedforward", "16"), ("dropout", "0.1"),
                              ("activation", "'relu'"), ("custom_encoder", "None"), ("custom_decoder", "None"),
                              ("layer_norm_eps", "1e-5"), ("batch_first", "False")], 2,
           (randn(5, 2, 8), randn(6, 2, 8))),
    # -- shape, resampling, padding ----------------------------------------------
    *forms("nn.Flatten", [("start_dim", "2"), ("end_dim", "-1")], 0, (X2,)),
    C("nn.Flatten(0, 2)", (X2,)),
    *forms("nn.Unflatten", [("dim", "1"), ("unflattened_size", "(2, 2)")], 2, (X2,)),
    C("nn.Unflatten(-1, [2, 4])", (X2,)),
    *forms("nn.PixelShuffle", [("upscale_factor", "2")], 1, (X2,)),
    C("nn.PixelShuffle(4)", (randn(1, 32, 3, 3),)),
    *forms("nn.PixelUnshuffle", [("downscale_factor", "2")], 1, (X2,)),
    C("nn.PixelUnshuffle(4)", (X2,)),
    *forms("nn.ChannelShuffle", [("groups", "2")], 1, (X2,)),
    C("nn.ChannelShuffle(4)", (randn(2, 8, 3, 3),)),
    *forms("nn.Upsample", [("size", "None"), ("scale_factor", "2.0"), ("mode", "'bilinear'"),
                           ("align_corners", "False"), ("recompute_scale_factor", "None")], 0, (X2,),
           minimal="scale_factor=3"),
    C("nn.Upsample(scale_factor=2)", (X2,)),
    C("nn.Upsample(size=(5, 7), mode='nearest')", (X2,)),
    C("nn.Upsample(size=12, mode='bilinear', align_corners=True)", (X2,)),
    C("nn.Upsample(scale_factor=2, mode='linear')", (X1,)),
    C("nn.Upsample(scale_factor=2, mode='trilinear')", (X3,)),
    # bicubic: torch's cubic coefficient (-0.75) composed of gathers (MindSpore's resize weighs otherwise)
    C("nn.Upsample(None, 2, 'bicubic', False, None)", (X2,)),
    C("nn.Upsample(size=(5, 11), mode='bicubic', align_corners=True)", (X2,)),
    C("nn.Upsample(scale_factor=1.5, mode='bicubic')", (X2,)),
    C("nn.Upsample(scale_factor=(0.6, 2.5), mode='bicubic', align_corners=True)", (X2,)),
    C("nn.Upsample(scale_factor=1.7, mode='bicubic', recompute_scale_factor=True)", (X2,)),
    C("nn.Upsample(size=1, mode='bicubic', align_corners=True)", (X2,)),
    # the mode in a variable (denoising-diffusion passes it through): each literal mode's conversion, chosen when it runs
    C("nn.Upsample(scale_factor=2, mode=UP_MODE)", (X2,), prelude="UP_MODE = 'bilinear'"),
    C("nn.Upsample(size=(5, 7), mode=UP_MODE)", (X2,), prelude="UP_MODE = 'nearest'"),
    C("nn.Upsample(scale_factor=1.5, mode=UP_MODE, align_corners=True)", (X2,), prelude="UP_MODE = 'bicubic'"),
    # Unfold/Fold: ops.unfold/ops.fold in an emitted Cell (they run on CPU)
    *forms("nn.Unfold", [("kernel_size", "3"), ("dilation", "1"), ("padding", "1"), ("stride", "2")], 1, (X2,)),
    C("nn.Unfold((2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))", (randn(2, 3, 7, 9),)),
    C("nn.Unfold(kernel_size=4, stride=4)", (X2,)),  # timm tnt's patch split
    C("nn.Fold((8, 8), 3, 1, 1, 2)", (randn(2, 36, 16),)),
    C("nn.Fold(output_size=(8, 8), kernel_size=3, dilation=1, padding=1, stride=2)", (randn(2, 36, 16),)),
    C("nn.Fold(8, 3)", (randn(2, 36, 36),)),
    C("nn.Fold((7, 9), (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))", (randn(2, 12, 20),)),
    C("Outlook()", (X2,), primary="torch.nn.Unfold", prelude=module(
        "Outlook", "self.unfold = nn.Unfold(kernel_size=3, padding=1, stride=2)\nself.size = 8",
        "nn.Fold(self.size, 3, padding=1, stride=2)(self.unfold(x))")),  # volo's unfold / fold pair
    *forms("nn.UpsamplingNearest2d", [("size", "None"), ("scale_factor", "2")], 0, (X2,), minimal="scale_factor=3"),
    C("nn.UpsamplingNearest2d(size=(9, 11))", (X2,)),
    *forms("nn.UpsamplingBilinear2d", [("size", "None"), ("scale_factor", "2")], 0, (X2,), minimal="scale_factor=3"),
    C("nn.UpsamplingBilinear2d(size=(9, 11))", (X2,)),
    *forms("nn.ZeroPad1d", [("padding", "(1, 2)")], 1, (X1,)),
    C("nn.ZeroPad1d(3)", (X1,)),
    *forms("nn.ZeroPad2d", [("padding", "(1, 2, 0, 3)")], 1, (X2,)),
    C("nn.ZeroPad2d(2)", (X2,)),
    *forms("nn.ZeroPad3d", [("padding", "(1, 2, 0, 1, 2, 0)")], 1, (X3,)),
    C("nn.ZeroPad3d(1)", (X3,)),
    *forms("nn.ConstantPad1d", [("padding", "(1, 2)"), ("value", "0.5")], 2, (X1,)),
    C("nn.ConstantPad1d(2, -1.0)", (X1,)),
    *forms("nn.ConstantPad2d", [("padding", "(1, 2, 0, 3)"), ("value", "0.5")], 2, (X2,)),
    C("nn.ConstantPad2d(2, 3.5)", (X2,)),
    *forms("nn.ConstantPad3d", [("padding", "(1, 2, 0, 1, 2, 0)"), ("value", "0.5")], 2, (X3,)),
    C("nn.ConstantPad3d(1, -2.0)", (X3,)),
    *forms("nn.ReflectionPad1d", [("padding", "(1, 2)")], 1, (X1,)),
    C("nn.ReflectionPad1d(3)", (X1,)),
    *forms("nn.ReflectionPad2d", [("padding", "(1, 2, 0, 3)")], 1, (X2,)),
    C("nn.ReflectionPad2d(2)", (X2,)),
    *forms("nn.ReflectionPad3d", [("padding", "(1, 2, 0, 1, 2, 0)")], 1, (X3,)),
    C("nn.ReflectionPad3d(1)", (X3,)),
    *forms("nn.ReplicationPad1d", [("padding", "(1, 2)")], 1, (X1,)),
    C("nn.ReplicationPad1d(3)", (X1,)),
    *forms("nn.ReplicationPad2d", [("padding", "(1, 2, 0, 3)")], 1, (X2,)),
    C("nn.ReplicationPad2d(2)", (X2,)),
    *forms("nn.ReplicationPad3d", [("padding", "(1, 2, 0, 1, 2, 0)")], 1, (X3,)),
    C("nn.ReplicationPad3d(1)", (X3,)),
    # -- losses (nn_losses.toml) ---------------------------------------------------
    *forms("nn.L1Loss", [("size_average", "None"), ("reduce", "None"), ("reduction", "'sum'")], 0, (P, T)),
    C("nn.L1Loss(reduction='none')", (P, T)),
    *forms("nn.MSELoss", [("size_average", "None"), ("reduce", "None"), ("reduction", "'sum'")], 0, (P, T)),
    C("nn.MSELoss(reduction='none')", (P, T)),
    *forms("nn.CrossEntropyLoss", [("weight", W5), ("size_average", "None"), ("ignore_index", "2"),
                                   ("reduce", "None"), ("reduction", "'mean'"), ("label_smoothing", "0.1")], 0,
           (P, LABELS32), why=INT32_WHY),
    C("nn.CrossEntropyLoss(reduction='sum')", (randn(4, 5, 3, 3), randint(5, 4, 3, 3, ms_dtype="int32")), why=INT32_WHY),
    C("nn.CrossEntropyLoss(reduction='none', label_smoothing=0.2)", (P, LABELS32), why=INT32_WHY),
    C("nn.CrossEntropyLoss()", (P, probs(4, 5))),
    *forms("nn.NLLLoss", [("weight", W5), ("size_average", "None"), ("ignore_index", "1"), ("reduce", "None"),
                          ("reduction", "'sum'")], 0, (log_probs(4, 5), LABELS)),
    C("nn.NLLLoss(reduction='none')", (log_probs(4, 5), LABELS)),
    *forms("nn.NLLLoss2d", [("weight", W5), ("size_average", "None"), ("ignore_index", "1"), ("reduce", "None"),
                            ("reduction", "'sum'")], 0, (log_probs(2, 5, 3, 3, axis=1), randint(5, 2, 3, 3))),
    *forms("nn.BCELoss", [("weight", "None"), ("size_average", "None"), ("reduce", "None"), ("reduction", "'sum'")], 0,
           (PROB, TPROB)),
    C("nn.BCELoss(reduction='none')", (PROB, TPROB)),
    # a weight (broadcast to the input): MindSpore's CPU kernel reads past it, the loss is composed
    *forms("nn.BCELoss", [("weight", W5), ("size_average", "None"), ("reduce", "None"), ("reduction", "'none'")], 0,
           (PROB, TPROB), minimal=f"{W5}"),
    C(f"nn.BCELoss(weight={W5}, size_average=False)", (PROB, TPROB)),
    C("nn.BCELoss(torch.tensor([[2.0], [0.5], [1.0], [3.0]]), reduction='sum')", (PROB, TPROB)),
    # losses with no MindSpore CPU kernel: composed
    *forms("nn.SoftMarginLoss", [("size_average", "None"), ("reduce", "None"), ("reduction", "'sum'")], 0, (P, sign(4, 5))),
    C("nn.SoftMarginLoss(reduction='none')", (P, sign(4, 5))),
    *forms("nn.MultiLabelMarginLoss", [("size_average", "None"), ("reduce", "None"), ("reduction", "'sum'")], 0,
           (P, const([[3, 0, -1, 1, 2], [0, 1, 2, 3, 4], [-1, 0, 0, 0, 0], [1, 1, -1, 0, 0]], "int64"))),
    C("nn.MultiLabelMarginLoss(reduction='none')", (randn(5), const([4, 2, -1, 0, 0], "int64"))),
    *forms("nn.TripletMarginLoss", [("margin", "0.5"), ("p", "1.0"), ("eps", "1e-4"), ("swap", "True"),
                                    ("size_average", "None"), ("reduce", "None"), ("reduction", "'none'")], 0,
           (P, T, randn(4, 5))),
    C("nn.TripletMarginLoss(p=3, reduction='sum')", (P, T, randn(4, 5))),
    # the defining modules' spellings resolve to the same entries
    C("torch.nn.modules.loss.TripletMarginLoss(margin=2.0)", (P, T, randn(4, 5)), primary="torch.nn.TripletMarginLoss"),
    C("torch.nn.modules.loss.SoftMarginLoss()", (P, sign(4, 5)), primary="torch.nn.SoftMarginLoss"),
    C("torch.nn.modules.distance.CosineSimilarity(0)", (randn(5, 3), randn(5, 1)), primary="torch.nn.CosineSimilarity"),
    C("torch.nn.modules.activation.ELU(0.3)", (X2,), primary="torch.nn.ELU"),
    *forms("nn.BCEWithLogitsLoss", [("weight", W5), ("size_average", "None"), ("reduce", "None"),
                                    ("reduction", "'sum'"), ("pos_weight", W5)], 0, (P, TPROB)),
    C("nn.BCEWithLogitsLoss(reduction='none')", (P, TPROB)),
    *forms("nn.SmoothL1Loss", [("size_average", "None"), ("reduce", "None"), ("reduction", "'sum'"),
                               ("beta", "0.5")], 0, (P, T)),
    C("nn.SmoothL1Loss(beta=2.0)", (P, T)),
    *forms("nn.HuberLoss", [("reduction", "'sum'"), ("delta", "0.5")], 0, (P, T)),
    *forms("nn.KLDivLoss", [("size_average", "None"), ("reduce", "None"), ("reduction", "'batchmean'"),
                            ("log_target", "False")], 0, (log_probs(4, 5), probs(4, 5))),
    C("nn.KLDivLoss(reduction='sum')", (log_probs(4, 5), probs(4, 5))),
    C("nn.KLDivLoss(reduction='none')", (log_probs(4, 5), probs(4, 5))),
    *forms("nn.CosineEmbeddingLoss", [("margin", "0.2"), ("size_average", "None"), ("reduce", "None"),
                                      ("reduction", "'sum'")], 0, (P, T, sign(4))),
    *forms("nn.MarginRankingLoss", [("margin", "0.2"), ("size_average", "None"), ("reduce", "None"),
                                    ("reduction", "'sum'")], 0, (randn(6), randn(6), sign(6))),
    *forms("nn.HingeEmbeddingLoss", [("margin", "0.5"), ("size_average", "None"), ("reduce", "None"),
                                     ("reduction", "'sum'")], 0, (P, sign(4, 5))),
    *forms("nn.MultiLabelSoftMarginLoss", [("weight", W5), ("size_average", "None"), ("reduce", "None"),
                                           ("reduction", "'sum'")], 0, (P, BINARY)),
    *forms("nn.MultiMarginLoss", [("p", "2"), ("margin", "0.5"), ("weight", W5), ("size_average", "None"),
                                  ("reduce", "None"), ("reduction", "'sum'")], 0, (P, LABELS)),
    C("nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True, reduction='sum')", (P, T, randn(4, 5))),
    C("nn.TripletMarginWithDistanceLoss(distance_function=None, margin=2.0)", (P, T, randn(4, 5))),
    C("nn.TripletMarginWithDistanceLoss()", (P, T, randn(4, 5))),
    *forms("nn.PoissonNLLLoss", [("log_input", "True"), ("full", "True"), ("size_average", "None"), ("eps", "1e-6"),
                                 ("reduce", "None"), ("reduction", "'sum'")], 0, (P, rand(4, 5, high=3.0))),
    C("nn.PoissonNLLLoss(log_input=False)", (rand(4, 5, low=0.1, high=2.0), rand(4, 5, high=3.0))),
    C("nn.GaussianNLLLoss(full=True, eps=1e-5, reduction='sum')", (P, T, rand(4, 5, low=0.1, high=2.0))),
    C("nn.GaussianNLLLoss(reduction='none')", (P, T, rand(4, 5, low=0.1, high=2.0))),
    C("nn.GaussianNLLLoss()", (P, T, rand(4, 5, low=0.1, high=2.0))),
    *forms("nn.CTCLoss", [("blank", "0"), ("reduction", "'sum'"), ("zero_infinity", "True")], 0, CTC_INPUTS),
    C("nn.CTCLoss(reduction='none')", CTC_INPUTS),
    # -- layer classes as values (MS205 factories) and subclasses of torch layers --------
    C("_Val1()", (X2,), primary="torch.nn.BatchNorm2d", prelude="import functools\n" + module(
        "_Val1", "norm = functools.partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)\nself.bn = norm(4)", "self.bn(x)")),
    C("_Val2()", (X2,), primary="torch.nn.Conv2d", prelude=module(
        "_Val2", "layer = nn.Conv2d\nself.conv = layer(4, 6, (3, 1), 2, (1, 0), dilation=1, groups=2, bias=False)",
        "self.conv(x)")),
    C("_Val3()", (X2,), primary="torch.nn.Conv2d", prelude=module(
        "_Val3", "kw = {'padding': 'same', 'bias': True}\nself.conv = nn.Conv2d(4, 6, 3, **kw)", "self.conv(x)")),
    C("_Val4(4)", (randn(2, 3, 4),), primary="torch.nn.LayerNorm", prelude=(
        "class _Val4(nn.Module):\n"
        "    def __init__(self, d, norm_layer=nn.LayerNorm, act=nn.ReLU):\n"
        "        super().__init__()\n"
        "        self.norm = norm_layer(d, eps=1e-6)\n"
        "        self.act = act(**{'inplace': True})\n\n"
        "    def forward(self, x):\n"
        "        return self.act(self.norm(x))\n")),
    # a class value asked for its parameters before it is built (MONAI's has_option), and
    # layers whose hooks convert at run time: ConvTranspose2d's groups/output_padding, Upsample
    C("_Val7()", (X2,), primary="torch.nn.InstanceNorm2d", prelude="import inspect\n" + module(
        "_Val7", "norm = nn.InstanceNorm2d\nkw = {'affine': True}\n"
        "if 'num_features' in inspect.signature(norm).parameters:\n    kw['num_features'] = 4\n"
        "self.norm = norm(**kw)", "self.norm(x)")),
    C("_Val8()", (X2,), primary="torch.nn.ConvTranspose2d", prelude=module(
        "_Val8", "layer = nn.ConvTranspose2d\nself.a = layer(4, 6, 3, 2, 1, 1, groups=2)\n"
        "self.b = layer(6, 2, kernel_size=[2, 2], stride=2, bias=False)", "self.b(self.a(x))")),
    C("_Val9()", (X2,), primary="torch.nn.Upsample", prelude=module(
        "_Val9", "up = nn.Upsample\nself.a = up(scale_factor=2, mode='nearest')\n"
        "self.b = up(scale_factor=(2, 3), mode='bilinear', align_corners=False)", "self.b(self.a(x))")),
    # a layer attribute read where the layer's type is not known (MS204 looks it up at run time)
    C("_Val10()", (X2,), primary="torch.nn.Linear", prelude=module(
        "_Val10", "layers = [nn.Linear(8, 6)]\nself.fc = layers[0]\n"
        "self.out = nn.Linear(layers[0].out_features, layers[-1].in_features)", "self.out(self.fc(x))")),
    # LazyLinear: its weight made by a first call (in __init__ here, as a first batch does)
    C("_Lazy1()", (randn(3, 5),), primary="torch.nn.LazyLinear", prelude=module(
        "_Lazy1", "self.fc = nn.LazyLinear(4, True, None, None)\nself.fc(torch.zeros(1, 5))", "self.fc(x)")),
    C("_Lazy2()", (randn(3, 5),), primary="torch.nn.LazyLinear", prelude=module(
        "_Lazy2", "self.fc = nn.LazyLinear(out_features=4, bias=False)\nself.fc(torch.ones(2, 5))", "self.fc(x)")),
    C("_Lazy3()", (randn(2, 3, 6),), primary="torch.nn.LazyLinear", prelude=module(
        "_Lazy3", "self.fc = nn.LazyLinear(2)\nself.fc(torch.zeros(1, 6))", "self.fc(x)")),
    # torch's private convolution base, subclassed (svconv): its constructor, attributes and weights
    C("_CBase1()", (randn(2, 4, 7, 7),), primary="torch.nn.modules.conv._ConvNd", prelude=(
        "class _CBase1(nn.modules.conv._ConvNd):\n"
        "    def __init__(self):\n"
        "        super().__init__(4, 6, (3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 2, True, 'zeros')\n\n"
        "    def forward(self, x):\n"
        "        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)\n")),
    C("_CBase2()", (randn(2, 4, 9),), primary="torch.nn.modules.conv._ConvNd", prelude=(
        "class _CBase2(nn.modules.conv._ConvNd):\n"
        "    def __init__(self):\n"
        "        super().__init__(in_channels=4, out_channels=6, kernel_size=(3,), stride=(2,), padding=(0,),\n"
        "                         dilation=(1,), transposed=False, output_padding=(0,), groups=1, bias=False,\n"
        "                         padding_mode='zeros')\n\n"
        "    def forward(self, x):\n"
        "        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)\n")),
    C("_CBase3()", (randn(2, 2, 8, 8),), primary="torch.nn.modules.conv._ConvNd", prelude=(
        "class _CBase3(nn.modules.conv._ConvNd):\n"
        "    def __init__(self):\n"
        "        super().__init__(2, 4, (3, 2), (1, 1), 'same', (2, 1), False, (0, 0), 1, True, 'zeros')\n\n"
        "    def forward(self, x):\n"
        "        x = F.pad(x, self._reversed_padding_repeated_twice)\n"
        "        return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)\n")),
    # getattr(torch.nn, name): a literal name, and a name known at run time (config values)
    C("_Val6('LayerNorm')", (randn(2, 3, 4),), primary="torch.nn.LayerNorm", prelude=GETATTR_LAYERS),
    C("_Val6('BatchNorm1d')", (randn(2, 4, 3),), primary="torch.nn.BatchNorm1d", prelude=GETATTR_LAYERS),
    C("_Att1()", (randn(2, 5, 8),), primary="torch.nn.MultiheadAttention", prelude=module(
        "_Att1", "self.attn = nn.MultiheadAttention(8, 2, batch_first=True)",
        "self.attn(x, x, x, need_weights=False)[0] * (self.attn(x, x, x, need_weights=False)[1] is None)")),
    C("_Val5()", (X2,), primary="torch.nn.MaxPool2d", prelude=module(
        "_Val5", "pool = nn.MaxPool2d\nself.a = pool(3, 2, 1, ceil_mode=True)\nself.b = pool(kernel_size=2)",
        "self.b(self.a(x))")),
    C("_Sub3(4, 6, 3)", (X2,), primary="torch.nn.Conv2d", prelude=(
        "class _Sub3(nn.Conv2d):\n"
        "    def __init__(self, cin, cout, k, **kwargs):\n"
        "        super().__init__(cin, cout, k, **kwargs)\n\n"
        "    def forward(self, x):\n"
        "        kh, kw = self.weight.size()[-2:]\n"
        "        x = F.pad(x, [kw // 2, kw // 2, kh // 2, kh // 2])\n"
        "        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)\n")),
    C("_Sub1(4)", (X2,), primary="torch.nn.LayerNorm", prelude=(
        "class _Sub1(nn.LayerNorm):\n"
        "    def forward(self, x):\n"
        "        x = x.permute(0, 2, 3, 1)\n"
        "        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)\n"
        "        return x.permute(0, 3, 1, 2)\n")),
    C("_Sub2(4, 2, 1)", (X3,), primary="torch.nn.Conv3d", prelude=(
        "class _Sub2(nn.Conv3d):\n"
        "    def __init__(self, cin, cout, padding):\n"
        "        super().__init__(in_channels=cin, out_channels=cout, kernel_size=(1, 3, 3), stride=(1, 2, 2),\n"
        "                         padding=(0, padding, padding), bias=False)\n")),
]


@pytest.fixture(scope="module")
def converted():
    return convert_cases(CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_layer(converted, index):
    run_case(converted, index, CASES[index])


def _converted_entries(name: str) -> dict[str, dict]:
    with (TABLES / name).open("rb") as fh:
        data = tomllib.load(fh)
    data.pop("kind", None)
    return {k: v for k, v in data.items() if not v.get("unsupported")}


def test_every_converted_layer_has_cases():
    primary, called = coverage(CASES)
    entries = {**_converted_entries("nn_layers.toml"), **_converted_entries("nn_losses.toml")}
    missing = sorted(k for k in entries if k not in primary and k not in called)
    assert not missing, f"converted entries with no differential case: {missing}"
    few = sorted(k for k, v in entries.items() if v.get("params") and primary.get(k, 0) < 3)
    assert not few, f"entries taking arguments with fewer than three call forms: {few}"


# Calls the tables refuse, with the reason the marker must give: converting them
# would change results. Each must stay torch, marked "# transpile:".
UNCONVERTED = [
    ("nn.Softmax()", "dim is not given"),
    ("nn.LogSoftmax(dim=None)", "dim is not given"),
    ("nn.Upsample(scale_factor=1.5, mode='bilinear')", "fractional"),
    ("nn.BatchNorm2d(4, momentum=None)", "cumulative average"),
    ("nn.BatchNorm2d(4, bias=False)", "bias=False"),
    ("nn.ConvTranspose1d(4, 4, 3, stride=2, output_padding=1)", "no output_padding"),
    ("nn.ConvTranspose2d(4, 4, 3, stride=2, output_padding=1)", "larger than padding"),
    ("nn.ConvTranspose2d(3, 3, 3, padding_mode='reflect')", "'zeros' only"),
    ("nn.LSTM(4, 5, proj_size=2)", "proj_size"),
    ("nn.InstanceNorm2d(4, track_running_stats=True)", "running statistics"),
    ("nn.LocalResponseNorm(4)", "odd"),
    ("nn.AdaptiveMaxPool1d(4, return_indices=True)", "cannot return indices"),
    ("nn.ParameterList()", "Parameter$N"),
    ("nn.KLDivLoss(log_target=True)", "probabilities only"),
    ("nn.Buffer(t, persistent=keep)", "not a literal"),
    ("nn.Hardtanh(min_value=-2.0)", "deprecated"),
    ("nn.Unfold", "emitted beside the code"),  # a value: the emitted Cell takes keywords only
]


@pytest.mark.parametrize("expr, reason", UNCONVERTED, ids=[e for e, _ in UNCONVERTED])
def test_refused_layer_stays_marked(expr, reason):
    from transpile import convert_code

    result = convert_code(f"import torch.nn as nn\nlayer = {expr}\n")
    markers = [line for line in result.code.splitlines() if "# transpile:" in line]
    assert markers and "torch.nn." in result.code, result.code
    assert any(reason in m for m in markers), f"expected {reason!r} in {markers}"


@pytest.mark.parametrize("table", ["nn_layers.toml", "nn_losses.toml"])
def test_entries_match_installed_signatures(table):
    with (TABLES / table).open("rb") as fh:
        data = tomllib.load(fh)
    data.pop("kind", None)
    problems = signature_problems(data)
    assert not problems, "\n".join(problems)


# The emitted Cells and bicubic function (nn.Unfold/nn.Fold, mode='bicubic') in GRAPH
# mode too: the keyword dict a Cell keeps (with a Tensor in it) and the Python-level
# loops and isinstance tests of the composition must compile.
EMITTED_SOURCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Outlook(nn.Module):
    def __init__(self):
        super().__init__()
        self.unfold = nn.Unfold(kernel_size=3, padding=1, stride=2)
        self.fold = nn.Fold((8, 8), 3, padding=1, stride=2)
        self.up = nn.Upsample(scale_factor=1.5, mode="bicubic")

    def forward(self, x):
        H, W = x.shape[-2:]
        u = self.unfold(x)
        y = F.fold(u, output_size=(H, W), kernel_size=3, padding=1, stride=2)
        z = F.interpolate(x, size=(5, 13), mode="bicubic", align_corners=True)
        return u, y, self.fold(u), z, self.up(x)
"""


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_emitted_cells_run_in_both_modes(mode, tmp_path, monkeypatch):
    import importlib
    import sys

    import mindspore
    import torch

    from transpile import convert_code

    result = convert_code(EMITTED_SOURCE)
    assert "import torch" not in result.code and "# transpile:" not in result.code, result.code
    torch_ns = {}
    exec(compile(EMITTED_SOURCE, "<torch>", "exec"), torch_ns)
    # GRAPH mode parses construct from its module: the converted code must be one
    (tmp_path / "emitted_cells_case.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "emitted_cells_case", raising=False)
    ms_ns = vars(importlib.import_module("emitted_cells_case"))
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype("float32")
    with torch.no_grad():
        expected = torch_ns["Outlook"]()(torch.from_numpy(x))
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        actual = ms_ns["Outlook"]()(mindspore.Tensor(x))
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(a.asnumpy(), e.numpy(), atol=1e-5, rtol=1e-5)


def test_non_persistent_buffer_is_no_parameter():
    """torch leaves a non-persistent buffer out of state_dict: converted, it is the tensor
    itself, not a Parameter MindSpore would save and a checkpoint would have to fill."""
    from transpile import convert_code

    code = convert_code("import torch\nimport torch.nn as nn\n"
                        "b = nn.Buffer(torch.ones(2), persistent=False)\n"
                        "c = nn.Buffer(torch.ones(2), persistent=True)\n").code
    lines = code.splitlines()
    assert "Parameter" not in next(ln for ln in lines if ln.startswith("b = ")), code
    assert "Parameter" in next(ln for ln in lines if ln.startswith("c = ")), code
