"""Training parity: each training sample converts, trains like torch and runs end to end.

For each ``samples/train_*.py`` (spec: ``<name>.training.toml``) the tool converts the
script (``convert_code``, never a hand-written twin); a child process builds both models,
copies the initial weights, trains both for the spec's steps on the script's own numpy
batches and compares the loss after every step and the final weights; another runs the
converted script as ``python train_x.py`` in an empty directory. The harness tests use a
tiny regression script, converted by the tool and then broken on purpose.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import warnings
from pathlib import Path

import pytest

from transpile import convert_code
from transpile.cli.main import main
from transpile.parity import SpecError
from transpile.parity.compare import OutputDiff
from transpile.parity.training import (
    ScriptRun, TrainingResult, format_training, format_training_table, load_training_spec, load_training_specs,
    run_script, run_training, training_dict,
)

import cli_here  # tests/cli_here.py

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]
warnings.filterwarnings("ignore", module="mindspore")

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
SPEC_FILES = sorted(SAMPLES.glob("*.training.toml"))
NAMES = [p.name[: -len(".training.toml")] for p in SPEC_FILES]
REQUIRED = {"train_mnist_cnn", "train_tiny_lm", "train_frozen_backbone", "train_two_phase", "train_dcgan"}
TIMEOUT = 600

needs_frameworks = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("mindspore") is None,
    reason="training parity needs torch and mindspore (pip install -e '.[parity]')",
)

TINY = '''\
"""A tiny regression script for the tests of the training parity check."""
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


def build_model():
    return Net()


def train(model, steps):
    rng = np.random.default_rng(0)
    inputs = torch.from_numpy(rng.standard_normal((steps, 16, 4)).astype(np.float32))
    targets = torch.from_numpy(rng.standard_normal((steps, 16, 3)).astype(np.float32))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.MSELoss()
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(inputs[step]), targets[step])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    losses = train(build_model(), 5)
    print(f"final loss {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
'''


# -- the samples --------------------------------------------------------------------------

def test_every_training_sample_has_a_spec():
    scripts = {p.stem for p in SAMPLES.glob("train_*.py")}
    assert REQUIRED <= scripts
    assert scripts == set(NAMES), "every samples/train_*.py needs a <name>.training.toml beside it"
    for spec in load_training_specs(SAMPLES):
        assert spec.source.is_file()
        assert spec.steps == 20 and spec.loss_rtol == spec.weight_atol == spec.weight_rtol == 1e-4
    assert load_training_spec(SAMPLES / "train_frozen_backbone.training.toml").frozen == ("backbone.",)


@pytest.mark.parametrize("name", NAMES)
def test_sample_converts_cleanly(name):
    source = SAMPLES / f"{name}.py"
    result = convert_code(source.read_text(encoding="utf-8"), filename=source.name)
    assert not result.failed and result.changed
    assert not result.errors, [d.format() for d in result.errors]
    left = [line.strip() for line in result.code.splitlines() if "# transpile:" in line]
    assert not left, f"the conversion left markers: {left}"
    assert "import torch" not in result.code and "from torch" not in result.code


@needs_frameworks
@pytest.mark.parametrize("name", NAMES)
def test_torch_script_runs_end_to_end(name):
    run = run_script(SAMPLES / f"{name}.py", timeout=TIMEOUT)
    assert run.ok, f"{run.error}\n{run.detail}"
    assert run.output.startswith("loss ") and any(f.endswith(".pt") for f in run.files), (run.output, run.files)


@pytest.fixture(scope="module")
def results():
    """name -> TrainingResult, every training sample converted on the fly."""
    return {r.sample: r for r in run_training(load_training_specs(SAMPLES), jobs=2, timeout=TIMEOUT)}


@needs_frameworks
@pytest.mark.parametrize("name", NAMES)
def test_loss_curve_matches(results, name):
    r = results[name]
    assert r.converted, r.verdict
    assert r.error is None, f"{r.error}\n{r.detail}"
    assert len(r.torch_losses) == len(r.ms_losses) == r.spec.steps
    assert r.loss_diff.allclose and r.loss_diff.max_rel_diff <= r.spec.loss_rtol, r.verdict
    assert r.torch_losses[-1] < r.torch_losses[0], "the sample should learn something in its steps"


@needs_frameworks
@pytest.mark.parametrize("name", NAMES)
def test_final_weights_match(results, name):
    r = results[name]
    assert r.error is None, r.error
    assert r.weights and all(d.allclose for d in r.weights), r.verdict
    assert not r.unmoved, f"training left trainable weights as they were: {r.unmoved}"


@needs_frameworks
@pytest.mark.parametrize("name", NAMES)
def test_converted_script_runs_end_to_end(results, name):
    r = results[name]
    assert r.script is not None and r.script.ok, f"{r.script.error if r.script else 'not run'}\n" \
                                                 f"{r.script.detail if r.script else ''}"
    assert r.script.files, "the converted script should save its weights"


@needs_frameworks
def test_frozen_backbone_comes_out_unchanged(results):
    r = results["train_frozen_backbone"]
    assert r.frozen and {f["name"].split(".")[0] for f in r.frozen} == {"backbone"}
    assert all(f["torch_unchanged"] and f["ms_unchanged"] for f in r.frozen), r.frozen
    assert any(d.name.startswith("head.") for d in r.weights)
    assert r.ok, r.verdict


# -- the harness, on a tiny script converted by the tool and broken on purpose ------------

def _write_tiny(root: Path, name: str, spec: str = "", old: str = "", new: str = "") -> Path:
    """The tiny script's conversion (``old`` -> ``new`` once) as ``root/name/tiny.py``, and its
    spec ``root/name/tiny.training.toml`` (source: the torch script in ``root``)."""
    code = convert_code(TINY, filename="tiny.py").code
    assert old in code, f"the converted tiny script no longer has {old!r}"
    folder = root / name
    folder.mkdir()
    (folder / "tiny.py").write_text(code.replace(old, new, 1), encoding="utf-8")
    path = folder / "tiny.training.toml"
    path.write_text(f'source = "../tiny.py"\nconverted = "tiny.py"\nsteps = 5\n{spec}', encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """case -> TrainingResult, all run at once (two child processes at a time)."""
    root = tmp_path_factory.mktemp("training")
    (root / "tiny.py").write_text(TINY, encoding="utf-8")
    quick = "script = false\n"  # the script runs in two cases only: each run is a process
    cases = {
        "faithful": _write_tiny(root, "faithful"),
        "exact": _write_tiny(root, "exact", quick + "loss_rtol = 0.0\nweight_atol = 0.0\nweight_rtol = 0.0\n"),
        "learning_rate": _write_tiny(root, "learning_rate", quick, "lr=0.1", "lr=0.11"),
        "frozen": _write_tiny(root, "frozen", quick + 'frozen = ["hidden."]\n'),
        "no_such_prefix": _write_tiny(root, "no_such_prefix", quick + 'frozen = ["backbone."]\n'),
        "short": _write_tiny(root, "short", quick, "return losses", "return losses[:-1]"),
        "no_train": _write_tiny(root, "no_train", quick + 'train = "fit"\n'),
        "script": _write_tiny(root, "script", "", "    losses = train(build_model(), 5)",
                              "    raise RuntimeError('boom')\n    losses = train(build_model(), 5)"),
    }
    specs = [load_training_spec(path) for path in cases.values()]
    specs = [dataclasses.replace(s, name=case) for s, case in zip(specs, cases)]
    return {r.sample: r for r in run_training(specs, jobs=2, timeout=TIMEOUT)}


@needs_frameworks
def test_a_faithful_conversion_matches(harness):
    r = harness["faithful"]
    assert r.ok and r.verdict == "match", r.verdict
    assert [d.name for d in r.weights] == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert r.loss_diff.max_rel_diff <= 1e-4 and r.weight_max_abs_diff <= 1e-4
    assert r.script.ok and r.script.output == r.script.output.strip() and r.script.output.startswith("final loss")
    assert not r.unmoved and not r.markers


@needs_frameworks
def test_a_tolerance_that_cannot_hold_is_a_mismatch(harness):
    """float32 on two frameworks never agrees to the last bit over 5 steps."""
    r = harness["exact"]
    assert r.error is None and not r.ok
    assert "final weights differ" in r.verdict
    assert harness["faithful"].weight_max_abs_diff > 0


@needs_frameworks
def test_a_perturbed_learning_rate_is_caught_at_the_first_step_it_acts(harness):
    r = harness["learning_rate"]
    assert not r.ok and r.first_loss_mismatch == 1, r.verdict  # step 0's loss comes before any update
    assert r.verdict.startswith("loss differs from step 1")
    assert r.loss_diff.max_rel_diff > 1e-3
    assert all(not d.allclose for d in r.weights) and r.script is None


@needs_frameworks
def test_frozen_weights_that_train_are_reported(harness):
    r = harness["frozen"]
    assert not r.ok
    assert [f["name"] for f in r.frozen] == ["hidden.weight", "hidden.bias"]
    assert not any(f["torch_unchanged"] or f["ms_unchanged"] for f in r.frozen)
    assert "frozen weights moved: hidden.weight (torch) (MindSpore), hidden.bias (torch) (MindSpore)" in r.verdict
    assert "no weight" in harness["no_such_prefix"].verdict


@needs_frameworks
def test_a_train_function_that_breaks_the_convention_is_an_error(harness):
    assert "returned 4 losses for 5 steps" in harness["short"].verdict
    assert harness["short"].torch_losses is not None and harness["short"].ms_losses is None
    assert "tiny.py has no function 'fit'" in harness["no_train"].verdict


@needs_frameworks
def test_a_converted_script_that_dies_is_reported_with_its_line(harness):
    r = harness["script"]
    assert r.loss_diff is not None and r.loss_diff.allclose  # train() itself is intact
    assert not r.ok and not r.script.ok
    assert r.script.error.startswith("RuntimeError: boom (at tiny.py:")
    assert "raise RuntimeError('boom')" in r.script.error


@needs_frameworks
def test_the_command_line(tmp_path):
    """``transpile parity --training SPEC``: exit 0 on a match and 1 on a mismatch; JSON; a table."""
    (tmp_path / "tiny.py").write_text(TINY, encoding="utf-8")
    good = _write_tiny(tmp_path, "good")
    bad = _write_tiny(tmp_path, "bad", "", "lr=0.1", "lr=0.2")
    proc = _cli(["parity", "--training", good, "--json"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [data] = json.loads(proc.stdout)
    assert data["ok"] and data["verdict"] == "match" and len(data["ms_losses"]) == 5 and data["script"]["ok"]
    proc = _cli(["parity", "--training", bad], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split(" | ")[0].strip() == "sample" and "loss differs from step 1" in lines[2]
    assert lines[-1] == "0 of 1 training samples match"
    assert not list(tmp_path.glob("*.ckpt")), "the scripts run in a temporary directory"


def _cli(args, cwd):
    return cli_here.run(args, cwd)  # in this process: its children come from the warm server the runs above started


# -- without the frameworks -----------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ('steps = 0\n', "steps must be a positive integer"),
    ('steps = 2.5\n', "steps must be a positive integer"),
    ('loss_rtol = -1e-4\n', "must not be negative"),
    ('weight_atol = "small"\n', "expected a number"),
    ('model = "build_model("\n', "not an expression"),
    ('train = "train(model)"\n', "train is the name of the function"),
    ('frozen = "backbone."\n', "frozen is a list"),
    ('script = "yes"\n', "script must be true or false"),
    ('tolerance = 1e-4\n', "unknown fields"),
])
def test_bad_training_specs_are_rejected(tmp_path, body, message):
    path = tmp_path / "x.training.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SpecError, match=message):
        load_training_spec(path)


def test_specs_are_named_and_round_trip(tmp_path):
    with pytest.raises(SpecError, match="named <sample>.training.toml"):
        load_training_spec(tmp_path / "x.toml")
    spec = load_training_spec(SAMPLES / "train_frozen_backbone.training.toml")
    assert type(spec).from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert spec.source == SAMPLES / "train_frozen_backbone.py" and spec.model == "build_model()"


def test_a_script_runs_in_an_empty_directory_and_its_error_is_located(tmp_path, monkeypatch):
    script = tmp_path / "job.py"
    script.write_text('print("hello")\nopen("out.txt", "w").write("x")\n\ndef fail():\n'
                      '    raise ValueError("bad value")\n\nfail()\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    run = run_script(script, timeout=60)
    assert not run.ok and run.files == ("out.txt",) and run.output == "hello"
    assert run.error == "ValueError: bad value (at job.py:5: raise ValueError(\"bad value\"))"
    assert not (tmp_path / "out.txt").exists()
    script.write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    assert run_script(script, timeout=60).error == "exit status 3"
    script.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    run = run_script(script, timeout=2)
    assert not run.ok and run.error.startswith("timed out after 2 s")


def test_the_training_flag_is_wired_and_checks_its_arguments(capsys):
    from transpile.cli.main import _parser
    from transpile.cli.parity import cmd_parity

    args = _parser().parse_args(["parity", "--training", "train_tiny_lm", "--converted", "out"])
    assert args.func is cmd_parity and args.training and args.targets == ["train_tiny_lm"]
    assert main(["parity", "--training", "--model", "Net()"]) == 2
    assert "--training takes training specs" in capsys.readouterr().err
    assert main(["parity", "--training", "no_such_sample", "--samples", str(SAMPLES)]) == 2
    assert "no_such_sample.training.toml" in capsys.readouterr().err
    assert main(["parity", "--training", "elsewhere/job.py"]) == 2  # the spec beside the script
    assert "elsewhere/job.training.toml" in capsys.readouterr().err


def test_the_table_and_json():
    spec = load_training_spec(SAMPLES / "train_frozen_backbone.training.toml")
    ok = TrainingResult("a", spec, True, torch_losses=[2.0, 1.0], ms_losses=[2.0, 1.0000001],
                        loss_diff=OutputDiff(0, (2,), (2,), 1e-7, max_rel_diff=1e-7),
                        weights=[OutputDiff(0, (3,), (3,), 2e-7, "head.0.weight")],
                        frozen=[{"name": "backbone.conv1.weight", "torch_unchanged": True, "ms_unchanged": True}],
                        script=ScriptRun(True, 3.2, files=("head.ckpt",)))
    bad = dataclasses.replace(ok, sample="b", loss_diff=OutputDiff(0, (2,), (2,), 0.5, max_rel_diff=0.5, allclose=False),
                              first_loss_mismatch=1,
                              frozen=[{"name": "backbone.conv1.weight", "torch_unchanged": True, "ms_unchanged": False}],
                              script=ScriptRun(False, 1.0, "TypeError: no (at x.py:3: f())"))
    lines = format_training_table([ok, bad]).splitlines()
    assert [c.strip() for c in lines[0].split(" | ")] == [
        "sample", "converted", "steps", "loss max rel diff", "weights max abs diff", "frozen", "script", "verdict"]
    assert [c.strip() for c in lines[2].split(" | ")] == ["a", "yes", "2", "1e-07", "2e-07", "1/1 kept", "ok 3 s", "match"]
    assert [c.strip() for c in lines[3].split(" | ")][:7] == ["b", "yes", "2", "0.5", "2e-07", "0/1 kept", "FAILED"]
    assert bad.verdict == ("loss differs from step 1 (max rel diff 0.5 > 0.0001); frozen weights moved: "
                           "backbone.conv1.weight (MindSpore); converted script: TypeError: no (at x.py:3: f())")
    assert ok.ok and not bad.ok
    assert format_training([ok, bad]).splitlines()[-1] == "1 of 2 training samples match"
    data = training_dict(bad)
    assert data["ok"] is False and data["first_loss_mismatch"] == 1 and data["script"]["ok"] is False
    assert json.loads(json.dumps(data)) == data
