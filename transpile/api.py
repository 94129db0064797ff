"""The library API: pure functions, typed results, no printing."""
from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .cache import ResultCache, cache_key, default_cache_dir
from .package_index import PackageIndex
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


def convert_code(source: str, *, filename: str | None = None, debug: bool = False,
                 inherited_imports: dict[str, str] | None = None) -> ConversionResult:
    """Convert one PyTorch source text to MindSpore.

    ``inherited_imports`` (name -> qualified name) are bindings the file gets without
    an import statement of its own, such as ``nn`` from ``from .layers import *``;
    ``convert_paths`` computes them for the files of a tree.

    ``debug`` re-parses every replacement a pass makes (blaming that pass) and the
    tree after each stage, and raises if the code would parse to a different tree. Never raises for bad input: a source that cannot be
    converted comes back unchanged with ``failed=True`` and an error diagnostic.
    """
    name = filename or "<string>"
    result = _pipeline().run(source, name, debug=debug, inherited=inherited_imports)
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
    jobs: int | None = None,
    cache: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> PathReport:
    """Convert files and directory trees.

    With ``output``, a single directory's tree is mirrored into it (several inputs
    go to ``output/<name>``); other files in a tree are copied as they are. With
    ``in_place`` the inputs are overwritten. With ``write=False`` nothing is written.
    One bad file never stops the run; nothing partial is ever written.

    ``jobs`` worker processes convert the files (default: one per core; 1 converts
    in this process); the report is the same, in the same order, whatever ``jobs``.
    With ``cache``, results are looked up and stored by content hash in ``cache_dir``
    (default ``$TRANSPILE_CACHE_DIR``, else ``$XDG_CACHE_HOME/transpile`` or
    ``~/.cache/transpile``); ``debug`` runs never use the cache.
    """
    paths = [Path(p) for p in paths]
    out_root = Path(output) if output is not None else None
    if write and not in_place and out_root is None:
        raise ValueError("convert_paths needs output=, in_place=True or write=False")
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError("convert_paths needs jobs >= 1")
    store = ResultCache(cache_dir if cache_dir is not None else default_cache_dir()) if cache and not debug else None
    slots: list[FileOutcome | _Pending] = []
    for given in paths:
        if not given.exists():
            missing = ConversionResult("", [_error(str(given), "no such file or directory")], False, str(given), failed=True)
            slots.append(FileOutcome(given, None, missing))
            continue
        if given.is_dir():
            base = out_root if len(paths) == 1 else (out_root / given.resolve().name if out_root else None)
            files = list(_walk(given))
            index = PackageIndex(given, files)
            items = [(p, base / p.relative_to(given) if base else None, False, index.inherited(p)) for p in files]
        else:
            if out_root is None:
                dest = None
            elif len(paths) == 1 and out_root.suffix == ".py":
                dest = out_root
            else:
                dest = out_root / given.name
            items = [(given, dest, True, {})]
        for src, dest, explicit, inherited in items:
            slots.append(_prepare(src, dest if not in_place else src, explicit, write, store, inherited))
    todo = [s for s in slots if isinstance(s, _Pending) and s.result is None]
    for pending, (result, internal) in zip(todo, _convert_all(todo, jobs, debug)):
        pending.result, pending.internal_error = result, internal
        if store is not None and not internal:
            store.put(pending.key, result)
    return PathReport([s.finish(write) if isinstance(s, _Pending) else s for s in slots])


@dataclass
class _Pending:
    """A file read and waiting for its result (from the cache or a conversion)."""

    src: Path
    dest: Path | None
    text: str
    key: str | None
    inherited: dict[str, str] = field(default_factory=dict)  # bindings from star imports
    result: ConversionResult | None = None
    internal_error: bool = False

    def finish(self, write: bool) -> FileOutcome:
        src, dest, result = self.src, self.dest, self.result
        if self.internal_error or result.failed or not write or dest is None:
            return FileOutcome(src, None, result, internal_error=self.internal_error)
        if dest.resolve() != src.resolve() or result.changed:
            _write_atomic(dest, result.code)
        return FileOutcome(src, dest, result)


def _prepare(src: Path, dest: Path | None, explicit: bool, write: bool, store: ResultCache | None,
             inherited: dict[str, str]):
    """Copy what is not converted; read what is, and look it up in the cache."""
    if src.suffix not in (".py", ".ipynb"):
        if write and dest is not None and dest.resolve() != src.resolve():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
        return FileOutcome(src, dest if write else None, None)
    text, problem = _read(src, explicit)
    if problem is not None:
        return FileOutcome(src, None, ConversionResult("", [problem], False, str(src), failed=True))
    if store is None:
        return _Pending(src, dest, text, None, inherited)
    key = cache_key(text, str(src), inherited)
    return _Pending(src, dest, text, key, inherited, store.get(key))


def _convert_one(text: str, filename: str, debug: bool, inherited: dict[str, str]) -> tuple[ConversionResult, bool]:
    """One file's result, and whether it is an internal error (run in a worker or here)."""
    try:
        if filename.endswith(".ipynb"):
            return convert_notebook(text, filename=filename, debug=debug), False
        return convert_code(text, filename=filename, debug=debug, inherited_imports=inherited), False
    except Exception as exc:  # a bug in a pass: isolate it to this file
        return _internal_error(text, filename, f"{type(exc).__name__}: {exc}"), True


def _internal_error(text: str, filename: str, what: str) -> ConversionResult:
    return ConversionResult(text, [_error(filename, f"internal error: {what}", code="MS999")], False, filename, failed=True)


def _convert_all(todo: list[_Pending], jobs: int, debug: bool) -> list[tuple[ConversionResult, bool]]:
    """The results of ``todo``, in its order: here, or in a pool of ``jobs`` processes."""
    tasks = [(p.text, str(p.src), debug, p.inherited) for p in todo]
    if jobs < 2 or len(tasks) < 2:
        return [_convert_one(*t) for t in tasks]
    try:
        _pipeline()  # built once here: forked workers inherit it
    except Exception:
        pass  # each file reports it as an internal error
    results: list[tuple[ConversionResult, bool] | None] = [None] * len(tasks)
    # Longest first, so that the last task to finish is a short one.
    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i][0]))
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)))
    try:
        futures = {i: pool.submit(_convert_one, *tasks[i]) for i in order}
        for i in range(len(tasks)):
            try:
                results[i] = futures[i].result()
            except BrokenProcessPool:
                pass  # a worker died: which file killed it is found below
            except Exception as exc:  # the result could not come back (pickling, ...)
                results[i] = _internal_error(tasks[i][0], tasks[i][1], f"{type(exc).__name__}: {exc}"), True
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for i, result in enumerate(results):
        if result is None:  # each file the dead worker took down with it, alone in a new process
            results[i] = _convert_isolated(tasks[i])
    return results


def _convert_isolated(task: tuple[str, str, bool, dict[str, str]]) -> tuple[ConversionResult, bool]:
    with ProcessPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(_convert_one, *task).result()
        except Exception as exc:
            return _internal_error(task[0], task[1], f"the worker process died ({type(exc).__name__}: {exc})"), True


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
