"""Differential tests for the rest of a training script: tables/training_script.toml (devices,
CUDA queries, seeds, GradScaler), the grad modes (MS213), checkpoints (torch.save/torch.load,
optimizer state), train mode where a model is built and the cleanup of device moves (MS214).

Torch runs on CPU here: CUDA calls that would raise without a GPU are replaced on torch's
side by what they do on a GPU machine for the values compared (nothing: they only wait or
free memory)."""
from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest

from transpile import convert_code
from transpile.rewrites import pipeline_of
from transpile.rewrites.passes.api_calls import ApiCalls
from transpile.rewrites.passes.grad_mode import GradMode
from transpile.rewrites.passes.layer_values import LayerValues

from .harness import DEFAULT_HEADER, Case, Suite, arr, call_forms, table_tests
from .spellings import import_of, module_paths, respelled, with_import

X = arr(3, 4)
CASES: list[Case] = []


def case(api: str, code: str, inputs=(), form: str = "", **opts) -> None:
    CASES.append(Case(api, code, tuple(inputs), form, **opts))


# -- devices: a device is its name; CUDA answers as without a GPU ---------------------------------
for form, args in (("positional", "'cpu', 0"), ("keyword", "type='cpu', index=0"), ("defaults", "'cpu'"),
                   ("choice", "'cuda' if torch.cuda.is_available() else 'cpu'"), ("variable", "str(a.dtype)[:0] + 'cpu'")):
    case("torch.device", f"str(torch.device({args}))", (X,), form)
case("torch.device", "d = torch.device('cpu')\n        return f'on {d}'", (), "f-string")
# grad modes (MS213): inference_mode's block runs as it is; its values are cut from the graph
case("torch.inference_mode", "with torch.inference_mode():\n            b = a * 2\n        return b + 1", (X,), "with")
case("torch.inference_mode", "with torch.inference_mode(mode=True):\n            b = a.sum(0)\n        return b", (X,), "keyword")
case("torch.inference_mode", "with torch.inference_mode(False):\n            b = a - 1\n        return b", (X,), "positional")
# the module path torch re-exports its device type by (tables/reexports.toml)
case("torch.device", "str(torch.nested.Device('cpu')), str(torch.nested.Device(type='cpu', index=1))", (), "module-path")
case("torch.cuda.is_available", "torch.cuda.is_available()", (), "call")
case("torch.cuda.device_count", "torch.cuda.device_count()", (), "call")
case("torch.accelerator.is_available", "torch.accelerator.is_available()", (), "call")
case("torch.accelerator.device_count", "torch.accelerator.device_count()", (), "call")
case("torch.accelerator.current_accelerator", "torch.accelerator.current_accelerator()", (), "call")
case("torch.accelerator.current_accelerator", "torch.accelerator.current_accelerator(check_available=True)", (), "keyword")
case("torch.accelerator.current_accelerator", "torch.accelerator.current_accelerator(False)", (), "positional")
case("torch.backends.mps.is_available", "torch.backends.mps.is_available()", (), "call")
case("torch.cuda.current_device", "torch.cuda.current_device()", (), "call")
case("torch.get_default_device", "str(torch.get_default_device())", (), "call")
case("torch.get_default_device", "2 if torch.get_default_device() == torch.device('cpu') else 1", (), "compared")
case("torch.backends.mps.is_built", "torch.backends.mps.is_built()", (), "call")
case("torch.backends.cuda.is_built", "torch.backends.cuda.is_built()", (), "call")
case("torch.xpu.is_available", "torch.xpu.is_available()", (), "call")
case("torch.xpu.device_count", "torch.xpu.device_count()", (), "call")
case("torch.xpu.is_available", "2 if hasattr(torch, 'xpu') and torch.xpu.is_available() else 1", (), "guard")
# torch.distributed answers as without a process group: the single-process path (torch here
# has distributed support but no group initialised, so each form below takes that path too)
case("torch.distributed.is_initialized", "torch.distributed.is_initialized()", (), "call")
case("torch.distributed.is_available", "2 if torch.distributed.is_available() and torch.distributed.is_initialized() else 1",
     (), "guard")
