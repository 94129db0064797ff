"""The seed pages' PyTorch snippets, converted by the tool, run against the originals.

Each snippet of the migration-guide pages (/work/shared/seeds: 000 "Network
Construction", 002 the same side by side with PyTorch, 003 "Model Analysis and
Preparation", 004 "Constructing MindSpore Network"; 001 is 000 in Chinese) is kept in
``tests/data/seeds/<page>_<name>.py`` as close to the page as it can be while running on
its own: the imports it needs and the page's own minimal inputs, nothing else.

Every test converts the snippet with ``transpile.convert_code`` (no hand-written
MindSpore twin exists anywhere here), executes the torch file and the converted file
as scripts in fresh namespaces (same numpy seed, same working directory), and compares
what they computed: 1e-5 (fp32) unless the test says why not. Where the snippet builds
layers whose weights are random, the torch weights are copied into the converted cells
with ``transpile.parity.weights.copy_weights`` first.

``STATUS`` says, per snippet, whether it matches, is compared partially (and why), or
cannot be converted (and why); ``test_every_snippet_has_a_status`` keeps it complete.

Not kept as snippets: the MindSpore-only code of the pages (MyCell, ClassLoss_ms,
SigmoidFoaclLoss, MySampler, the to_float/initialisation/checkpoint examples), 003's
``for batch_idx, (data, target) in enumerate(data_loader)`` (no torch API, and no
data_loader on the page), and 002's MyCell_pt and unit test, which repeat 000's
(``SAME_AS``). 004 shows the list-of-layers pitfall in MindSpore only
(``[nn.Conv2d(1, 3), nn.BatchNorm(3), nn.ReLU()]``); ``004_layer_list`` is that pattern as
torch code writes it. Three 002 snippets come from the page's prose, where it names
torch APIs without showing code (training step, train/eval, buffers); their files say so.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import io
import re
from pathlib import Path

import numpy as np
import pytest

SEEDS = Path(__file__).resolve().parent / "data" / "seeds"
SNIPPETS = sorted(p.stem for p in SEEDS.glob("*.py"))

MATCHES = "matches"
PARTIAL = "compared partially"
UNCONVERTIBLE = "cannot be converted"

STATUS: dict[str, tuple[str, str]] = {
    "000_mycell_pt": (MATCHES, "parameter names and shapes, and the forward pass on copied weights"),
    "000_mycell_unit_test": (
        MATCHES,
        "the page's unit test: the converted init loop sets the conv to 0.1 and y_pt matches torch on the "
        "same x (each script draws its own x: MindSpore's initializers also draw from numpy's generator)",
    ),
    "000_box_select_torch": (
        MATCHES,
        "box[mask] is left a selection (both modes run it): the kept rows, on the page's inputs, none kept, "
        "all kept and more rows",
    ),
    "000_class_loss_pt": (MATCHES, "the page's inputs: the top-70% loss (torch.topk with a tensor k, only "
                                   "averaged -> sort and rank mask, MS302)"),
    "002_network_to_dtype": (MATCHES, "forward and loss on copied weights after the .to(float32) calls"),
    "002_named_parameters": (MATCHES, "what the snippet prints (parameter names, the frozen bias left out)"),
    "002_state_dict_save_load": (MATCHES, "the parameters written, saved, loaded into a new layer, and its output"),
    "002_init_uniform": (
        PARTIAL, "random: shape, dtype and the [0, 1) range of the initialised tensor (the draws differ)"),
    "002_add_module": (
        MATCHES,
        "submodule names in named_modules order and the forward pass on copied weights (the printed "
        "types are each framework's own classes)",
    ),
    "002_generator_seed": (
        PARTIAL, "random: the seeds the generators hold and the copied state (the numbers drawn differ)"),
    "002_training_step": (
        MATCHES,
        "train_step on copied weights (MS211: a forward function, value_and_grad and optimizer(grads)): "
        "the loss of three steps and the weights after them",
    ),
    "002_train_eval": (
        PARTIAL,
        "eval mode is deterministic and compared on copied weights; train mode applies dropout "
        "(random): shape and dtype only; the training flags are compared",
    ),
    "002_buffer": (MATCHES, "parameter and buffer names and the forward pass"),
    "003_sigmoid_focal_loss": (
        MATCHES, "the page's four test_compare calls (mean, sum, avg_factor, none) on the page's inputs"),
    "004_layer_list": (
        MATCHES, "the plain list of layers becomes nn.CellList; forward on copied weights (eval mode)"),
}
SAME_AS = {  # snippets that appear on more than one page (kept once)
    "000_mycell_pt": "002 'Network Basic Unit: Cell' (identical code)",
    "000_mycell_unit_test": "002 'Unit Test' (identical code)",
}
ATOL = RTOL = 1e-5


# -- converting and running -----------------------------------------------------------
@functools.lru_cache(maxsize=None)
def source(name: str) -> str:
    return (SEEDS / f"{name}.py").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def converted(name: str):
    from transpile import convert_code

    return convert_code(source(name), filename=f"{name}.py")


def _exec(code: str, label: str, seed: int) -> tuple[dict, str]:
    import mindspore
    import torch

    np.random.seed(seed)
    torch.manual_seed(seed)
    mindspore.set_seed(seed)
    ns: dict = {"__name__": f"seed_snippet_{label}"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"<{label}>", "exec"), ns)
    return ns, out.getvalue()


@pytest.fixture
def run(tmp_path, monkeypatch):
    """``run(name)`` -> (torch namespace, torch stdout, MindSpore namespace, MindSpore
    stdout): both files executed as scripts from an empty working directory."""
    monkeypatch.chdir(tmp_path)

    def _run(name: str, seed: int = 1):
        result = converted(name)
        assert not result.failed, [d.format() for d in result.diagnostics]
        t_ns, t_out = _exec(source(name), f"{name}.py", seed)
        m_ns, m_out = _exec(result.code, f"{name}.py converted", seed)
        return t_ns, t_out, m_ns, m_out

    return _run


# -- comparing ------------------------------------------------------------------------
def _dtype(dtype) -> str:
    return str(dtype).removeprefix("torch.").lower()


def assert_same(t, m, atol: float = ATOL, rtol: float = RTOL, what: str = "result") -> None:
    """A torch tensor (or array) against a MindSpore tensor: shape, dtype, values."""
    import mindspore

    assert isinstance(m, (mindspore.Tensor, np.ndarray)), f"{what}: MindSpore gave {type(m).__name__}"
    t_np = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
    m_np = m.asnumpy() if isinstance(m, mindspore.Tensor) else m
    assert t_np.shape == m_np.shape, f"{what}: shape {t_np.shape} != {m_np.shape}"
    assert t_np.dtype == m_np.dtype, f"{what}: dtype {t_np.dtype} != {m_np.dtype}"
    np.testing.assert_allclose(m_np, t_np, atol=atol, rtol=rtol, err_msg=what)


def copy_into(t_module, m_cell) -> None:
    from transpile.parity.weights import copy_weights

    unmapped = copy_weights(t_module, m_cell)
    assert not unmapped, f"torch tensors with no MindSpore parameter: {unmapped}"


def param_names_and_shapes(t_module, m_cell) -> tuple[list, list]:
    return ([(n, tuple(p.shape)) for n, p in t_module.named_parameters()],
            [(n, tuple(p.shape)) for n, p in m_cell.parameters_and_names()])


def forward_both(t_module, m_cell, *inputs: np.ndarray):
    """Both in eval mode on the same inputs. int64 class labels reach the MindSpore cell
    as int32: where a converted script calls a loss, the converter casts them (MS201's
    note on CrossEntropyLoss); here the test calls the loss itself."""
    import mindspore
    import torch

    t_module.eval()
    m_cell.set_train(False)
    with torch.no_grad():
        t_out = t_module(*(torch.from_numpy(x.copy()) for x in inputs))
    m_out = m_cell(*(mindspore.Tensor(x.astype(np.int32) if x.dtype == np.int64 else x.copy()) for x in inputs))
    return t_out, m_out


# -- every snippet ----------------------------------------------------------------------
def test_every_snippet_has_a_status():
    assert set(SNIPPETS) == set(STATUS), (
        f"snippets without a status: {sorted(set(SNIPPETS) - set(STATUS))}; "
        f"statuses without a snippet: {sorted(set(STATUS) - set(SNIPPETS))}")
    assert set(SAME_AS) <= set(STATUS)


def _torch_imports(code: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "torch"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            found.append(node.module)
    return found


@pytest.mark.parametrize("name", SNIPPETS)
def test_converted_snippet_is_valid_python(name):
    """Everything converts to valid Python; what cannot be converted carries a marker."""
    result = converted(name)
    assert not result.failed and result.changed
    ast.parse(result.code)
    assert not result.errors, [d.format() for d in result.errors]
    markers = re.findall(r"# transpile: .*", result.code)
    if STATUS[name][0] == UNCONVERTIBLE:
        assert markers, "an unconvertible snippet must say so with a '# transpile:' marker"
    else:
        assert not markers, markers
        assert not _torch_imports(result.code), "the converted snippet still imports torch"


# -- page 000: Network Construction ---------------------------------------------------------
@pytest.mark.framework
def test_000_mycell_pt(run):
    t, t_out, m, m_out = run("000_mycell_pt")
    # the snippet prints the parameter shapes: torch.Size([240, 120, 4, 4]) / (240, 120, 4, 4)
    shapes = lambda out: [tuple(int(d) for d in re.findall(r"\d+", line)) for line in out.splitlines()]
    assert shapes(t_out) == shapes(m_out) == [(240, 120, 4, 4)]
    t_names, m_names = param_names_and_shapes(t["pt_net"], m["pt_net"])
    assert t_names == m_names == [("net.weight", (240, 120, 4, 4))]
    copy_into(t["pt_net"], m["pt_net"])
    x = np.random.default_rng(0).uniform(-1, 1, (2, 120, 12, 12)).astype(np.float32)
    t_y, m_y = forward_both(t["pt_net"], m["pt_net"], x)
    assert_same(t_y, m_y, what="MyCell_pt(x)")


@pytest.mark.framework
def test_000_mycell_unit_test(run):
    """The page draws x from numpy after building the conv; MindSpore's initializers draw
    from numpy's global generator too, so the two scripts get different x. The torch
    net is also run on the converted script's x (the weights are the constant 0.1 on both
    sides: the converted init loop set them)."""
    import mindspore
    import torch

    t, _, m, _ = run("000_mycell_unit_test")
    weights = [c.weight.asnumpy() for _, c in m["pt_net"].cells_and_names() if hasattr(c, "weight")]
    assert len(weights) == 1 and np.all(weights[0] == np.float32(0.1))
    assert m["x"].shape == t["x"].shape == (2, 120, 12, 12)
    with torch.no_grad():
        expected = t["pt_net"](torch.from_numpy(m["x"]))
    assert_same(expected, m["y_pt"], what="y_pt")
    assert_same(t["y_pt"], m["pt_net"](mindspore.Tensor(t["x"])), what="pt_net(torch's x)")


@pytest.mark.framework
def test_000_box_select_torch(run):
    import mindspore
    import torch

    t, t_out, m, m_out = run("000_box_select_torch")
    assert t_out.startswith("box_select_torch") and m_out.startswith("box_select_torch")
    box, iou = t["box"], t["iou_score"]
    np.testing.assert_array_equal(box, m["box"])
    rng = np.random.default_rng(3)
    cases = [(box, iou), (box, np.array([0.9, 0.1, 0.5], np.float32)), (box, np.zeros(3, np.float32)),
             (box, np.ones(3, np.float32)),
             (rng.uniform(0, 1, (6, 4)).astype(np.float32), rng.uniform(0, 1, 6).astype(np.float32))]
    for b, s in cases:
        selected = t["box_select_torch"](torch.from_numpy(b), torch.from_numpy(s)).numpy()
        kept = m["box_select_torch"](mindspore.Tensor(b), mindspore.Tensor(s)).asnumpy()
        assert kept.shape == selected.shape  # one row per kept box, as in torch
        np.testing.assert_allclose(kept, selected, atol=ATOL, rtol=RTOL)


@pytest.mark.framework
def test_000_class_loss_pt(run):
    t, _, m, _ = run("000_class_loss_pt")
    np.testing.assert_array_equal(t["pred"], m["pred"])
    assert_same(t["cls_loss_pt"], m["cls_loss_pt"], what="cls_loss_pt")
    assert abs(float(t["cls_loss_pt"]) - 0.7207) < 1e-4  # the page's printed value
    # more labels, the same conversion (several positives, 70% of them kept)
    rng = np.random.default_rng(5)
    pred = rng.uniform(0, 1, (16, 4)).astype(np.float32)
    label = np.array([-1, 0, 1, 1, 0, 2, 3, 1, 2, 0, 3, 3, 1, -1, 2, 1], dtype=np.int32)
    t_y, m_y = forward_both(t["ClassLoss_pt"](), m["ClassLoss_pt"](), pred, label)
    assert_same(t_y, m_y, what="ClassLoss_pt(pred, label)")


# -- page 002: Network Construction, PyTorch vs MindSpore ------------------------------------
@pytest.mark.framework
def test_002_network_to_dtype(run):
    t, _, m, _ = run("002_network_to_dtype")
    t_net, m_net = t["net"], m["net"]
    assert all(_dtype(p.dtype) == "float32" for p in t_net.parameters())
    assert all(_dtype(p.dtype) == "float32" for p in m_net.get_parameters())
    copy_into(t_net, m_net)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 20, 20)).astype(np.float32)
    t_y, m_y = forward_both(t_net, m_net, x)
    assert_same(t_y, m_y, what="Network(x)")
    labels = np.array([3, 7], dtype=np.int64)
    t_loss, m_loss = forward_both(t["loss"], m["loss"], t_y.numpy(), labels)
    assert_same(t_loss, m_loss, what="CrossEntropyLoss")


@pytest.mark.framework
def test_002_named_parameters(run):
    t, t_out, m, m_out = run("002_named_parameters")
    assert t_out == m_out == "Parameter Name: weight\nParameter Name: bias\nParameter Name: weight\n"
    assert [n for n, p in t["net"].named_parameters() if p.requires_grad] == ["weight"]
    assert [p.name for p in m["net"].trainable_params()] == ["weight"]


@pytest.mark.framework
def test_002_state_dict_save_load(run, tmp_path):
    t, _, m, _ = run("002_state_dict_save_load")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["linear_layer_params.pth", "linear_layer_params.pth.ckpt"]
    for layer in ("linear_layer", "new_linear_layer"):
        assert_same(t[layer].weight, m[layer].weight, what=f"{layer}.weight")
        assert_same(t[layer].bias, m[layer].bias, what=f"{layer}.bias")
    np.testing.assert_array_equal(m["new_linear_layer"].weight.asnumpy(), [[1.0, 1.0]])
    x = np.random.default_rng(2).standard_normal((4, 2)).astype(np.float32)
    t_y, m_y = forward_both(t["new_linear_layer"], m["new_linear_layer"], x)
    assert_same(t_y, m_y, what="new_linear_layer(x)")


@pytest.mark.framework
def test_002_init_uniform(run):
    t, _, m, _ = run("002_init_uniform")
    tx, mx = t["x"], m["x"]
    assert tuple(tx.shape) == tuple(mx.shape) == (2, 2)
    assert _dtype(tx.dtype) == _dtype(mx.dtype) == "float32"
    for values in (tx.numpy(), mx.asnumpy()):
        assert np.all((values >= 0) & (values < 1)) and len(np.unique(values)) > 1


@pytest.mark.framework
def test_002_add_module(run):
    t, t_out, m, m_out = run("002_add_module")
    names = lambda out: re.findall(r"Module name: ([\w.]*),", out)
    expected = ["", "conv1", "conv2", "conv3", "sequential_block", "sequential_block.0",
                "sequential_block.1", "sequential_block.2"]
    assert names(t_out) == names(m_out) == expected
    t_names, m_names = param_names_and_shapes(t["module"], m["module"])
    assert t_names == m_names
    copy_into(t["module"], m["module"])
    x = np.random.default_rng(4).standard_normal((1, 1, 12, 12)).astype(np.float32)
    t_y, m_y = forward_both(t["module"], m["module"], x)
    assert_same(t_y, m_y, what="MyModule(x)")


@pytest.mark.framework
def test_002_generator_seed(run):
    import mindspore

    t, _, m, _ = run("002_generator_seed")
    assert isinstance(m["G"], mindspore.Generator)
    for name in ("G", "g1", "g2"):
        assert t[name].initial_seed() == m[name].initial_seed() == 1, name


@pytest.mark.framework
def test_002_training_step(tmp_path, monkeypatch):
    """The converted train_step trains as torch's does: same losses, same weights after."""
    import mindspore
    import torch

    monkeypatch.chdir(tmp_path)
    code = converted("002_training_step").code
    assert "# transpile:" not in code and "value_and_grad" in code
    t, _ = _exec(source("002_training_step"), "002_training_step.py", 1)
    m, _ = _exec(code, "002_training_step.py converted", 1)
    t_names, m_names = param_names_and_shapes(t["net"], m["net"])
    assert t_names == m_names == [("fc.weight", (3, 4)), ("fc.bias", (3,))]
    copy_into(t["net"], m["net"])
    rng = np.random.default_rng(6)
    for step in range(3):
        data = rng.standard_normal((5, 4)).astype(np.float32)
        target = rng.integers(0, 3, 5).astype(np.int64)
        t_loss = t["train_step"](torch.from_numpy(data), torch.from_numpy(target))
        m_loss = m["train_step"](mindspore.Tensor(data), mindspore.Tensor(target))
        assert_same(t_loss, m_loss, what=f"the loss of step {step}")
    assert_same(t["net"].fc.weight, m["net"].fc.weight, what="fc.weight after 3 steps")
    assert_same(t["net"].fc.bias, m["net"].fc.bias, what="fc.bias after 3 steps")


