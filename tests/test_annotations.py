"""MS210: torch types in annotations are converted, and what is left there is counted
apart from code (``Stats.annotations``) through the cache, the report and the CLI.

(That the converted annotations exist and name the MindSpore types when the module runs
is tests/differential/test_annotation_types.py.)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from transpile import convert_code, convert_paths
from transpile.rewrites.analysis.annotations import forward_reference_names, type_positions
from transpile.rewrites.table_calls import tables

import libcst as cst

# No MindSpore counterpart: torch.memory_format and torch.layout stay in annotations.
LEFT = ("torch.memory_format", "torch.layout")
SOURCE = '''\
from typing import Optional

import torch


def f(ids: torch.LongTensor, device: Optional[torch.device], fmt: torch.memory_format) -> "torch.FloatTensor":
    kind: torch.layout = None
    if isinstance(ids, torch.LongTensor):
        return torch.abs(ids)
    return ids
'''


def _stats(source: str):
    result = convert_code(source)
    assert not result.failed, result.diagnostics
    return result


def test_counts_annotations_apart_from_code() -> None:
    result = _stats(SOURCE)
    # converted: the three types (parameter, Optional[...] and forward reference) and torch.abs
    assert (result.stats.converted, result.stats.unconverted, result.stats.annotations) == (4, 1, len(LEFT))
    assert result.stats.rate() == 4 / 5  # the annotations are not in the rate
    marked = [d for d in result.diagnostics if d.code == "MS210"]
    assert sorted(d.message.split(" ")[0] for d in marked) == sorted(LEFT)
    assert [d.message.split(":")[0] for d in result.diagnostics if d.code == "MS201"] == ["torch.LongTensor"]


def test_outside_annotations_nothing_changes() -> None:
    """isinstance tests the dtype, type(x) is ... too, a default value is a value."""
    source = ("import torch\n\n\ndef f(x, d=torch.LongTensor):\n"
              "    return isinstance(x, torch.LongTensor) or type(x) is torch.cuda.FloatTensor\n")
    result = _stats(source)
    assert result.stats.annotations == 0 and result.stats.unconverted == 3
    code = "\n".join(line for line in result.code.splitlines() if not line.lstrip().startswith("#"))
    assert code.count("torch.LongTensor") == 2 and "torch.cuda.FloatTensor" in code


@pytest.mark.parametrize("source, types", [
    ("import torch\n\n\ndef f(x: torch.LongTensor) -> torch.device:\n    return x\n", 2),
    ("import torch\n\n\nclass C:\n    ids: 'torch.LongTensor'\n    device: torch.device\n", 2),
    ("from __future__ import annotations\n\nimport torch\nfrom torch import Tensor\n\n\ndef f(x: Tensor | None):\n    return x\n", 1),
    ("import torch.nn as nn\nfrom torch import Tensor\n\n\ndef f(m: 'nn.Module', x: 'Tensor') -> 'list[Tensor]':\n    return x\n", 3),
])
def test_a_torch_import_used_only_by_annotations_goes(source: str, types: int) -> None:
    result = _stats(source)
    assert "torch" not in result.code and result.stats.annotations == 0, result.code
    assert (result.stats.converted, result.stats.unconverted) == (types, 0)


def test_a_type_left_in_an_annotation_keeps_the_import() -> None:
    result = _stats("import torch\n\n\ndef f(fmt: torch.memory_format):\n    return fmt\n")
    # kept, and tried (MS903): the annotation needs torch only where it is installed
    assert result.code.startswith("try:\n    import torch\n") and "# transpile: MS210 torch.memory_format" in result.code
    assert (result.stats.converted, result.stats.unconverted, result.stats.annotations) == (0, 0, 1)


def _annotation(text: str) -> cst.Annotation:
    return cst.parse_statement(f"x: {text}\n").body[0].annotation


@pytest.mark.parametrize("text, types", [
    ("Optional[torch.Tensor]", ["Optional", "torch.Tensor"]),
    ("torch.Tensor | None", ["torch.Tensor", "None"]),
    ("Callable[[torch.Tensor, int], 'torch.Size']", ["Callable", "torch.Tensor", "int", "'torch.Size'"]),
    ("Literal['torch.Tensor']", ["Literal"]),
    ("Annotated[torch.Tensor, torch.float32]", ["Annotated", "torch.Tensor"]),
    ("typing.Dict[str, torch.LongTensor]", ["typing.Dict", "str", "torch.LongTensor"]),
])
def test_type_positions(text: str, types: list[str]) -> None:
    annotation = _annotation(text)
    positions = type_positions(annotation)
    found = [cst.Module([]).code_for_node(n) for n in _walk(annotation.annotation) if id(n) in positions]
    assert sorted(found) == sorted(types)


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


@pytest.mark.parametrize("annotation, converted, left", [
    ("\"Optional['torch.Tensor']\"", "\"Optional['ms.Tensor']\"", 0),
    ("'Dict[\"torch.layout\", torch.device]'", "'Dict[\"torch.layout\", str]'", 1),
    ('b"torch.Tensor"', 'b"torch.Tensor"', 0),  # bytes: no forward reference
    ('"not a type"', '"not a type"', 0),
])
def test_strings_in_strings_and_strings_that_are_no_types(annotation: str, converted: str, left: int) -> None:
    result = _stats(f"import torch\n\n\ndef f(x: {annotation}):\n    return x\n")
    assert f"def f(x: {converted}):" in result.code and result.stats.annotations == left, result.code
    # the torch import stays only for the type left in the annotation
    assert ("import torch" in result.code) == bool(left), result.code


def test_forward_reference_names() -> None:
    assert forward_reference_names(_annotation("Optional['ms.Tensor']")) == {"ms"}
    assert forward_reference_names(_annotation("'Optional[\"nn.Cell\"]'")) == {"Optional", "nn"}
    assert forward_reference_names(_annotation("Literal['np.x']")) == set()


@pytest.mark.framework
def test_annotation_table_types_exist_on_both_sides() -> None:
    import builtins

    from differential.symbols import resolve

    for source, target in tables().annotations.items():
        resolve(source)
        assert getattr(builtins, target) if "." not in target else resolve(target)


def test_the_count_goes_through_the_cache(tmp_path: Path) -> None:
    from transpile.io.cache import ResultCache

    result = _stats(SOURCE)
    cache = ResultCache(tmp_path)
    cache.put("ab" * 32, result)
    assert cache.get("ab" * 32).stats == result.stats and result.stats.annotations == len(LEFT)


def test_the_count_goes_through_the_report_and_the_cli(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "b.py").write_text("import torch\n\n\ndef g(x: torch.memory_format):\n    return x\n")
    files = [tmp_path / "a.py", tmp_path / "b.py"]
    report = convert_paths(files, write=False, cache=False)
    assert (report.annotation_uses, report.unconverted_uses, report.converted_uses) == (len(LEFT) + 1, 1, 4)
    proc = subprocess.run([sys.executable, "-m", "transpile", "convert", "--diff", *files], capture_output=True, text=True)
    assert proc.stderr.splitlines()[-1].endswith(f"; {len(LEFT) + 1} torch uses left in annotations (not counted)")
    proc = subprocess.run([sys.executable, "-m", "transpile", "convert", "--diff", "--format", "json", *files],
                          capture_output=True, text=True)
    summary = json.loads(proc.stderr)["summary"]
    assert (summary["annotation_uses"], summary["unconverted_uses"], summary["converted_uses"]) == (len(LEFT) + 1, 1, 4)