case("torch.distributed.is_initialized",
     "if torch.distributed.is_initialized():\n            return 2\n        return 1", (), "guard")
call_forms(CASES, "torch.cuda.is_bf16_supported", "including_emulation=True", req=0)
case("torch.cuda.get_device_name", "isinstance(torch.cuda.get_device_name(), str)", (), "defaults")
case("torch.cuda.get_device_name", "isinstance(torch.cuda.get_device_name(0), str)", (), "positional")
case("torch.cuda.get_device_name", "isinstance(torch.cuda.get_device_name(device=0), str)", (), "keyword")
# housekeeping: the statement goes, the computation around it is unchanged
for form, args in (("defaults", ""), ("positional", "0"), ("keyword", "device=0")):
    case("torch.cuda.synchronize", f"torch.cuda.synchronize({args})\n        return a * 2", (X,), form)
    case("torch.cuda.set_device", f"torch.cuda.set_device({args or 0})\n        return a + 1", (X,), form)
for form, args in (("positional", "'high'"), ("keyword", "precision='highest'"), ("medium", "'medium'")):
    case("torch.set_float32_matmul_precision", f"torch.set_float32_matmul_precision({args})\n"
         "        out = a @ a.T\n        torch.set_float32_matmul_precision('highest')\n        return out", (X,), form)
# a device held in a variable: moving a tensor to it changes nothing
case("torch.device", "dev = torch.device('cpu')\n        return a.to(dev) * 2", (X,), "moved-to")
for api in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
    for form, args in (("defaults", ""), ("positional", "0"), ("keyword", "device=0")):
        case(f"torch.cuda.{api}", f"torch.cuda.{api}({args}) / 2**20", (), form)
for form, args in (("defaults", ""), ("positional", "0"), ("keyword", "device=0")):
    case("torch.cuda.reset_peak_memory_stats", f"torch.cuda.reset_peak_memory_stats({args})\n        return a", (X,), form)
case("torch.cuda.empty_cache", "torch.cuda.empty_cache()\n        return a - 1", (X,), "call")
case("torch.cuda.ipc_collect", "torch.cuda.ipc_collect()\n        return a * 3", (X,), "call")
for form, args in (("positional", "False"), ("keyword", "mode=False"), ("keyword-only", "False, warn_only=True")):
    case("torch.use_deterministic_algorithms", f"torch.use_deterministic_algorithms({args})\n        return a", (X,), form)
# CUDA's seed with no torch.manual_seed in the file: the script's seed (MindSpore's draws are
# its own: shapes and dtypes compared; test_cuda_seed_alone_seeds_the_script checks the seeding)
for api in ("torch.cuda.manual_seed", "torch.cuda.manual_seed_all"):
    for form, args in (("positional", "3"), ("keyword", "seed=3"), ("value", "int(a.shape[0])")):
        case(api, f"{api}({args})\n        return torch.rand(2, 3)", (X,), form, random=True)

# -- GradScaler -> DynamicLossScaler: the scale it multiplies by ---------------------------------
for form, args in (("positional", "'cpu', 8.0, 2.0, 0.5, 3, True"), ("defaults", "'cpu'"),
                   ("keyword", "device='cpu', init_scale=8.0, growth_factor=2.0, backoff_factor=0.5, "
                               "growth_interval=3, enabled=True"),
                   ("disabled", "'cpu', enabled=False")):
    case("torch.amp.GradScaler", f"torch.amp.GradScaler({args}).scale(a)", (X,), form)
for api in ("torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler"):
    case(api, f"{api}().scale(a)", (X,), "defaults")
    case(api, f"{api}(4.0, 2.0, 0.5, 10).scale(a)", (X,), "positional")
    case(api, f"{api}(init_scale=32.0, growth_interval=5, enabled=True).scale(a)", (X,), "keyword")