@pytest.mark.framework
def test_002_train_eval(run):
    import mindspore
    import torch

    t, _, m, _ = run("002_train_eval")
    t_model, m_model = t["model"], m["model"]
    assert t_model.training is False and m_model.training is False  # the snippet ends with eval()
    copy_into(t_model, m_model)
    x = np.random.default_rng(7).standard_normal((6, 8)).astype(np.float32)
    t_y, m_y = forward_both(t_model, m_model, x)
    assert_same(t_y, m_y, what="eval-mode forward")
    t_model.train(mode=True)
    m_model.set_train(True)
    assert t_model.training is True and m_model.training is True
    t_y = t_model(torch.from_numpy(x))
    m_y = m_model(mindspore.Tensor(x))
    assert tuple(t_y.shape) == tuple(m_y.shape) and _dtype(t_y.dtype) == _dtype(m_y.dtype)


@pytest.mark.framework
def test_002_buffer(run):
    t, _, m, _ = run("002_buffer")
    t_cell, m_cell = t["Scale"](), m["Scale"]()
    assert [n for n, _ in t_cell.named_parameters()] == [n for n, _ in m_cell.parameters_and_names()] == ["weight"]
    assert [n for n, _ in t_cell.named_buffers()] == [n for n, _ in m_cell.named_buffers()] == ["scale"]
    x = np.random.default_rng(8).standard_normal((2, 3)).astype(np.float32)
    t_y, m_y = forward_both(t_cell, m_cell, x)
    assert_same(t_y, m_y, what="Scale()(x)")


