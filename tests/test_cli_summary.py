"""What `transpile convert` prints at the end of a run: the diagnostics a user must act on
one per line, the notes grouped by code with counts (each one with --verbose, none with
--quiet or --min-severity warning), and a rate that counts only what it measured."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from transpile.cli.main import main

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

# Notes (info): four MS201 notes; a warning (MS201, no mapping) and the kept import (MS901)
NOTES_SAMPLE = SAMPLES / "weight_norm_conv.py"
UNMAPPED = "import torch\nx = torch.zeros(2)\ny = torch.no_such_api(1)\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(NOTES_SAMPLE, src / "notes.py")
    (src / "unmapped.py").write_text(UNMAPPED, encoding="utf-8")
    return src


def _convert(capsys, *args) -> tuple[int, list[str]]:
    status = main(["convert", *map(str, args)])
    return status, capsys.readouterr().err.splitlines()


def _info_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if " info: " in line]


def test_notes_are_grouped_by_code_warnings_shown_one_by_one(tree, tmp_path, capsys) -> None:
    status, lines = _convert(capsys, tree, "-o", tmp_path / "out")
    assert status == 0
    assert _info_lines(lines) == []  # not one line per note
    assert sum(" MS201 warning: torch.no_such_api" in line for line in lines) == 1
    group = [line for line in lines if line.lstrip().startswith("MS201")]
    assert len(group) == 1 and "4 notes" in group[0] and "api-calls" in group[0], lines
    assert any("--verbose" in line for line in lines)  # says how to see each one
    assert "0 errors, 2 warnings, 4 notes" in lines[-1]


def test_verbose_lists_every_note(tree, tmp_path, capsys) -> None:
    status, lines = _convert(capsys, tree, "-o", tmp_path / "out", "--verbose")
    assert status == 0
    assert len(_info_lines(lines)) == 4


def test_quiet_and_min_severity(tree, tmp_path, capsys) -> None:
    status, lines = _convert(capsys, tree, "-o", tmp_path / "out", "--quiet")
    assert status == 0 and len(lines) == 1 and "2 warnings, 4 notes" in lines[0]
    status, lines = _convert(capsys, tree, "-o", tmp_path / "out2", "--min-severity", "warning")
    assert status == 0
    assert _info_lines(lines) == [] and not any(line.lstrip().startswith("MS201 ") for line in lines)
    assert sum(" warning: " in line for line in lines) == 2
    status, lines = _convert(capsys, tree, "-o", tmp_path / "out3", "--min-severity", "error")
    assert status == 0 and len(lines) == 1
    # errors are never hidden: the summary counts them and the exit status says so
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\ndef f(:\n", encoding="utf-8")
    status, lines = _convert(capsys, bad, "-o", tmp_path / "bad_out.py", "--quiet")
    assert status == 1 and any(" MS000 error: " in line for line in lines)


def test_nothing_converted_gives_no_rate(tmp_path, capsys) -> None:
    """Converting MindSpore code (or converted output again) converts no torch use: no
    "0.0%" rate, but what was found."""
    ms = tmp_path / "ms.py"
    ms.write_text("import mindspore\nfrom mindspore import nn\n\n\nclass Net(nn.Cell):\n    pass\n", encoding="utf-8")
    status, lines = _convert(capsys, ms, "--check")
    assert status == 0 and "%" not in lines[-1] and "no torch use" in lines[-1], lines
    leftover = tmp_path / "left.py"
    leftover.write_text("import torch\nimport mindspore\ny = torch.no_such_api(1)\n", encoding="utf-8")
    status, lines = _convert(capsys, leftover, "--check")
    assert "0.0%" not in lines[-1] and "no torch use converted" in lines[-1] and "1 left" in lines[-1], lines


def test_a_file_that_could_not_be_written_is_not_in_the_rate(tmp_path, capsys) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.py").write_text("import torch\nx = torch.zeros(2)\n", encoding="utf-8")
    (src / "b.py").write_text(UNMAPPED, encoding="utf-8")
    (tmp_path / "out" / "b.py").mkdir(parents=True)  # b.py cannot be written there
    status, lines = _convert(capsys, src, "-o", tmp_path / "out")
    assert status == 1
    assert "1 converted, 0 unchanged, 1 failed" in lines[-2]
    assert "conversion rate 100.0% (1 of 1 torch uses, failed files not measured)" in lines[-2], lines
    main(["convert", str(src), "-o", str(tmp_path / "out"), "--format", "json"])
    data = json.loads(capsys.readouterr().out)["summary"]
    assert data["conversion_rate"] == 1.0 and data["converted_uses"] == 1 and data["unconverted_uses"] == 0
