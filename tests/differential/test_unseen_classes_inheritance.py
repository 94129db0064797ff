"""Failure classes first seen on packages the project had never converted (issue 29, third
round), each converted as a general rule and run against torch:

* a base that becomes ``object`` (torch's ``Dataset``) beside a mixin: ``class X(object,
  Mixin)`` has no method resolution order (monai's ``ImageDataset(Dataset, Randomizable)``);
  the base goes (MS201);
* a Module's own attribute or method named as a Cell's API (opacus's ``self.cells``,
  ``self.phase``, a ``trainable_params`` method): renamed ``cells_`` in the class, its
  subclasses and where the type index knows the instance (MS101); the names are those
  MindSpore 2.10 breaks on, measured again here; a Module's own ``compile`` method (GRAPH
  mode calls a Cell's) likewise, where the class defining it is known;
* a ``train(mode)`` override (loralib merges its LoRA weights there) becomes ``set_train``,
  which the converted ``train()``/``eval()`` calls run (MS101);
* a subclass of a torch layer that keeps torch's forward (``class Encoder(nn.TransformerEncoder)``)
  called with torch's keywords (``mask=``): the layer's call rewrites, through the type index (MS203);
* a layer attribute read on a layer that came in through an annotated parameter
  (``embeddings: nn.Embedding``; OpenELM's ``self.token_embeddings.weight``) (MS204);
* a Module method on a layer only the type index knows (``self.body.eval()``, ``body`` from
  a helper) (MS103);
* ``torch.arange`` bounds from a parameter that the file's calls pass a numpy array's
  element (crfseg's ``filter_size``), also in code GRAPH mode compiles (MS201), and such a
  parameter on the left of a tensor (``spacing * torch.arange(...)``: numpy's operator would
  give an ndarray) or indexing a tensor (``t[filter_size // 2] = 0``) (MS202), and a
  convolution's padding from an array's element (``padding=(filter_size[i] // 2,)``) (MS201).

One torch source is converted by the tool, both sides are exec'd once (one MindSpore
process for all cases).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import import_converted

SOURCE = '''
import numpy as np
import torch
import torch.nn as nn
from typing import TypeVar
from torch.utils.data import Dataset

T_co = TypeVar("T_co", covariant=True)


class Randomizable:  # monai's mixin, a plain class
    seed = 0

    def set_random_state(self, seed):
        self.seed = seed
        return self


class Numbers(Dataset, Randomizable):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * self.seed


class Both(torch.utils.data.IterableDataset, Dataset):
    def __len__(self):
        return 2


class Typed(Dataset[T_co], Randomizable):  # torchvision's VisionDataset(data.Dataset[T_co])
    def __len__(self):
        return 3


class MixedNet(Randomizable, nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x) * self.seed


class DPRNN(nn.Module):  # opacus's DPRNNBase: the layers kept in a list named cells
    def __init__(self, layers):
        super().__init__()
        self.cells = self.initialize_cells(layers)
        self.phase = "train"

    def initialize_cells(self, layers):
        cells = []
        for i in range(layers):
            cell = nn.Linear(4, 4)
            setattr(self, f"l{i}", cell)
            cells.append(cell)
        return cells

    def trainable_params(self):
        return [p for p in self.parameters() if p.requires_grad]

    def forward(self, x):
        for cell in self.cells:
            x = torch.tanh(cell(x))
        return x


class DeepDPRNN(DPRNN):
    def forward(self, x):
        return super().forward(x) * len(self.cells) + len(super().trainable_params())


class Compiled(nn.Module):  # AlphaGenome's compile(**kwargs): GRAPH mode calls a Cell's own compile
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def compile(self, **kwargs):
        return self

    def forward(self, x):
        return self.fc(x)


def cells_of(layers):
    rnn = DPRNN(layers)
    return len(rnn.cells), rnn.phase


class LoRA(nn.Linear):  # loralib's Linear: the LoRA product merged into the weight by eval()
    def __init__(self, n, m, r=2):
        nn.Linear.__init__(self, n, m)
        self.lora_A = nn.Parameter(torch.ones(r, n) * 0.1)
        self.lora_B = nn.Parameter(torch.ones(m, r) * 0.2)
        self.merged = False

    def train(self, mode: bool = True):
        nn.Linear.train(self, mode)
        if not mode and not self.merged:
            self.weight.data += self.lora_B @ self.lora_A
            self.merged = True
        if mode and self.merged:
            self.weight.data -= self.lora_B @ self.lora_A
            self.merged = False

    def forward(self, x):
        out = nn.functional.linear(x, self.weight, self.bias)
        if not self.merged:
            out = out + x @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)
        return out


class LoRAConv(nn.Module):  # loralib's ConvLoRA: the base's train through super(Cls, self)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.switched = 0

    def train(self, mode=True):
        super(LoRAConv, self).train(mode)
        self.switched += 1
        return self

    def forward(self, x):
        return self.fc(x)


class LoRAHolder(nn.Module):  # the overrides run from a parent's train()/eval()
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(LoRA(4, 3), nn.ReLU(), LoRAConv())
        self.head = LoRA(3, 4)

    def forward(self, x):
        return self.head(self.body[:2](x))


class Encoder(nn.TransformerEncoder):  # a subclass keeping torch's forward: torch's keywords
    pass


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.enc = Encoder(layer, 1)

    def forward(self, x):
        mask = torch.triu(torch.full((x.shape[1], x.shape[1]), float("-inf"), dtype=torch.float32), diagonal=1)
        return self.enc(x, mask=mask)


class TiedLM(nn.Module):  # OpenELM's: the embedding comes in through an annotated parameter
    def __init__(self, embeddings: nn.Embedding, norm: nn.LayerNorm):
        super().__init__()
        self.token_embeddings = embeddings
        self.norm = norm

    @classmethod
    def build(cls, vocab, dim):
        return cls(embeddings=nn.Embedding(vocab, dim), norm=nn.LayerNorm(dim))

    def forward(self, ids):
        x = self.norm(self.token_embeddings(ids))
        return torch.einsum("bsd,ed->bse", x, self.token_embeddings.weight)


def make_body():
    return nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))


class Frozen(nn.Module):  # a Module method on a layer only the type index knows (a helper built it)
    def __init__(self):
        super().__init__()
        self.body = make_body()

    def freeze(self):
        self.body.eval()
        return self

    def forward(self, x):
        return self.body(x)


class CRF(nn.Module):  # crfseg's: kernel sizes and spacings in numpy arrays, passed to a helper
    def __init__(self, filter_size=5):
        super().__init__()
        self.filter_size = np.broadcast_to(filter_size, 2)
        self.theta = nn.Parameter(torch.tensor([0.5, 0.25]))
        self.spacings = np.ones(2) * 0.5

    def forward(self, x):
        return self.smooth(x, self.theta, self.spacings, self.filter_size)

    @staticmethod
    def smooth(x, theta, spacings, filter_size):  # crfseg's _gaussian_filter: the kernel through the class
        first = CRF.kernel(filter_size[0], spacings[0], theta[0]).view(1, 1, -1)
        smoothed = nn.functional.conv1d(x, first, padding=(filter_size[0] // 2,))
        return smoothed + CRF.kernel(filter_size[1], spacings[1], theta[1])[0]

    @staticmethod
    def kernel(filter_size, spacing, theta):
        distances = spacing * torch.arange(-(filter_size // 2), filter_size // 2 + 1).to(theta)
        kernel = torch.exp(-(distances * theta) ** 2 / 2)
        zero_center = torch.ones(filter_size).to(kernel)
        zero_center[filter_size // 2] = 0
        return kernel * zero_center
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from transpile import convert_code

    result = convert_code(SOURCE, filename="unseen_inheritance.py")
    assert not result.failed and "# transpile:" not in result.code, result.code
    torch_ns: dict = {}
    exec(compile(SOURCE, "<torch>", "exec"), torch_ns)
    # imported from a file: GRAPH mode reads construct's source
    ms_ns = import_converted(result.code, "unseen_inheritance", tmp_path_factory.mktemp("unseen_inheritance"))
    return result, torch_ns, ms_ns


def _outputs(torch_net, ms_net, *shape):
    import mindspore
    import torch

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = torch_net(torch.tensor(x)).numpy()
    return ms_net(mindspore.Tensor(x)).asnumpy(), expected


def _same(torch_net, ms_net, *shape):
    got, expected = _outputs(torch_net, ms_net, *shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_no_warning(built):
    result, _, _ = built
    warnings = [d for d in result.diagnostics if d.severity.name in ("WARNING", "ERROR") and d.code != "MS507"]
    assert warnings == [], warnings


def test_bases_with_a_mixin(built):
    """The classes build (no MRO error) and behave as torch's."""
    import torch

    result, torch_ns, ms_ns = built
    assert "class Numbers(Randomizable):" in result.code and "class Both(object):" in result.code
    assert [ms_ns["Numbers"](3).set_random_state(2)[i] for i in range(3)] == [0, 2, 4]
    assert len(ms_ns["Both"]()) == 2
    assert "class Typed(Randomizable):" in result.code and len(ms_ns["Typed"]().set_random_state(1)) == 3
    torch.manual_seed(0)
    torch_net = torch_ns["MixedNet"]().set_random_state(3)
    ms_net = ms_ns["MixedNet"]().set_random_state(3)
    from transpile.parity.weights import copy_weights

    assert copy_weights(torch_net, ms_net) == []
    _same(torch_net, ms_net, 2, 4)