def _module_path_cases(cases: list[Case]) -> list[Case]:
    """Each entry's first case, the entry called through another module that holds it
    (``from torch.cuda.memory import empty_cache``, reexports.toml), as test_generated_forms
    derives the other Suites' (this one is left out there: its patches must apply)."""
    paths, derived = module_paths(), {}
    for c in cases:
        if c.api in paths and c.api not in derived:
            code = respelled(c.code, c.api, paths[c.api], DEFAULT_HEADER)
            if code is not None:
                derived[c.api] = dataclasses.replace(c, code=with_import(code, import_of(paths[c.api])), form="module-path")
    return list(derived.values())


CASES += _module_path_cases(CASES)
SUITE = Suite(CASES)
_, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, ["training_script.toml"])

# what the CUDA calls do on a GPU machine, for the values compared (no GPU here)
_ON_A_GPU = {"current_device": lambda: 0, "get_device_name": lambda device=None: "GPU",
             "synchronize": lambda device=None: None, "ipc_collect": lambda: None,
             "set_device": lambda device: None, "reset_peak_memory_stats": lambda device=None: None}


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_api(case: Case, monkeypatch) -> None:
    import torch

    # torch.cuda's functions, also where a module-path case reaches them (torch.cuda.random)
    holders = [m for n, m in sorted(sys.modules.items()) if n == "torch.cuda" or n.startswith("torch.cuda.")]
    for name, answer in _ON_A_GPU.items():
        for module in holders:
            if hasattr(module, name):
                monkeypatch.setattr(module, name, answer)
    if case.api == "torch.cuda.amp.GradScaler":  # without CUDA torch builds it disabled
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    SUITE.check(case)


def _run(source: str, name: str = "f", passes=None) -> dict:
    """The converted ``source``'s namespace (whole pipeline, or only ``passes``, then LayerValues,
    which writes the emitted definitions, and Imports)."""
    if passes is None:
        result = convert_code(source)
    else:
        result = pipeline_of(*passes, LayerValues).run(source, "snippet.py")
    assert not result.failed and "# transpile:" not in result.code, result.code
    namespace: dict = {"__name__": f"converted_{name}"}  # value_and_grad reads the function's module name
    exec(compile(result.code, f"<converted {name}>", "exec"), namespace)
    return namespace


def _torch(source: str) -> dict:
    namespace: dict = {"__name__": "torch_snippet"}
    exec(compile(source, "<torch>", "exec"), namespace)
    return namespace


# -- MS213: a no_grad block in differentiated code ------------------------------------------------
STEP = '''
import torch


def step(w, x, backward=False):
    with torch.no_grad():
        c = w * w
    loss = (w * x).sum() + (c * w).sum()
    if backward:
        loss.backward()
    return loss
'''


def test_no_grad_block_in_a_differentiated_function_gives_torchs_gradients() -> None:
    import mindspore
    import torch

    w0, x = np.array([0.5, 1.0, 2.0], np.float32), np.array([1.0, 2.0, 3.0], np.float32)
    w = torch.tensor(w0, requires_grad=True)
    _torch(STEP)["step"](w, torch.tensor(x), backward=True)
    step = _run(STEP, passes=(GradMode, ApiCalls))["step"]
    grad = mindspore.grad(lambda v: step(v, mindspore.Tensor(x)))(mindspore.Tensor(w0))
    np.testing.assert_allclose(grad.asnumpy(), w.grad.numpy(), rtol=1e-6)
    # the block dropped instead (no backward in the function: flattened) differentiates c too
    flat = _run(STEP.replace("    if backward:\n        loss.backward()\n", ""), passes=(GradMode, ApiCalls))["step"]
    wrong = mindspore.grad(lambda v: flat(v, mindspore.Tensor(x)))(mindspore.Tensor(w0))
    assert not np.allclose(wrong.asnumpy(), w.grad.numpy())


FROZEN = '''
import torch
import torch.nn as nn


class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(3, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        with torch.no_grad():
            features = self.backbone(x)
        return self.head(features)
'''


