"""`transpile parity ORIGINAL.py ...`: one model, from flags or a parity.toml.

The framework-free part checks input specs, configs, the comparison metrics, the
localisation logic and usage errors in this process. The end-to-end part runs the
command as the console script does (``main`` with its arguments, from the run's
directory; a child process per model and mode), every run in one module fixture, one
after the other in this process: their children come from one warm server.
"""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from transpile import convert_code, convert_paths
from transpile.cli.main import main
from transpile.parity import InputSpec, SpecError, make_spec, parse_input
from transpile.parity.compare import ComparisonError, compare_trees, diff_leaves, make_inputs
from transpile.parity.localise import Event, assignment_line, find_divergence

import cli_here  # tests/cli_here.py

REPO = Path(__file__).resolve().parent.parent

MODELS = '''\
"""Models for the tests of `transpile parity`."""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    """int64 tokens, a bool mask and a float offset in; a dict and a list out."""

    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.conv = nn.Conv1d(dim, dim, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm1d(dim)
        self.register_buffer("scale", torch.ones(dim))

    def forward(self, tokens, mask, offset):
        h = self.embed(tokens)
        h = self.proj(h)
        h = h + 1.0
        h = self.norm(F.relu(h))
        c = self.bn(self.conv(h.transpose(1, 2))).transpose(1, 2)
        h = (h + c) * self.scale
        h = h * mask.unsqueeze(-1).float()
        pooled = h.sum(dim=1) + offset
        return {"hidden": h, "pooled": pooled}, [pooled.max(dim=1)[0], mask.sum(dim=1)]


class Tied(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(self.embed(tokens))


class Broken(nn.Module):
    def __init__(self):
        super().__init__()
        raise ValueError("no weights for you")


class Sleepy(nn.Module):
    def __init__(self):
        super().__init__()
        time.sleep(600)


class Guarded(nn.Module):
    """GRAPH_MODE rejects a try statement in construct; bytecode capture runs it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        try:
            y = self.fc(x)
        except RuntimeError:
            y = x
        return y


class Twice(nn.Module):
    def forward(self, x):
        return x * 2


class Doubled(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.inner = Twice()
        self.b = nn.Linear(3, 3)

    def forward(self, x):
        return self.b(self.inner(self.a(x)))
'''

TIED_MS = '''\
import mindspore.nn as nn


class Tied(nn.Cell):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size=vocab, embedding_size=dim)
        self.head = nn.Dense(in_channels=dim, out_channels=vocab, has_bias=False)
        self.head.weight = self.embed.embedding_table

    def construct(self, tokens):
        return self.head(self.embed(tokens))
'''

# Doubled converted by hand with a construct GRAPH mode computes otherwise (MS509: a list that
# holds another list changed after it is made: the compiled holder keeps it empty), in Twice
GRAPH_ONLY_MS = '''\
import mindspore.nn as nn


class Twice(nn.Cell):
    def construct(self, x):
        items = []
        holder = [items]
        items.append(x)
        if len(holder[0]) > 0:
            return x * 2
        return x


class Doubled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = nn.Dense(3, 3)
        self.inner = Twice()
        self.b = nn.Dense(3, 3)

    def construct(self, x):
        return self.b(self.inner(self.a(x)))
'''

INPUTS = ["--input", "int64[2,6]:0..20", "--input", "bool[2,6]", "--input", "expr:np.full((2, 8), 0.5, np.float32)"]

CONFIG = '''\
source = "models.py"
model = "Encoder()"
tolerance = 1.0              # the flag below wins
inputs = ["int64[2,6]:0..20", "bool[2,6]", "expr:np.full((2, 8), 0.5, np.float32)"]
'''

