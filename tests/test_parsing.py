"""engine.parsing: LibCST's tree of a source, built without per-node validation."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTNode

from transpile.engine import parsing

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "samples").rglob("*.py")) + sorted((ROOT / "tests" / "fixtures").rglob("*.py"))[:200]


def test_the_sources_are_there():
    assert len(SOURCES) > 50


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_tree_is_libcsts(path):
    source = path.read_text(encoding="utf-8")
    try:
        expected = cst.parse_module(source)
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            parsing.parse_module(source)
        return
    tree = parsing.parse_module(source)
    assert tree.deep_equals(expected)
    assert tree.code == source


def test_validation_is_back_after_a_parse():
    parsing.parse_module("x = 1\n")
    assert CSTNode.__post_init__ is parsing._VALIDATE
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")  # a hand-built node is still checked


def test_validation_is_back_after_a_failed_parse():
    with pytest.raises(cst.ParserSyntaxError):
        parsing.parse_module("def (:\n")
    assert CSTNode.__post_init__ is parsing._VALIDATE
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_the_skip_holds_only_while_libcsts_hook_only_validates():
    # the guard reads LibCST's hook: on this LibCST it does nothing but call _validate
    assert parsing._ONLY_VALIDATES