def test_no_grad_in_a_modules_forward_keeps_the_frozen_part_out_of_the_gradient() -> None:
    import mindspore
    import torch

    x = arr(5, 3)
    torch_model = _torch(FROZEN)["Frozen"]()
    torch_model(torch.tensor(x)).sum().backward()
    model = _run(FROZEN)["Frozen"]()
    for name in ("backbone", "head"):  # torch's initial weights
        for attr in ("weight", "bias"):
            value = getattr(getattr(torch_model, name), attr).detach().numpy()
            getattr(getattr(model, name), attr).set_data(mindspore.Tensor(value))
    grads = mindspore.grad(lambda v: model(v).sum(), None, model.trainable_params())(mindspore.Tensor(x))
    by_name = dict(zip((p.name for p in model.trainable_params()), grads))
    assert torch_model.backbone.weight.grad is None
    np.testing.assert_array_equal(by_name["backbone.weight"].asnumpy(), 0)
    np.testing.assert_allclose(by_name["head.weight"].asnumpy(), torch_model.head.weight.grad.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_no_grad_decorated_forward_gives_no_gradient() -> None:
    import mindspore

    source = FROZEN.replace("    def forward(self, x):\n        with torch.no_grad():\n            features = self.backbone(x)\n",
                            "    @torch.no_grad()\n    def forward(self, x):\n        features = self.backbone(x)\n")
    assert "@torch.no_grad()" in source
    model = _run(source)["Frozen"]()
    grads = mindspore.grad(lambda v: model(v).sum(), None, model.trainable_params())(mindspore.Tensor(arr(5, 3)))
    assert all(not g.asnumpy().any() for g in grads)  # torch: no gradient at all


def test_set_grad_enabled_with_a_flag_cuts_the_gradient_when_false() -> None:
    import mindspore

    source = STEP.replace("with torch.no_grad():", "with torch.set_grad_enabled(flag):").replace(
        "def step(w, x, backward=False):", "def step(w, x, flag, backward=False):")
    step = _run(source, passes=(GradMode, ApiCalls))["step"]
    w0, x = mindspore.Tensor(np.array([0.5, 1.0], np.float32)), mindspore.Tensor(np.array([1.0, 2.0], np.float32))
    cut = mindspore.grad(lambda v: step(v, x, False))(w0).asnumpy()
    kept = mindspore.grad(lambda v: step(v, x, True))(w0).asnumpy()
    np.testing.assert_allclose(cut, x.asnumpy() + w0.asnumpy() ** 2)  # d/dw of w*x + c*w, c constant
    np.testing.assert_allclose(kept, x.asnumpy() + 3 * w0.asnumpy() ** 2)


def test_autocast_block_computes_in_float32_as_torch_without_autocast() -> None:
    import mindspore
    import torch

    source = ("import torch\n\n\ndef f(a, b):\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
              "        y = torch.matmul(a, b)\n    return y\n")
    a, b = arr(3, 4), arr(4, 2)
    expected = torch.matmul(torch.tensor(a), torch.tensor(b)).numpy()
    actual = _run(source)["f"](mindspore.Tensor(a), mindspore.Tensor(b))
    assert actual.dtype == mindspore.float32
    np.testing.assert_allclose(actual.asnumpy(), expected, rtol=1e-5, atol=1e-6)


# -- checkpoints ---------------------------------------------------------------------------------
NET = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(self.fc(x))
'''


def test_state_dict_round_trip(tmp_path) -> None:
    import mindspore

    source = NET + '''

def round_trip(x, path):
    model = Net()
    model.train()
    model(x)
    model.eval()
    torch.save(model.state_dict(), path)
    restored = Net()
    restored.load_state_dict(torch.load(path, map_location="cpu"))
    restored.eval()
    return model(x), restored(x)
'''
    x = mindspore.Tensor(arr(5, 3))
    before, after = _run(source)["round_trip"](x, str(tmp_path / "net.pt"))
    np.testing.assert_array_equal(before.asnumpy(), after.asnumpy())
    assert (tmp_path / "net.pt.ckpt").exists()


STRICT = NET + '''

def load(path, strict):
    model = Net()
    state = model.state_dict()
    del state["fc.bias"]
    torch.save(state, path)
    other = Net()
    other.load_state_dict(torch.load(path), strict=strict)
    return other
'''


def test_strict_load_raises_on_a_missing_key_as_torch(tmp_path) -> None:
    with pytest.raises(RuntimeError, match="fc.bias"):
        _torch(STRICT)["load"](str(tmp_path / "t.pt"), True)
    load = _run(STRICT)["load"]
    with pytest.raises(RuntimeError, match="fc.bias"):
        load(str(tmp_path / "m.pt"), True)
    load(str(tmp_path / "m2.pt"), False)  # strict=False loads the rest, as torch does


RESUME = '''
import torch
import torch.nn as nn


def run(path, before, after, x, t, restore_optimizer=True):
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    for _ in range(before):
        optimizer.zero_grad()
        loss = criterion(model(x), t)
        loss.backward()
        optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": before,
                "config": {"name": "lin", "sizes": (3, 2)}}, path)
    model = nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    if restore_optimizer:
        optimizer.load_state_dict(checkpoint["optimizer"])
    for _ in range(after):
        optimizer.zero_grad()
        loss = criterion(model(x), t)
        loss.backward()
        optimizer.step()
    return model.weight, checkpoint["epoch"] + 1, checkpoint["config"]