# A package whose model file imports the package's modules by their absolute name from
# the package's root (`from models.blocks import ...`) and its siblings relatively.
PACKAGE = {
    "models/__init__.py": "",
    "models/blocks.py": "import torch.nn as nn\n\n\nclass Block(nn.Module):\n    def __init__(self):\n"
                        "        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n"
                        "    def forward(self, x):\n        return self.fc(x)\n",
    "models/net.py": "import torch.nn as nn\n\nfrom models.blocks import Block\nfrom .scale import double\n\n\n"
                     "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                     "        self.block = Block()\n\n    def forward(self, x):\n        return double(self.block(x))\n",
    "models/scale.py": "def double(x):\n    return x * 2\n",
}


needs_frameworks = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("mindspore") is None,
    reason="parity needs torch and mindspore (pip install -e '.[parity]')",
)


# -- input specs, configs ---------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("float32[2,3,32,32]", InputSpec((2, 3, 32, 32), "float32", -1.0, 1.0)),
    ("float64[4]:-5..5", InputSpec((4,), "float64", -5.0, 5.0)),
    ("float32[]", InputSpec((), "float32", -1.0, 1.0)),
    ("int64[4]:0..10", InputSpec((4,), "int64", 0.0, 10.0)),
    ("uint8[2, 2]", InputSpec((2, 2), "uint8", 0.0, 10.0)),
    ("bool[4]", InputSpec((4,), "bool", 0.0, 10.0)),
    ("expr:np.arange(6).reshape(2,3)", InputSpec(expr="np.arange(6).reshape(2,3)")),
])
def test_input_specs(text, expected):
    spec = parse_input(text)
    assert spec == expected
    assert parse_input(spec.label()) == spec  # the label is the flag syntax


@pytest.mark.parametrize("text, message", [
    ("float32", "not an input spec"),
    ("complex64[2]", "dtype"),
    ("bool[2]:0..1", "no range"),
    ("float32[2]:1..1", "low must be below high"),
    ("int32[2]:0.5..3", "integers"),
    ("expr:np.arange(", "not an expression"),
])
def test_bad_input_specs(text, message):
    with pytest.raises(SpecError, match=message):
        parse_input(text)


def test_inputs_of_every_kind_are_drawn_the_same_way_twice():
    spec = make_spec(source="m.py", entry="M()", inputs=("float32[2,3]:-2..2", "int64[5]:3..7", "bool[4]",
                                                         "expr:np.arange(6).reshape(2, 3)", "expr:True",
                                                         "expr:rng.uniform(size=3)"))
    a, b = make_inputs(spec), make_inputs(spec)
    assert [x.dtype.name for x in a[:4]] == ["float32", "int64", "bool", "int64"]
    assert a[0].shape == (2, 3) and -2 <= a[0].min() and a[0].max() < 2
    assert 3 <= a[1].min() and a[1].max() < 7
    assert a[4] is True  # a Python scalar is passed as it is
    assert all(np.array_equal(x, y) for x, y in zip(a[:4] + a[5:], b[:4] + b[5:]))


def test_an_input_expression_that_raises_is_named():
    spec = make_spec(source="m.py", entry="M()", inputs=("float32[2]", "expr:undefined_name"))
    with pytest.raises(ComparisonError, match=r"input 1 \(expr:undefined_name\): NameError"):
        make_inputs(spec)


def test_config_and_flags(tmp_path):
    config = tmp_path / "parity.toml"
    config.write_text(CONFIG, encoding="utf-8")
    spec = make_spec(config=config, tolerance=1e-4)
    assert spec.source == tmp_path / "models.py"  # relative to the config file
    assert spec.entry == "Encoder()" and spec.tolerance == 1e-4 and len(spec.inputs) == 3
    spec = make_spec(config=config, entry="Tied()", inputs=("int64[3]",))
    assert spec.entry == "Tied()" and [i.label() for i in spec.inputs] == ["int64[3]:0..10"]
    with pytest.raises(SpecError, match="name the original torch file"):
        make_spec(entry="M()", inputs=("float32[1]",))
    with pytest.raises(SpecError, match="entry is required"):
        make_spec(source="m.py", inputs=("float32[1]",))
    with pytest.raises(SpecError, match="inputs"):
        make_spec(source="m.py", entry="M()")
    spec = make_spec(source="m.py", entry="M()", inputs=("float32[1]",))
    assert type(spec).from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