@pytest.mark.parametrize("name", ["DPRNN", "DeepDPRNN"])
def test_cell_api_names_renamed(built, name):
    from transpile.parity.weights import copy_weights

    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns[name](2), ms_ns[name](2)
    assert copy_weights(torch_net, ms_net) == []  # walks cells(): a list there broke it
    torch_net.eval()
    ms_net.set_train(False)
    _same(torch_net, ms_net, 3, 4)
    assert len(ms_net.trainable_params_()) == len(torch_net.trainable_params()) == 4
    assert len(ms_net.trainable_params()) == 4  # the Cell's own still answers
    assert ms_ns["cells_of"](3) == torch_ns["cells_of"](3) == (3, "train")


def test_overridden_compile_renamed(built):
    import mindspore
    from transpile.parity.weights import copy_weights

    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["Compiled"](), ms_ns["Compiled"]()
    assert ms_net.compile_() is ms_net and torch_net.compile() is torch_net
    assert copy_weights(torch_net, ms_net) == []
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    try:
        _same(torch_net, ms_net, 2, 4)
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


def test_train_override_runs(built):
    """eval()/train() converted to set_train run the override (loralib's weight merge)."""
    import mindspore
    import torch
    from transpile.parity.weights import copy_weights

    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["LoRA"](4, 3), ms_ns["LoRA"](4, 3)
    assert copy_weights(torch_net, ms_net) == []
    torch_net.eval()
    ms_net.set_train(False)
    assert ms_net.merged is torch_net.merged is True
    assert ms_net.training is torch_net.training is False
    _same(torch_net, ms_net, 2, 4)
    merged = ms_net.weight.asnumpy().copy()
    torch_net.train()
    ms_net.set_train(True)
    assert ms_net.merged is torch_net.merged is False
    np.testing.assert_allclose(ms_net.weight.asnumpy(), torch_net.weight.detach().numpy(), rtol=1e-6)
    assert not np.allclose(merged, ms_net.weight.asnumpy())
    _same(torch_net, ms_net, 2, 4)
    conv_t, conv_m = torch_ns["LoRAConv"](), ms_ns["LoRAConv"]()
    assert conv_t.eval() is conv_t and conv_m.set_train(False) is conv_m
    assert conv_m.switched == conv_t.switched == 1 and conv_m.training is conv_t.training is False
    assert isinstance(conv_m.fc.weight, mindspore.Parameter) and torch.is_tensor(conv_t.fc.weight)


