"""Explain a conversion: which pass changed what, where and why, with the rule's documentation.

Two pure functions back ``transpile passes`` and ``transpile explain``:

* :func:`pass_docs` / :func:`pass_doc`: the passes of the pipeline in their order, each with
  its summary, its stage, the documentation of its rule (the docstring of the module that
  defines it) and its before/after examples;
* :func:`explain_file`: converts a source with its edits recorded and groups them (and the
  diagnostics) by pass, optionally only those at one line.
"""
from __future__ import annotations

import ast
import difflib
import inspect
import sys
from dataclasses import dataclass, field

from .diagnostics import Diagnostic
from .edits import Edit, EditKey
from .passes import Example


@dataclass(frozen=True)
class PassDoc:
    """What a person reads about one pass."""

    id: str
    name: str
    summary: str
    stage: int  # 1-based: the passes of a stage run in one traversal, stages one after the other
    documentation: str  # the docstring of the module that defines the pass ("" when it has none)
    examples: tuple[Example, ...]
    derived_edits: bool = False  # its edits follow from the other passes' (imports): never listed one by one

    def to_dict(self, examples: int | None = None) -> dict:
        """Plain JSON data; ``examples`` limits how many examples are given (None: all)."""
        shown = self.examples if examples is None else self.examples[:examples]
        return {"id": self.id, "name": self.name, "summary": self.summary, "stage": self.stage,
                "documentation": self.documentation, "derived_edits": self.derived_edits,
                "examples": [{"before": e.before, "after": e.after} for e in shown]}


class UnknownPassError(LookupError):
    """A pass id the pipeline does not have; ``known`` lists the ids it has."""

    def __init__(self, pass_id: str, known: list[str]):
        super().__init__(f"no pass {pass_id!r}; the passes are: {', '.join(known)}")
        self.pass_id, self.known = pass_id, known


def _pipeline():
    from .api import _pipeline as default  # the one the library converts with (built once)

    return default()


def _module_doc(pass_type: type) -> str:
    """The docstring of the module defining ``pass_type``: the documentation of its rule."""
    module = sys.modules.get(pass_type.__module__)
    return inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""


def pass_docs() -> list[PassDoc]:
    """Every pass of the default pipeline, in the order they run."""
    return [PassDoc(p.id, p.name, p.summary, number, _module_doc(p), tuple(p.examples), p.derived_edits)
            for number, stage in enumerate(_pipeline().stages, 1) for p in stage]


def pass_doc(pass_id: str) -> PassDoc:
    """The pass with this id (``ms201`` reads as ``MS201``); :class:`UnknownPassError` if none."""
    docs = pass_docs()
    for doc in docs:
        if doc.id == pass_id.strip().upper():
            return doc
    raise UnknownPassError(pass_id, sorted(d.id for d in docs))


@dataclass
class PassExplanation:
    """One pass's part in a conversion: its edits and its diagnostics (at the line asked about)."""

    doc: PassDoc
    edits: list[Edit] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def first_line(self) -> int:
        """Where its first placed edit or diagnostic is (edits in written code come last)."""
        lines = [e.line for e in self.edits if e.line] + [d.line for d in self.diagnostics if d.line]
        return min(lines, default=sys.maxsize)

    def to_dict(self, filename: str) -> dict:
        return {**self.doc.to_dict(examples=1),
                "edits": [{**e.to_dict(), "end_line": e.end_line, "diff": e.diff(filename)} for e in self.edits],
                "diagnostics": [d.to_dict() for d in self.diagnostics]}


@dataclass
class Explanation:
    """What converting one file did, by pass; ``line``: only what touches that line."""

    filename: str
    line: int | None
    failed: bool  # the file could not be converted: ``diagnostics`` says why (MS000 ...)
    changed: bool
    passes: list[PassExplanation]
    diagnostics: list[Diagnostic]  # those of no pass (the file's own errors, ...)
    unplaced_edits: int = 0  # with ``line``: edits in code an earlier pass wrote (they have no line)
    errors: int = 0  # error diagnostics in the whole file, at any line
    line_change: LineChange | None = None  # with ``line``: what the converted file has in its place

    @property
    def has_errors(self) -> bool:
        """Whether the file failed or has errors (``transpile convert`` exits 1 for them too)."""
        return self.failed or self.errors > 0

    def to_dict(self) -> dict:
        return {"file": self.filename, "line": self.line, "failed": self.failed, "changed": self.changed,
                "passes": [p.to_dict(self.filename) for p in self.passes],
                "diagnostics": [d.to_dict() for d in self.diagnostics], "unplaced_edits": self.unplaced_edits,
                "errors": self.errors,
                "line_change": self.line_change.to_dict(self.filename) if self.line_change else None}