# -- the comparison ---------------------------------------------------------------------

def test_metrics_of_one_output():
    t = np.array([1.0, 2.0, 0.0, 4.0], dtype=np.float32)
    d = diff_leaves(t, t.copy(), atol=1e-6)
    assert d.allclose and d.within == 1.0 and d.cosine == pytest.approx(1.0) and d.max_abs_diff == 0.0
    m = np.array([1.0, 2.5, 0.0, 4.0], dtype=np.float32)
    d = diff_leaves(t, m, atol=0.1)
    assert not d.allclose and d.within == 0.75 and d.max_abs_diff == 0.5 and d.max_rel_diff == 0.25
    assert 0.9 < d.cosine < 1.0
    d = diff_leaves(t, m, atol=0.0, rtol=0.3)  # |d| <= atol + rtol * |torch|
    assert d.allclose
    d = diff_leaves(t, np.array([1.0, 2.0, 1.0, 4.0], dtype=np.float32))
    assert math.isinf(d.max_rel_diff)  # torch 0, MindSpore 1
    d = diff_leaves(t, t.reshape(2, 2))
    assert not d.allclose and "shapes differ" in d.note and math.isnan(d.max_abs_diff)
    d = diff_leaves(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert d.allclose  # nan where both have nan
    assert diff_leaves(np.array([True, False]), np.array([True, True])).within == 0.5


def test_output_trees_are_compared_leaf_by_leaf():
    a = np.ones(3, dtype=np.float32)
    torch_out = [{"logits": a, "aux": [a, None]}, np.asarray(3)]
    diffs = compare_trees(torch_out, [{"logits": a, "aux": [a + 1, None]}, np.asarray(3)], atol=1e-5)
    assert [d.name for d in diffs] == ["out[0]['logits']", "out[0]['aux'][0]", "out[0]['aux'][1]", "out[1]"]
    assert [d.allclose for d in diffs] == [True, False, True, True]
    with pytest.raises(ComparisonError, match="differ in structure"):
        compare_trees(torch_out, [{"logits": a}, np.asarray(3)])


# -- localisation, on recorded events ---------------------------------------------------

def _events(values: dict) -> list[Event]:
    """A model `` ``(root) calling a then b; values: event -> array."""
    order = [("inputs", "", None), ("inputs", "a", ""), ("output", "a", ""), ("inputs", "b", ""),
             ("output", "b", ""), ("output", "", None)]
    return [Event(kind, path, 0, values.get((kind, path), np.zeros(2)), caller) for kind, path, caller in order]


CLASSES = ({"": "Net", "a": "Linear", "b": "ReLU"}, {"": "Net", "a": "Dense", "b": "ReLU"})


@pytest.mark.parametrize("changed, event, blamed", [
    ({("output", "a"): np.ones(2), ("inputs", "b"): np.ones(2), ("output", "b"): np.ones(2),
      ("output", ""): np.ones(2)}, "output", "a"),  # a's own computation
    ({("inputs", "b"): np.ones(2), ("output", "b"): np.ones(2), ("output", ""): np.ones(2)},
     "inputs", ""),  # the root's code between a and b
    ({("output", ""): np.ones(2)}, "output", ""),  # the root's code after b
])
def test_the_first_divergence_is_blamed(changed, event, blamed):
    div, compared, unmatched = find_divergence(_events({}), _events(changed), {"", "a", "b"}, 1e-5, 0.0, CLASSES)
    assert div.event == event and div.blamed == blamed and not unmatched
    if event == "inputs":
        assert "after `a` returns" in div.summary
    assert find_divergence(_events({}), _events({}), {"", "a", "b"}, 1e-5, 0.0, CLASSES)[0] is None


def test_a_mindspore_exception_is_placed_in_its_submodule():
    ms_events = _events({})[:3]  # raised inside b
    div, _, _ = find_divergence(_events({}), ms_events, {"", "a", "b"}, 1e-5, 0.0, CLASSES, ("b", "ValueError: x"))
    assert div.event == "raised" and div.blamed == "b" and "ValueError: x" in div.summary
    div, _, _ = find_divergence(_events({}), ms_events, {"", "a", "b"}, 1e-5, 0.0, CLASSES)
    assert div.event == "missing" and div.blamed == ""


def test_assignment_lines(tmp_path):
    path = tmp_path / "models.py"
    path.write_text(MODELS, encoding="utf-8")
    lines = MODELS.splitlines()
    assert lines[assignment_line(str(path), "Encoder", "norm") - 1].strip() == "self.norm = nn.LayerNorm(dim)"
    assert lines[assignment_line(str(path), "Tied", "head") - 1].strip().startswith("self.head = nn.Linear")
    assert assignment_line(str(path), "Encoder", "missing") is None


# -- usage errors: no child process -----------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["m.py", "--model", "M()", "--input", "float32"], "not an input spec"),
    (["m.py", "--model", "M(", "--input", "float32[1]"], "not an expression"),
    (["m.py", "--model", "M()", "--function", "f", "--input", "float32[1]"], "not both"),
    (["a.py", "b.py", "--model", "M()", "--input", "float32[1]"], "one ORIGINAL.py"),
    (["m.py", "--model", "M()", "--input", "float32[1]", "--emit-test", "t.py"], "needs --converted"),
    (["--samples", "samples", "--emit-test", "t.py"], "takes one model"),
    (["m.py", "--model", "M()"], "inputs"),
])
def test_usage_errors(capsys, args, message):
    assert main(["parity", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# -- end to end ---------------------------------------------------------------------------

def _converted(tmp: Path, name: str, old: str = "", new: str = "") -> Path:
    code = convert_code(MODELS, filename="models.py").code
    assert old in code, f"the converted code no longer has {old!r}"
    path = tmp / name
    path.write_text(code.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name -> CompletedProcess of each run (in this process: tests/cli_here.py)."""
    tmp = tmp_path_factory.mktemp("parity_cli")
    (tmp / "models.py").write_text(MODELS, encoding="utf-8")
    (tmp / "parity.toml").write_text(CONFIG, encoding="utf-8")
    (tmp / "tied_ms.py").write_text(TIED_MS, encoding="utf-8")
    (tmp / "graph_only_ms.py").write_text(GRAPH_ONLY_MS, encoding="utf-8")
    encoder = ["models.py", "--model", "Encoder()", *INPUTS, "--mode", "pynative"]
    for name, text in PACKAGE.items():
        (tmp / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "pkg" / name).write_text(text, encoding="utf-8")
    convert_paths([tmp / "pkg"], output=tmp / "pkg_ms")
    commands = {
        "match": ["parity", "--config", "parity.toml", "--tolerance", "1e-5", "--json"],
        "functional": ["parity", *encoder, "--converted", _converted(tmp, "functional.py", "h = h + 1.0", "h = h - 1.0")],
        "layer": ["parity", *encoder, "--json", "--converted", _converted(tmp, "layer.py", "epsilon=1e-05", "epsilon=0.5")],
        "shape": ["parity", *encoder, "--converted", _converted(tmp, "shape.py", "padding=1", "padding=0")],
        "ms_build": ["parity", *encoder, "--converted", _converted(tmp, "ms_build.py", "nn.BatchNorm1d(", "nn.BatchNormX(")],
        "torch_forward": ["parity", "models.py", "--model", "Encoder()", "--input", "int64[2,6]:0..20",
                          "--input", "bool[3,6]", "--input", "float32[2,8]", "--mode", "pynative"],
        "unknown": ["parity", "models.py", "--model", "Nope()", "--input", "float32[2]", "--mode", "pynative"],
        "ctor": ["parity", "models.py", "--model", "Broken()", "--input", "float32[2]", "--mode", "pynative"],
        "ctor_verbose": ["parity", "models.py", "--model", "Broken()", "--input", "float32[2]", "--mode", "pynative", "-v"],
        "hang": ["parity", "models.py", "--model", "Sleepy()", "--input", "float32[2]", "--mode", "pynative",
                 "--timeout", "10"],
        "tied": ["parity", "models.py", "--converted", "tied_ms.py", "--model", "Tied()", "--input", "int64[2,5]:0..20",
                 "--mode", "pynative", "--json"],
        "samples": ["parity", "lenet", "--samples", REPO / "samples", "--mode", "pynative"],
        "bytecode": ["parity", "models.py", "--model", "Guarded()", "--input", "float32[3,8]", "--mode", "graph", "--json"],
        "graph_only": ["parity", "models.py", "--converted", "graph_only_ms.py", "--model", "Doubled()",
                       "--input", "float32[2,3]", "--json"],
        "graph_only_text": ["parity", "models.py", "--converted", "graph_only_ms.py", "--model", "Doubled()",
                            "--input", "float32[2,3]"],
        "root": ["parity", "pkg/models/net.py", "--root", "pkg", "--converted", "pkg_ms", "--model", "Net()",
                 "--input", "float32[2,4]", "--json"],
    }
    return {name: cli_here.run(command, tmp) for name, command in commands.items()}  # one at a time


@needs_frameworks
def test_a_faithful_conversion_matches_in_both_modes(runs):
    proc = runs["match"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["ok"] and data["verdict"] == "match" and data["tolerance"] == 1e-5
    assert data["converted_path"] is None  # converted on the fly
    for mode in ("PYNATIVE", "GRAPH"):
        outputs = data["modes"][mode]["outputs"]
        assert [o["name"] for o in outputs] == ["out[0]['hidden']", "out[0]['pooled']", "out[1][0]", "out[1][1]"]
        for o in outputs:
            assert o["allclose"] and o["within"] == 1.0 and o["cosine"] > 0.999999 and o["max_abs_diff"] <= 1e-5
        assert outputs[0]["torch_shape"] == [2, 6, 8]


@needs_frameworks
def test_code_between_two_layers_is_blamed_on_its_module(runs):
    proc = runs["functional"]
    out = proc.stdout
    assert proc.returncode == 1 and "mismatch (PYNATIVE)" in out, out + proc.stderr
    assert "first divergence: the model itself (Encoder)" in out
    assert "the inputs of `norm` (call 1) differ" in out and "after `proj` returns" in out
    assert "original:  models.py:" in out and "def forward(self, tokens, mask, offset):  [forward]" in out
    assert "converted: functional.py:" in out and "def construct(self, tokens, mask, offset):  [construct]" in out
    assert "Traceback" not in out + proc.stderr


@needs_frameworks
def test_a_layer_converted_wrong_is_named_with_its_lines(runs):
    proc = runs["layer"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    out = data["modes"]["PYNATIVE"]["outputs"]
    assert not all(o["allclose"] for o in out) and all(0 <= o["within"] <= 1 for o in out)
    div = data["localisation"]["divergence"]
    assert div["blamed"] == "norm" and div["event"] == "output" and div["torch_class"] == "LayerNorm"
    lines = MODELS.splitlines()
    [original] = div["original"]
    assert lines[original["line"] - 1].strip() == "self.norm = nn.LayerNorm(dim)" == original["text"]
    [converted] = div["converted"]
    assert converted["text"].startswith("self.norm = nn.LayerNorm(") and converted["file"].endswith("layer.py")


@needs_frameworks
def test_a_shape_mismatch_says_which_side_and_where(runs):
    proc = runs["shape"]
    out = proc.stdout
    assert proc.returncode == 1
    assert "error: MindSpore side: construct in PYNATIVE mode:" in out
    assert "first divergence: `conv` (Conv1d)" in out and "shapes differ: torch (2, 8, 6), MindSpore (2, 8, 4)" in out
    assert "self.conv = nn.Conv1d(dim, dim, kernel_size=3, padding=1)  [assigned]" in out
    assert "Traceback" not in out + proc.stderr


@pytest.mark.parametrize("name, expected", [
    ("ms_build", "error: MindSpore side: build Encoder(): AttributeError:"),
    ("torch_forward", "error: torch side: forward: RuntimeError:"),
    ("unknown", "error: torch side: build Nope(): name 'Nope' is not defined in models.py "
                "(it defines: Broken, Doubled, Encoder, Guarded, Sleepy, Tied, Twice)"),
    ("ctor", "error: torch side: build Broken(): ValueError: no weights for you (at models.py:"),
    ("hang", "error: timed out after 10 s in step 'torch side: build Sleepy()'"),
])
@needs_frameworks
def test_bad_input_gives_one_clear_error(runs, name, expected):
    proc = runs[name]
    assert proc.returncode == 1
    assert expected in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@needs_frameworks
def test_verbose_shows_the_traceback(runs):
    assert "Traceback" in runs["ctor_verbose"].stdout and 'raise ValueError("no weights for you")' in runs["ctor_verbose"].stdout


@needs_frameworks
def test_tied_weights_are_copied_once(runs):
    proc = runs["tied"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["ok"]


@needs_frameworks
def test_the_samples_table_is_unchanged(runs):
    proc = runs["samples"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split(" | ") == ["sample", "converted", "max abs diff PYNATIVE", "max abs diff GRAPH", "verdict"]
    assert lines[2].split(" | ")[0].strip() == "lenet" and lines[2].endswith("| match")
    assert lines[-1] == "1 of 1 samples match"


@needs_frameworks
def test_root_puts_the_package_on_the_import_path_of_both_sides(runs):
    """--root DIR: the original is imported as a module of DIR (absolute imports of the
    package and relative ones work), the converted one as the same module of the
    converted tree, each side seeing its own package: in both modes."""
    proc = runs["root"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["ok"] and set(data["modes"]) == {"PYNATIVE", "GRAPH"}


@needs_frameworks
def test_a_graph_compile_failure_tries_bytecode_capture_and_says_what_it_gave(runs):
    data = json.loads(runs["bytecode"].stdout)
    graph = data["modes"]["GRAPH"]
    said = [n for n in data["notes"] if 'jit(capture_mode="bytecode") in PYNATIVE mode matches torch' in n]
    assert len(said) == 1, data["notes"]
    if graph["compiled_path"]:  # faster than PYNATIVE on this machine: the GRAPH result is its
        assert graph["verdict"] == "match" and "Unsupported statement 'Try'" in said[0]
    else:  # no faster: GRAPH_MODE's failure stands, the note gives both timings
        assert "Unsupported statement 'Try'" in graph["verdict"] and "no faster than not compiling" in said[0]


@needs_frameworks
def test_a_graph_only_mismatch_names_the_first_submodule_that_differs_alone_in_graph_mode(runs):
    """Issue 32: PYNATIVE matches torch, GRAPH does not; each submodule runs alone in both
    modes on the inputs it got, and the first whose results differ is named (the layers
    before it agree)."""
    data = json.loads(runs["graph_only"].stdout)
    assert data["verdicts"]["PYNATIVE"] == "match" and data["verdicts"]["GRAPH"].startswith("mismatch"), data["verdicts"]
    found = data["modes"]["GRAPH"]["graph_divergence"]
    assert found["path"] == "inner" and found["class"] == "Twice" and found["checked"] == 2, found
    out = runs["graph_only_text"].stdout
    assert "GRAPH mode against PYNATIVE: first differs in inner (Twice)" in out, out


@pytest.mark.parametrize("found, expected", [
    ({"path": "", "class": "Net", "summary": "max abs diff 1", "checked": 3, "total": 3},
     "first differs in the model itself (every submodule alone agrees) (Net), max abs diff 1 (3 of 3 submodules"),
    ({"path": None, "summary": "", "checked": 2, "total": 3, "failed": ["a: RuntimeError: no"]},
     "every submodule alone gives the same results (2 of 3 submodules run alone in each mode; 1 did not run alone "
     "in GRAPH mode (first: a: RuntimeError: no)): the difference is in code between them"),
    ({"path": None, "summary": "stopped after 120 s", "checked": 9, "total": 50},
     "no submodule differs alone (9 of 50 submodules run alone in each mode); stopped after 120 s"),
])
def test_the_graph_divergence_line_says_what_was_found_and_how_far_it_looked(found, expected):
    from transpile.parity.report import format_graph_divergence

    [line] = format_graph_divergence(found)
    assert expected in line, line


@pytest.mark.parametrize("bytecode_verdict, compiled_ms, expected_path, kept", [
    ("error: boom", None, "", "did not help: error: boom"),
    ("match", (2.0, 1.0), "", "no faster than not compiling"),
    ("match", (1.0, 2.0), 'jit(capture_mode="bytecode")', "the GRAPH result is its"),
])
def test_the_bytecode_path_stands_for_graph_only_where_it_matches_and_is_faster(monkeypatch, bytecode_verdict,
                                                                                  compiled_ms, expected_path, kept):
    from transpile.parity import runner

    graph = runner.ModeResult("GRAPH", "error: Unsupported statement 'Try'")
    timing = None if compiled_ms is None else {"compiled": compiled_ms[0] / 1e3, "uncompiled": compiled_ms[1] / 1e3}
    ran = runner.ModeResult("GRAPH", bytecode_verdict, call_seconds=timing)
    asked = []
    monkeypatch.setattr(runner, "_run_mode", lambda spec, converted, mode, **kw: asked.append((mode, kw)) or ran)
    result = runner.compiled_path(None, Path("x.py"), graph, timeout=5)
    assert asked == [("GRAPH", {"compiled": "bytecode", "timeout": 5})]
    assert result.compiled_path == expected_path and kept in result.notes[-1]
    assert result.verdict == ("match" if expected_path else graph.verdict) and result.call_seconds is None


def test_root_usage_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("", encoding="utf-8")
    (tmp_path / "other.py").write_text("", encoding="utf-8")
    common = ["--model", "M()", "--input", "float32[1]"]
    assert main(["parity", "other.py", "--root", "pkg", "--converted", "out", *common]) == 2
    assert "not inside --root pkg" in capsys.readouterr().err
    assert main(["parity", "pkg/m.py", "--root", "pkg", *common]) == 2
    assert "--root needs --converted" in capsys.readouterr().err
    assert main(["parity", "pkg/m.py", "--root", "nowhere", "--converted", "out", *common]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_specs_cross_to_the_child_unchanged():
    """A parity spec (with --root) and a training spec go to the child process as JSON and
    come back equal: each keeps only the path fields it has."""
    from transpile.parity.spec import ParitySpec
    from transpile.parity.training import TrainingSpec, load_training_specs

    spec = make_spec(source=str(REPO / "samples" / "lenet.py"), entry="LeNet()", inputs=("float32[1,1,28,28]",),
                     converted=str(REPO / "samples"), root=str(REPO / "samples"))
    assert ParitySpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    training = load_training_specs(REPO / "samples")[0]
    assert TrainingSpec.from_dict(json.loads(json.dumps(training.to_dict()))) == training
