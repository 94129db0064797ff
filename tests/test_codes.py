"""Every diagnostic code the tool emits can be looked up (`transpile passes CODE`), and
diagnostics are placed as documented: lines 1-based (one about the whole file at line 1),
columns 0-based in the library's objects and 1-based in everything printed or serialized."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from transpile import convert_code
from transpile.cli.main import main
from transpile.engine.diagnostics import Diagnostic, Severity

REPO = Path(__file__).resolve().parent.parent
CODE = re.compile(r"\bMS\d{3}\b")


def emitted_codes() -> set[str]:
    """Every code written in the tool's source (its passes, engine, file handling, CLI)."""
    found = set()
    for room in ("transpile", "rewrites"):
        for path in (REPO / room).rglob("*.py"):
            found |= set(CODE.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_code_in_the_source_can_be_looked_up(capsys) -> None:
    codes = emitted_codes()
    assert {"MS000", "MS001", "MS201", "MS502", "MS902", "MS999"} <= codes  # the walk finds them
    missing = {}
    for code in sorted(codes):
        status = main(["passes", code])
        out, err = capsys.readouterr()
        if status != 0 or code not in out:
            missing[code] = err.strip()
    assert missing == {}
    main(["passes", "MS503", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["code"] == "MS503" and data["reported_by"]["id"] == "MS501" and "print" in data["description"]


def test_an_unknown_code_is_a_usage_error(capsys) -> None:
    assert main(["passes", "MS998"]) == 2
    assert "MS998" in capsys.readouterr().err


def test_explain_groups_a_pass_s_other_codes_under_it(tmp_path, capsys) -> None:
    """MS502 and MS503 are graph-lint's (MS501) findings: explain shows them with its rule."""
    src = tmp_path / "m.py"
    src.write_text("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
                   "        print(x)\n        return x.numpy()\n", encoding="utf-8")
    main(["explain", str(src), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    by_pass = {p["id"]: [d["code"] for d in p["diagnostics"]] for p in data["passes"]}
    assert by_pass.get("MS501") == ["MS503", "MS502"] and data["diagnostics"] == []


def test_file_level_diagnostics_are_at_line_1(tmp_path, capsys) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("", encoding="utf-8")
    main(["convert", str(empty), "--check"])
    err = capsys.readouterr().err
    assert f"{empty}:1:1: MS000 error: empty file" in err, err
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "gone.py").symlink_to(tmp_path / "nowhere.py")
    main(["convert", str(tmp_path / "tree"), "--check"])
    err = capsys.readouterr().err
    assert f"{tmp_path / 'tree' / 'gone.py'}:1:1: MS001 warning: skipped: broken symlink" in err, err
    assert Diagnostic("MS000", Severity.ERROR, "whole file").line == 1  # the default place: the file's start


def test_columns_are_0_based_in_the_library_1_based_when_printed(tmp_path, capsys) -> None:
    source = "import torch\nx = torch.no_such_api(1)\n"
    [diag] = [d for d in convert_code(source, filename="m.py").diagnostics if d.code == "MS201"]
    assert (diag.line, diag.col) == (2, source.splitlines()[1].index("torch"))  # 0-based, as LibCST counts
    assert diag.format().startswith(f"m.py:2:{diag.col + 1}: ")
    assert diag.to_dict()["col"] == diag.col + 1 and Diagnostic.from_dict(diag.to_dict()) == diag
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    main(["convert", str(path), "--diff", "--format", "json"])
    [printed] = [d for d in json.loads(capsys.readouterr().err)["diagnostics"] if d["code"] == "MS201"]
    assert printed["col"] == diag.col + 1
