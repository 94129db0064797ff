"""Definitions the tool writes beside the code are recognised as its own on the next run.

A converted file converted again must not change: its emitted helpers (``_torch_...``
and a few fixed names, ``rewrites.syntax.is_emitted_name``) are left as written, never
converted as user code nor emitted a second time. That holds only if every name the
rewrites emit is recognised, which this test checks on every fixture and sample.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from transpile import convert_code
from transpile.rewrites.syntax import is_emitted_name

ROOT = Path(__file__).resolve().parents[1]
INPUTS = sorted([*ROOT.glob("tests/fixtures/*/*.py"), *ROOT.glob("samples/*.py")])
INPUTS = [p for p in INPUTS if not p.name.endswith(".expected.py")]


def _top_level_definitions(code: str) -> set[str]:
    return {n.name for n in ast.parse(code).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


@pytest.mark.slow
def test_every_emitted_definition_is_recognised() -> None:
    emitted: dict[str, str] = {}
    for path in INPUTS:
        source = path.read_text(encoding="utf-8")
        result = convert_code(source, filename=path.name)
        if result.failed:
            continue
        for name in _top_level_definitions(result.code) - _top_level_definitions(source):
            emitted.setdefault(name, path.name)
    assert len(emitted) > 20  # the inputs exercise the helpers: an empty set would prove nothing
    assert {n: f for n, f in emitted.items() if not is_emitted_name(n)} == {}


@pytest.mark.parametrize("name", ["_torch_selects_nothing", "_py_xor", "_einsum_at_run_time"])
def test_known_names(name: str) -> None:
    assert is_emitted_name(name)


@pytest.mark.parametrize("name", ["forward", "_helper", "torch_thing"])
def test_user_names_are_not_taken_for_emitted_ones(name: str) -> None:
    assert not is_emitted_name(name)