'''


def test_checkpoint_dict_resume_equals_a_straight_run(tmp_path) -> None:
    """torch.save of {model, optimizer, epoch, config} and its load: 3 steps, save, load into
    a fresh model and optimizer, 2 steps == 5 steps straight (Adam's moments restored)."""
    import mindspore
    import torch

    x, t = arr(4, 3), arr(4, 2)
    torch_run, ms_run = _torch(RESUME)["run"], _run(RESUME)["run"]
    for run, wrap, read in ((torch_run, torch.tensor, lambda w: w.detach().numpy()),
                            (ms_run, mindspore.Tensor, lambda w: w.asnumpy())):
        resumed, epoch, config = run(str(tmp_path / "r.pt"), 3, 2, wrap(x), wrap(t))
        straight, _, _ = run(str(tmp_path / "s.pt"), 5, 0, wrap(x), wrap(t))
        assert epoch == 4 and type(epoch) is int and config == {"name": "lin", "sizes": (3, 2)}
        np.testing.assert_allclose(read(resumed), read(straight), atol=1e-6)
        # the control: without the optimizer's state the run differs
        fresh, _, _ = run(str(tmp_path / "f.pt"), 3, 2, wrap(x), wrap(t), restore_optimizer=False)
        assert np.abs(read(fresh) - read(straight)).max() > 1e-3


SCHEDULER_RESUME = '''
import torch
import torch.nn as nn


def make(kind, model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if kind == "step":
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    elif kind == "lambda":
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 1.0 / (epoch + 1))
    elif kind == "cosine":
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4, eta_min=0.01)
    else:
        scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 3], gamma=0.3)
    return optimizer, scheduler


def run(kind, path, before, after, x, t, restore_scheduler=True):
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    optimizer, scheduler = make(kind, model)
    lrs = []
    for _ in range(before):
        optimizer.zero_grad()
        loss = ((model(x) - t) ** 2).mean()
        loss.backward()
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict()}, path)
    model = nn.Linear(3, 2)
    optimizer, scheduler = make(kind, model)
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if restore_scheduler:
        scheduler.load_state_dict(checkpoint["scheduler"])
    for _ in range(after):
        optimizer.zero_grad()
        loss = ((model(x) - t) ** 2).mean()
        loss.backward()
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    return model.weight, lrs
'''


@pytest.mark.parametrize("kind", ["step", "lambda", "cosine", "multistep"])
def test_scheduler_state_resumes_as_torchs(kind, tmp_path) -> None:
    """scheduler.state_dict() saved beside the model and optimizer, loaded into fresh ones:
    2 steps + 3 steps gives torch's learning rates, and the weights of 5 steps straight (the
    two sides draw other initial weights); without the scheduler's state the learning rates
    differ (the control)."""
    import mindspore
    import torch

    x, t = arr(4, 3), arr(4, 2)
    torch_run, ms_run = _torch(SCHEDULER_RESUME)["run"], _run(SCHEDULER_RESUME)["run"]
    _, expected_lrs = torch_run(kind, str(tmp_path / "t.pt"), 2, 3, torch.tensor(x), torch.tensor(t))
    weight, lrs = ms_run(kind, str(tmp_path / "m.pt"), 2, 3, mindspore.Tensor(x), mindspore.Tensor(t))
    np.testing.assert_allclose(lrs, expected_lrs, rtol=1e-6)
    straight_weight, straight_lrs = ms_run(kind, str(tmp_path / "s.pt"), 5, 0, mindspore.Tensor(x), mindspore.Tensor(t))
    np.testing.assert_allclose(lrs, straight_lrs, rtol=1e-6)
    np.testing.assert_allclose(weight.asnumpy(), straight_weight.asnumpy(), atol=1e-6)
    _, fresh_lrs = ms_run(kind, str(tmp_path / "f.pt"), 2, 3, mindspore.Tensor(x), mindspore.Tensor(t),
                          restore_scheduler=False)
    assert not np.allclose(fresh_lrs, expected_lrs, rtol=1e-6)


def test_optimizer_state_with_an_unknown_key_raises() -> None:
    source = '''
