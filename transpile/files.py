"""Converting files and directory trees: reading, workers, the cache, writing.

The library API (``transpile.api``) re-exports ``convert_paths``, ``FileOutcome`` and
``PathReport``; this module never prints either.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .cache import ResultCache, cache_key, default_cache_dir
from .diagnostics import Diagnostic, Severity, error as _error
from .package_index import PackageIndex, outside_package
from .pipeline import ConversionResult


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
    def annotation_uses(self) -> int:
        """torch types left in annotations: counted apart, not in the rate (they run nothing)."""
        return sum(f.result.stats.annotations for f in self.files if f.result)

    @property
    def conversion_rate(self) -> float:
        total = self.converted_uses + self.unconverted_uses
        return 1.0 if total == 0 else self.converted_uses / total

    @property
    def outside_packages(self) -> dict[str, list[Diagnostic]]:
        """Package -> the diagnostics of the files importing it from outside the converted
        tree (one per file): the report prints one line per package."""
        out: dict[str, list[Diagnostic]] = {}
        for d in self.diagnostics:
            if outside_package(d) is not None:
                out.setdefault(outside_package(d), []).append(d)
        return dict(sorted(out.items()))

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
            items = [(p, base / p.relative_to(given) if base else None, False, index.facts(p)) for p in files]
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
    from . import api  # looked up at call time: the API module imports this one

    try:
        if filename.endswith(".ipynb"):
            return api.convert_notebook(text, filename=filename, debug=debug), False
        return api.convert_code(text, filename=filename, debug=debug, package=inherited or None), False
    except Exception as exc:  # a bug in a pass: isolate it to this file
        return _internal_error(text, filename, f"{type(exc).__name__}: {exc}"), True


def _internal_error(text: str, filename: str, what: str) -> ConversionResult:
    return ConversionResult(text, [_error(filename, f"internal error: {what}", code="MS999")], False, filename, failed=True)


def _convert_all(todo: list[_Pending], jobs: int, debug: bool) -> list[tuple[ConversionResult, bool]]:
    """The results of ``todo``, in its order: here, or in a pool of ``jobs`` processes."""
    tasks = [(p.text, str(p.src), debug, p.inherited) for p in todo]
    if jobs < 2 or len(tasks) < 2:
        return [_convert_one(*t) for t in tasks]
    from .api import _pipeline

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
