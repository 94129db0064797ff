"""The library API: pure functions, typed results, no printing."""
from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .diagnostics import Diagnostic, Safety, Severity
from .pipeline import ConversionResult, Pipeline

__all__ = ["convert_code", "convert_notebook", "convert_paths", "ConversionResult", "FileOutcome", "PathReport"]

_PY2_HINTS = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[\"'])|^\s*except\s+[\w.]+\s*,\s*\w+\s*:", re.M)


@functools.lru_cache(maxsize=1)
def _pipeline() -> Pipeline:
    from .rewrites import default_pipeline  # shipped inside the package

    return default_pipeline()


def _error(filename: str, message: str, line: int = 0, code: str = "MS000") -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, filename, line, 0, Safety.MANUAL)


def convert_code(source: str, *, filename: str | None = None, debug: bool = False) -> ConversionResult:
    """Convert one PyTorch source text to MindSpore.

    ``debug`` runs each pass in its own traversal and checks that its output
    re-parses to the same tree. Never raises for bad input: a source that cannot be
    converted comes back unchanged with ``failed=True`` and an error diagnostic.
    """
    name = filename or "<string>"
    result = _pipeline().run(source, name, debug=debug)
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
    except (ValueError, KeyError, TypeError) as exc:
        return ConversionResult(text, [_error(name, f"not a notebook: {exc}")], False, name, failed=True)
    parts, starts, line = [], [], 1
    for i, cell in enumerate(cells):
        src = "".join(cell.get("source", []))
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


@dataclass
class FileOutcome:
    """One input file: where it went and what converting it gave."""

    source: Path
    output: Path | None  # None when nothing is written (dry run, failure)
    result: ConversionResult | None  # None for files that are only copied
    internal_error: bool = False

    @property
    def status(self) -> str:
        if self.result is None:
            return "copied"
        if self.result.failed:
            return "failed"
        return "converted" if self.result.changed else "unchanged"


@dataclass
class PathReport:
    files: list[FileOutcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files if f.result for d in f.result.diagnostics]

    @property
    def converted_uses(self) -> int:
        return sum(f.result.stats.converted for f in self.files if f.result)

    @property
    def unconverted_uses(self) -> int:
        return sum(f.result.stats.unconverted for f in self.files if f.result)

    @property
    def conversion_rate(self) -> float:
        total = self.converted_uses + self.unconverted_uses
        return 1.0 if total == 0 else self.converted_uses / total

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def _read(path: Path, explicit: bool) -> tuple[str | None, Diagnostic | None]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, _error(str(path), f"cannot read: {exc.strerror or exc}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, _error(str(path), f"not UTF-8 (byte {exc.start})", line)
    if explicit and not text.strip():
        return None, _error(str(path), "empty file: nothing to convert")
    return text, None


def _walk(root: Path) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            yield Path(dirpath) / name


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def convert_paths(
    paths: Iterable[str | os.PathLike],
    *,
    output: str | os.PathLike | None = None,
    in_place: bool = False,
    write: bool = True,
    debug: bool = False,
) -> PathReport:
    """Convert files and directory trees.

    With ``output``, a single directory's tree is mirrored into it (several inputs
    go to ``output/<name>``); other files in a tree are copied as they are. With
    ``in_place`` the inputs are overwritten. With ``write=False`` nothing is written.
    One bad file never stops the run; nothing partial is ever written.
    """
    paths = [Path(p) for p in paths]
    out_root = Path(output) if output is not None else None
    if write and not in_place and out_root is None:
        raise ValueError("convert_paths needs output=, in_place=True or write=False")
    report = PathReport()
    for given in paths:
        if not given.exists():
            missing = ConversionResult("", [_error(str(given), "no such file or directory")], False, str(given), failed=True)
            report.files.append(FileOutcome(given, None, missing))
            continue
        if given.is_dir():
            base = out_root if len(paths) == 1 else (out_root / given.resolve().name if out_root else None)
            items = [(p, base / p.relative_to(given) if base else None, False) for p in _walk(given)]
        else:
            if out_root is None:
                dest = None
            elif len(paths) == 1 and out_root.suffix == ".py":
                dest = out_root
            else:
                dest = out_root / given.name
            items = [(given, dest, True)]
        for src, dest, explicit in items:
            report.files.append(_convert_file(src, dest if not in_place else src, explicit, write, debug))
    return report


def _convert_file(src: Path, dest: Path | None, explicit: bool, write: bool, debug: bool) -> FileOutcome:
    if src.suffix not in (".py", ".ipynb"):
        if write and dest is not None and dest.resolve() != src.resolve():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
        return FileOutcome(src, dest if write else None, None)
    text, problem = _read(src, explicit)
    if problem is not None:
        return FileOutcome(src, None, ConversionResult("", [problem], False, str(src), failed=True))
    try:
        convert = convert_notebook if src.suffix == ".ipynb" else convert_code
        result = convert(text, filename=str(src), debug=debug)
    except Exception as exc:  # a bug in a pass: isolate it to this file
        diag = _error(str(src), f"internal error: {type(exc).__name__}: {exc}", code="MS999")
        return FileOutcome(src, None, ConversionResult(text, [diag], False, str(src), failed=True), internal_error=True)
    if result.failed or not write or dest is None:
        return FileOutcome(src, None, result)
    if dest.resolve() != src.resolve() or result.changed:
        _write_atomic(dest, result.code)
    return FileOutcome(src, dest, result)


@dataclass(frozen=True)
class ApiStatus:
    source: str
    kind: str
    status: str  # "converted", "converted with a note", "unsupported"
    target: str | None
    note: str


def list_apis() -> list[ApiStatus]:
    """Every source API the tables know, with its status."""
    from .rewrites.table_calls import tables

    out = []
    for e in tables().all_entries():
        target = e.target or (f"(hook {e.hook})" if e.hook else None)
        out.append(ApiStatus(e.source, e.kind, e.status, target, e.unsupported or e.note))
    return out


def apis_markdown(apis: list[ApiStatus]) -> str:
    """docs/apis.md: the table of every known API, generated by ``transpile apis --format markdown``."""
    counts = {s: sum(1 for a in apis if a.status == s) for s in ("converted", "converted with a note", "unsupported")}
    lines = [
        "# Torch APIs known to transpile",
        "",
        "Generated by `transpile apis --format markdown`; do not edit by hand.",
        "",
        f"{counts['converted']} converted, {counts['converted with a note']} converted with a note, "
        f"{counts['unsupported']} unsupported.",
        "",
        "| torch | kind | status | MindSpore | note or reason |",
        "| --- | --- | --- | --- | --- |",
    ]
    for a in apis:
        note = a.note.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{a.source}` | {a.kind} | {a.status} | {f'`{a.target}`' if a.target else ''} | {note} |")
    return "\n".join(lines) + "\n"
