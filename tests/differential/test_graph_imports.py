"""MS324 run: import statements in construct, converted to ``importlib.import_module``, in a
package (relative imports read ``__package__``), run in PYNATIVE and GRAPH mode against torch."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

HELPERS = '''
def scale(x, k):
    return x * k

FACTOR = 3.0
'''

SOURCE = '''
import torch
import torch.nn as nn


def offset(x):  # a module function forward calls: compiled too
    from math import pi as PI
    return x + PI


class Imports(nn.Module):
    def __init__(self, on_gpu_only=False):
        super().__init__()
        self.on_gpu_only = on_gpu_only

    def forward(self, x):
        from math import sqrt
        import math as m
        from .helpers import scale, FACTOR
        if self.on_gpu_only:
            from .helpers import scale as gpu_scale  # a branch not taken (ring-attention's CUDA kernel)
            return gpu_scale(x, 100.0)
        return offset(scale(x, FACTOR) * sqrt(4.0) + m.e)
'''


def _package(root, name: str, model: str) -> None:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HELPERS)
    (package / "model.py").write_text(model)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from transpile import convert_code

    result = convert_code(SOURCE, filename="model.py")
    assert not result.failed and "# transpile:" not in result.code, result.code
    assert "import_module" in result.code and "from .helpers" not in result.code, result.code
    root = tmp_path_factory.mktemp("graph_imports")
    _package(root, "g9_torch_pkg", SOURCE)
    _package(root, "g9_ms_pkg", result.code)
    sys.path.insert(0, str(root))
    try:
        torch_module = importlib.import_module("g9_torch_pkg.model")
        ms_module = importlib.import_module("g9_ms_pkg.model")
    finally:
        sys.path.remove(str(root))
    return result, torch_module, ms_module


def test_each_import_carries_the_rewrite(built):
    result = built[0]
    lines = sorted(d.line for d in result.diagnostics if d.code == "MS324")
    assert lines == [7, 17, 18, 19, 21], [(d.line, d.code, d.message) for d in result.diagnostics]


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("on_gpu_only", [False, True])
def test_imports_in_construct_match_torch(mode, on_gpu_only, built):
    import mindspore
    import torch

    _, torch_module, ms_module = built
    x = np.random.default_rng(5).uniform(-2, 2, (2, 3)).astype(np.float32)
    with torch.no_grad():
        expected = torch_module.Imports(on_gpu_only)(torch.from_numpy(x)).numpy()
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        actual = ms_module.Imports(on_gpu_only)(mindspore.Tensor(x)).asnumpy()
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    assert np.allclose(actual, expected, atol=1e-5), f"torch:\n{expected}\nmindspore:\n{actual}"
