"""Inputs at the edges a user meets: a file in another encoding (its coding cookie), syntax
newer than the tool's Python, a notebook that is not one, an earlier output tree inside
the input, and a pipe closed early."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from transpile import convert_code
from transpile.cli.main import main

LATIN1 = "# -*- coding: latin-1 -*-\n# café, naïve: the author's notes\nimport torch\nx = torch.zeros(2)  # é\n"


def _convert(capsys, *args) -> tuple[int, str]:
    status = main(["convert", *map(str, args)])
    return status, capsys.readouterr().err


def test_a_file_in_the_encoding_its_cookie_declares_is_converted_and_written_in_it(tmp_path, capsys) -> None:
    src = tmp_path / "m.py"
    src.write_bytes(LATIN1.encode("latin-1"))
    status, err = _convert(capsys, src, "-o", tmp_path / "out.py")
    assert status == 0, err
    written = (tmp_path / "out.py").read_bytes()
    assert written.decode("latin-1") == convert_code(LATIN1, filename="m.py").code  # in its own encoding
    assert "ops.zeros" in written.decode("latin-1") and "café".encode("latin-1") in written
    # in place: the file stays Latin-1, its cookie true
    status, err = _convert(capsys, src, "--in-place", "--force")
    assert status == 0, err
    assert src.read_bytes() == written
    # a declared encoding wins over UTF-8 even where the bytes would decode as UTF-8 too
    tricky = tmp_path / "tricky.py"
    tricky.write_bytes("# coding: latin-1\nimport torch\ns = 'Ã©'\nx = torch.ones(1)\n".encode("latin-1"))
    _convert(capsys, tricky, "--in-place", "--force")
    assert "s = 'Ã©'".encode("latin-1") in tricky.read_bytes()


def test_a_cookie_naming_no_encoding_is_a_clear_error(tmp_path, capsys) -> None:
    src = tmp_path / "m.py"
    src.write_bytes(b"# coding: no-such-codec\nimport torch\n")
    status, err = _convert(capsys, src, "--check")
    assert status == 1 and "no-such-codec" in err and "Traceback" not in err


@pytest.mark.parametrize("code, what", [
    ("type Vector = list[float]\n", "type"),
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n", "type parameter"),
    ("class Box[T]:\n    pass\n", "type parameter"),
    ("x = f\"{'a' + \"b\"}\"\ny = f\"{\"nested\"}\"\n", "f-string"),
])
def test_syntax_of_python_3_12_is_named_as_such(code, what) -> None:
    result = convert_code("import torch\n" + code, filename="m.py")
    assert result.failed
    [error] = result.errors
    major, minor = sys.version_info[:2]
    assert f"syntax newer than this tool's Python {major}.{minor}" in error.message and what in error.message


def test_a_plain_syntax_error_is_not_called_newer_syntax() -> None:
    [error] = convert_code("import torch\ndef f(:\n", filename="m.py").errors
    assert "newer" not in error.message


@pytest.mark.parametrize("text, expected", [
    ("{not json", "not valid JSON"),
    ('{"cells": [1, 2], "nbformat": 4}', "cell 1 is not a cell"),
    ('{"nbformat": 4}', 'no "cells" list'),
    ('[1, 2]', 'no "cells" list'),
    ('{"cells": [{"cell_type": "code", "source": 3}]}', "cell 1: its source is not text"),
])
def test_a_malformed_notebook_gets_a_clear_message(tmp_path, capsys, text, expected) -> None:
    nb = tmp_path / "nb.ipynb"
    nb.write_text(text, encoding="utf-8")
    status, err = _convert(capsys, nb, "-o", tmp_path / "out.ipynb")
    assert status == 1 and expected in err, err
    assert "object has no attribute" not in err and "Expecting property name" not in err


def test_an_earlier_output_tree_inside_the_input_is_not_converted_again(tmp_path, capsys) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.py").write_text("import torch\nx = torch.zeros(2)\n", encoding="utf-8")
    assert main(["convert", str(project), "-o", str(project / "ms_out")]) == 0
    capsys.readouterr()
    status, err = _convert(capsys, project, "-o", tmp_path / "second")
    assert status == 0, err
    assert not (tmp_path / "second" / "ms_out").exists()
    assert "ms_out" in err and "earlier run" in err
    # a project's own .transpile/ (review decisions) does not make it an output tree
    (project / "sub").mkdir()
    (project / "sub" / ".transpile").mkdir()
    (project / "sub" / ".transpile" / "decisions.toml").write_text("", encoding="utf-8")
    (project / "sub" / "n.py").write_text("import torch\n", encoding="utf-8")
    _convert(capsys, project, "-o", tmp_path / "third")
    assert (tmp_path / "third" / "sub" / "n.py").exists()


def test_a_closed_pipe_exits_141_as_documented(tmp_path) -> None:
    """The reader is gone when the output is written: 141, as a shell reports `cat` killed
    by SIGPIPE. (An output that fits in the pipe is written whole before a `head` leaves:
    0, as for `cat`; the README says so.)"""
    src = tmp_path / "m.py"
    src.write_text("import torch\nx = torch.zeros(2)\n", encoding="utf-8")
    script = f"{sys.executable} -m transpile convert {src} 2>/dev/null | true; exit ${{PIPESTATUS[0]}}"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert proc.returncode == 141, proc.stderr
