"""The benchmarks' harness (benchmarks/models, shared by benchmarks/sampled): the MindSpore
parameters that get no torch tensor by design, and the value each must keep; the torch-based
dependencies the sampled benchmark converts with a package."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).parent.parent / "benchmarks"
MODELS = BENCH / "models"


def _torch_side():
    spec = importlib.util.spec_from_file_location("bench_torch_side", MODELS / "torch_side.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# norm layers without affine parameters, of several classes (a package's own norm too),
# registered and held in a plain list; one affine layer whose weights torch has
SOURCE = '''
import torch
from torch import nn


class OwnNorm(nn.BatchNorm1d):
    pass


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn2 = nn.BatchNorm2d(4, affine=False)
        self.bn3 = nn.BatchNorm3d(4, affine=False)
        self.gn = nn.GroupNorm(2, 4, affine=False)
        self.inorm = nn.InstanceNorm2d(4)
        self.own = OwnNorm(4, affine=False)
        self.kept = nn.BatchNorm2d(4)
        self.blocks = [nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4, affine=False))]

    def forward(self, x):
        return x
'''


@pytest.mark.framework
def test_every_norm_layer_without_affine_parameters_is_declared_and_nothing_else():
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    from transpile import convert_code
    from transpile.parity.weights import ms_parameters, weight_map

    namespace: dict = {}
    exec(compile(SOURCE, "<torch>", "exec"), namespace)
    model = namespace["Net"]()
    declared = _torch_side()._ms_only(model)
    assert declared == {
        "bn2.gamma": 1.0, "bn2.beta": 0.0, "bn3.bn2d.gamma": 1.0, "bn3.bn2d.beta": 0.0,
        "gn.gamma": 1.0, "gn.beta": 0.0, "inorm.gamma": 1.0, "inorm.beta": 0.0,
        "own.gamma": 1.0, "own.beta": 0.0, "blocks.0.1.gamma": 1.0, "blocks.0.1.beta": 0.0,
    }

    # the converted model: exactly the parameters no torch tensor maps to are declared,
    # and each holds the declared value
    converted = convert_code(SOURCE).code
    ms_namespace: dict = {}
    exec(compile(converted, "<mindspore>", "exec"), ms_namespace)
    params = ms_parameters(ms_namespace["Net"]())
    unmapped = set(params) - set(weight_map(model).mapping.values())
    assert unmapped == set(declared)
    for name in unmapped:
        assert np.all(params[name].asnumpy() == declared[name]), name


def _sampled_run():
    spec = importlib.util.spec_from_file_location("bench_sampled_run", BENCH / "sampled" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_torch_based_dependencies_are_converted_with_the_settings_of_benchmarks_models():
    import tomllib

    run = _sampled_run()
    shared = tomllib.loads((MODELS / "models.toml").read_text(encoding="utf-8"))["packages"]
    config = {"packages": {"a": {"blank_init": [], "converted_with": ["torchvision", "timm"]},
                           "b": {"blank_init": [], "converted_with": ["torchvision"]}, "c": {"blank_init": []}}}
    packages = run.with_converted_dependencies(config)["packages"]
    assert list(packages) == ["a", "b", "c", "timm", "torchvision"]
    assert packages["torchvision"] == shared["torchvision"] and packages["timm"] == shared["timm"]
    with pytest.raises(SystemExit, match="not-configured"):
        run.with_converted_dependencies({"packages": {"a": {"converted_with": ["not-configured"]}}})
    # a [dependencies] entry configures one benchmarks/models never converts, or replaces its settings
    own = {"packages": {"a": {"converted_with": ["only-here", "timm"]}},
           "dependencies": {"only-here": {"blank_init": ["x"]}, "timm": {"blank_init": []}}}
    assert run.with_converted_dependencies(own)["packages"] == {
        "a": {"converted_with": ["only-here", "timm"]}, "only-here": {"blank_init": ["x"]}, "timm": {"blank_init": []}}
    # what the sampled benchmark lists: each dependency configured by benchmarks/models or its own [dependencies]
    drawn = tomllib.loads((BENCH / "sampled" / "models.toml").read_text(encoding="utf-8"))
    listed = {d for entry in drawn["packages"].values() for d in entry.get("converted_with", [])}
    assert listed and listed <= set(shared) | set(drawn.get("dependencies", {}))


def test_a_package_finds_its_own_distribution_metadata_beside_the_converted_code(tmp_path):
    import importlib.metadata
    import sys

    run = _sampled_run()
    run.harness.WORK = tmp_path
    copied = run.copy_distribution_metadata(sys.executable, ["libcst"])
    found = list(importlib.metadata.distributions(path=[str(tmp_path / "converted")]))
    assert copied > 0 and [d.metadata["Name"] for d in found] == ["libcst"]
    assert found[0].version == importlib.metadata.version("libcst")


@pytest.mark.framework
def test_an_output_bundle_is_compared_field_by_field_and_the_numbers_beside_it_are_not(monkeypatch):
    """A model returning a dataclass (open-moonvit's MoonViTOutput: features, offsets, grid
    sizes) gives both sides the same tensors in field order; Python numbers are left out."""
    import dataclasses

    torch = pytest.importorskip("torch")
    mindspore = pytest.importorskip("mindspore")
    monkeypatch.syspath_prepend(str(MODELS))  # ms_side imports verdict from its folder
    spec = importlib.util.spec_from_file_location("bench_ms_side", MODELS / "ms_side.py")
    ms_side = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ms_side)

    @dataclasses.dataclass
    class Output:
        features: object
        offsets: object
        grid_shapes: list

    features, offsets = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([0, 2], dtype=np.int32)
    torch_out = _torch_side()._flatten(Output(torch.from_numpy(features), torch.from_numpy(offsets), [(1, 2)]))
    ms_out = ms_side._flatten(Output(mindspore.Tensor(features), mindspore.Tensor(offsets), [(1, 2)]))
    assert [path for path, _ in torch_out] == ["[0]", "[1]"]
    for (_, got_torch), got_ms, want in zip(torch_out, ms_out, (features, offsets), strict=True):
        np.testing.assert_array_equal(got_torch, want)
        np.testing.assert_array_equal(got_ms, want)
    with pytest.raises(TypeError, match="returned a str"):
        _torch_side()._flatten("not a tensor")


def _hf_run():
    spec = importlib.util.spec_from_file_location("bench_hf_run", BENCH / "hf" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hf_benchmark_figures_and_first_errors():
    """The Hugging Face benchmark's own figures: the conversion's rate over every file's
    torch uses, its failed files with their first error; a run's first error with the
    converted file:line it broke at."""
    run = _hf_run()
    conv = {"t/a.py": {"status": "converted", "errors": [], "converted_uses": 9, "unconverted": 1},
            "t/b.py": {"status": "failed", "errors": ["t/b.py:3:1: MS000 error: x", "more"], "converted_uses": 0,
                       "unconverted": 0},
            "t/c.py": {"status": "unchanged", "errors": [], "converted_uses": 0, "unconverted": 0}}
    figures = run.conversion_figures(conv, 12.34)
    assert figures == {"files": 3, "changed": 1, "failed": 1, "failed_files": {"t/b.py": ["t/b.py:3:1: MS000 error: x"]},
                       "rate": 0.9, "seconds": 12.3}
    row = {"torch_error": None, "tolerance": 1e-4, "results": {
        "PYNATIVE": {"error": "import converted module: TypeError: boom\nmore", "site": {"file": "t/a.py", "line": 7}},
        "GRAPH": {"error": None, "match": True}}}
    assert run.first_error(row, "PYNATIVE") == ("build error", "t/a.py:7: import converted module: TypeError: boom")
    assert run.first_error(row, "GRAPH") == ("match", "")
    row["results"]["GRAPH"] = {"error": "run (GRAPH): ValueError: no", "site": None}
    assert run.first_error(row, "GRAPH") == ("run error", "run (GRAPH): ValueError: no")
    assert run.verdict_table([{**row, "name": "m"}]).splitlines()[-1] == (
        "| m | build error | run error | - | t/a.py:7: import converted module: TypeError: boom |")


def test_hf_benchmark_import_report_groups_failures_by_place():
    run = _hf_run()
    assert run.module_name("transformers/models/bert/modeling_bert.py") == "transformers.models.bert.modeling_bert"
    assert run.module_name("transformers/models/bert/__init__.py") == "transformers.models.bert"
    site = {"file": "transformers/cache_utils.py", "line": 9, "code": "x"}
    report = {"seconds": 3.0, "modules": {
        "a": {"ok": True}, "b": {"ok": False, "error": "ValueError: v", "site": site},
        "c": {"ok": False, "error": "ValueError: v", "site": site},
        "d": {"ok": False, "error": "NameError: n", "site": None}}}
    lines = run.import_text(report).splitlines()
    assert lines[0].startswith("- import of every converted module: 1/4 import (3 s); 3 fail, at 2 distinct places")
    assert lines[1:] == ["  - 2 modules: transformers/cache_utils.py:9: ValueError: v",
                         "  - 1 modules: (no frame in converted code): NameError: n"]
    assert run.import_text({"error": "timed out after 5 s", "modules": {}}).endswith("timed out after 5 s")


def test_hf_benchmark_graph_cause_and_generated_variety():
    """A GRAPH error's rule (from its message) and its compiled call path (MindSpore's
    "Traceback of Net Construct Code", relative to the converted tree, repeats merged); how
    many distinct tokens torch generated per row after the prompt."""
    run = _hf_run()
    root = "/w/converted"
    detail = ("TypeError: x\n- The Traceback of Net Construct Code:\n"
              "# 0 In file /w/converted/t/m.py:771~782, 73~9\n        y = self.t(\n"
              "# 1 In file /w/converted/t/m.py:771, 8~9\n"
              "# 2 In file /w/converted/t/u.py:412, 13~37\n        not f()\n")
    cause = run.graph_cause({"error": "run (GRAPH): RuntimeError: Unsupported statement 'Try'. More", "detail": detail},
                            root)
    assert cause == {"rule": run.GRAPH_RULES[0][1], "path": ["t/m.py:771", "t/u.py:412"]}
    assert run.graph_cause({"error": "run (GRAPH): ValueError: odd thing. More", "detail": ""}, root) == {
        "rule": "run (GRAPH): ValueError: odd thing", "path": []}
    gen = {"prompt_length": 2, "expected": [[5, 6, 7, 7, 7], [5, 6, 1, 2, 3]]}
    assert run.generated_variety(gen) == "distinct generated tokens per row (torch): 1, 3 of 3"
    assert run.generated_variety({"expected": [[1]]}) == "distinct generated tokens not known"


def test_a_subset_of_the_models_converts_the_packages_they_import_and_no_other(tmp_path):
    """benchmarks/models/run.py --only: the models' packages and what their sources import,
    directly or through another converted package (a comment or a longer name is no import)."""
    run = _sampled_run().harness
    sources = {
        "app": "import util\nfrom helper.x import y\n",
        "helper": "import torch\n# import unused\nimport deep\n",
        "util": "x = 1\n", "deep": "from deep import z\n", "unused": "", "util_extra": "",
        "other": "import app\n",
    }
    dirs = {}
    for name, text in sources.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(text, encoding="utf-8")
        dirs[name] = str(tmp_path / name)
    assert run.imported_packages(dirs, {"app"}) == {"app", "util", "helper", "deep"}
    assert run.imported_packages(dirs, {"util"}) == {"util"}


def test_the_lint_verdict_is_read_inside_the_model_cell_classes_and_compared_with_graph(tmp_path):
    """lint_agreement (issue 32, point 3): a blocking MS5xx finding counts for a model when it
    lies in one of its cell classes (a nested class too); the four outcomes."""
    run = _sampled_run().harness
    agreement = run.lint_agreement
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "class A:\n    def construct(self):\n        try:\n            pass\n        except E:\n            pass\n"
        "\n\nclass B:\n    class Inner:\n        x = 1\n\n    def construct(self):\n        return 1\n",
        encoding="utf-8")
    assert agreement.class_spans((tmp_path / "pkg" / "m.py").read_text()) == {
        "A": (1, 6), "B": (9, 14), "B.Inner": (10, 11)}
    assert agreement.is_blocking("MS510") and not agreement.is_blocking("MS506")
    assert not agreement.is_blocking("MS301")
    conv = {"pkg/m.py": {"graph_lint": [[3, "MS510"], [11, "MS503"]]}}
    assert agreement.model_findings([["pkg/m.py", "A"]], conv, tmp_path) == ["pkg/m.py:3 MS510"]
    assert agreement.model_findings([["pkg/m.py", "B"]], conv, tmp_path) == ["pkg/m.py:11 MS503"]
    assert agreement.model_findings([["pkg/m.py", "B.Inner"], ["other.py", "A"]], conv, tmp_path) == [
        "pkg/m.py:11 MS503"]

    def row(name, classes, graph):
        return {"name": name, "torch_error": None, "results": {"GRAPH": {"built": True, "cell_classes": classes, **graph}}}

    rows = [row("clean", [], {"match": True}), row("refused", [["pkg/m.py", "A"]], {"error": "run (GRAPH): Try"}),
            row("missed", [], {"match": False}), row("alarm", [["pkg/m.py", "A"]], {"match": True}),
            {"name": "unbuilt", "torch_error": None, "results": {"GRAPH": {"built": False, "error": "build"}}}]
    kinds = {r["name"]: (agreement.outcome(r, conv, tmp_path) or {}).get("kind") for r in rows}
    assert kinds == {"clean": "agree, clean", "refused": "agree, refused", "missed": "missed",
                     "alarm": "false alarm", "unbuilt": None}
    text = agreement.report(rows, conv, tmp_path)
    assert text.startswith("- lint and GRAPH agree on 2/4 built models")
    assert "  - missed: missed: mismatch" in text and "  - false alarm: alarm: pkg/m.py:3 MS510" in text


def test_a_run_mode_by_mode_writes_what_it_has_after_each_run_and_counts_only_what_ran(monkeypatch):
    """benchmarks/models/run.py --by-mode: every model in the first mode, then the next; the
    callback sees each result as it comes (results.md/json of a run stopped early), and a
    figure counts the models run in its mode (plus those whose torch side failed), so a
    partial run is no row of zeros for the models not reached."""
    run = _sampled_run().harness
    order, seen = [], []

    def fake_run_ms(name, mode, timeout, deps):
        order.append((name, mode))
        return {"built": True, "match": not (name == "b" and mode == "GRAPH"), "max_abs_diff": 0.0}

    monkeypatch.setattr(run, "run_ms", fake_run_ms)
    models = [{"name": n} for n in ("a", "b", "c")]
    meta = {"a": {}, "b": {}, "c": {"error": "build: boom"}}
    results = run.run_ms_modes(models, meta, ["GRAPH", "PYNATIVE"], 1, 1.0, "", by_mode=True,
                               on_result=lambda res, left: seen.append(left))
    assert order == [("a", "GRAPH"), ("b", "GRAPH"), ("a", "PYNATIVE"), ("b", "PYNATIVE")]
    assert seen == [3, 2, 1, 0]
    # after the GRAPH runs only: a matches, b does not, c's torch side failed (counted, no match)
    partial = {"a": {"GRAPH": results["a"]["GRAPH"]}, "b": {"GRAPH": results["b"]["GRAPH"]}, "c": {}}
    rows = [{"name": n, "family": "cnn", "file": f"{n}.py", "torch_error": meta[n].get("error"),
             "converted": True, "unconverted": 0, "builds": True, "results": partial[n]} for n in "abc"]
    assert "| all | 3 | 3 | 3/3 (100%) | not run | 1/3 (33%) |" in run.family_table(rows)
    rows[0]["results"]["PYNATIVE"] = results["a"]["PYNATIVE"]  # one PYNATIVE run so far: 1 of a and c
    assert "| all | 3 | 3 | 3/3 (100%) | 1/2 (50%) | 1/3 (33%) |" in run.family_table(rows)
    assert "- match in PYNATIVE: 1/2 (50%); model files with every model matching: 1/2" in run.summary(rows)


def test_lint_against_compilation_counts_the_findings_inside_the_model_classes_only():
    """benchmarks/models/lint_vs_compile.py: a model's findings are the MS5xx inside the line
    ranges of its classes (MS506/MS507, about speed, do not predict a failure); the table
    crosses "no finding" with "GRAPH ran without an error"."""
    spec = importlib.util.spec_from_file_location("bench_lint_vs_compile", MODELS / "lint_vs_compile.py")
    lvc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lvc)
    assert lvc.package_relative("/v/site-packages/pkg/sub/m.py", "pkg.sub.m") == "pkg/sub/m.py"
    classes = {"a": {"classes": [("pkg.m", "/v/site-packages/pkg/m.py", 10, 20, "A")], "error": None},
               "b": {"classes": [("pkg.m", "/v/site-packages/pkg/m.py", 30, 40, "B")], "error": None}}
    findings = {"pkg/m.py": [(15, "MS506", "slow"), (35, "MS508", "register_buffer"), (50, "MS501", "outside")]}
    rows = [{"name": "a", "family": "cnn", "results": {"GRAPH": {"match": True}}},
            {"name": "b", "family": "cnn", "results": {"GRAPH": {"error": "run (GRAPH): RuntimeError: x"}}}]
    items = lvc.compare(classes, findings, rows)
    assert [(i["name"], i["lint_clean"], i["compiled"]) for i in items] == [("a", True, True), ("b", False, False)]
    assert items[0]["slow_only"] and items[1]["findings"] == ["pkg/m.py:35 MS508 (B): register_buffer"]
    assert "agree on 2, disagree on 0" in lvc.render(items)