# -- page 003: Model Analysis and Preparation -------------------------------------------------
@pytest.mark.framework
def test_003_sigmoid_focal_loss(run):
    t, _, m, _ = run("003_sigmoid_focal_loss")
    for v in ("pred", "target", "weight"):
        np.testing.assert_array_equal(t[v], m[v])
    labels = ["mean", "sum", "mean, avg_factor=0.3", "none"]
    assert len(t["results"]) == len(m["results"]) == 4
    for label, t_r, m_r in zip(labels, t["results"], m["results"]):
        assert_same(t_r, m_r, what=f"py_sigmoid_focal_loss(reduction={label})")


# -- page 004: Constructing MindSpore Network --------------------------------------------------
@pytest.mark.framework
def test_004_layer_list(run):
    t, _, m, _ = run("004_layer_list")
    assert "nn.CellList(" in converted("004_layer_list").code
    t_net, m_net = t["Net"](), m["Net"]()
    # the list's layers are registered under the CellList's names (torch registers none of them)
    assert [n for n, _ in t_net.named_parameters()] == []
    assert [n for n, _ in m_net.parameters_and_names()] == [
        "layer.0.weight", "layer.0.bias", "layer.1.moving_mean", "layer.1.moving_variance", "layer.1.gamma", "layer.1.beta"]
    copy_into(t_net, m_net)
    for layer in t_net.layer:  # torch does not register the list: eval() does not reach it
        layer.eval()
    x = np.random.default_rng(9).standard_normal((2, 1, 8, 8)).astype(np.float32)
    t_y, m_y = forward_both(t_net, m_net, x)
    assert_same(t_y, m_y, what="Net(x)")
