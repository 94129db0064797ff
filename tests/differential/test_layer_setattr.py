"""Weights tied by torch's parameter names kept as data (issue 31: transformers'
``tie_weights``, T5's shared embedding): ``setattr(self.get_submodule(path), name,
self.get_parameter(source))`` in a Module's method, converted and run against torch in
PYNATIVE mode. The tie must hold on the MindSpore side (one Parameter, read by each
Embedding), the weights copy by torch's names (``transpile.parity.weights``) and the
outputs match; a name that is no parameter name (a plain attribute) is set as setattr
sets it."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.framework

SOURCE = '''
import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids):
        return self.norm(self.embed_tokens(ids))


class Model(nn.Module):
    tied = {"encoder.embed_tokens.weight": "shared.weight", "decoder.embed_tokens.weight": "shared.weight",
            "decoder.norm.bias": "encoder.norm.bias"}

    def __init__(self, vocab=13, dim=4):
        super().__init__()
        self.shared = nn.Embedding(vocab, dim)
        self.encoder = Stack(vocab, dim)
        self.decoder = Stack(vocab, dim)
        self.tie_weights()
        self.set_flag("decoder", "label", "tied")

    def tie_weights(self):
        for target, source in self.tied.items():
            parent, _, name = target.rpartition(".")
            setattr(self.get_submodule(parent), name, self.get_parameter(source))

    def set_flag(self, path, name, value):
        setattr(self.get_submodule(path), name, value)

    def forward(self, ids, decoder_ids):
        return self.encoder(ids).sum(1, keepdim=True) + self.decoder(decoder_ids)
'''


@pytest.fixture(scope="module")
def sides():
    from transpile import convert_code

    result = convert_code(SOURCE, filename="tied_by_name.py")
    assert not result.failed and "# transpile:" not in result.code, result.code
    assert result.code.count("_torch_setattr(") == 3, result.code  # the helper and the two calls
    torch_ns: dict = {}
    exec(compile(SOURCE, "<torch>", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(result.code, "<converted>", "exec"), ms_ns)
    return torch_ns, ms_ns


def test_the_tie_holds_and_the_outputs_match(sides):
    import mindspore
    import torch
    from transpile.parity.weights import copy_weights

    torch_ns, ms_ns = sides
    torch.manual_seed(0)
    torch_net, ms_net = torch_ns["Model"](), ms_ns["Model"]()
    assert torch_net.encoder.embed_tokens.weight is torch_net.shared.weight
    assert ms_net.encoder.embed_tokens.embedding_table is ms_net.shared.embedding_table
    assert ms_net.decoder.embed_tokens.embedding_table is ms_net.shared.embedding_table
    assert ms_net.decoder.norm.beta is ms_net.encoder.norm.beta
    assert not hasattr(ms_net.encoder.embed_tokens, "weight")  # no second table beside the one it reads
    assert ms_net.decoder.label == torch_net.decoder.label == "tied"
    assert copy_weights(torch_net, ms_net) == []
    ids = np.array([[1, 2, 3], [4, 5, 12]], dtype=np.int64)
    dec = np.array([[0, 7], [11, 3]], dtype=np.int64)
    torch_net.eval()
    ms_net.set_train(False)
    with torch.no_grad():
        expected = torch_net(torch.from_numpy(ids), torch.from_numpy(dec)).numpy()
    actual = ms_net(mindspore.Tensor(ids), mindspore.Tensor(dec)).asnumpy()
    assert np.allclose(actual, expected, atol=1e-5), (actual, expected)
