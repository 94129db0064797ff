"""The library API: pure functions, typed results, no printing."""
from __future__ import annotations

import dataclasses
import functools
import json
import re
from dataclasses import dataclass

from .engine.diagnostics import Diagnostic, error as _error
from .engine.edits import Edit, EditKey
from .engine.formatting import load_black
from .engine.pipeline import ConversionResult, Pipeline

__all__ = ["convert_code", "convert_notebook", "ConversionResult"]

_PY2_HINTS = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[\"'])|^\s*except\s+[\w.]+\s*,\s*\w+\s*:", re.M)


@functools.lru_cache(maxsize=1)
def shared_pipeline() -> Pipeline:
    from .rewrites import default_pipeline  # shipped inside the package

    return default_pipeline()


def prepared() -> bool:
    """Whether this process has built the pipeline already (``prepare`` or a conversion did)."""
    built = getattr(shared_pipeline, "cache_info", None)
    return built is not None and built().currsize > 0


def prepare() -> None:
    """Build what every conversion uses (the pipeline and its tables, black): done once
    per process, and before forking workers, which then inherit it instead of each
    building it again. Raises what building the pipeline raises."""
    shared_pipeline()
    load_black()


def convert_code(source: str, *, filename: str | None = None, debug: bool = False,
                 inherited_imports: dict[str, str] | None = None, package=None, record_edits: bool = False,
                 declined=frozenset()) -> ConversionResult:
    """Convert one PyTorch source text to MindSpore.

    ``inherited_imports`` (name -> qualified name) are bindings the file gets without
    an import statement of its own, such as ``nn`` from ``from .layers import *``;
    ``convert_paths`` computes them for the files of a tree. ``package`` (a
    ``package_index.PackageFacts``) is all it hands a file: those bindings, the file's
    module name, the tree classes it names with their bases, the packages it imports
    from outside the tree.

    ``record_edits`` lists in ``result.edits`` each replacement a pass made (an
    ``edits.Edit``: pass, place, code before and after, reason, safety); ``declined``
    holds the ``Edit.key`` of replacements not to make (the code there is left as it
    was, still naming torch). A ``# transpile: ignore`` (or ``ignore[MS201]``) comment on
    a line declines the edits of that statement (of its whole block on a block's first line).

    ``debug`` re-parses every replacement a pass makes (blaming that pass) and the
    tree after each stage, and raises if the code would parse to a different tree. Never raises for bad input: a source that cannot be
    converted comes back unchanged with ``failed=True`` and an error diagnostic.
    """
    name = filename or "<string>"
    result = shared_pipeline().run(source, name, debug=debug, inherited=inherited_imports, package=package,
                             record_edits=record_edits, declined=declined)
    if result.failed and _PY2_HINTS.search(source):
        diag = result.diagnostics[0]
        result.diagnostics[0] = Diagnostic(
            diag.code, diag.severity, "looks like Python 2 code; convert it to Python 3 first ("
            + diag.message + ")", diag.filename, diag.line, diag.col, diag.safety,
        )
    return result


_CELL = "__transpile_cell__({})"
_MAGIC = re.compile(r"^(\s*)([%!?].*)$")
_MAGIC_MARK = "# __transpile_magic__ "


def park_magics(code: str) -> str:
    """``code`` with each IPython magic line (``%time``, ``!ls``, ``?x``) made a comment."""
    return "\n".join(_MAGIC.sub(lambda m: m.group(1) + _MAGIC_MARK + m.group(2), ln) for ln in code.split("\n"))


def restore_magics(code: str) -> str:
    """The magic lines :func:`park_magics` made comments, as they were."""
    return code.replace(_MAGIC_MARK, "")


def cell_filename(filename: str, cell: int) -> str:
    """How a diagnostic names cell ``cell`` (1-based) of notebook ``filename``: ``nb.ipynb[cell 3]``."""
    return f"{filename}[cell {cell}]"


