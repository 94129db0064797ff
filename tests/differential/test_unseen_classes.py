"""Failure classes first seen on packages the project had never converted (issue 29,
classes 2, 3 and 5), each converted as a general rule and run against torch:

* explicit base-class calls through the torch name (``nn.Linear.__init__(self, ...)``,
  ``nn.Module.__init__(self)``, ``nn.Linear.forward(self, x)``) in a subclass whose base
  became a MindSpore class (MS205);
* torch's Module hooks: forward hooks, full backward hooks, state-dict hooks, private ones
  included (``_register_state_dict_hook``, ``_register_load_state_dict_pre_hook``) (MS103);
* device values keep ``.type`` and ``.index`` and take torch's CPU path on a machine
  without a GPU (MS214);
* the tensor-member resolver on receivers the converter cannot type: ``x.requires_grad``,
  ``a.to(b)`` with ``b`` a tensor, a dtype or a device (MS202); ``torch.arange`` bounds
  computed from a numpy array's element (crfseg: MindSpore's arange refuses numpy ints);
* layer names computed at run time (``getattr(nn, "Conv%dd" % dims)``,
  ``getattr(nn, f"BatchNorm{n}d")``) find every layer the tables know (MS205).

One torch source is converted by the tool, both sides are exec'd once, and every test
reads the two namespaces (one MindSpore process for all cases).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_run, same_outputs

SOURCE = '''
import torch
import torch.nn as nn
import torch as th


class LoRALinear(nn.Linear):  # loralib's form: the base's __init__ through the class
    def __init__(self, in_features, out_features, r=0, **kwargs):
        nn.Linear.__init__(self, in_features, out_features, **kwargs)
        self.r = r

    def forward(self, x):
        return nn.Linear.forward(self, x) * 2


class PlainLinear(nn.Linear):
    def __init__(self, n, m):
        torch.nn.Linear.__init__(self, n, m, bias=False)


class LoRAEmbedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, **kwargs):
        nn.Embedding.__init__(self, num_embeddings, embedding_dim, **kwargs)


class Merged(nn.Linear):  # loralib's reset_parameters and train through the base class
    def __init__(self, n, m):
        nn.Linear.__init__(self, n, m)
        self.reset_parameters()

    def reset_parameters(self):
        nn.Linear.reset_parameters(self)

    def train(self, mode=True):
        return nn.Linear.train(self, mode)

    def freeze(self):
        return nn.Module.eval(self)


class Wrapper(nn.Module):
    def __init__(self):
        nn.Module.__init__(self)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


class Renamed(nn.Module):  # opacus' RenameParamsMixin: the state dict under other names
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self._register_state_dict_hook(self._rename)
        self._register_load_state_dict_pre_hook(self._rename_back)

    @staticmethod
    def _rename(module, state_dict, prefix, local_metadata):
        return {k.replace("fc.", "proj."): v for k, v in state_dict.items()}

    @staticmethod
    def _rename_back(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        for key in [k for k in state_dict if k.startswith(prefix + "proj.")]:
            state_dict[key.replace("proj.", "fc.")] = state_dict.pop(key)

    def forward(self, x):
        return self.fc(x)


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.seen = []
        self.fc.register_forward_hook(self._record)
        self.fc.register_full_backward_hook(self._double)

    def _record(self, module, inputs, output):
        self.seen.append(tuple(output.shape))

    @staticmethod
    def _double(module, grad_input, grad_output):
        return tuple(None if g is None else g * 2 for g in grad_input)

    def forward(self, x):
        return self.fc(x)


def get_device(device="auto"):  # stable-baselines3's
    if device == "auto":
        device = "cuda"
    device = th.device(device)
    if device.type == th.device("cuda").type and not th.cuda.is_available():
        return th.device("cpu")
    return device


def device_fields(name):
    device = torch.device(name)
    return device.type, device.index, torch.device(name).type, get_device(name).type


def scaled(x):
    if x.requires_grad:
        return x * 2
    return x + 1


def arange_like(x, n):  # crfseg's form: a range in another tensor's dtype
    return torch.arange(n).to(x) * x.sum()


def gaussian_offsets(filter_size, i, x):  # crfseg's: bounds from an element of a numpy array
    return torch.arange(-(filter_size[i] // 2), filter_size[i] // 2 + 1).to(x) * x.shape[0]


def cast_to(x, target):
    return x.to(target)


def conv_block(dims, channels):
    conv = getattr(nn, "Conv%dd" % dims)(channels, 4, 3, padding=1)
    norm = getattr(nn, f"BatchNorm{dims}d")(4)
    pool = getattr(nn, "MaxPool" + str(dims) + "d")(2)
    return nn.Sequential(conv, norm, pool)
'''


@pytest.fixture(scope="module")
def built():
    return converted_and_run(SOURCE, "unseen_classes.py")


def test_no_warning_on_converted_classes(built):
    result, _, _ = built
    warnings = [d for d in result.diagnostics if d.severity.name in ("WARNING", "ERROR") and d.code != "MS507"]
    assert warnings == [], warnings


@pytest.mark.parametrize("name, args, shape", [
    ("LoRALinear", (4, 3), (2, 4)),
    ("LoRALinear", (4, 3, 0), (2, 4)),
    ("PlainLinear", (4, 5), (3, 4)),
    ("Wrapper", (), (2, 4)),
])
def test_explicit_base_calls(built, name, args, shape):
    _, torch_ns, ms_ns = built
    same_outputs(torch_ns[name](*args), ms_ns[name](*args), *shape)


def test_explicit_base_method_calls(built):
    """reset_parameters while built (MindSpore drew torch's distributions), and Module
    methods the Cell names otherwise (train -> set_train), called through the class."""
    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["Merged"](4, 3), ms_ns["Merged"](4, 3)
    assert torch_net.train(True) is torch_net and ms_net.train(True) is ms_net
    assert ms_net.training is torch_net.training is True
    assert torch_net.freeze() is torch_net and ms_net.freeze() is ms_net
    assert ms_net.training is torch_net.training is False
    same_outputs(torch_net, ms_net, 2, 4)


def test_explicit_base_call_keywords(built):
    """Keyword arguments of the torch constructor pass through the run-time converter."""
    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["LoRALinear"](4, 3, bias=False), ms_ns["LoRALinear"](4, 3, bias=False)
    assert ms_net.bias is None and torch_net.bias is None
    same_outputs(torch_net, ms_net, 2, 4)
    import mindspore
    import torch

    torch_emb = torch_ns["LoRAEmbedding"](10, 4, padding_idx=0)
    ms_emb = ms_ns["LoRAEmbedding"](10, 4, padding_idx=0)
    assert ms_emb.padding_idx == torch_emb.padding_idx == 0
    from transpile.parity.weights import copy_weights

    assert copy_weights(torch_emb, ms_emb) == []
    ids = np.array([[0, 3, 9]], dtype=np.int32)
    np.testing.assert_allclose(ms_emb(mindspore.Tensor(ids)).asnumpy(),
                               torch_emb(torch.tensor(ids, dtype=torch.long)).detach().numpy(), rtol=1e-6)


def test_state_dict_hooks(built):
    import mindspore

    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["Renamed"](), ms_ns["Renamed"]()
    torch_keys = sorted(torch_net.state_dict())
    ms_state = ms_net.state_dict()
    assert sorted(ms_state) == torch_keys == ["proj.bias", "proj.weight"]
    new = {k: mindspore.Parameter(mindspore.Tensor(np.full(tuple(v.shape), 0.5, np.float32)), name=k)
           for k, v in ms_state.items()}
    ms_net.load_state_dict(new)  # back under the cell's names, through the private pre-hook
    assert np.all(ms_net.fc.weight.asnumpy() == 0.5)


def test_forward_and_full_backward_hooks(built):
    import mindspore
    import torch
    from transpile.parity.weights import copy_weights

    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["Hooked"](), ms_ns["Hooked"]()
    assert copy_weights(torch_net, ms_net) == []
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    (torch_net(xt) ** 2).sum().backward()
    grad = mindspore.grad(lambda a: (ms_net(a) ** 2).sum())(mindspore.Tensor(x))
    np.testing.assert_allclose(grad.asnumpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert ms_net.seen == torch_net.seen == [(2, 3)]


@pytest.mark.parametrize("name", ["cpu", "cuda", "cuda:1", "auto"])
def test_device_values(built, name):
    """On a machine without a GPU: torch's answers are the converted program's."""
    _, torch_ns, ms_ns = built
    if name == "auto":
        assert str(ms_ns["get_device"]()) == str(torch_ns["get_device"]()) == "cpu"
        return
    assert ms_ns["device_fields"](name) == torch_ns["device_fields"](name)


def test_tensor_member_resolver(built):
    import mindspore
    import torch

    _, torch_ns, ms_ns = built
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(ms_ns["scaled"](mindspore.Tensor(x)).asnumpy(), torch_ns["scaled"](torch.tensor(x)).numpy())
    weight = torch_ns["nn"].Parameter(torch.tensor(x))
    ms_weight = mindspore.Parameter(mindspore.Tensor(x), name="w")
    np.testing.assert_array_equal(ms_ns["scaled"](ms_weight).asnumpy(), torch_ns["scaled"](weight).detach().numpy())
    for dtype in (np.float64, np.float32, np.int32):
        like = np.array([0.5, 2.0]).astype(dtype)
        got = ms_ns["arange_like"](mindspore.Tensor(like), 4)
        expected = torch_ns["arange_like"](torch.tensor(like), 4)
        assert got.asnumpy().dtype == expected.numpy().dtype
        np.testing.assert_allclose(got.asnumpy(), expected.numpy())
    sizes = np.broadcast_to(np.int64(5), 2)
    for like in (np.ones(3, np.float32), np.ones(2, np.float64)):
        got = ms_ns["gaussian_offsets"](sizes, 1, mindspore.Tensor(like)).asnumpy()
        expected = torch_ns["gaussian_offsets"](sizes, 1, torch.tensor(like)).numpy()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    as_half = ms_ns["cast_to"](mindspore.Tensor(x), mindspore.float16)
    assert as_half.dtype == mindspore.float16
    assert ms_ns["cast_to"](mindspore.Tensor(x), "cpu").dtype == mindspore.float32


@pytest.mark.parametrize("dims, shape", [(1, (2, 3, 8)), (2, (2, 3, 8, 8)), (3, (1, 3, 4, 4, 4))])
def test_layer_names_computed_at_run_time(built, dims, shape):
    _, torch_ns, ms_ns = built
    same_outputs(torch_ns["conv_block"](dims, 3), ms_ns["conv_block"](dims, 3), *shape)


# torchrl copies nn.LSTM's methods onto its own torch base by name, at import: the names
# are torch's, so getattr reads them on torch's class (kept torch, with a warning on the
# line); the module imports and its other Modules convert and run
COPIED_METHODS = '''
import torch
from torch import nn


class LSTMBase(nn.RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


for attr in nn.LSTM.__dict__:
    if attr != "__init__":
        setattr(LSTMBase, attr, getattr(nn.LSTM, attr))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 3), nn.Tanh())

    def forward(self, x):
        return self.body(x)
'''


def test_torch_methods_copied_by_name(tmp_path):
    from transpile import convert_code

    from .harness import import_converted

    result = convert_code(COPIED_METHODS, filename="copied_methods.py")
    assert [d.line for d in result.diagnostics if d.code == "MS205" and d.severity.name == "WARNING"] == [13]
    torch_ns: dict = {}
    exec(compile(COPIED_METHODS, "<torch>", "exec"), torch_ns)
    ms_ns = import_converted(result.code, "copied_methods", tmp_path)
    assert ms_ns["LSTMBase"].get_expected_cell_size is torch_ns["LSTMBase"].get_expected_cell_size
    same_outputs(torch_ns["MLP"](), ms_ns["MLP"](), 2, 4)