import torch
import torch.nn as nn


def load():
    model = nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    state = optimizer.state_dict()
    state["unknown"] = state["weight"]
    optimizer.load_state_dict(state)
'''
    with pytest.raises(RuntimeError, match="unknown"):
        _run(source)["load"]()


# -- MS214: train mode where a model is built; device moves ---------------------------------------
TRAIN = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


def build(device):
    model = Net().to(device)
    return model, model.training


def step(model, x):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
'''


def test_a_model_built_in_a_training_script_starts_in_train_mode() -> None:
    import mindspore

    model, training = _torch(TRAIN)["build"]("cpu")
    assert training
    namespace = _run(TRAIN)
    model, training = namespace["build"]("cpu")
    assert training is True
    x = mindspore.Tensor(np.ones((64, 4), np.float32))
    dropped = (model.drop(x).asnumpy() == 0).mean()
    assert 0.3 < dropped < 0.7  # Dropout active, as in a fresh torch Module
    # a file that does not train: no train mode added (MindSpore's eval default, what inference wants)
    assert _run(TRAIN[:TRAIN.index("def step")])["build"]("cpu")[1] is False


def test_device_moves_leave_nothing_behind() -> None:
    source = '''
import torch


def place(model, x, y):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True
    model.to(device)
    x, y = x.to(device), y.to(device, non_blocking=True)
    torch.cuda.empty_cache()
    return f"{device}", x.cpu() + y, device.type
'''
    result = convert_code(source)
    assert ".to(" not in result.code and "cudnn" not in result.code and "x, y = x, y" not in result.code
    assert "import torch" not in result.code and "torch." not in result.code, result.code
    import mindspore

    text, total, kind = _run(source)["place"](None, mindspore.Tensor(1.0), mindspore.Tensor(2.0))
    assert text == "cpu" and float(total) == 3.0 and kind == "cpu"


def test_cuda_seed_alone_seeds_the_script() -> None:
    source = "import torch\n\n\ndef draw():\n    torch.cuda.manual_seed_all(5)\n    return torch.rand(4)\n"
    draw = _run(source)["draw"]
    np.testing.assert_array_equal(draw().asnumpy(), draw().asnumpy())
    # beside torch.manual_seed (mindspore.set_seed seeds everything) it has nothing left to do
    both = convert_code(source.replace("    torch.cuda", "    torch.manual_seed(5)\n    torch.cuda")).code
    assert both.count("set_seed") == 1 and "cuda" not in both, both


def test_item_of_a_loss_is_converted_without_a_note() -> None:
    import mindspore
    import torch

    source = ("import torch\nimport torch.nn as nn\n\n\ndef value(out, target):\n    criterion = nn.MSELoss()\n"
              "    loss = criterion(out, target)\n    return loss.item()\n")
    result = convert_code(source)
    assert not [d for d in result.diagnostics if ".item()" in d.message], result.diagnostics
    a, b = arr(3, 2), arr(3, 2)
    expected = _torch(source)["value"](torch.tensor(a), torch.tensor(b))
    actual = _run(source)["value"](mindspore.Tensor(a), mindspore.Tensor(b))
    assert type(actual) is float and abs(actual - expected) < 1e-6