@dataclass(frozen=True)
class _JoinedCells:
    """A notebook's code cells as one module: its text, and where each cell starts in it."""

    text: str
    numbers: list[int]  # the 1-based place of each code cell among all the notebook's cells
    starts: list[int]  # the line of the module where each code cell's first line is

    def place(self, line: int) -> tuple[int, int]:
        """(cell number, line in that cell) of a line of the module; (0, 0) for line 0 (no place)."""
        if not line or not self.starts:
            return 0, 0
        index = max((i for i, start in enumerate(self.starts) if start <= line), default=0)
        return self.numbers[index], max(line - self.starts[index] + 1, 0)


def _join_cells(nb: dict) -> _JoinedCells:
    """The code cells of ``nb`` joined with sentinel statements, magics parked in comments."""
    parts, numbers, starts, line = [], [], [], 1
    for number, cell in enumerate(nb["cells"], 1):
        if cell.get("cell_type") != "code":
            continue
        block = f"{_CELL.format(number)}\n{park_magics(''.join(cell.get('source', [])))}\n"
        numbers.append(number)
        starts.append(line + 1)
        line += block.count("\n")
        parts.append(block)
    return _JoinedCells("".join(parts), numbers, starts)


def load_notebook(text: str) -> dict:
    """A notebook (JSON text) as data; ValueError saying, in a user's words, what makes
    the text no notebook (not JSON, no cells, a cell that is no object or has no text)."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a notebook: not valid JSON (line {exc.lineno}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise ValueError("not a notebook: its JSON nests too deeply to read") from exc
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError('not a notebook: no "cells" list (a notebook is a JSON object holding one)')
    for number, cell in enumerate(nb["cells"], 1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type", ""), str):
            raise ValueError(f"not a notebook: cell {number} is not a cell (a JSON object with a cell_type)")
        source = cell.get("source", [])
        if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise ValueError(f"not a notebook: cell {number}: its source is not text (a string or a list of them)")
    return nb


def notebook_cells(text: str) -> list[tuple[str, str]]:
    """The type (``code``, ``markdown``...) and source of each cell of a notebook (JSON
    text); ValueError when the text is not a notebook."""
    return [(str(cell.get("cell_type")), "".join(cell.get("source", []))) for cell in load_notebook(text)["cells"]]


def _notebook_edit(edit: Edit, joined: _JoinedCells) -> Edit:
    """``edit`` of the joined module, placed in its cell, its code shown as the cell has it."""
    cell, line = joined.place(edit.line)
    return dataclasses.replace(edit, line=line, cell=cell, code=restore_magics(edit.code),
                               before=restore_magics(edit.before), after=restore_magics(edit.after))


def _module_key(key: EditKey) -> EditKey:
    """A notebook edit's key as the joined module knows it (magic lines parked), for declining."""
    return key._replace(code=park_magics(key.code))


