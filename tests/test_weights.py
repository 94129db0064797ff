"""`transpile weights`: a torch checkpoint becomes a MindSpore .ckpt for the converted model.

The mapping plan is checked without any framework; the command runs end to end (as the
console script runs it, in this process, one run after the other in one fixture); the written .ckpt is loaded with
``mindspore.load_checkpoint`` into the converted model, whose outputs must then
equal torch's.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from transpile import convert_code
from transpile.cli.main import main
from transpile.parity import SpecError, convert_weights
from transpile.parity.weights import Target, WeightMap, plan_transfer

import cli_here  # tests/cli_here.py

NET = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, vocab=16, dim=8, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, dim, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm1d(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        h = self.embed(tokens).transpose(1, 2)
        h = torch.relu(self.bn(self.conv(h)))
        return self.head(h.mean(dim=2))
'''

needs_frameworks = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("mindspore") is None,
    reason="weights needs torch and mindspore (pip install -e '.[parity]')",
)


# -- the plan: names and shapes only ------------------------------------------------------

def _target(path, shape, name=None):
    return Target(path, name or path, shape, "parameter", None)


def test_the_plan_renames_reshapes_drops_and_ties():
    wm = WeightMap({"conv.weight": "conv.weight", "bn.weight": "bn.gamma", "embed.weight": "embed.embedding_table",
                    "head.weight": "head.weight", "head.bias": "head.bias"}, dropped=["bn.num_batches_tracked"])
    targets = {p: _target(p, s) for p, s in [("conv.weight", (4, 2, 1, 3)), ("bn.gamma", (4,)),
                                             ("embed.embedding_table", (10, 4)), ("head.bias", (10,))]}
    shapes = {"conv.weight": (4, 2, 3), "bn.weight": (4,), "bn.num_batches_tracked": (), "embed.weight": (10, 4),
              "head.weight": (10, 4), "head.bias": (10,)}
    plan = plan_transfer(shapes, wm, targets, tied={"head.weight": "embed.weight"})
    assert plan.complete
    assert sorted(plan.copies) == sorted([("conv.weight", "conv.weight"), ("bn.weight", "bn.gamma"),
                                          ("embed.weight", "embed.embedding_table"), ("head.bias", "head.bias")])
    assert plan.reshaped == ["conv.weight"] and plan.dropped == ["bn.num_batches_tracked"]
    assert plan.tied == [("head.weight", "embed.weight")]
    assert ("bn.weight", "bn.gamma") in plan.renamed


def test_the_plan_lists_what_has_no_home():
    wm = WeightMap({"fc.weight": "fc.weight", "fc.bias": "fc.bias", "out.weight": "out.weight"})
    targets = {p: _target(p, s) for p, s in [("fc.weight", (3, 2)), ("fc.bias", (3,)), ("out.weight", (1, 3)),
                                             ("extra.gamma", (3,))]}
    plan = plan_transfer({"fc.weight": (3, 2), "out.weight": (2, 3), "stray.weight": (5,)}, wm, targets)
    assert not plan.complete
    assert dict(plan.unmapped) == {"out.weight": "shape [2, 3] does not fit MindSpore out.weight [1, 3]",
                                   "stray.weight": "the model has no tensor of this name"}
    assert plan.missing == ["fc.bias"]
    assert plan.unfilled == ["fc.bias", "out.weight", "extra.gamma"]


def test_a_checkpoint_that_stores_a_tied_tensor_once_fills_both():
    wm = WeightMap({"embed.weight": "embed.embedding_table", "head.weight": "head.weight"})
    targets = {p: _target(p, (10, 4)) for p in ("embed.embedding_table", "head.weight")}  # MindSpore does not tie
    plan = plan_transfer({"embed.weight": (10, 4)}, wm, targets, tied={"head.weight": "embed.weight"})
    assert plan.complete and ("embed.weight", "head.weight") in plan.copies and not plan.missing


def test_parameter_names_are_a_fallback_for_paths():
    wm = WeightMap({"layers.0.weight": "layers.0.weight"})
    targets = {"layers.0.weight": _target("layers.0.weight", (2,), name="0.weight")}
    plan = plan_transfer({"layers.0.weight": (2,)}, wm, targets)
    assert plan.copies == [("layers.0.weight", "layers.0.weight")]


# -- checkpoint files ------------------------------------------------------------------

@pytest.mark.framework
def test_state_dicts_are_found_inside_checkpoints(tmp_path):
    torch = pytest.importorskip("torch")
    from transpile.parity.weights import CheckpointError, load_torch_checkpoint

    sd = {"fc.weight": torch.ones(2, 2), "fc.bias": torch.zeros(2)}
    torch.save({"state_dict": sd, "epoch": 3}, tmp_path / "nested.pth")
    state, notes = load_torch_checkpoint(tmp_path / "nested.pth")
    assert set(state) == {"fc.weight", "fc.bias"} and "'state_dict' entry" in notes[0]
    torch.save({f"module.{k}": v for k, v in sd.items()}, tmp_path / "dp.bin")
    state, notes = load_torch_checkpoint(tmp_path / "dp.bin", model_keys=sd)
    assert set(state) == set(sd) and "module." in notes[0]
    torch.save([1, 2], tmp_path / "list.pt")
    with pytest.raises(CheckpointError, match="not a state dict"):
        load_torch_checkpoint(tmp_path / "list.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="weights_only"):
        load_torch_checkpoint(tmp_path / "junk.pt")


@pytest.mark.parametrize("args, message", [
    (["net.npz", "-o", "o.ckpt"], "a checkpoint is one of"),
    (["missing.pt", "-o", "o.ckpt"], "not found"),
    (["net.pt", "-o", "o.bin"], "MindSpore .ckpt"),
    (["net.pt", "-o", "nowhere/o.ckpt"], "no such directory"),
])
def test_usage_errors(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net.pt").write_bytes(b"")
    (tmp_path / "net.npz").write_bytes(b"")
    assert main(["weights", *args, "--source", "net.py", "--model", "Net()"]) == 2
    assert message in capsys.readouterr().err


def test_safetensors_without_the_package_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "net.safetensors").write_bytes(b"")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "safetensors" else real(name, *a))
    with pytest.raises(SpecError, match=r"needs the safetensors package \(pip install safetensors\)"):
        convert_weights(tmp_path / "net.safetensors", tmp_path / "o.ckpt", source=tmp_path / "net.py", model="Net()")


# -- end to end ---------------------------------------------------------------------------

def _cli(args, cwd):
    return cli_here.run(["weights", *args], cwd)  # in this process: torch and MindSpore are imported here already


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A trained-looking Net saved four ways, and the command run on each."""
    torch = pytest.importorskip("torch")
    tmp = tmp_path_factory.mktemp("weights")
    (tmp / "net.py").write_text(NET, encoding="utf-8")
    (tmp / "net_ms.py").write_text(convert_code(NET, filename="net.py").code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("_weights_net", tmp / "net.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    net = module.Net()
    with torch.no_grad():  # statistics that differ from MindSpore's initial ones
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 1.5)
        net.bn.weight.uniform_(0.5, 1.5)
    net.eval()
    sd = net.state_dict()
    torch.save(sd, tmp / "net.pt")
    partial = dict(sd, **{"extra.weight": torch.zeros(3)})
    del partial["head.bias"]
    torch.save(partial, tmp / "partial.pt")
    from safetensors.torch import save_file

    save_file(sd, str(tmp / "net.safetensors"))
    model = ["--source", "net.py", "--model", "Net()"]
    commands = {
        "pt": ["net.pt", "-o", "net.ckpt", *model],  # converted on the fly
        "safetensors": ["net.safetensors", "-o", "st.ckpt", *model, "--converted", "net_ms.py"],
        "partial": ["partial.pt", "-o", "partial.ckpt", *model, "--converted", "net_ms.py"],
        "allowed": ["partial.pt", "-o", "allowed.ckpt", *model, "--converted", "net_ms.py", "--allow-partial", "--json"],
    }
    runs = {name: _cli(args, tmp) for name, args in commands.items()}  # one at a time
    tokens = np.random.RandomState(0).randint(0, 16, (4, 7)).astype(np.int64)
    with torch.no_grad():
        expected = net(torch.from_numpy(tokens)).numpy()
    return tmp, runs, tokens, expected


def _ms_outputs(tmp: Path, ckpt: str, tokens: np.ndarray) -> tuple[np.ndarray, list]:
    import mindspore

    spec = importlib.util.spec_from_file_location("_weights_net_ms", tmp / "net_ms.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    net = module.Net()
    not_loaded, _ = mindspore.load_param_into_net(net, mindspore.load_checkpoint(str(tmp / ckpt)))
    net.set_train(False)
    return net(mindspore.Tensor(tokens)).asnumpy(), not_loaded


@pytest.mark.framework
@needs_frameworks
@pytest.mark.parametrize("name, ckpt", [("pt", "net.ckpt"), ("safetensors", "st.ckpt")])
def test_a_converted_checkpoint_reproduces_torch(work, name, ckpt):
    tmp, runs, tokens, expected = work
    proc = runs[name]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "renamed, 1 reshaped), 1 dropped by design" in proc.stdout and f"wrote {ckpt}" in proc.stdout
    assert "bn.num_batches_tracked" in proc.stdout
    got, not_loaded = _ms_outputs(tmp, ckpt, tokens)
    assert not_loaded == []
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)


@pytest.mark.framework
@needs_frameworks
def test_a_partial_checkpoint_is_refused(work):
    tmp, runs, _, _ = work
    proc = runs["partial"]
    assert proc.returncode == 1
    assert "unmapped: extra.weight: the model has no tensor of this name" in proc.stdout
    assert "missing from the checkpoint: head.bias" in proc.stdout
    assert "unfilled MindSpore parameter: head.bias" in proc.stdout
    assert "refused: partial.ckpt would be a partial checkpoint (write it anyway with --allow-partial)" in proc.stdout
    assert not (tmp / "partial.ckpt").exists()
    assert [p.name for p in tmp.iterdir() if "partial" in p.name and p.suffix == ".ckpt"] == []


@pytest.mark.framework
@needs_frameworks
def test_allow_partial_writes_what_maps(work):
    tmp, runs, _, _ = work
    proc = runs["allowed"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["written"] and not data["complete"]
    assert data["unmapped"] == [["extra.weight", "the model has no tensor of this name"]]
    assert data["missing"] == ["head.bias"] and data["unfilled"] == ["head.bias"]
    assert ["embed.weight", "embed.embedding_table"] in data["copies"]
    import mindspore

    written = mindspore.load_checkpoint(str(tmp / "allowed.ckpt"))
    assert "head.bias" not in written and "bn.moving_mean" in written and "bn.num_batches_tracked" not in written



@pytest.mark.framework
def test_a_module_writing_its_own_state_dict_is_taken_by_what_it_holds():
    """opacus' DPMultiheadAttention's form: three layers held, torch's fused layout given by
    its own state_dict; the weights go by the tensors it holds, as the converted cell has them."""
    import torch
    import torch.nn as nn

    from transpile.parity.weights import torch_state, weight_map

    class FusedLayout(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(4, 4)
            self.k = nn.Linear(4, 4)
            self.register_buffer("steps", torch.zeros(1))
            self.register_buffer("scratch", torch.zeros(1), persistent=False)

        def state_dict(self, destination=None, prefix="", keep_vars=False):
            return {prefix + "in_proj_weight": torch.cat([self.q.weight, self.k.weight])}

    model = nn.Sequential(nn.Linear(4, 4), FusedLayout())
    state = torch_state(model)
    assert sorted(state) == ["0.bias", "0.weight", "1.k.bias", "1.k.weight", "1.q.bias", "1.q.weight", "1.steps"]
    assert state["1.q.weight"] is not model[1].q.weight and torch.equal(state["1.q.weight"], model[1].q.weight)
    assert sorted(weight_map(model).mapping) == sorted(state)