def test_train_override_runs_from_a_parent(built):
    """A parent's eval()/train() runs its children's overrides, each once (torch's
    Module.train calls every child's train; MindSpore's set_train only sets their flag)."""
    from transpile.parity.weights import copy_weights

    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["LoRAHolder"](), ms_ns["LoRAHolder"]()
    assert copy_weights(torch_net, ms_net) == []
    torch_net.eval()
    assert ms_net.set_train(False) is ms_net
    assert ms_net.head.merged is torch_net.head.merged is True
    assert ms_net.body[0].merged is torch_net.body[0].merged is True
    assert ms_net.body[2].switched == torch_net.body[2].switched == 1
    assert ms_net.body[2].fc.training is torch_net.body[2].fc.training is False
    _same(torch_net, ms_net, 2, 4)
    torch_net.train()
    ms_net.set_train(True)
    assert ms_net.head.merged is torch_net.head.merged is False
    assert ms_net.body[2].switched == torch_net.body[2].switched == 2
    np.testing.assert_allclose(ms_net.head.weight.asnumpy(), torch_net.head.weight.detach().numpy(), rtol=1e-6)
    _same(torch_net, ms_net, 2, 4)
    ms_net.body[0].set_train(False)  # directly: once, not again through its base's set_train
    torch_net.body[0].eval()
    np.testing.assert_allclose(ms_net.body[0].weight.asnumpy(), torch_net.body[0].weight.detach().numpy(), rtol=1e-6)