def convert_notebook(text: str, *, filename: str | None = None, debug: bool = False, record_edits: bool = False,
                     declined=frozenset()) -> ConversionResult:
    """Convert the code cells of a Jupyter notebook (JSON text) as one module.

    Cells are joined with sentinel statements, so imports in one cell resolve names
    in the others; IPython magics are parked in comments and restored.

    ``record_edits`` and ``declined`` work as in :func:`convert_code`; an edit's ``cell``
    is the 1-based place of its cell among all the notebook's cells (markdown cells count)
    and its ``line`` the line inside that cell, as are a diagnostic's (its filename is
    ``nb.ipynb[cell 3]``). An edit's key does not name its cell: it is the file's, as for
    a ``.py`` file.
    """
    name = filename or "<notebook>"
    try:
        nb = load_notebook(text)
    except ValueError as exc:
        return ConversionResult(text, [_error(name, str(exc))], False, name, failed=True)
    joined = _join_cells(nb)
    result = convert_code(joined.text, filename=name, debug=debug, record_edits=record_edits,
                          declined=frozenset(map(_module_key, declined)))
    if result.failed:
        return ConversionResult(text, result.diagnostics, False, name, failed=True)
    chunks = re.split(r"^__transpile_cell__\((\d+)\)\n", result.code, flags=re.M)
    header, converted = chunks[0], dict(zip(map(int, chunks[1::2]), chunks[2::2]))
    for number, cell in enumerate(nb["cells"], 1):
        if cell.get("cell_type") != "code":
            continue
        body = (header if number == joined.numbers[0] else "") + converted.get(number, "")
        body = restore_magics(body[:-1] if body.endswith("\n") else body)
        cell["source"] = body.splitlines(keepends=True)
    diagnostics = []
    for d in result.diagnostics:
        cell, line = joined.place(d.line)
        diagnostics.append(dataclasses.replace(d, filename=cell_filename(name, cell), line=line) if cell else d)
    code = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    return ConversionResult(code, diagnostics, result.changed, name, result.stats,
                            edits=[_notebook_edit(e, joined) for e in result.edits])


STATUSES = ("converted", "converted with a note", "unsupported")


@dataclass(frozen=True)
class ApiStatus:
    source: str
    kind: str
    status: str  # one of STATUSES
    target: str | None
    note: str
    family: str = "other"  # how `transpile apis` groups it ("torch.linalg", "Tensor methods", ...)
    forms: tuple[str, ...] = ()  # the call forms its differential cases show (FORMS)
    owed: tuple[str, ...] = ()  # the forms a converted entry can be called in
    # the owed forms its table marks as not giving torch's result, with why
    # (``integer_inputs``: a MindSpore kernel refuses integer tensors)
    marked: tuple[tuple[str, str], ...] = ()


# The call forms `transpile apis` reports the differential coverage of: a call with out=,
# with a keyword argument, on an integer or bool input, on a bool input, spelled by a module path
# (``torch.nn.modules.loss.L1Loss``). tests/differential/form_coverage.py reads them from
# the cases the tests run into rewrites/tables/differential_coverage.json.
FORMS = ("out", "keyword", "integer", "bool", "module-path")


def _case_forms() -> dict[str, dict]:
    from .rewrites.table_calls import TABLE_DIR

    path = TABLE_DIR / "differential_coverage.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def list_apis() -> list[ApiStatus]:
    """Every source API the tables know, with its status, by family then name."""
    from .rewrites.table_calls import tables

    t = tables()
    covered = _case_forms()
    # an entry another module re-exports can be spelled by that module's path
    # (torch.nn.modules.loss.L1Loss): tables/reexports.toml
    reexported = set(t.reexports.values())
    out = []
    for e in t.all_entries():
        target = e.target or (f"(hook {e.hook})" if e.hook else None)
        forms = tuple(covered.get(e.source, {}).get("forms", ()))
        owed = () if e.unsupported else tuple(f for f, owes in (
            ("out", "out" in e.source_args()),
            ("keyword", bool(e.source_args() - {"out"})),
            ("integer", "float" in forms or "integer" in forms),  # it computes on numbers
            ("bool", "float" in forms or "integer" in forms),
            ("module-path", e.source in reexported)) if owes)
        marked = (("integer", e.integer_inputs),) if e.integer_inputs and "integer" in owed else ()
        out.append(ApiStatus(e.source, e.kind, e.status, target, e.unsupported or e.note, t.family(e),
                             tuple(f for f in forms if f in FORMS), owed, marked))
    return sorted(out, key=lambda a: (a.family, a.source))


