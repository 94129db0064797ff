"""MS334's claim, run: ``self.<...> == <literal>`` where the value is a list (efficientnet's
``BlockArgs(stride=[1])``, ``if ... self._block_args.stride == 1 and ...``) computes what torch
does in both modes once the converter writes it ``_py_equal(...)``. GRAPH_MODE (MindSpore 2.10,
CPU) compares a list with a number only when the graph runs, so it compiles both arms of the
``if``: ``test_graph_mode_compiles_both_arms`` runs the unconverted form and fails the day
GRAPH_MODE folds it, when MS334 can go. Values that are no lists (numbers, strings, tensors)
compare as before.
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_imported, in_mode, outputs_in_mode

SOURCE = '''
import collections

import torch
import torch.nn as nn

Args = collections.namedtuple("Args", ["stride", "i", "o", "act"])


class Block(nn.Module):
    args = Args([1], 3, 4, "relu")  # a list stride and other channels: no skip connection

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(self.args.i, self.args.o)
        self.scale = torch.ones(1) * 2

    def forward(self, x):
        y = self.proj(x)
        if self.args.stride == 1 and self.args.i == self.args.o:
            y = y + x
        if self.args.stride != 1:
            y = y * 0.5
        if self.args.act == "relu":
            y = torch.relu(y)
        return y * (self.scale == 2)


class SquareBlock(Block):  # the same channels: the list stride still takes no skip connection
    args = Args([1], 4, 4, "relu")


class IntBlock(Block):  # an int stride and the same channels: skip connection
    args = Args(1, 4, 4, "gelu")


class WideStride(Block):
    args = Args([2], 4, 3, "relu")
'''

CLASSES = ("Block", "SquareBlock", "IntBlock", "WideStride")
SHAPES = [(2,), (5,), (1,)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    result, torch_ns, ms_ns = converted_and_imported(SOURCE, "graph_equality_case", tmp_path_factory.mktemp("graph_equality"))
    assert result.code.count("_py_equal(self.args.stride, 1)") == 2, result.code
    return result, torch_ns, ms_ns


def _inputs(cls, batch, torch_ns):
    width = torch_ns[cls].args.i
    return (np.random.default_rng(batch).uniform(-1, 1, (batch, width)).astype(np.float32),)


def _outputs(cls, batch, built, mode):
    import mindspore
    import torch
    from transpile.parity.weights import copy_weights

    torch_ns, ms_ns = built[1], built[2]
    torch.manual_seed(0)
    torch_net, ms_net = torch_ns[cls](), ms_ns[cls]()
    copy_weights(torch_net, ms_net)
    (x,) = _inputs(cls, batch, torch_ns)
    with torch.no_grad():
        expected = torch_net(torch.from_numpy(x.copy())).numpy()
    with in_mode(mode):
        actual = ms_net(mindspore.Tensor(x.copy())).asnumpy()
    return expected, actual


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("batch", [s[0] for s in SHAPES])
@pytest.mark.parametrize("cls", CLASSES)
def test_comparisons_compute_what_torch_does(cls, batch, mode, built):
    expected, actual = _outputs(cls, batch, built, mode)
    assert expected.shape == actual.shape and np.allclose(actual, expected, atol=1e-5), \
        f"{cls} {mode}\ntorch:\n{expected}\nmindspore:\n{actual}"


UNCONVERTED = """
import collections

import mindspore
import numpy as np
from mindspore import nn

args = collections.namedtuple("Args", ["stride"])([1])


class Stale(nn.Cell):
    def __init__(self):
        super().__init__()
        self.args = args

    def construct(self, x, y):
        if self.args.stride == 1:
            x = x + y  # shapes that cannot add
        return x


mindspore.set_context(mode=mindspore.GRAPH_MODE)
try:
    Stale()(mindspore.Tensor(np.zeros((2, 3), np.float32)), mindspore.Tensor(np.zeros((4, 3), np.float32)))
except ValueError as error:
    print("refused:", "broadcast" in str(error), flush=True)
else:
    print("compiled", flush=True)
"""


def test_graph_mode_compiles_both_arms(tmp_path):
    """The unconverted form: GRAPH_MODE compiles the arm ``[1] == 1`` never takes (the list
    held in a named tuple, as efficientnet's BlockArgs holds it). In a process of its own:
    MindSpore 2.10 may stop the process at the next compilation after a failed one."""
    import subprocess
    import sys

    script = tmp_path / "unconverted_equality.py"  # (GRAPH_MODE reads the source of what it compiles)
    script.write_text(UNCONVERTED)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "refused: True" in run.stdout, \
        f"GRAPH_MODE now folds a list compared with a number: MS334 can go\n{run.stdout}\n{run.stderr[-2000:]}"
