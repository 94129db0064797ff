"""Each pass reads only the facts it declares (``Pass.reads``).

Every fixture and sample is converted with each pass's handlers (and its constructor)
marked as they run, through a facts object that notes every fact read and by whom: a read
the running pass does not declare, through a hook or an analysis it calls too, fails.
tests/test_pass_rules.py checks the reads written in each pass's own source, which covers
the code no case reaches.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from transpile.rewrites import ALL_PASSES, STAGES, default_pipeline
from transpile.rewrites.facts import FileFacts

ROOT = Path(__file__).resolve().parent.parent
INPUTS = sorted([*(ROOT / "tests" / "fixtures").glob("*/*.py"), *(ROOT / "samples").glob("*.py")])
INPUTS = [p for p in INPUTS if not p.name.endswith(".expected.py")]


class _Audit:
    def __init__(self) -> None:
        self.reader = None  # the pass whose code runs
        self.read: dict[str, set[str]] = {}  # pass id -> facts it read


class _AuditedFacts:
    """The file's facts, noting who reads which."""

    __slots__ = ("_facts", "_audit")

    def __init__(self, facts: FileFacts, audit: _Audit) -> None:
        object.__setattr__(self, "_facts", facts)
        object.__setattr__(self, "_audit", audit)

    def __getattr__(self, name: str):
        reader = self._audit.reader
        if reader is not None:
            self._audit.read.setdefault(reader.id, set()).add(name)
        return getattr(self._facts, name)


def _audited(pass_type, audit: _Audit):
    def marked(method):
        def run(self, *args):
            outer, audit.reader = audit.reader, pass_type
            try:
                return method(self, *args)
            finally:
                audit.reader = outer
        return run

    handlers = {name: marked(getattr(pass_type, name)) for name in dir(pass_type)
                if name.startswith(("visit_", "leave_")) or name == "__init__"}
    return type(pass_type.__name__, (pass_type,), handlers)


@pytest.fixture(scope="module")
def reads() -> dict[str, set[str]]:
    audit = _Audit()
    pipeline = default_pipeline()
    pipeline.stages = tuple(tuple(_audited(p, audit) for p in stage) for stage in STAGES)
    pipeline.analyse = lambda module, ctx: _AuditedFacts(FileFacts.build(module, ctx), audit)
    for path in INPUTS:
        pipeline.run(path.read_text(encoding="utf-8"), path.name)
    return audit.read


def test_every_read_is_declared(reads):
    undeclared = {p.id: sorted(reads.get(p.id, set()) - p.reads) for p in ALL_PASSES}
    assert not {k: v for k, v in undeclared.items() if v}, f"facts read but not in the pass's reads: {undeclared}"


def test_the_cases_read_facts(reads):
    """The audit sees reads at all (and through hooks: MS201's tables read facts in hooks)."""
    assert sum(map(len, reads.values())) > 20 and reads.get("MS201")


def test_declared_facts_exist():
    facts = {name for name in dir(FileFacts) if not name.startswith("_")} | set(FileFacts.__dataclass_fields__)
    unknown = {p.id: sorted(p.reads - facts) for p in ALL_PASSES if p.reads - facts}
    assert not unknown, f"passes declare facts FileFacts does not have: {unknown}"


def test_facts_are_read_only():
    import dataclasses

    import libcst as cst

    from transpile.engine.context import FileContext
    from transpile.engine.import_table import ImportTable

    source = ("import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = nn.Linear(2, 2)\n        self.register_buffer('b', None)\n")
    module = cst.parse_module(source)
    ctx = FileContext(source, "m.py", {})
    ctx.imports = ImportTable.from_module(module)
    facts = FileFacts.build(module, ctx)
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.names = None
    cls = module.body[1]
    with pytest.raises(TypeError):
        facts.registered_buffers(cls)["c"] = None
    from transpile.rewrites.table_calls import tables
    layers = facts.layer_attributes(cls, tables())
    assert "fc" in layers
    with pytest.raises(TypeError):
        layers["other"] = layers["fc"]
    with pytest.raises(AttributeError):
        facts.names.labels.add(0)