@dataclass(frozen=True)
class LineChange:
    """Lines of the input the conversion replaced or removed, and what took their place: the
    whole file's change at a line, whichever passes made it (the imports' too)."""

    first: int  # 1-based, in the input
    before: tuple[str, ...]
    converted_first: int  # 1-based, in the converted code (where ``after`` is, or would be)
    after: tuple[str, ...]

    def diff(self, filename: str) -> str:
        """The change as a diff without context: ``-`` the input's lines, ``+`` the converted ones."""
        head = f"--- {filename}:{self.first}\n+++ {filename}:{self.converted_first} (converted)\n"
        return head + "".join(f"-{t}\n" for t in self.before) + "".join(f"+{t}\n" for t in self.after)

    def to_dict(self, filename: str) -> dict:
        return {"line": self.first, "before": list(self.before), "converted_line": self.converted_first,
                "after": list(self.after), "diff": self.diff(filename)}


def line_change(source: str, code: str, line: int) -> LineChange | None:
    """How the conversion changed ``line`` of ``source`` into ``code`` (None: it did not):
    the block of a line by line comparison of the two that holds the line."""
    before, after = source.splitlines(), code.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag in ("replace", "delete") and i1 < line <= i2:
            if i2 - i1 == j2 - j1:  # as many lines on both sides: each line became the one in its place
                i1, j1 = line - 1, j1 + line - 1 - i1
                i2, j2 = i1 + 1, j1 + 1
            return LineChange(i1 + 1, tuple(before[i1:i2]), j1 + 1, tuple(after[j1:j2]))
    return None


def _import_lines(source: str) -> set[int]:
    """The lines of ``source`` (valid Python) that import statements span."""
    return {n for node in ast.walk(ast.parse(source)) if isinstance(node, (ast.Import, ast.ImportFrom))
            for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)}


def source_lines(source: str) -> int:
    """How many lines ``--line`` may name in ``source``."""
    return len(source.splitlines())


def explain_file(source: str, filename: str = "<string>", line: int | None = None,
                 declined: frozenset[EditKey] = frozenset()) -> Explanation:
    """Convert ``source`` with its edits recorded (``declined``: keys of edits not to make)
    and group the edits and diagnostics by pass, passes in the order of their first line,
    edits in order of lines. With ``line``, only the edits whose span holds that line and
    the diagnostics at it. ValueError for a ``line`` outside the source."""
    if line is not None and not 1 <= line <= source_lines(source):
        raise ValueError(f"line {line} is outside {filename} (lines 1 to {source_lines(source)})")
    from .api import convert_code

    result = convert_code(source, filename=filename, record_edits=True, declined=declined)
    edits, diagnostics = result.edits, result.diagnostics
    unplaced = 0
    if line is not None and not result.failed:  # why a file failed is said whatever the line
        unplaced = sum(1 for e in edits if not e.line)
        edits = [e for e in edits if e.line and e.line <= line <= e.end_line]
        diagnostics = [d for d in diagnostics if d.line == line]
    docs = {d.id: d for d in pass_docs()}
    by_pass: dict[str, PassExplanation] = {}
    for edit in sorted(edits, key=lambda e: (not e.line, e.line, e.col)):
        by_pass.setdefault(edit.pass_id, PassExplanation(docs[edit.pass_id])).edits.append(edit)
    others = []
    for diag in diagnostics:
        if diag.code in docs:
            by_pass.setdefault(diag.code, PassExplanation(docs[diag.code])).diagnostics.append(diag)
        else:
            others.append(diag)
    change = None
    if line is not None and not result.failed:
        change = line_change(source, result.code, line)
        if change is not None and line in _import_lines(source):
            # an import changed: the passes whose edits are derived (the imports') made it
            for doc in docs.values():
                if doc.derived_edits:
                    by_pass.setdefault(doc.id, PassExplanation(doc))
    order = list(docs)
    passes = sorted(by_pass.values(), key=lambda p: (p.first_line, order.index(p.doc.id)))
    return Explanation(filename, line, result.failed, result.changed, passes, others, unplaced, len(result.errors),
                       change)
