"""The rewrites change the shared per-file state only through FileContext's write interface.

A pass, hook or analysis may call ``ctx.report``, ``ctx.mark``, ``ctx.count_converted``,
``ctx.define``, ``ctx.freeze``, ``ctx.claim``, ... but never assign, delete or mutate an
attribute of the context itself (``ctx.stats.converted += 1``, ``ctx.frozen.add(...)``,
``ctx.pending[:] = ...``): what one pass writes, the next reads, so every write goes through
one place that says what it means.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REWRITES = Path(__file__).resolve().parent.parent / "rewrites"
MUTATORS = frozenset({"append", "add", "update", "pop", "popitem", "discard", "extend", "setdefault", "remove",
                      "clear", "insert", "sort", "reverse", "__setitem__", "__delitem__"})


def _context_attribute(node: ast.AST) -> bool:
    """``ctx.x...`` or ``self.ctx.x...``: an attribute (or item) reached through a context."""
    seen_attribute = False
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and node.attr == "ctx":
            return seen_attribute
        seen_attribute = seen_attribute or isinstance(node, ast.Attribute)
        node = node.value
    return isinstance(node, ast.Name) and node.id == "ctx" and seen_attribute


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        found = []
        for target in node.targets:
            found.extend(target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
        return found
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def direct_writes(source: str) -> list[int]:
    """The lines of ``source`` that write the context's state without its interface."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if any(_context_attribute(t) for t in _targets(node)):
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
              and _context_attribute(node.func.value)):
            lines.append(node.lineno)
    return sorted(set(lines))


@pytest.mark.parametrize("code", [
    "self.ctx.stats.converted += 1",
    "ctx.stats.unconverted = 0",
    "ctx.definitions[name] = source",
    "self.ctx.pending[:] = [p for p in self.ctx.pending if p.code != 'MS501']",
    "del ctx.definitions['_x']",
    "self.ctx.frozen.add(id(node))",
    "ctx.frozen.update(ids)",
    "self.ctx.imports.add(node)",
    "ctx.definitions.pop('_TensorRows', None)",
    "self.ctx.new_imports.setdefault(binding, module)",
    "a, self.ctx.package = 1, 2",
])
def test_the_checker_finds_a_direct_write(code):
    assert direct_writes(code) == [1]


@pytest.mark.parametrize("code", [
    "self.ctx.count_converted()",
    "ctx.report(node, 'MS201', 'message')",
    "self.ctx.define(name, source)",
    "self.ctx.freeze(node)",
    "x = self.ctx.stats.converted",
    "names.add(self.ctx.filename)",
    "self.stack.append(node)",
])
def test_the_checker_allows_the_interface_and_reads(code):
    assert direct_writes(code) == []


def test_no_rewrite_writes_the_context_directly():
    found = []
    for path in sorted(REWRITES.rglob("*.py")):
        for line in direct_writes(path.read_text()):
            found.append(f"{path.relative_to(REWRITES.parent)}:{line}")
    assert not found, "shared state written outside FileContext's write interface:\n" + "\n".join(found)
