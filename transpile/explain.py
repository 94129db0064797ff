"""Explain a conversion: which pass changed what, where and why, with the rule's documentation.

Pure functions back ``transpile passes`` and ``transpile explain``:

* :func:`pass_docs` / :func:`pass_doc`: the passes of the pipeline in their order, each with
  its summary, its stage, the documentation of its rule (the docstring of the module that
  defines it) and its before/after examples;
* :func:`code_doc`: any diagnostic code: a pass's id, a code a pass reports besides its
  own, or one no pass reports (the engine's, the file handling's);
* :func:`explain_file`: converts a source with its edits recorded and groups them (and the
  diagnostics) by pass, optionally only those at one line;
* :func:`explain_notebook`: the same for a notebook's code cells, optionally only those of
  one cell (a cell is its 1-based place among all the notebook's cells) or one line of it;
* :func:`line_change`: what a line of the input became in the converted code, all passes
  together (the imports' changes, which are not recorded as edits, show there).
"""
from __future__ import annotations

import ast
import difflib
import inspect
import io
import sys
import tokenize
from dataclasses import dataclass, field

from .engine.diagnostics import CODES_WITHOUT_PASS, Diagnostic
from .engine.edits import Edit, EditKey, place
from .engine.passes import Example


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
    other_codes: tuple[tuple[str, str], ...] = ()  # (code, what it means): what it reports besides its id

    def to_dict(self, examples: int | None = None) -> dict:
        """Plain JSON data; ``examples`` limits how many examples are given (None: all)."""
        shown = self.examples if examples is None else self.examples[:examples]
        return {"id": self.id, "name": self.name, "summary": self.summary, "stage": self.stage,
                "documentation": self.documentation, "derived_edits": self.derived_edits,
                "examples": [{"before": e.before, "after": e.after} for e in shown]}


class UnknownPassError(LookupError):
    """A pass id (or code) the pipeline does not have; ``known`` lists those it has."""

    def __init__(self, pass_id: str, known: list[str]):
        super().__init__(f"no pass or code {pass_id!r}; they are: {', '.join(known)}")
        self.pass_id, self.known = pass_id, known


def _stages():
    """The default pipeline's stages of pass classes: what the library converts with, read
    without building the pipeline (its tables), so a summary's titles cost no conversion set-up."""
    from .rewrites import STAGES

    return STAGES


def _module_doc(pass_type: type) -> str:
    """The docstring of the module defining ``pass_type``: the documentation of its rule."""
    module = sys.modules.get(pass_type.__module__)
    return inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""


def pass_docs() -> list[PassDoc]:
    """Every pass of the default pipeline, in the order they run."""
    return [PassDoc(p.id, p.name, p.summary, number, _module_doc(p), tuple(p.examples), p.derived_edits,
                    tuple(sorted(p.other_codes.items())))
            for number, stage in enumerate(_stages(), 1) for p in stage]


def pass_doc(pass_id: str) -> PassDoc:
    """The pass with this id (``ms201`` reads as ``MS201``); :class:`UnknownPassError` if none."""
    docs = pass_docs()
    for doc in docs:
        if doc.id == pass_id.strip().upper():
            return doc
    raise UnknownPassError(pass_id, sorted(d.id for d in docs))


@dataclass(frozen=True)
class CodeDoc:
    """What a diagnostic code means and what reports it (``reported_by``: a pass, or None
    for the codes of the engine and the file handling)."""

    code: str
    title: str
    description: str
    reported_by: PassDoc | None

    def to_dict(self) -> dict:
        return {"code": self.code, "title": self.title, "description": self.description,
                "reported_by": None if self.reported_by is None else self.reported_by.to_dict(examples=1)}


