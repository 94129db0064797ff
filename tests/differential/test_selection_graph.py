"""The selection and construction compositions (runtime/selection.py, construction.py)
called in a Module's forward: the converted construct run in PYNATIVE and GRAPH mode
against torch (GRAPH_MODE compiles the copied helpers with the construct that calls them).
The converted file is imported from disk: GRAPH_MODE reads construct's source."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

SOURCE = '''
import torch
import torch.nn as nn


class ScatterValue(nn.Module):
    def forward(self, x, index):
        return torch.scatter(x, 0, index, value=2.0, reduce="multiply")


class ScatterLargerSrc(nn.Module):
    def forward(self, x, index, src):
        return x.scatter(1, index, src)


class UniqueInverse(nn.Module):
    def forward(self, x):
        return torch.unique(x, return_inverse=True, return_counts=True)


class UniqueRows(nn.Module):
    def forward(self, x):
        return torch.unique(x, dim=0)


class MaxOfExpression(nn.Module):
    def forward(self, x, y):
        return torch.max(x, y + 1)


class RoundDecimals(nn.Module):
    def forward(self, x):
        return torch.round(x, decimals=2)


class Fmin(nn.Module):
    def forward(self, x, y):
        return torch.fmin(x, y)


class Logspace(nn.Module):
    def forward(self, x):
        return x * torch.logspace(0, 2, 4, base=2)


class AsStrided(nn.Module):
    def forward(self, x):
        return torch.as_strided(x, (2, 2), (1, 2), 1)
'''

_RNG = np.random.default_rng(33)
X = _RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
WITH_NAN = X.copy()
WITH_NAN[0, 1] = WITH_NAN[2, 2] = np.nan
INPUTS = {
    "ScatterValue": (X, np.array([[0, 1, 2, 0], [0, 2, 0, 1]], np.int64)),
    "ScatterLargerSrc": (X, np.array([[0, 1, 3], [2, 2, 0]], np.int64), _RNG.uniform(-2, 2, (3, 5)).astype(np.float32)),
    "UniqueInverse": (np.array([[3, 1, 2], [3, 1, 5]], np.int64),),
    "UniqueRows": (np.array([[1, 2], [0, 1], [1, 2], [0, 0]], np.int64),),
    "MaxOfExpression": (X, _RNG.uniform(-2, 2, (3, 4)).astype(np.float32)),
    "RoundDecimals": (X * 10,),
    "Fmin": (WITH_NAN, WITH_NAN[::-1].copy()),
    "Logspace": (X,),
    "AsStrided": (X,),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from transpile import convert_code

    result = convert_code(SOURCE, filename="composed.py")
    assert not result.failed and "# transpile:" not in result.code, result.code
    folder = tmp_path_factory.mktemp("composed")
    (folder / "composed_torch.py").write_text(SOURCE)
    (folder / "composed_ms.py").write_text(result.code)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("composed_torch"), importlib.import_module("composed_ms")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("composed_torch", None)
        sys.modules.pop("composed_ms", None)


@pytest.mark.slow  # GRAPH_MODE compiles nine cells: about 9 s
@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_compositions_match_torch_in_both_modes(mode, built) -> None:
    import mindspore
    import torch

    torch_module, ms_module = built
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        for name, inputs in INPUTS.items():
            with torch.no_grad():
                expected = getattr(torch_module, name)()(*(torch.from_numpy(v.copy()) for v in inputs))
            actual = getattr(ms_module, name)()(*(mindspore.Tensor(v.copy()) for v in inputs))
            expected = expected if isinstance(expected, tuple) else (expected,)
            actual = actual if isinstance(actual, tuple) else (actual,)
            assert len(expected) == len(actual), name
            for e, a in zip(expected, actual):
                e, a = e.numpy(), a.asnumpy()
                assert e.shape == a.shape and e.dtype == a.dtype, f"{name} ({mode}): {e.shape} {e.dtype} != {a.shape} {a.dtype}"
                assert np.allclose(a, e, atol=1e-5, rtol=1e-5, equal_nan=True), f"{name} ({mode}):\n{e}\n{a}"
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
