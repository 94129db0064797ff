"""The library API: pure functions, typed results, no printing."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .diagnostics import Diagnostic, error as _error
from .pipeline import ConversionResult, Pipeline

__all__ = ["convert_code", "convert_notebook", "convert_paths", "ConversionResult", "FileOutcome", "PathReport", "RefusedError"]

_PY2_HINTS = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[\"'])|^\s*except\s+[\w.]+\s*,\s*\w+\s*:", re.M)


@functools.lru_cache(maxsize=1)
def _pipeline() -> Pipeline:
    from .rewrites import default_pipeline  # shipped inside the package

    return default_pipeline()


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
    result = _pipeline().run(source, name, debug=debug, inherited=inherited_imports, package=package,
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


def convert_notebook(text: str, *, filename: str | None = None, debug: bool = False) -> ConversionResult:
    """Convert the code cells of a Jupyter notebook (JSON text) as one module.

    Cells are joined with sentinel statements, so imports in one cell resolve names
    in the others; IPython magics are parked in comments and restored.
    """
    import json

    name = filename or "<notebook>"
    try:
        nb = json.loads(text)
        cells = [c for c in nb["cells"] if c.get("cell_type") == "code"]
        sources = ["".join(cell.get("source", [])) for cell in cells]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:  # JSON nested past the stack too
        return ConversionResult(text, [_error(name, f"not a notebook: {exc}")], False, name, failed=True)
    parts, starts, line = [], [], 1
    for i, src in enumerate(sources):
        src = "\n".join(_MAGIC.sub(lambda m: m.group(1) + _MAGIC_MARK + m.group(2), ln) for ln in src.split("\n"))
        block = f"{_CELL.format(i)}\n{src}\n"
        starts.append(line + 1)
        line += block.count("\n")
        parts.append(block)
    result = convert_code("".join(parts), filename=name, debug=debug)
    if result.failed:
        return ConversionResult(text, result.diagnostics, False, name, failed=True)
    chunks = re.split(r"^__transpile_cell__\((\d+)\)\n", result.code, flags=re.M)
    header, converted = chunks[0], dict(zip(map(int, chunks[1::2]), chunks[2::2]))
    for i, cell in enumerate(cells):
        body = (header if i == 0 else "") + converted.get(i, "")
        body = body[:-1] if body.endswith("\n") else body
        body = body.replace(_MAGIC_MARK, "")
        cell["source"] = body.splitlines(keepends=True)
    diagnostics = []
    for d in result.diagnostics:
        cell = max((i for i, start in enumerate(starts) if start <= d.line), default=0)
        diagnostics.append(Diagnostic(d.code, d.severity, d.message, f"{name}[cell {cell + 1}]",
                                      d.line - starts[cell] + 1 if starts else d.line, d.col, d.safety))
    code = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    return ConversionResult(code, diagnostics, result.changed, name, result.stats)


STATUSES = ("converted", "converted with a note", "unsupported")


@dataclass(frozen=True)
class ApiStatus:
    source: str
    kind: str
    status: str  # one of STATUSES
    target: str | None
    note: str
    family: str = "other"  # how `transpile apis` groups it ("torch.linalg", "Tensor methods", ...)


def list_apis() -> list[ApiStatus]:
    """Every source API the tables know, with its status, by family then name."""
    from .rewrites.table_calls import tables

    t = tables()
    out = []
    for e in t.all_entries():
        target = e.target or (f"(hook {e.hook})" if e.hook else None)
        out.append(ApiStatus(e.source, e.kind, e.status, target, e.unsupported or e.note, t.family(e)))
    return sorted(out, key=lambda a: (a.family, a.source))


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
    """The per-family counts as a Markdown table (also quoted in the README)."""
    lines = ["| family | converted | converted with a note | unsupported |", "| --- | --- | --- | --- |"]
    lines += [f"| {family} | {row['converted']} | {row['converted with a note']} | {row['unsupported']} |"
              for family, row in counts.items()]
    return "\n".join(lines)


def apis_markdown(apis: list[ApiStatus]) -> str:
    """docs/apis.md: the table of every known API, generated by ``transpile apis --format markdown``."""
    counts = api_counts(apis)
    lines = ["# Torch APIs known to transpile", "", "Generated by `transpile apis --format markdown`; do not edit by hand.",
             "", counts_markdown(counts), ""]
    for family in counts:
        if family == "all":
            continue
        lines += ["", f"## {family}", "", "| torch | kind | status | MindSpore | note or reason |", "| --- | --- | --- | --- | --- |"]
        for a in apis:
            if a.family == family:
                note = a.note.replace("|", "\\|").replace("\n", " ")
                lines.append(f"| `{a.source}` | {a.kind} | {a.status} | {f'`{a.target}`' if a.target else ''} | {note} |")
    return "\n".join(lines) + "\n"


from .files import FileOutcome, PathReport, RefusedError, convert_paths  # noqa: E402  (re-exported: the files layer uses convert_code)
