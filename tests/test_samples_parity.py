"""Parity of every sample: the tool converts it, then torch and MindSpore run it on the
same weights and inputs in PYNATIVE and GRAPH mode (one child process per run).

The samples are converted here with ``convert_code`` (never a hand-written MindSpore
twin). All runs start together in one module fixture, two child processes at a
time, so the whole file takes about a minute on two cores.
"""
from __future__ import annotations

import importlib.util
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from transpile import convert_code
from transpile.parity import MODES, SpecError, load_spec, load_specs, run_mode, run_samples
from transpile.parity.compare import ComparisonError, compare_mask_rows, make_inputs

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]
warnings.filterwarnings("ignore", module="mindspore")

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SPEC_FILES = sorted(SAMPLES.glob("*.parity.toml"))
NAMES = [p.name[: -len(".parity.toml")] for p in SPEC_FILES]
REQUIRED = {"mycell", "network", "box_select", "lenet", "resnet", "mlp_list", "residual_inplace"}

needs_frameworks = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("mindspore") is None,
    reason="parity needs torch and mindspore (pip install -e '.[parity]')",
)


@pytest.fixture(scope="module")
def results():
    """name -> SampleResult, every sample converted on the fly, both modes."""
    return {r.sample: r for r in run_samples(load_specs(SAMPLES), jobs=2, timeout=240)}


def test_every_required_sample_has_a_spec():
    assert REQUIRED <= set(NAMES)
    for path in SPEC_FILES:
        spec = load_spec(path)
        assert spec.source.is_file(), f"{path.name}: sample {spec.source.name} missing"


@pytest.mark.parametrize("name", NAMES)
def test_sample_converts_cleanly(name):
    spec = load_spec(SAMPLES / f"{name}.parity.toml")
    result = convert_code(spec.source.read_text(encoding="utf-8"), filename=spec.source.name)
    assert not result.failed and result.changed
    assert not result.errors, [d.format() for d in result.errors]
    assert "# transpile:" not in result.code, "the sample uses an API the tables do not cover"
    assert not _torch_imports(result.code), "the converted sample still imports torch"


def _torch_imports(code: str) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "torch"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            found.append(node.module)
    return found


@needs_frameworks
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_parity(results, name, mode):
    r = results[name]
    assert r.converted, r.verdict
    mr = r.results[mode]
    assert mr.verdict == "match", f"{name} ({mode}): {mr.verdict}\n{mr.detail}"
    assert mr.max_abs_diff is not None and not math.isnan(mr.max_abs_diff)
    assert mr.max_abs_diff <= r.spec.tolerance


@needs_frameworks
def test_box_select_keeps_torch_selection(results):
    r = results["box_select"]
    assert r.spec.compare == "allclose"
    keep = make_inputs(r.spec)[1] > 0.3
    assert 0 < keep.sum() < keep.size, "the inputs must keep some rows and drop others"
    assert r.ok


@needs_frameworks
def test_mlp_list_parameter_names_match_their_paths(results):
    assert results["mlp_list"].notes == []


@needs_frameworks
def test_a_broken_conversion_is_caught(tmp_path):
    """The harness is not vacuous: a converted LeNet without one ReLU does not match."""
    spec = load_spec(SAMPLES / "lenet.parity.toml")
    code = convert_code(spec.source.read_text(encoding="utf-8"), filename="lenet.py").code
    broken = code.replace("x = F.relu(input=self.fc2(x))", "x = self.fc2(x)")
    assert broken != code
    path = tmp_path / "lenet.py"
    path.write_text(broken, encoding="utf-8")
    mr = run_mode(spec, path, "PYNATIVE", timeout=240)
    assert mr.verdict == "mismatch" and mr.max_abs_diff > spec.tolerance


def test_a_missing_converted_file_is_an_error(tmp_path):
    [r] = run_samples([load_spec(SAMPLES / "lenet.parity.toml")], converted_dir=tmp_path)
    assert not r.converted and r.verdict.startswith("error: converted file")
    assert not r.results


# -- the comparison rules, without any framework ---------------------------------