def test_subclass_called_with_torch_keywords(built):
    from transpile.parity.weights import copy_weights

    result, torch_ns, ms_ns = built
    assert "self.enc(x, src_mask=mask)" in result.code
    torch_net, ms_net = torch_ns["Tagger"](), ms_ns["Tagger"]()
    assert copy_weights(torch_net, ms_net) == []
    torch_net.eval()
    ms_net.set_train(False)
    _same(torch_net, ms_net, 2, 5, 8)


def test_layer_from_an_annotated_parameter(built):
    import mindspore
    import torch
    from transpile.parity.weights import copy_weights

    _, torch_ns, ms_ns = built
    torch_net, ms_net = torch_ns["TiedLM"].build(11, 8), ms_ns["TiedLM"].build(11, 8)
    assert copy_weights(torch_net, ms_net) == []
    torch_net.eval()
    ms_net.set_train(False)
    ids = np.array([[1, 4, 10]], dtype=np.int64)
    with torch.no_grad():
        expected = torch_net(torch.tensor(ids)).numpy()
    got = ms_net(mindspore.Tensor(ids.astype(np.int32))).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_module_method_on_an_indexed_layer(built):
    from transpile.parity.weights import copy_weights

    result, torch_ns, ms_ns = built
    assert "self.body.set_train(False)" in result.code
    torch_net, ms_net = torch_ns["Frozen"](), ms_ns["Frozen"]()
    assert copy_weights(torch_net, ms_net) == []
    assert torch_net.freeze() is torch_net and ms_net.freeze() is ms_net
    assert ms_net.body.training is torch_net.body.training is False
    _same(torch_net, ms_net, 3, 4)  # the dropout is off in both


def test_python_number_helper_keeps_arrays(built):
    """An element of a list of arrays is an array: the helper gives numbers for numpy
    scalars only."""
    import mindspore

    _, _, ms_ns = built
    number = ms_ns["_torch_python_number"]
    assert type(number(np.int64(3))) is int and type(number(np.float32(0.5))) is float
    one = np.array([3])
    assert number(one) is one
    tensor = mindspore.Tensor(np.int64(2))
    assert number(tensor) is tensor


def test_numpy_scalar_bounds_in_both_modes(built):
    import mindspore

    _, torch_ns, ms_ns = built
    for size in (5, 3):
        _same(torch_ns["CRF"](size), ms_ns["CRF"](size), 1, 1, 8)
    mindspore.set_context(mode=mindspore.GRAPH_MODE)  # one compile: the helper in compiled code
    try:
        _same(torch_ns["CRF"](5), ms_ns["CRF"](5), 1, 1, 8)
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


def test_cell_api_names_are_the_ones_mindspore_breaks_on(tmp_path):
    """Each public name a Cell defines and torch's Module does not, set as an attribute in
    a Cell's __init__: CELL_API_NAMES holds exactly those whose build, weight walk, call,
    set_train, call, checkpoint or gradient then fails (construct and set_train are the
    converter's own names for forward and train())."""
    import mindspore
    import torch
    from mindspore import nn

    from transpile.rewrites.cell_names import CELL_API_NAMES

    def breaks(name: str) -> bool:
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(3, 2)
                setattr(self, name, [1, 2])

            def construct(self, x):
                return self.fc(x)

        x = mindspore.Tensor(np.ones((1, 3), np.float32))
        try:
            net = Net()
            net.set_train(False)
            list(net.parameters_and_names())
            list(net.cells_and_names())
            net.trainable_params()
            net(x)
            mindspore.save_checkpoint(net, str(tmp_path / "net.ckpt"))
            net.set_grad(True)
            mindspore.value_and_grad(net, None, net.trainable_params())(x)
        except (TypeError, AttributeError, ValueError, RuntimeError):
            return True
        return False

    candidates = sorted(n for n in dir(nn.Cell) if not n.startswith("_") and n not in dir(torch.nn.Module)
                        and n not in ("construct", "set_train"))
    assert {n for n in candidates if breaks(n)} == CELL_API_NAMES