def form_shares(apis: list[ApiStatus]) -> dict[str, dict[str, tuple[int, int]]]:
    """family -> form -> (entries whose differential cases show the form, entries that can
    be called in it), with an "all" family last."""
    shares: dict[str, dict[str, list[int]]] = {}
    for a in apis:
        for family in (a.family, "all"):
            row = shares.setdefault(family, {f: [0, 0] for f in FORMS})
            for form in a.owed:
                row[form][0] += form in a.forms
                row[form][1] += 1
    shares["all"] = shares.pop("all", {f: [0, 0] for f in FORMS})
    return {family: {f: (n, of) for f, (n, of) in row.items()} for family, row in shares.items()}


def marked_counts(apis: list[ApiStatus]) -> dict[str, dict[str, int]]:
    """family -> form -> the converted entries marked in their table as not giving torch's
    result in that form (with why), with an "all" family last."""
    counts: dict[str, dict[str, int]] = {}
    for a in apis:
        for family in (a.family, "all"):
            row = counts.setdefault(family, dict.fromkeys(FORMS, 0))
            for form, _ in a.marked:
                row[form] += 1
    counts["all"] = counts.pop("all", dict.fromkeys(FORMS, 0))
    return counts


def shares_text(row: dict[str, tuple[int, int]], marked: dict[str, int] | None = None) -> str:
    """``out= 12/15 (80%), keyword ...``: one family's form coverage in a line (the forms
    none of its entries takes left out)."""
    marked = marked or {}
    return ", ".join(f"{'out=' if form == 'out' else form} {n}/{of} ({100 * n // of}%"
                     + (f", {marked[form]} marked unsupported" if marked.get(form) else "") + ")"
                     for form, (n, of) in row.items() if of) or "no entry to call"


def api_counts(apis: list[ApiStatus]) -> dict[str, dict[str, int]]:
    """family -> status -> count, with an "all" family last."""
    counts: dict[str, dict[str, int]] = {}
    for a in apis:
        for family in (a.family, "all"):
            row = counts.setdefault(family, dict.fromkeys(STATUSES, 0))
            row[a.status] += 1
    counts["all"] = counts.pop("all", dict.fromkeys(STATUSES, 0))
    return counts


def counts_markdown(counts: dict[str, dict[str, int]]) -> str:
    """The per-family counts as a Markdown table (also quoted in docs/benchmarks.md)."""
    lines = ["| family | converted | converted with a note | unsupported |", "| --- | --- | --- | --- |"]
    lines += [f"| {family} | {row['converted']} | {row['converted with a note']} | {row['unsupported']} |"
              for family, row in counts.items()]
    return "\n".join(lines)


def apis_markdown(apis: list[ApiStatus]) -> str:
    """docs/apis.md: the table of every known API, generated by ``transpile apis --format markdown``."""
    counts = api_counts(apis)
    shares = form_shares(apis)
    lines = ["# Torch APIs known to transpile", "", "Generated by `transpile apis --format markdown`; do not edit by hand.",
             "", counts_markdown(counts), "",
             "Differential coverage: of the converted entries that can be called in a form, how many",
             "have a differential case in it (tests/differential/form_coverage.py).", "",
             "| family | " + " | ".join("out=" if f == "out" else f for f in FORMS) + " |",
             "| --- |" + " --- |" * len(FORMS)]
    marked = marked_counts(apis)
    lines += [f"| {family} | " + " | ".join(f"{n}/{of}" + (f" ({marked[family][form]} marked)" if marked[family][form] else "")
                                        for form, (n, of) in row.items()) + " |" for family, row in shares.items()]
    lines.append("")
    for family in counts:
        if family == "all":
            continue
        lines += ["", f"## {family}", "", "| torch | kind | status | MindSpore | note or reason |", "| --- | --- | --- | --- | --- |"]
        for a in apis:
            if a.family == family:
                note = (a.note + "".join(f" [{form} inputs: {why}]" for form, why in a.marked)).strip()
                note = note.replace("|", "\\|").replace("\n", " ")
                lines.append(f"| `{a.source}` | {a.kind} | {a.status} | {f'`{a.target}`' if a.target else ''} | {note} |")
    return "\n".join(lines) + "\n"
