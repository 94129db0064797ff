"""Differential tests for torch's own spellings of torch.nn.functional ops
(rewrites/tables/torch_nn_ops.toml): ``torch.conv2d``, ``torch.batch_norm``,
``torch.kl_div`` (reduction as torch's code), ``torch.selu_`` (in place), and
``F.adaptive_max_pool2d_with_indices``. torch.X's losses reduce nothing when reduction is
omitted (the defaults cases show it).

Each converts as the functional entry does; these cases call the torch spelling (its
own argument order and names) in three forms at least and compare with torch.
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import Case, Suite, arr, call_forms, converted_markers, coverage_gaps, ints


def _log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    return (x - np.log(np.exp(x).sum(axis=axis, keepdims=True))).astype("float32")


CASES: list[Case] = []


def forms(api: str, args: str, inputs=(), **opts) -> None:
    call_forms(CASES, api, args, inputs, **opts)


M, M2 = arr(4, 5), arr(4, 5)
X1, X2, X3 = arr(2, 4, 16), arr(2, 4, 8, 8), arr(2, 4, 4, 6, 6)
RM, RV = arr(4, low=-0.5, high=0.5), arr(4, low=0.5, high=2.0)
G4, B4 = arr(4, low=0.5, high=1.5), arr(4)
P = np.exp(_log_softmax(arr(4, 5))).astype("float32")
LOGP = _log_softmax(arr(4, 5))
TPROB = arr(4, 5, low=0.0, high=1.0)
SIGN = np.where(arr(4, 5) < 0, -1.0, 1.0).astype("float32")
SIGN4 = np.where(arr(4) < 0, -1.0, 1.0).astype("float32")
SIGN6 = np.where(arr(6) < 0, -1.0, 1.0).astype("float32")
W5 = np.array([0.5, 1.0, 1.5, 2.0, 0.8], dtype="float32")

# -- convolution, normalisation ------------------------------------------------------
forms("torch.conv1d", "input=a, weight=b, bias=c, stride=2, padding=1, dilation=2, groups=1", (X1, arr(6, 4, 3), arr(6)),
      req=2, extra=("a, b, None, 1, 'same'",))
forms("torch.conv2d", "input=a, weight=b, bias=c, stride=(2, 1), padding=(1, 2), dilation=1, groups=1",
      (X2, arr(6, 4, 3, 3), arr(6)), req=2, extra=("a, b[:, :2], padding=1, groups=2",))
forms("torch.conv3d", "input=a, weight=b, bias=c, stride=1, padding=1, dilation=1, groups=1",
      (X3, arr(3, 4, 3, 3, 3), arr(3)), req=2)
forms("torch.batch_norm", "input=a, weight=d, bias=e, running_mean=b, running_var=c, training=False, momentum=0.1, "
      "eps=1e-3, cudnn_enabled=True", (X2, RM, RV, G4, B4), extra=("a, None, None, b, c, False, 0.1, 1e-5, False",))
case_training = Case("torch.batch_norm", "torch.batch_norm(a, None, None, None, None, True, 0.1, 1e-5, True)", (X2,),
                     "batch-statistics", atol=1e-4, why="batch statistics are summed in another order")
CASES.append(case_training)
forms("torch.instance_norm", "input=a, weight=b, bias=c, running_mean=None, running_var=None, use_input_stats=True, "
      "momentum=0.1, eps=1e-3, cudnn_enabled=False", (X2, G4, B4), atol=1e-4, why="statistics summed in another order")
forms("torch.layer_norm", "input=a, normalized_shape=[8], weight=b, bias=c, eps=1e-3, cudnn_enable=True",
      (X2, arr(8), arr(8)), req=2, extra=("a, (8,), None, None, 1e-5",))
forms("torch.group_norm", "input=a, num_groups=2, weight=b, bias=c, eps=1e-3, cudnn_enabled=True", (X2, G4, B4), req=2)
RMS_WHY = "rsqrt and the mean rounded otherwise (float32)"
for api, call in (("torch.nn.functional.rms_norm", "F.rms_norm"), ("torch.rms_norm", "torch.rms_norm")):
    forms(api, "input=a, normalized_shape=[8], weight=b, eps=1e-3", (X2, arr(8)), req=2, atol=1e-5, rtol=1e-4, why=RMS_WHY,
          extra=("a, (8, 8)", "a, [8], None, 1e-6", "a.double(), [8]"))
    CASES.append(Case(api, f"{call}(a, [8], b)", (arr(2, 3, 8, dtype="float16"), arr(8, dtype="float16")), "float16",
                      atol=2e-3, rtol=2e-3, why="float16 result rounded"))
# transposed convolution (composed): both spellings, 1-D to 3-D, unbatched, groups,
# output_padding, dilation, padding beyond the kernel (a crop)
CT_WHY = "sums taken in another order"
for prefix in ("torch.nn.functional.", "torch."):
    forms(prefix + "conv_transpose2d", "input=a, weight=b, bias=c, stride=2, padding=1, output_padding=1, groups=2, dilation=1",
          (X2, arr(4, 3, 3, 3), arr(6)), req=2, atol=1e-4, why=CT_WHY,
          extra=("a, b[:, :2], None, (2, 3), (1, 0), 0, 1, (2, 1)", "a[0], b"))
    forms(prefix + "conv_transpose1d", "input=a, weight=b, bias=c, stride=3, padding=4, output_padding=0, groups=1, dilation=1",
          (X1, arr(4, 6, 3), arr(6)), req=2, atol=1e-4, why=CT_WHY, extra=("a, b, c, 2, 1, 1",))
    forms(prefix + "conv_transpose3d", "input=a, weight=b, bias=c, stride=2, padding=1, output_padding=1, groups=1, dilation=1",
          (X3, arr(4, 3, 3, 3, 3), arr(3)), req=2, atol=1e-4, why=CT_WHY)
# as values, called with torch's arguments (torchnd's registry by rank)
TRANSPOSED = "conv = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: torch.conv_transpose3d}[b.ndim - 2]\n    return "
CASES.append(Case("torch.nn.functional.conv_transpose2d", TRANSPOSED + "conv(a, b, c, 2, 1, 1, 2)",
                  (X2, arr(4, 3, 3, 3), arr(6)), "value", atol=1e-4, why=CT_WHY))
CASES.append(Case("torch.conv_transpose3d", TRANSPOSED + "conv(a, b, stride=(2, 1, 1), padding=0)",
                  (X3, arr(4, 3, 3, 3, 3)), "value", atol=1e-4, why=CT_WHY))
for api in ("torch.nn.functional.conv_tbc", "torch.conv_tbc"):
    forms(api, "input=a, weight=b, bias=c, pad=1", (arr(10, 2, 4), arr(3, 4, 6), arr(6)), req=3, atol=1e-5,
          extra=("a, b[:1], c, 0",))
# bags of embeddings: 2-D input, 1-D input with offsets (an empty bag), modes, weights, padding
BAG_W, BAG_I, BAG_O = arr(10, 3), ints(9, high=10), np.array([0, 2, 2, 6])
forms("torch.nn.functional.embedding_bag", "input=a, weight=b, offsets=c, max_norm=None, norm_type=2, "
      "scale_grad_by_freq=False, mode='sum', sparse=False, per_sample_weights=d, include_last_offset=False, padding_idx=None",
      (BAG_I, BAG_W, BAG_O, arr(9)), req=3, extra=("a, b, c, mode='max'", "a.reshape(3, 3), b, mode='max', padding_idx=-1",
                                                   "a, b, c, mode='mean', padding_idx=int(a[0])",
                                                   "a, b, torch.cat([c, c[-1:] + 3]), include_last_offset=True"))
forms("torch.embedding", "weight=b, indices=a, padding_idx=-1, scale_grad_by_freq=False, sparse=False",
      (ints(2, 5, high=10), arr(10, 3)), req=2)
forms("torch.bilinear", "input1=a, input2=b, weight=c, bias=d", (M, arr(4, 3), arr(2, 5, 3), arr(2)), req=3)

# -- activations, shuffles, distances ------------------------------------------------
forms("torch.prelu", "input=a, weight=b", (X2, np.array([0.1, 0.2, 0.3, 0.4], "float32")),
      extra=("a, b[:1]",))
forms("torch.selu", "input=a", (M,), extra=("a * 3",))
forms("torch.celu", "input=a, alpha=0.5", (M,), req=1)
forms("torch.threshold", "input=a, threshold=0.1, value=20.0", (M,))
forms("torch.hardshrink", "input=a, lambd=0.3", (M,), req=1)
forms("torch.pixel_shuffle", "input=a, upscale_factor=2", (X2,))
forms("torch.pixel_unshuffle", "input=a, downscale_factor=2", (X2,))
forms("torch.channel_shuffle", "input=a, groups=2", (X2,))
forms("torch.pairwise_distance", "x1=a, x2=b, p=3.0, eps=1e-4, keepdim=True", (M, M2), req=2)
forms("torch.pdist", "input=a, p=3.0", (M,), req=1)

# -- pooling -------------------------------------------------------------------------
forms("torch.max_pool1d", "input=a, kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True", (X1,), req=2)
forms("torch.max_pool2d", "input=a, kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True", (X2,), req=2)
forms("torch.max_pool3d", "input=a, kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False", (X3,), req=2)
forms("torch.avg_pool1d", "input=a, kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False",
      (X1,), req=2)
forms("torch.adaptive_avg_pool1d", "input=a, output_size=4", (X1,), extra=("a, 8",))
forms("torch.nn.functional.adaptive_max_pool2d_with_indices", "input=a, output_size=(3, 4), return_indices=False",
      (X2,), req=2)

forms("torch.nn.functional.adaptive_max_pool3d_with_indices", "input=a, output_size=(2, 3, 2), return_indices=True",
      (X3,), req=2)
CASES.append(Case("torch.nn.functional.adaptive_max_pool3d", "F.adaptive_max_pool3d(a, 2, True)", (X3,), "indices-int64"))

# grid_sample with torch's codes for the modes
GRID = arr(2, 5, 5, 2, low=-1.1, high=1.1)
for api in ("torch.grid_sampler", "torch.grid_sampler_2d"):
    forms(api, "input=a, grid=b, interpolation_mode=0, padding_mode=0, align_corners=True", (X2, GRID),
          extra=("a, b, 1, 1, False", "a, b, 0, 2, True"))
    CASES.append(Case(api, f"mode, pad = 1, 0\n        return {api}(a, b, mode, pad, False)", (X2, GRID), "variables"))
forms("torch.grid_sampler_3d", "input=a, grid=b, interpolation_mode=0, padding_mode=0, align_corners=True",
      (X3, arr(2, 3, 4, 5, 3, low=-1.1, high=1.1)), extra=("a, b, 1, 1, False",))

# -- losses: reduction is torch's code (0 none, 1 mean, 2 sum) -----------------------
forms("torch.binary_cross_entropy_with_logits", "input=a, target=b, weight=c, pos_weight=d, reduction=2",
      (M, TPROB, W5, W5 * 2), req=2, extra=("a, b, None, None, 0",))
forms("torch.cosine_embedding_loss", "input1=a, input2=b, target=c, margin=0.2, reduction=2", (M, M2, SIGN4), req=3)
forms("torch.margin_ranking_loss", "input1=a, input2=b, target=c, margin=0.2, reduction=0",
      (arr(6), arr(6), SIGN6), req=3)
forms("torch.hinge_embedding_loss", "input=a, target=b, margin=0.5, reduction=2", (M, SIGN), req=2)
forms("torch.kl_div", "input=a, target=b, reduction=2", (LOGP, P), req=2, kw="log_target=False")
CASES.append(Case("torch.kl_div", "r = 0\n        return torch.kl_div(a, b, r)", (LOGP, P), "reduction-variable"))
CTC = (_log_softmax(arr(10, 2, 5)), ints(2, 4, low=1, high=5), np.array([10, 8]), np.array([4, 3]))
forms("torch.ctc_loss", "log_probs=a, targets=b, input_lengths=c, target_lengths=d, blank=0, reduction=2, "
      "zero_infinity=True", CTC, req=4)

# -- in place: the input holds the result and is returned ----------------------------
for name, args in {"relu_": "", "selu_": "", "celu_": ", 0.5", "threshold_": ", 0.1, 20.0"}.items():
    api = f"torch.{name}"
    CASES.append(Case(api, f"y = {api}(a{args})\n        return a, y", (M,), "positional"))
    kw = {"relu_": "", "selu_": "", "celu_": ", alpha=0.5", "threshold_": ", threshold=0.1, value=20.0"}[name]
    CASES.append(Case(api, f"y = {api}(input=a{kw})\n        return a, y", (M,), "keyword"))
    CASES.append(Case(api, f"{api}(a{args})\n        return a", (M,), "statement"))
    if name == "celu_":
        CASES.append(Case(api, f"{api}(a)\n        return a", (M,), "defaults"))

# F's in-place activations
for name, args, kws in (("relu_", "", ""), ("elu_", ", 1.0", ", alpha=1.0"), ("celu_", ", 0.5", ", alpha=0.5"),
                        ("selu_", "", ""), ("leaky_relu_", ", 0.2", ", negative_slope=0.2"),
                        ("hardtanh_", ", -0.5, 0.5", ", min_val=-0.5, max_val=0.5"),
                        ("threshold_", ", 0.1, 20.0", ", threshold=0.1, value=20.0")):
    api = f"torch.nn.functional.{name}"
    CASES.append(Case(api, f"y = F.{name}(a{args})\n        return a, y", (M,), "positional"))
    CASES.append(Case(api, f"y = F.{name}(input=a{kws})\n        return a, y", (M,), "keyword"))
    CASES.append(Case(api, f"b = a * 2\n        F.{name}(b{args})\n        return a, b", (M,), "statement"))
    if args and name != "threshold_":
        CASES.append(Case(api, f"F.{name}(a)\n        return a", (M,), "defaults"))

# other names of the same op
# 1-D pooling with indices: the 2-D op on a height-1 image (F.max_pool1d's return_indices too)
X1W = arr(2, 4, 17)
forms("torch.max_pool1d_with_indices", "input=a, kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True", (X1W,),
      req=2, extra=("a, [2]",))
forms("torch.nn.functional.max_pool1d_with_indices",
      "input=a, kernel_size=3, stride=1, padding=0, dilation=2, ceil_mode=False, return_indices=False", (X1W,), req=2)
CASES.append(Case("torch.nn.functional.max_pool1d", "F.max_pool1d(a, 3, 2, 1, return_indices=True)", (X1W,), "indices"))
forms("torch.adaptive_max_pool1d", "input=a, output_size=4", (X1,), extra=("a, [8]", "a[..., :15], 4"))
forms("torch.nn.functional.adaptive_max_pool1d_with_indices", "input=a, output_size=(4,), return_indices=False",
      (X1,), req=2)
forms("torch.nn.functional.max_pool2d_with_indices",
      "input=a, kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False, return_indices=False", (X2,), req=2)
forms("torch.nn.functional.max_pool3d_with_indices",
      "input=a, kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False, return_indices=True", (X3,), req=2)
forms("torch.native_channel_shuffle", "input=a, groups=2", (X2,))
forms("torch.nn.functional.native_channel_shuffle", "input=a, groups=4", (X2,))
forms("torch.constant_pad_nd", "input=a, pad=(1, 2, 0, 3), value=0.5", (X2,), req=2, extra=("a, [1, 1]",))
THETA = np.array([[[1.0, 0.2, 0.1], [-0.1, 0.9, 0.0]], [[0.8, 0.0, -0.2], [0.1, 1.1, 0.3]]], "float32")
forms("torch.affine_grid_generator", "theta=a, size=(2, 3, 4, 5), align_corners=False", (THETA,),
      extra=("a, [2, 3, 4, 5], True",))
# MindSpore's AffineGrid takes the size as a tuple only: a list is made one
CASES.append(Case("torch.nn.functional.affine_grid", "F.affine_grid(a, [2, 3, 4, 5], False)", (THETA,), "list-size"))
CASES.append(Case("torch.nn.functional.affine_grid", "s = [2, 3, 4, 5]\n        return F.affine_grid(a, s, False)", (THETA,),
                  "list-variable"))

# rrelu outside training: slope (lower + upper) / 2
for api, call in (("torch.rrelu", "torch.rrelu"), ("torch.nn.functional.rrelu", "F.rrelu")):
    last = "generator=None" if api == "torch.rrelu" else "inplace=False"
    forms(api, f"input=a, lower=0.1, upper=0.3, training=False, {last}", (M,), req=1, extra=("a, 0.2",))
    CASES.append(Case(api, f"lo, hi = 0.05, 0.25\n        return {call}(a, lo, hi)", (M,), "variables"))
# rrelu in training: a slope per element drawn uniformly in [lower, upper] (torch's
# distribution, not its draws): of an input of -1, the least, greatest and mean slope of 4096
NEG = -np.ones((64, 64), "float32")
RRELU_WHY = "random slopes (4096 draws): compares their least, greatest and mean"
for api, call in (("torch.rrelu", "torch.rrelu"), ("torch.nn.functional.rrelu", "F.rrelu")):
    CASES.append(Case(api, f"s = -{call}(a, 0.2, 0.6, True)\n        return s.min(), s.max(), s.mean()", (NEG,), "train",
                      atol=0.01, rtol=0.0, why=RRELU_WHY))
    CASES.append(Case(api, f"s = -{call}(input=a, training=True)\n        return s.min(), s.max(), s.mean()", (NEG,),
                      "train-keyword", atol=0.01, rtol=0.0, why=RRELU_WHY))
    CASES.append(Case(api, f"y = {call}(a, training=True)\n        return y.shape, ((y == a) | (a < 0)).all()", (M,),
                      "train-positive-kept"))
CASES.append(Case("torch.nn.functional.rrelu_", "F.rrelu_(a, 0.2, 0.6, training=True)\n        s = -a\n"
                  "        return s.min(), s.max(), s.mean()", (NEG,), "train", atol=0.01, rtol=0.0, why=RRELU_WHY))
for api, call in (("torch.rrelu_", "torch.rrelu_"), ("torch.nn.functional.rrelu_", "F.rrelu_")):
    CASES.append(Case(api, f"y = {call}(a, 0.1, 0.3, False)\n        return a, y", (M,), "positional"))
    CASES.append(Case(api, f"y = {call}(input=a, lower=0.1, upper=0.3, training=False)\n        return a, y", (M,), "keyword"))
    CASES.append(Case(api, f"{call}(a)\n        return a", (M,), "defaults"))

# the dropout family: outside training (or p=0) the input itself; in training torch's
# distribution (values differ: MindSpore's random stream), checked by what it guarantees
NORMAL = np.random.default_rng(7).standard_normal((200, 50)).astype("float32")
CHANNELS = arr(8, 16, 4, 4, low=0.5, high=2.0)
KEEPS_MOMENTS = "\n        return bool(abs(float(y.mean())) < 0.1), bool(abs(float(y.std()) - 1) < 0.1)"
SCALED_CHANNELS = ("\n        z = (y == 0).reshape(8, 16, -1)\n        return bool(((y == 0) | (y == a * 2)).all()), "
                   "bool((z.all(-1) | ~z.any(-1)).all())")
FLAT_CHANNELS = ("\n        v = y.reshape(8, 16, -1)\n        flat = (v == v[..., :1]).all(-1).float().mean()\n"
                 "        return bool(abs(float(flat) - 0.5) < 0.2)")
for api, call, train, check in (
        ("torch.nn.functional.alpha_dropout", "F.alpha_dropout", "training", KEEPS_MOMENTS),
        ("torch.alpha_dropout", "torch.alpha_dropout", "train", KEEPS_MOMENTS),
        ("torch.alpha_dropout_", "torch.alpha_dropout_", "train", KEEPS_MOMENTS),
        ("torch.nn.functional.feature_alpha_dropout", "F.feature_alpha_dropout", "training", FLAT_CHANNELS),
        ("torch.feature_alpha_dropout", "torch.feature_alpha_dropout", "train", FLAT_CHANNELS),
        ("torch.feature_alpha_dropout_", "torch.feature_alpha_dropout_", "train", FLAT_CHANNELS),
        ("torch.feature_dropout", "torch.feature_dropout", "train", SCALED_CHANNELS),
        ("torch.feature_dropout_", "torch.feature_dropout_", "train", SCALED_CHANNELS)):
    x = NORMAL if check is KEEPS_MOMENTS else CHANNELS
    CASES.append(Case(api, f"{call}(a, 0.3, False)", (x,), "positional"))
    CASES.append(Case(api, f"{call}(input=a, p=0.3, {train}=False)", (x,), "keyword"))
    CASES.append(Case(api, f"{call}(a, p=0.0, {train}=True)", (x,), "p0"))
    CASES.append(Case(api, f"b = a * 1\n        return {call}(b, 0.5, True)", (x,), "training", random=True,
                      why="random: MindSpore's stream differs; shape and dtype compared, the draw below"))
    CASES.append(Case(api, f"b = a * 1\n        y = {call}(b, 0.5, True)" + check, (x,), "distribution"))
    if api.endswith("_"):
        CASES.append(Case(api, f"b = a * 1\n        {call}(b, 0.5, True)\n        y = b" + check, (x,), "written"))
    if call.startswith("F."):
        CASES.append(Case(api, f"{call}(a)", (x,), "defaults"))
        CASES.append(Case(api, f"b = a * 1\n        {call}(b, 0.5, True, True)\n        y = b" + check, (x,), "inplace"))

SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_api(case):
    SUITE.check(case)


def test_every_torch_nn_ops_entry_has_cases():
    gaps = coverage_gaps(["torch_nn_ops.toml"], SUITE.cases)
    assert not any(gaps.values()), gaps


# Calls left unconverted, with the reason their "# transpile:" marker gives
REFUSED = [
    ("torch.grid_sampler(x, g, 2, 0, False)", "no bicubic"),
    ("F.grid_sample(x, g, mode='bicubic')", "no bicubic"),
    ("torch.kl_div(x, y, 3)", "not one of torch's codes"),
    ("torch.selu_(g(x))", "used twice"),  # (x + 1: a temporary, converted out of place)
    ("F.alpha_dropout(x, 0.2, True, inplace=flag)", "inplace chosen at run time"),
    ("torch.embedding(w, x, 0, True)", "scale gradients"),
    ("F.embedding_bag(x, w, o, max_norm=1.0)", "renormalising"),
]


@pytest.mark.parametrize("expr, reason", REFUSED, ids=[e for e, _ in REFUSED])
def test_refused_call_stays_marked(expr, reason):
    code, markers = converted_markers(f"import torch\nimport torch.nn.functional as F\ny = {expr}\n")
    assert any(reason in m for m in markers), f"expected {reason!r} in {markers}\n{code}"
