"""Convolutions' windows read back (issue 31: Whisper's ``conv1.stride[0]``), converted and
run against torch: kernel_size, stride, padding and dilation of Conv1d/2d and
ConvTranspose1d layers, read in the class that builds them, through another class's
attribute, unpacked, indexed and used to compute an input length, in PYNATIVE mode (the
length check in ``construct`` in GRAPH mode too)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from .harness import import_converted

pytestmark = pytest.mark.framework

SOURCE = (Path(__file__).resolve().parent.parent / "fixtures" / "layer-geometry" / "conv_geometry.py").read_text()


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    from transpile import convert_code

    result = convert_code(SOURCE, filename="conv_geometry.py")
    assert not result.failed and "# transpile:" not in result.code, result.code
    assert result.code.count("_torch_layer_geometry(") >= 9, result.code
    torch_ns: dict = {}
    exec(compile(SOURCE, "<torch>", "exec"), torch_ns)
    ms_ns = import_converted(result.code, "conv_geometry_ms", tmp_path_factory.mktemp("geometry"))
    return torch_ns, ms_ns


def test_windows_read_as_torch_holds_them(sides):
    torch_ns, ms_ns = sides
    torch_net, ms_net = torch_ns["Model"](), ms_ns["Model"]()
    assert ms_net.receptive() == torch_net.receptive() == (3, 2, 1, (1,), "valid", (2,), 3)
    assert ms_net.patches(8, 16) == torch_net.patches(8, 16) == 16


@pytest.mark.parametrize("mode", ["PYNATIVE", "GRAPH"])
def test_an_input_length_computed_from_strides(sides, mode):
    import mindspore
    import torch

    torch_ns, ms_ns = sides
    mindspore.set_context(mode=mindspore.GRAPH_MODE if mode == "GRAPH" else mindspore.PYNATIVE_MODE)
    try:
        stem = ms_ns["Stem"](16, 8)
        x = np.ones((1, 16, 30), np.float32)
        expected = torch_ns["Stem"](16, 8)(torch.from_numpy(x)).numpy()
        assert np.array_equal(stem(mindspore.Tensor(x)).asnumpy(), expected)
        with pytest.raises(ValueError, match="expected 30 frames"):
            torch_ns["Stem"](16, 8)(torch.ones(1, 16, 15))
        with pytest.raises((ValueError, RuntimeError), match="expected 30 frames"):
            stem(mindspore.Tensor(np.ones((1, 16, 15), np.float32)))
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
