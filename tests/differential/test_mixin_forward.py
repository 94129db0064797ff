"""A class mixed into Modules reading ``self.forward`` (issue 31: transformers'
``GenerationMixin`` asks ``inspect.signature(self.forward)`` which arguments the model
takes before it calls it), converted and run against torch in PYNATIVE mode."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.framework

MIXIN = '''
import inspect

import torch


class GenerationMixin:
    def accepts(self, name):
        return name in set(inspect.signature(self.forward).parameters)

    def generate(self, ids, steps):
        for _ in range(steps):
            kwargs = {"mask": ids > 0} if self.accepts("mask") else {}
            ids = torch.cat([ids, self(ids, **kwargs).argmax(-1)[:, -1:]], dim=-1)
        return ids
'''

MODEL = '''
import torch
import torch.nn as nn

from generation import GenerationMixin


class LM(nn.Module, GenerationMixin):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 4)
        self.head = nn.Linear(4, 7)

    def forward(self, ids, mask=None):
        x = self.embed(ids)
        if mask is not None:
            x = x * mask.unsqueeze(-1)
        return self.head(x)
'''


def _load(folder, files: dict) -> dict:
    import importlib
    import sys

    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)
    sys.path.insert(0, str(folder))
    try:
        for name in files:
            sys.modules.pop(name, None)
        return {name: importlib.import_module(name) for name in files}
    finally:
        sys.path.remove(str(folder))
        for name in files:
            sys.modules.pop(name, None)


def test_a_mixin_reads_the_cells_construct_as_forward(tmp_path):
    import mindspore
    import torch
    from transpile import convert_code
    from transpile.parity.weights import copy_weights

    converted = {name: convert_code(text, filename=f"{name}.py") for name, text in
                 (("generation", MIXIN), ("model", MODEL))}
    assert all(not r.failed and "# transpile:" not in r.code for r in converted.values())
    assert "_torch_forward(self)" in converted["generation"].code
    (tmp_path / "torch").mkdir()
    (tmp_path / "ms").mkdir()
    torch_side = _load(tmp_path / "torch", {"generation": MIXIN, "model": MODEL})
    torch.manual_seed(0)
    torch_net = torch_side["model"].LM()
    ms_side = _load(tmp_path / "ms", {n: r.code for n, r in converted.items()})
    ms_net = ms_side["model"].LM()
    assert copy_weights(torch_net, ms_net) == []
    assert torch_net.accepts("mask") and ms_net.accepts("mask") and not ms_net.accepts("labels")
    ids = np.array([[1, 2], [3, 0]], dtype=np.int64)
    with torch.no_grad():
        expected = torch_net.generate(torch.from_numpy(ids), 3).numpy()
    actual = ms_net.generate(mindspore.Tensor(ids), 3).asnumpy()
    assert np.array_equal(actual, expected), (actual, expected)