def code_doc(code: str) -> CodeDoc:
    """The code ``code`` (``ms502`` reads as ``MS502``): a pass's id, a code a pass reports
    besides its own, or one no pass reports; :class:`UnknownPassError` if none."""
    code = code.strip().upper()
    docs = pass_docs()
    for doc in docs:
        if doc.id == code:
            return CodeDoc(code, doc.name, doc.summary, doc)
        for other, meaning in doc.other_codes:
            if other == code:
                return CodeDoc(code, doc.name, meaning, doc)
    if code in CODES_WITHOUT_PASS:
        title, meaning = CODES_WITHOUT_PASS[code]
        return CodeDoc(code, title, meaning, None)
    raise UnknownPassError(code, sorted({d.id for d in docs} | {c for d in docs for c, _ in d.other_codes}
                                        | set(CODES_WITHOUT_PASS)))


def code_title(code: str) -> str:
    """A short name for ``code`` (a pass's name), "" if none is known."""
    try:
        return code_doc(code).title
    except UnknownPassError:
        return ""


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

    def first_place(self, cell_of) -> tuple[int, int]:
        """(cell, line) of its first placed edit or diagnostic; ``cell_of(diagnostic)`` gives a
        diagnostic's cell (0 outside a notebook, where this orders as :attr:`first_line`)."""
        places = ([(e.cell or 0, e.line) for e in self.edits if e.line]
                  + [(cell_of(d), d.line) for d in self.diagnostics if d.line])
        return min(places, default=(sys.maxsize, sys.maxsize))

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
    cell: int | None = None  # a notebook's cell asked about (``line`` is in it)
    notebook: bool = False  # edits and diagnostics are placed by cell and line in the cell

    @property
    def has_errors(self) -> bool:
        """Whether the file failed or has errors (``transpile convert`` exits 1 for them too)."""
        return self.failed or self.errors > 0

    def to_dict(self) -> dict:
        return {"file": self.filename, **({"cell": self.cell} if self.notebook else {}), "line": self.line,
                "failed": self.failed, "changed": self.changed,
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
    cell: int | None = None  # in a notebook: the cell both lines are in

    def diff(self, filename: str) -> str:
        """The change as a diff without context: ``-`` the input's lines, ``+`` the converted ones."""
        if self.cell is None:
            head = f"--- {filename}:{self.first}\n+++ {filename}:{self.converted_first} (converted)\n"
        else:
            head = (f"--- {place(filename, self.first, self.cell)}\n"
                    f"+++ {place(filename, self.converted_first, self.cell)} (converted)\n")
        return head + "".join(f"-{t}\n" for t in self.before) + "".join(f"+{t}\n" for t in self.after)

    def to_dict(self, filename: str) -> dict:
        return {"line": self.first, "before": list(self.before), "converted_line": self.converted_first,
                "after": list(self.after), "diff": self.diff(filename)}


def line_change(source: str, code: str, line: int) -> LineChange | None:
    """How the conversion changed ``line`` of ``source`` into ``code`` (None: it did not).

    The two are compared statement by statement (a statement laid out again over several
    lines is still one), else line by line where ``line`` holds no statement (a comment):
    the block of the comparison that holds the line, only its own statement when the block
    has as many statements on both sides."""
    before, after = source.splitlines(), code.splitlines()
    units = _statements(source), _statements(code)
    if units[0] is None or units[1] is None or not any(a <= line <= b for a, b in units[0]):
        units = [(n, n) for n in range(1, len(before) + 1)], [(n, n) for n in range(1, len(after) + 1)]
    return _change_at(before, after, units[0], units[1], line)


def _statements(code: str) -> list[tuple[int, int]] | None:
    """The first and last line of each statement of ``code`` (Python's logical lines; a
    compound statement's header is one), None when it does not tokenize."""
    spans, start = [], None
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in skipped:
                continue
            start = token.start[0] if start is None else start
            if token.type == tokenize.NEWLINE:
                spans.append((start, token.end[0]))
                start = None
    except (tokenize.TokenError, SyntaxError):
        return None
    return spans


def _change_at(before: list[str], after: list[str], units_before: list[tuple[int, int]],
               units_after: list[tuple[int, int]], line: int) -> LineChange | None:
    """The change at ``line`` from comparing the two texts unit by unit (a unit: a span of lines)."""
    def texts(lines, units):
        return ["\n".join(lines[first - 1:last]) for first, last in units]

    old, new = texts(before, units_before), texts(after, units_after)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        holding = [k for k in range(i1, i2) if units_before[k][0] <= line <= units_before[k][1]]
        if tag in ("replace", "delete") and holding:
            if i2 - i1 == j2 - j1:  # as many units on both sides: each became the one in its place
                i1, j1 = holding[0], j1 + holding[0] - i1
                i2, j2 = i1 + 1, j1 + 1
            else:
                i1, i2, j1, j2 = _narrowed(old, new, (i1, i2, j1, j2), holding[0])
            first, last = units_before[i1][0], units_before[i2 - 1][1]
            where = units_after[j1][0] if j1 < len(units_after) else len(after) + 1
            made = after[units_after[j1][0] - 1:units_after[j2 - 1][1]] if j2 > j1 else []
            return LineChange(first, tuple(before[first - 1:last]), where, tuple(made))
    return None


_ALIKE = 0.6  # how alike (difflib's ratio) a unit and its converted form at least are


def _narrowed(old: list[str], new: list[str], block: tuple[int, int, int, int], held: int) -> tuple[int, int, int, int]:
    """A replaced block (``old[i1:i2]`` became ``new[j1:j2]``, not as many on both sides)
    narrowed to the part that holds unit ``held``: the units at either edge that look like
    their counterpart at the same edge pair off, the edge most alike first, while both sides
    keep more than one unit."""
    i1, i2, j1, j2 = block

    def alike(i: int, j: int) -> float:
        return difflib.SequenceMatcher(None, old[i], new[j], autojunk=False).ratio()

    while i2 - i1 > 1 and j2 - j1 > 1:
        start, end = alike(i1, j1), alike(i2 - 1, j2 - 1)
        if max(start, end) < _ALIKE:
            break
        if start >= end:
            if held == i1:
                return i1, i1 + 1, j1, j1 + 1
            i1, j1 = i1 + 1, j1 + 1
        else:
            if held == i2 - 1:
                return i2 - 1, i2, j2 - 1, j2
            i2, j2 = i2 - 1, j2 - 1
    return i1, i2, j1, j2


def _import_lines(source: str) -> set[int]:
    """The lines of ``source`` that import statements span (none when Python cannot parse it:
    a notebook's cell may hold what only IPython runs, such as a top-level ``await``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
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
    change = None
    if line is not None and not result.failed:  # why a file failed is said whatever the line
        unplaced = sum(1 for e in edits if not e.line)
        edits = [e for e in edits if e.line and e.line <= line <= e.end_line]
        diagnostics = [d for d in diagnostics if d.line == line]
        change = line_change(source, result.code, line)
    at_import = change is not None and line in _import_lines(source)
    return _explained(result, filename, edits, diagnostics, unplaced, change, at_import, line=line)


def _explained(result, filename: str, edits: list[Edit], diagnostics: list[Diagnostic], unplaced: int,
               change: LineChange | None, at_import: bool, *, line: int | None, cell: int | None = None,
               notebook: bool = False, cell_of=lambda diagnostic: 0) -> Explanation:
    """The explanation of ``result`` from the edits and diagnostics it shows, grouped by pass.

    ``at_import``: ``change`` is at an import line, which brings in the passes whose edits are
    derived (the imports'): they made it. ``cell_of`` gives a diagnostic's cell in a notebook,
    to order the passes."""
    docs = {d.id: d for d in pass_docs()}
    by_pass: dict[str, PassExplanation] = {}
    for edit in sorted(edits, key=lambda e: (not e.line, e.cell or 0, e.line, e.col)):
        by_pass.setdefault(edit.pass_id, PassExplanation(docs[edit.pass_id])).edits.append(edit)
    others = []
    owner = {code: doc.id for doc in docs.values() for code, _ in doc.other_codes} | {i: i for i in docs}
    for diag in diagnostics:
        if diag.code in owner:
            reporter = owner[diag.code]
            by_pass.setdefault(reporter, PassExplanation(docs[reporter])).diagnostics.append(diag)
        else:
            others.append(diag)
    if at_import:
        # an import changed: the passes whose edits are derived (the imports') made it
        for doc in docs.values():
            if doc.derived_edits:
                by_pass.setdefault(doc.id, PassExplanation(doc))
    order = list(docs)
    passes = sorted(by_pass.values(), key=lambda p: (p.first_place(cell_of), order.index(p.doc.id)))
    return Explanation(filename, line, result.failed, result.changed, passes, others, unplaced, len(result.errors),
                       change, cell, notebook)


def explain_notebook(text: str, filename: str = "<notebook>", cell: int | None = None, line: int | None = None,
                     declined: frozenset[EditKey] = frozenset()) -> Explanation:
    """:func:`explain_file` for a notebook (JSON text): its code cells converted as
    ``transpile convert`` does. With ``cell`` (its 1-based place among all the notebook's
    cells), only the edits and diagnostics of that cell; with ``line`` too, only those at
    that line of the cell. ValueError for a ``line`` without a ``cell``, a ``cell`` that is
    not a code cell of the notebook, a ``line`` outside the cell."""
    from .api import park_magics, restore_magics, cell_filename, convert_notebook, notebook_cells

    if line is not None and cell is None:
        raise ValueError(f"{filename} is a notebook: a line needs its cell (--cell)")
    try:
        cells = notebook_cells(text)
    except ValueError:
        cells = None  # not a notebook: the conversion says why
    if cells is not None and cell is not None:
        _check_cell(cells, filename, cell, line)
    result = convert_notebook(text, filename=filename, record_edits=True, declined=declined)
    edits, diagnostics = result.edits, result.diagnostics
    names = {cell_filename(filename, n): n for n in range(1, len(cells or ()) + 1)}
    unplaced, change, at_import = 0, None, False
    if cell is not None and not result.failed:  # why a notebook failed is said whatever the cell
        unplaced = sum(1 for e in edits if not e.line)
        edits = [e for e in edits if e.cell == cell and (line is None or e.line <= line <= e.end_line)]
        diagnostics = [d for d in diagnostics if names.get(d.filename) == cell and (line is None or d.line == line)]
        if line is not None:
            before = park_magics(cells[cell - 1][1])
            after = park_magics(notebook_cells(result.code)[cell - 1][1])
            change = line_change(before, after, line)
            if change is not None:
                change = LineChange(change.first, tuple(map(restore_magics, change.before)), change.converted_first,
                                    tuple(map(restore_magics, change.after)), cell)
                at_import = line in _import_lines(before)
    return _explained(result, filename, edits, diagnostics, unplaced, change, at_import, line=line, cell=cell,
                      notebook=True, cell_of=lambda d: names.get(d.filename, 0))


def _check_cell(cells: list[tuple[str, str]], filename: str, cell: int, line: int | None) -> None:
    """ValueError unless ``cell`` is a code cell of the notebook and ``line`` (if any) is in it."""
    code_cells = ", ".join(str(n) for n, (kind, _) in enumerate(cells, 1) if kind == "code") or "none"
    if not 1 <= cell <= len(cells):
        count = f"{len(cells)} cell" + ("" if len(cells) == 1 else "s")
        raise ValueError(f"cell {cell} is outside {filename} ({count}; code cells: {code_cells})")
    kind, source = cells[cell - 1]
    if kind != "code":
        raise ValueError(f"cell {cell} of {filename} is a {kind} cell (code cells: {code_cells})")
    if line is not None and not 1 <= line <= source_lines(source):
        raise ValueError(f"line {line} is outside cell {cell} of {filename} (lines 1 to {source_lines(source)})")
