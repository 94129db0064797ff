"""Failure classes of the sampled benchmark's sixth draw (issue 29: normflowpy, treenet,
pytorch-nlp), each converted as a general rule and run against torch:

* ``x.repeat(...)`` on a receiver the converter cannot type (a helper's return): MindSpore's
  Tensor.repeat repeats elements and has no CPU kernel; ``_torch_repeat`` tiles a tensor and
  lets a numpy array repeat itself (MS202);
* ``x[m] = 0`` on a float tensor: ``ops.masked_fill`` has no kernel for an int fill of a
  float tensor; the method casts the number (MS301);
* ``torch.Tensor(3 * k - 1)``: one argument that is neither a name nor plainly data is a
  size if it is an int when it runs (``_torch_legacy_tensor``, MS201);
* ``x.new(range(n))``, ``x.new_tensor(range(n))``: a range is data, passed as its list
  (``ms.Tensor`` refuses a range; GRAPH mode hands one on as a tuple, a size to ``_torch_new``);
* a plain list of layers whose items ``__init__`` registers by ``add_module`` stays a list,
  so the parameters keep the names torch gives them (MS102);
* a module's ``forward`` read and replaced in a function handed the module (torchnlp's
  weight drop): ``_torch_forward`` / ``_torch_set_forward`` (a Cell's construct, MS219);
* ``module._parameters`` is the Cell's ``_params`` (MS103, with a warning off ``self``).

One torch source is converted by the tool and imported from a file (GRAPH mode reads a
construct's source there); every test reads the two namespaces (one MindSpore process).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_imported, same_outputs

pytestmark = pytest.mark.framework

SOURCE = '''
import torch
import torch.nn as nn
from torch.nn import Conv1d


def pad_constant(x, padding):
    return torch.ones(1, 1, x.shape[2], x.shape[3]) * padding


class PadTiled(nn.Module):  # normflowpy's RealNVP coupling net pads with a tiled constant
    def __init__(self, padding):
        super().__init__()
        self.padding = padding

    def forward(self, x):
        return torch.cat([x, pad_constant(x, self.padding).repeat([x.shape[0], 1, 1, 1])], dim=1)


def tiled(v, a, b):
    return v.repeat(a, b)


class MaskedFill(nn.Module):  # normflowpy's spline tails: logabsdet[outside] = 0
    def forward(self, x, score):
        x[score > 0.3] = 0
        return x


class Spline(nn.Module):  # normflowpy's NSF_AR: an uninitialised parameter of 3 * K - 1 values
    def __init__(self, k):
        super().__init__()
        self.init_param = nn.Parameter(torch.Tensor(3 * k - 1))
        nn.init.constant_(self.init_param, 0.5)

    def forward(self, x):
        return x * self.init_param.sum()


def legacy(values):
    return torch.FloatTensor(values + [3.0])


def indices(x):  # treenet: arities.new(range(B))
    return x.new(range(x.shape[0])) * 2


class Indices(nn.Module):  # the same in compiled code, and new_tensor
    def forward(self, x):
        return x.new(range(x.shape[0])) * 2, x.new_tensor(range(3)) + x[0, 0]


class CNNEncoder(nn.Module):  # torchnlp: a plain list, each item registered by add_module
    def __init__(self, dim, filters, sizes=(2, 3)):
        super().__init__()
        self._convolution_layers = [Conv1d(dim, filters, kernel_size=k) for k in sizes]
        for i, conv_layer in enumerate(self._convolution_layers):
            self.add_module("conv_layer_%d" % i, conv_layer)

    def forward(self, tokens):
        tokens = torch.transpose(tokens, 1, 2)
        return torch.cat([conv(tokens).amax(dim=2) for conv in self._convolution_layers], dim=1)


def _scale_forward(module, scale):  # torchnlp's weight drop wraps the forward of a module handed to it
    original_module_forward = module.forward

    def forward(*args, **kwargs):
        return original_module_forward(*args, **kwargs) * scale

    setattr(module, "forward", forward)


class ScaledLinear(nn.Linear):
    def __init__(self, *args, scale=2.0, **kwargs):
        super().__init__(*args, **kwargs)
        _scale_forward(self, scale)


def _rename_parameter(module, name):
    w = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_raw", nn.Parameter(w))


class Renamed(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 2.0, 4))
        _rename_parameter(self, "scale")

    def forward(self, x):
        return x * self.scale_raw
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return converted_and_imported(SOURCE, "unseen_classes_draw6", tmp_path_factory.mktemp("draw6"))


def test_the_only_warning_is_on_the_private_parameter_dict(built):
    result, _, _ = built
    warned = [(d.code, d.line) for d in result.diagnostics if d.severity.name in ("WARNING", "ERROR")
              and d.code != "MS507"]
    assert warned == [("MS103", SOURCE.splitlines().index('    del module._parameters[name]') + 1)], warned


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("name, args, shape", [
    ("PadTiled", (3,), (2, 2, 3, 4)),
    ("Spline", (4,), (2, 3)),
    ("CNNEncoder", (4, 3), (2, 6, 4)),
])
def test_layers_match_torch_in_both_modes(built, name, args, shape, mode):
    import mindspore

    _, torch_ns, ms_ns = built
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        same_outputs(torch_ns[name](*args), ms_ns[name](*args), *shape)
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_masked_fill_with_an_int_number(built, mode):
    import mindspore
    import torch

    _, torch_ns, ms_ns = built
    score = np.array([[0.1, 0.9, 0.5], [0.7, 0.2, 0.0]], np.float32)
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        for x in (np.arange(6, dtype=np.float32).reshape(2, 3) + 0.5, np.arange(6, dtype=np.int64).reshape(2, 3)):
            expected = torch_ns["MaskedFill"]()(torch.tensor(x), torch.tensor(score)).numpy()
            got = ms_ns["MaskedFill"]()(mindspore.Tensor(x.copy()), mindspore.Tensor(score)).asnumpy()
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


def test_repeat_tiles_a_tensor_and_leaves_numpy_its_own(built):
    import mindspore
    import torch

    _, torch_ns, ms_ns = built
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    for a, b in ((2, 1), (1, 3)):
        np.testing.assert_array_equal(ms_ns["tiled"](mindspore.Tensor(v), a, b).asnumpy(),
                                      torch_ns["tiled"](torch.tensor(v), a, b).numpy())
    row = np.arange(3, dtype=np.float32)  # more sizes than axes: torch adds the leading axis
    np.testing.assert_array_equal(ms_ns["tiled"](mindspore.Tensor(row), 2, 2).asnumpy(),
                                  torch_ns["tiled"](torch.tensor(row), 2, 2).numpy())
    np.testing.assert_array_equal(ms_ns["tiled"](v, 2, 1), np.repeat(v, 2, 1))  # numpy's own repeat


def test_legacy_constructor_and_new_with_a_range(built):
    import mindspore
    import torch

    _, torch_ns, ms_ns = built
    np.testing.assert_array_equal(ms_ns["legacy"]([1.0, 2.0]).asnumpy(), torch_ns["legacy"]([1.0, 2.0]).numpy())
    for x in (np.ones((4, 2), np.float32), np.ones((3,), np.int64)):
        got, expected = ms_ns["indices"](mindspore.Tensor(x)).asnumpy(), torch_ns["indices"](torch.tensor(x)).numpy()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_new_from_a_range_in_both_modes(built, mode):
    import mindspore
    import torch

    _, torch_ns, ms_ns = built
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        for x in (np.ones((4, 3), np.float32), np.ones((3, 2), np.int64)):
            expected = torch_ns["Indices"]()(torch.tensor(x))
            got = ms_ns["Indices"]()(mindspore.Tensor(x))
            for e, g in zip(expected, got):
                assert g.asnumpy().dtype == e.numpy().dtype
                np.testing.assert_array_equal(g.asnumpy(), e.numpy())
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


def test_forward_wrapped_by_a_function(built):
    same = built[1]["ScaledLinear"](4, 3, scale=3.0), built[2]["ScaledLinear"](4, 3, scale=3.0)
    same_outputs(*same, 2, 4)


def test_private_parameter_dict(built):
    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["Renamed"](), ms_ns["Renamed"]()
    assert [n for n, _ in torch_net.named_parameters()] == [n for n, _ in ms_net.parameters_and_names()] == ["scale_raw"]
    same_outputs(torch_net, ms_net, 2, 4)
