"""Differential tests for tensors with an axis of size 0, which torch slices and writes
like any other and MindSpore 2.10 (PYNATIVE) does not:

* a negative slice bound of an empty axis (``mems[:-1]`` of a memory with no rows,
  torchaudio's Emformer) raises "The DimsSize should not be zero": MS306 writes the
  bound from the axis size (``mems[:max(len(mems) - 1, 0)]``);
* a write to a region of several sliced axes that holds no element (torchvision's swin3d
  attention mask over shifts of 0) fails with "memcpy_s error, errorno(34)": MS306 runs
  it only where the region is not empty (checked in PYNATIVE and GRAPH).

Each slicing case runs the tool's own output against torch, in PYNATIVE mode; the same code on
non-empty axes must keep its result. (GRAPH mode crashes the process, SIGFPE, slicing a
later axis of a tensor whose first axis is empty, whatever the bounds: not a case here.)
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import Case, Suite, arr

E0 = arr(0, 2, 3)  # empty first axis
E1 = arr(2, 0, 3)  # empty middle axis
E2 = arr(2, 3, 0)
ONE = arr(1, 2, 3)  # x[:-1] of it is empty
FULL = arr(4, 3, 5)
API = "slice bounds"
SLICE_CASES = [
    Case(API, "a[:-1]", (E0,), "stop-empty"),
    Case(API, "a[:-1]", (ONE,), "stop-one"),
    Case(API, "a[:-1]", (FULL,), "stop-full"),
    Case(API, "a[-2:]", (E0,), "start-empty"),
    Case(API, "a[-2:]", (ONE,), "start-short"),
    Case(API, "a[-5:-1]", (FULL,), "both-full"),
    Case(API, "a[-5:-1]", (E0,), "both-empty"),
    Case(API, "a[:-1:2]", (FULL,), "step"),
    Case(API, "a[:, :-1]", (E1,), "axis1-empty"),
    Case(API, "a[:, -1:]", (FULL,), "axis1-full"),
    Case(API, "a[..., -2:]", (E2,), "ellipsis-empty"),
    Case(API, "a[..., 1:-1]", (FULL,), "ellipsis-full"),
    Case(API, "a[None, :, :-1]", (E1,), "newaxis"),
    Case(API, "a[0, :-1]", (E1,), "integer-before"),
    Case(API, "m = torch.cat([a, b])\nreturn m[:-1], m[-1:]", (E0, E0), "computed-empty"),
    Case(API, "x = a.clone()\nx[:-1] = 2.0\nreturn x", (E0,), "write-empty"),
    Case(API, "x = a.clone()\nx[:, -2:] = 2.0\nreturn x", (FULL,), "write-full"),
    Case(API, "x = a.clone()\nx[:-1] += 1.0\nreturn x", (ONE,), "augmented-empty"),
    Case(API, "x = a.clone()\nx[:, -1:] += 1.0\nreturn x", (FULL,), "augmented-full"),
    Case(API, "xs = [a, a * 2, a * 3]\nreturn xs[:-1]", (ONE,), "list"),
]
SLICE_SUITE = Suite(SLICE_CASES)


@pytest.mark.parametrize("case", SLICE_SUITE.cases, ids=SLICE_SUITE.ids)
def test_negative_slice_bounds(case: Case) -> None:
    SLICE_SUITE.check(case)


# -- writes to a region that holds no element ------------------------------------------------
WINDOW_MASK = """
import torch
import torch.nn as nn


class WindowMask(nn.Module):
    # torchvision's swin3d: a region per shift; a shift of 0 leaves empty regions
    def __init__(self, window, shift):
        super().__init__()
        self.window = window
        self.shift = shift

    def forward(self, x):
        mask = x.new_zeros(x.shape[0], x.shape[1], x.shape[2])
        slices = [((0, -self.window[i]), (-self.window[i], -self.shift[i]), (-self.shift[i], None)) for i in range(3)]
        count = 0
        for d in slices[0]:
            for h in slices[1]:
                for w in slices[2]:
                    mask[d[0] : d[1], h[0] : h[1], w[0] : w[1]] = count
                    count += 1
        mask[0 : self.shift[0], 0:2, -self.shift[2] :] += 0.5
        return mask + x
"""


@pytest.mark.parametrize("shift", [(0, 1, 1), (1, 0, 2), (0, 0, 0), (1, 1, 1)])
@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_writes_to_empty_regions(mode, shift, tmp_path, monkeypatch):
    from .test_torch_quirks import _run_both

    x = arr(4, 4, 4)
    build = lambda ns: ns["WindowMask"]((2, 2, 2), shift)  # noqa: E731
    expected, actual = _run_both(WINDOW_MASK, "window_mask_case", build, (x,), mode, tmp_path, monkeypatch)
    assert tuple(expected.shape) == tuple(actual.shape)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), atol=1e-6)