def test_mask_rows_rule():
    iou = np.array([0.9, 0.1, 0.5, 0.2], dtype=np.float32)
    box = np.arange(16, dtype=np.float32).reshape(4, 4)
    mask = iou > 0.3
    torch_out = box[mask]
    good = box * mask[:, None]
    assert compare_mask_rows([torch_out], [good], mask)[0].max_abs_diff == 0.0
    leaked = box.copy()  # a dropped row not zeroed
    assert compare_mask_rows([torch_out], [leaked], mask)[0].max_abs_diff > 0
    wrong = good.copy()
    wrong[0, 0] += 1.0  # a kept row changed
    assert compare_mask_rows([torch_out], [wrong], mask)[0].max_abs_diff == 1.0
    with pytest.raises(ComparisonError, match="test nothing"):
        compare_mask_rows([box], [box], np.ones(4, dtype=bool))
    with pytest.raises(ComparisonError, match="selected shape"):
        compare_mask_rows([box[:1]], [good], mask)


def test_inputs_are_deterministic():
    spec = load_spec(SAMPLES / "box_select.parity.toml")
    a, b = make_inputs(spec), make_inputs(spec)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert [x.shape for x in a] == [i.shape for i in spec.inputs]


@pytest.mark.parametrize("body, message", [
    ('kind = "module"\n[[inputs]]\nshape = [1]\n', "entry is required"),
    ('entry = "M()"\n', "inputs"),
    ('entry = "M()"\ncompare = "mask_rows"\n[[inputs]]\nshape = [1]\n', r"\[mask\]"),
    ('entry = "M()"\ncompare = "nearly"\n[[inputs]]\nshape = [1]\n', "compare must be"),
    ('entry = "M("\n[[inputs]]\nshape = [1]\n', "not an expression"),
    ('entry = "M()"\n[[inputs]]\nshape = [1]\ndtype = "complex64"\n', "dtype"),
    ('entry = "M()"\nextra = 1\n[[inputs]]\nshape = [1]\n', "unknown fields"),
    ('entry = "M()"\ngradients = 1\n[[inputs]]\nshape = [1]\n', "gradients must be true or false"),
    ('entry = "M()"\ngraph_gradients = "why"\n[[inputs]]\nshape = [1]\n', "graph_gradients, with gradients"),
    ('entry = "M()"\ngradients = true\ncompare = "mask_rows"\n[mask]\ninput = 0\nop = ">"\nvalue = 0\n'
     '[[inputs]]\nshape = [1]\n', "'allclose' only"),
])
def test_bad_specs_are_rejected(tmp_path, body, message):
    path = tmp_path / "m.parity.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SpecError, match=message):
        load_spec(path)


def test_parity_subcommand_is_wired():
    from transpile.cli.main import _parser
    from transpile.cli.parity import cmd_parity

    args = _parser().parse_args(["parity", "--samples", "samples", "--converted", "out"])
    assert args.func is cmd_parity and args.converted == "out" and args.samples == "samples"


def test_table_format():
    from transpile.cli.parity import format_table
    from transpile.parity.runner import ModeResult, SampleResult

    ok = SampleResult("lenet", None, True, {"PYNATIVE": ModeResult("PYNATIVE", "match", 1.5e-08),
                                            "GRAPH": ModeResult("GRAPH", "match", 2e-08)})
    bad = SampleResult("net", None, True, {"PYNATIVE": ModeResult("PYNATIVE", "mismatch", 0.5),
                                           "GRAPH": ModeResult("GRAPH", "error: run MindSpore (GRAPH): boom")})
    lines = format_table([ok, bad]).splitlines()
    assert lines[0].split(" | ") == ["sample", "converted", "max abs diff PYNATIVE", "max abs diff GRAPH", "verdict"]
    assert lines[2].split() == ["lenet", "|", "yes", "|", "1.5e-08", "|", "2e-08", "|", "match"]
    assert "error: run MindSpore (GRAPH): boom (GRAPH)" in lines[3]
    assert ok.ok and not bad.ok


def test_samples_are_untouched_by_conversion(tmp_path):
    """Converting the samples tree writes the mirror and never modifies the inputs."""
    from transpile import convert_paths

    before = {p.name: p.read_bytes() for p in SAMPLES.iterdir() if p.is_file()}
    report = convert_paths([SAMPLES], output=tmp_path / "out")
    assert report.count("failed") == 0
    assert {p.name: p.read_bytes() for p in SAMPLES.iterdir() if p.is_file()} == before
    for name in NAMES:
        assert (tmp_path / "out" / f"{name}.py").is_file()
    shutil.rmtree(tmp_path / "out")
