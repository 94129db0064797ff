"""Converting files and directory trees: reading, workers, the cache, writing.

The package (``transpile``) exports ``convert_paths``, ``PathReport`` and ``RefusedError``;
each file's text is converted by the library API (``transpile.api``). This module never prints.

A run has four steps: plan (walk the inputs, map each file to its output, refuse
outputs that collide), read and convert, check what would be overwritten (``in_place``:
read-only files, uncommitted changes, existing backups), then write. Nothing is written
before the last step, and every write is atomic: a refused run leaves the disk as it was.
"""
from __future__ import annotations

import os
import stat
import subprocess
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .. import api
from ..engine.diagnostics import Diagnostic, Safety, Severity, error as _error
from ..engine.package_index import PackageFacts, PackageIndex, outside_package
from ..engine.pipeline import ConversionResult
from .atomic import copy_atomic, write_atomic
from .cache import ResultCache, cache_key, default_cache_dir
from .decisions import DecisionStore, find_root
from .merge import HandEdits, carry_hand_edits

CONVERTED_SUFFIXES = (".py", ".ipynb")  # other files of a tree are copied as they are
BACKUP_SUFFIX = ".orig"  # in_place with backup: ``m.py`` is kept as ``m.py.orig``
# In an output tree: what the last run wrote to each converted file (hidden: never an input)
GENERATED_DIR = Path(".transpile") / "generated"
CONFLICT_SUFFIX = ".new"  # hand edits that conflict: ``m.py`` is kept, the new conversion is ``m.py.new``
_BOM = "\ufeff"

Progress = Callable[[int, int, Path], None]  # (files done, files in the run, the file just done)


class RefusedError(ValueError):
    """``convert_paths`` refused the run before writing anything; ``problems`` says why, one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class FileOutcome:
    """One input file: where it went and what converting it gave."""

    source: Path
    output: Path | None  # None when nothing is written (dry run, failure, skipped)
    result: ConversionResult | None  # None for files that are only copied
    internal_error: bool = False
    skipped: bool = False  # not read at all (broken symlink, symlink loop, ...): result says why
    merged: bool = False  # the output had hand edits since the last run: they were carried onto this one
    conflict: Path | None = None  # they conflict with it: the output is kept, the new conversion is here

    @property
    def status(self) -> str:
        if self.skipped:
            return "skipped"
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
    def failed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.status == "failed"]

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
    def conversion_rate(self) -> float | None:
        """Converted torch uses over all measured ones; None when none was measured (no rate to give)."""
        total = self.converted_uses + self.unconverted_uses
        return None if total == 0 else self.converted_uses / total

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
    def merged(self) -> list[FileOutcome]:
        """Outputs whose hand edits were carried onto the new conversion."""
        return [f for f in self.files if f.merged]

    @property
    def conflicts(self) -> list[FileOutcome]:
        """Outputs kept as edited by hand, the new conversion written beside them."""
        return [f for f in self.files if f.conflict is not None]

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def read_source(path: Path, explicit: bool) -> tuple[str | None, bool, Diagnostic | None]:
    """The text of ``path`` without its UTF-8 BOM, whether it had one, or why it cannot be converted.

    The BOM is removed here and put back on writing: CPython's parser rejects it in a str
    (so a BOM file without torch failed its syntax check) and LibCST drops it.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, False, _error(str(path), f"cannot read: {exc.strerror or exc}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, False, _error(str(path), f"not UTF-8 (byte {exc.start})", line)
    bom = text.startswith(_BOM)
    text = text[len(_BOM):] if bom else text
    if explicit and not text.strip():
        return None, bom, _error(str(path), "empty file: nothing to convert")
    return text, bom, None


def _walk(root: Path, exclude: frozenset[str]) -> Iterator[tuple[Path, str | None]]:
    """The files under ``root``, each with None or why it is skipped (broken symlink, loop, ...).

    Sorted, a directory's files before its subdirectories. Symlinked directories are
    followed (os.walk does not), except one leading back to a directory being walked;
    hidden directories, ``__pycache__`` and the real paths in ``exclude`` (an output
    directory inside the input) are left out.
    """
    stack = [(root, (os.path.realpath(root),))]
    while stack:
        directory, ancestors = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            yield directory, f"cannot list the directory: {exc.strerror or exc}"
            continue
        subdirs = []
        for entry in entries:
            path = Path(entry.path)
            if entry.is_dir():  # through a symlink too
                if entry.name.startswith(".") or entry.name == "__pycache__":
                    continue
                real = os.path.realpath(path)
                if real in exclude:
                    continue
                if real in ancestors:
                    yield path, f"symlink loop: leads back to {real}"
                else:
                    subdirs.append((path, (*ancestors, real)))
            elif entry.is_file():
                yield path, None
            elif entry.is_symlink():
                yield path, f"broken symlink (to {os.readlink(path)})"
            else:
                yield path, "not a regular file"
        stack.extend(reversed(subdirs))


def _found_decisions(paths: list[Path]):
    """The decisions store above the inputs, if there is one."""
    root = find_root(paths)
    return DecisionStore.load(root) if root is not None else None


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
    force: bool = False,
    backup: bool = False,
    progress: Progress | None = None,
    decisions: DecisionStore | None = None,
    record_edits: bool = False,
) -> PathReport:
    """Convert files and directory trees.

    With ``output``, a single directory's tree is mirrored into it (several inputs go to
    ``output/<name>``, one file input to ``output`` itself when it has the input's suffix);
    other files of a tree are copied as they are, and so are the files of a tree that
    fail, so that the mirror stays complete. With ``in_place`` the inputs are overwritten
    (through a symlink: the link stays); read-only files and files with uncommitted
    changes in their git work tree are refused unless ``force``; ``backup`` keeps each
    original beside it as ``<name>.orig`` (uncommitted changes are then allowed). With
    ``write=False`` nothing is written.

    Hand edits survive a run into the same ``output``: what each converted file's output
    was written with is recorded in ``output/.transpile/generated/<path>`` (beside a
    one-file output); an output edited since is merged with the new conversion by lines
    (``FileOutcome.merged``), or, where both changed the same lines, kept as it is with
    the new conversion beside it as ``<name>.new`` (``FileOutcome.conflict``, an MS002
    warning; every run says so until ``<name>.new`` is deleted).

    Raises ValueError for arguments that do not fit together, and RefusedError (a
    ValueError) when two files would be written to one output, an output is an input or
    an overwrite is refused: always before anything is written. Otherwise one bad file
    never stops the run and nothing partial is ever written: writes are atomic and keep
    the input's permission bits, UTF-8 BOM and line endings. Symlinked directories are
    followed; broken symlinks and symlink loops are reported as skipped.

    ``jobs`` worker processes convert the files (default: one per core; 1 converts
    in this process); the report is the same, in the same order, whatever ``jobs``.
    With ``cache``, results are looked up and stored by content hash in ``cache_dir``
    (default ``$TRANSPILE_CACHE_DIR``, else ``$XDG_CACHE_HOME/transpile`` or
    ``~/.cache/transpile``); ``debug`` runs never use the cache. ``progress(done, total,
    path)`` is called once for each file when it is done.

    ``decisions`` (a ``decisions.DecisionStore``) declines the edits it says no to in the
    files it names (else the store found above the inputs, if any, is used; pass an empty
    store to use none); ``record_edits`` lists each file's edits in its result (no cache).
    """
    paths = [Path(p) for p in paths]
    out_root = Path(output) if output is not None else None
    if in_place and out_root is not None:
        raise ValueError("convert_paths takes output= or in_place=True, not both")
    if write and not in_place and out_root is None:
        raise ValueError("convert_paths needs output=, in_place=True or write=False")
    if (force or backup) and not (in_place and write):
        raise ValueError("force= and backup= only apply with in_place=True")
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError("convert_paths needs jobs >= 1")
    use_cache = cache and not debug and not record_edits  # the cache keeps no edits
    store = ResultCache(cache_dir if cache_dir is not None else default_cache_dir()) if use_cache else None
    if decisions is None:
        decisions = _found_decisions(paths)
    plan = _check_destinations(_plan(paths, out_root, in_place), in_place)
    counter = _Counter(len(plan), progress)
    for entry in plan:
        if isinstance(entry, _Job):
            entry.record_edits = record_edits
            if decisions is not None and entry.converts:
                entry.declined = decisions.declined(entry.src)
            _prepare(entry, store)
        if not (isinstance(entry, _Job) and entry.waiting):
            counter.step(entry.src if isinstance(entry, _Job) else entry.source)
    todo = [e for e in plan if isinstance(e, _Job) and e.waiting]
    for job, (result, internal) in zip(todo, _convert_all(todo, jobs, debug, lambda i: counter.step(todo[i].src))):
        job.result, job.internal_error = result, internal
        if store is not None and not internal:
            store.put(job.key, result)
    if write and in_place:
        _refuse(_overwrite_problems([e for e in plan if isinstance(e, _Job) and e.overwrites_source], force, backup))
    return PathReport([e.finish(write, backup) if isinstance(e, _Job) else e for e in plan])


@dataclass
class _Job:
    """One file to convert or copy: where it goes and, once known, what converting it gave."""

    src: Path
    dest: Path | None  # None: not written; ``src`` itself in place
    explicit: bool  # an input itself, not found in a tree: a failure is not copied to the output
    package: PackageFacts | None = None  # what its tree says about it (star imports, classes, ...)
    text: str | None = None  # what is converted: the file's text without its BOM
    bom: bool = False
    key: str | None = None  # in the cache
    result: ConversionResult | None = None
    internal_error: bool = False
    declined: frozenset = frozenset()  # keys of the edits a decision declines
    record_edits: bool = False
    generated: Path | None = None  # where the output's last conversion is recorded (converted files, -o)

    @property
    def converts(self) -> bool:
        return self.src.suffix in CONVERTED_SUFFIXES

    @property
    def waiting(self) -> bool:
        """Still to convert: neither copied, nor unreadable, nor found in the cache."""
        return self.converts and self.result is None

    @property
    def failed(self) -> bool:
        return self.internal_error or self.result.failed

    @property
    def overwrites_source(self) -> bool:
        return self.dest == self.src and self.converts and not self.failed and self.result.changed

    def finish(self, write: bool, backup: bool) -> FileOutcome:
        """Write what this file gives (nothing when ``write`` is false) and say what happened."""
        outcome = FileOutcome(self.src, None, self.result, self.internal_error)
        dest = self.dest
        if not write or dest is None:
            return outcome
        if self.converts and self.failed and (dest == self.src or self.explicit):
            return outcome  # only reported (a failure in a mirrored tree is copied below)
        try:
            if dest == self.src:  # in place: only a changed conversion is written
                if self.overwrites_source:
                    _overwrite(self.src, self._encoded(), backup)
            elif self.generated is not None:  # a converted file: hand edits since the last run are kept
                outcome = self._write_keeping_hand_edits(outcome, dest)
            elif self.converts and not self.failed and self.result.changed:
                write_atomic(dest, self._encoded(), stat.S_IMODE(self.src.stat().st_mode))
            else:  # as it is, byte for byte: other files, unchanged ones, failures (the mirror stays complete)
                copy_atomic(self.src, dest)
        except OSError as exc:
            diag = _error(str(self.src), f"cannot write {dest}: {exc.strerror or exc}")
            return replace(outcome, result=replace(_with_diagnostic(outcome.result, self.src, diag), failed=True))
        return replace(outcome, output=dest)

    def _write_keeping_hand_edits(self, outcome: FileOutcome, dest: Path) -> FileOutcome:
        """Write ``dest`` with the edits made to it since the last run (which ``self.generated``
        recorded) carried onto the new conversion; on a conflict ``dest`` stays as it is and the
        new conversion goes to ``dest.new``. Then record what was converted, for the next run."""
        converted = self.converts and not self.failed and self.result.changed
        new = self._encoded() if converted else self.src.read_bytes()
        mode = stat.S_IMODE(self.src.stat().st_mode)
        beside = dest.with_name(dest.name + CONFLICT_SUFFIX)
        plan: HandEdits = carry_hand_edits(new, _read_or_none(self.generated), _read_or_none(dest), beside.exists())
        if plan.write is not None and (converted or plan.write != new):
            write_atomic(dest, plan.write, mode)
        elif plan.write is not None:  # as it is, byte for byte
            copy_atomic(self.src, dest)
        if plan.conflict:
            write_atomic(beside, new, mode)
            outcome = replace(outcome, conflict=beside, result=_with_diagnostic(self.result, self.src, Diagnostic(
                "MS002", Severity.WARNING, f"{dest} was edited by hand since the last run, in lines the new "
                f"conversion changes too: kept as it is; the new conversion is {beside} (merge it by hand, "
                "then delete it: until then every run says so)",
                str(self.src), 0, 0, Safety.MANUAL)))
        write_atomic(self.generated, new)  # after the output: a run cut short reads as a hand edit, not lost
        return replace(outcome, merged=plan.merged)

    def _encoded(self) -> bytes:
        return ((_BOM if self.bom else "") + self.result.code).encode("utf-8")


def _with_diagnostic(result: ConversionResult | None, src: Path, diag: Diagnostic) -> ConversionResult:
    """``result`` (an empty one for a file only copied) with ``diag`` added."""
    base = result or ConversionResult("", [], False, str(src))
    return replace(base, diagnostics=[*base.diagnostics, diag])


def _read_or_none(path: Path) -> bytes | None:
    """The bytes of ``path``; None when it is missing or unreadable (nothing known of it)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def generated_record(out_root: Path, dest: Path, to_file: bool) -> Path:
    """Where a run writing ``dest`` under ``out_root`` (``out_root`` itself when ``to_file``)
    records what it wrote: ``OUT/.transpile/generated/<path in OUT>``, beside ``-o x.py``."""
    if to_file:
        return out_root.parent / GENERATED_DIR / out_root.name
    return out_root / GENERATED_DIR / dest.relative_to(out_root)


@dataclass
class _Counter:
    """Files done out of all files, told to a ``progress`` callback."""

    total: int
    callback: Progress | None
    done: int = 0

    def step(self, path: Path) -> None:
        self.done += 1
        if self.callback is not None:
            self.callback(self.done, self.total, path)


def _plan(paths: list[Path], out_root: Path | None, in_place: bool) -> list[_Job | FileOutcome]:
    """Every file of the inputs with its output (``out_root`` mirrored, the file itself in
    place, None on a dry run); unusable inputs and skipped tree entries as outcomes."""
    to_file = _output_is_file(paths, out_root)
    if out_root is not None and not to_file and out_root.exists() and not out_root.is_dir():
        raise ValueError(f"output {out_root} exists and is not a directory")
    exclude = frozenset({os.path.realpath(out_root)}) if out_root is not None else frozenset()
    plan: list[_Job | FileOutcome] = []
    for given in paths:
        if given.is_dir():
            base = out_root if len(paths) == 1 else (out_root / given.resolve().name if out_root else None)
            found = list(_walk(given, exclude))
            index = PackageIndex(given, _inside(given, [p for p, why in found if why is None]))
            for path, why in found:
                if why is not None:
                    plan.append(_skipped(path, why))
                else:
                    dest = path if in_place else (base / path.relative_to(given) if base else None)
                    plan.append(_Job(path, dest, False, index.facts(path)))
        elif given.is_file():
            dest = given if in_place else ((out_root if to_file else out_root / given.name) if out_root else None)
            plan.append(_Job(given, dest, True))
        else:
            plan.append(_unusable(given))
    if out_root is not None:  # a converted output keeps its hand edits across runs
        for job in plan:
            if isinstance(job, _Job) and job.converts:
                job.generated = generated_record(out_root, job.dest, to_file)
    return plan


def _inside(root: Path, files: list[Path]) -> list[Path]:
    """Those of ``files`` whose real path is under ``root``'s: the package index names modules
    by real path (a file reached through a symlinked directory converts without it)."""
    real_root = os.path.join(os.path.realpath(root), "")
    return [f for f in files if os.path.realpath(f).startswith(real_root)]


def _output_is_file(paths: list[Path], out_root: Path | None) -> bool:
    """Whether ``out_root`` names the one output file (``-o x.py``, ``-o x.ipynb``) rather
    than a directory; ValueError when it names a file the inputs cannot be written to."""
    if out_root is None or out_root.is_dir() or out_root.suffix not in CONVERTED_SUFFIXES:
        return False
    if len(paths) != 1 or paths[0].is_dir():
        what = "several paths" if len(paths) != 1 else "a directory"
        raise ValueError(f"output {out_root} names a file, but the input is {what}")
    if paths[0].exists() and paths[0].suffix != out_root.suffix:
        raise ValueError(f"output {out_root} names a {out_root.suffix} file, but the input {paths[0]} is not one")
    return True


def _skipped(path: Path, why: str) -> FileOutcome:
    diag = Diagnostic("MS001", Severity.WARNING, f"skipped: {why}", str(path), 0, 0, Safety.MANUAL)
    return FileOutcome(path, None, ConversionResult("", [diag], False, str(path)), skipped=True)


def _unusable(given: Path) -> FileOutcome:
    """An input that is neither a file nor a directory: missing, a broken symlink, a device."""
    if given.is_symlink():
        why = f"broken symlink (to {os.readlink(given)})"
    elif os.path.lexists(given):
        why = "not a regular file or directory"
    else:
        why = "no such file or directory"
    return FileOutcome(given, None, ConversionResult("", [_error(str(given), why)], False, str(given), failed=True))


def _check_destinations(plan: list[_Job | FileOutcome], in_place: bool) -> list[_Job | FileOutcome]:
    """Refuse two files written to one output and an output that is an input; in place, a
    file reached twice (through a symlink) is converted once and its other path skipped."""
    sources = {os.path.realpath(e.src) for e in plan if isinstance(e, _Job)}
    first: dict[str, _Job] = {}
    problems: list[str] = []
    checked: list[_Job | FileOutcome] = []
    for entry in plan:
        if isinstance(entry, _Job) and entry.dest is not None:
            key = os.path.realpath(entry.dest)
            if key in first and in_place:
                checked.append(_skipped(entry.src, f"the same file as {first[key].src}, converted once"))
                continue
            if key in first:
                problems.append(f"{first[key].src} and {entry.src} would both be written to {entry.dest}")
            elif not in_place and key in sources:
                problems.append(f"{entry.dest} is an input: writing it would overwrite it (only --in-place does)")
            first.setdefault(key, entry)
        checked.append(entry)
    _refuse(problems)
    return checked


def _refuse(problems: list[str]) -> None:
    if problems:
        raise RefusedError(problems)


def _prepare(job: _Job, store: ResultCache | None) -> None:
    """Read a file to convert and look it up in the cache (files only copied are not read)."""
    if not job.converts:
        return
    text, job.bom, problem = read_source(job.src, job.explicit)
    if problem is not None:
        job.result = ConversionResult("", [problem], False, str(job.src), failed=True)
        return
    job.text = text
    if store is not None:
        job.key = cache_key(text, str(job.src), job.package, sorted(job.declined))
        job.result = store.get(job.key)


def backup_path(path: Path) -> Path:
    """Where ``in_place`` with ``backup`` keeps the original of ``path``."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def _overwrite(src: Path, data: bytes, backup: bool) -> None:
    """Replace the content of ``src`` (through a symlink: the link stays), keeping its mode and owner."""
    target = Path(os.path.realpath(src))
    info = target.stat()
    if backup:
        copy_atomic(target, backup_path(src))
    write_atomic(target, data, stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid))


def _overwrite_problems(jobs: list[_Job], force: bool, backup: bool) -> list[str]:
    """Why overwriting these files in place is refused (nothing: go ahead)."""
    problems = [f"{backup_path(j.src)} exists: an earlier backup is never replaced (move it away)"
                for j in jobs if backup and os.path.lexists(backup_path(j.src))]
    if not force:
        problems += [f"{j.src} is read-only (--force overwrites it)" for j in jobs if _read_only(j.src)]
    if not (force or backup):
        problems += [f"{path} has uncommitted changes in git (commit or stash them; --backup keeps the "
                     f"original, --force overwrites it)" for path in _uncommitted([j.src for j in jobs])]
    return problems


def _read_only(path: Path) -> bool:
    """No write bit at all, or not writable by us (root may write anything: the bits say what is meant)."""
    return not os.stat(path).st_mode & 0o222 or not os.access(path, os.W_OK)


def _uncommitted(paths: list[Path]) -> list[Path]:
    """Those of ``paths`` whose file (through symlinks) is modified, staged or untracked in its
    git work tree; none when git is missing or a file is not in a work tree."""
    reals = {path: os.path.realpath(path) for path in paths}
    tops: dict[str, str | None] = {}
    for real in reals.values():
        folder = os.path.dirname(real)
        if folder not in tops:
            top = _git(["rev-parse", "--show-toplevel"], folder)
            tops[folder] = os.path.realpath(top.strip()) if top else None
    changed: set[str] = set()
    for top in {t for t in tops.values() if t}:
        changed |= _git_changes(top)
    return [path for path, real in reals.items() if real in changed]


def _git_changes(top: str) -> set[str]:
    """Real paths of the files ``git status`` lists in the work tree ``top``."""
    out = _git(["status", "--porcelain", "-z", "--untracked-files=all"], top) or ""
    fields, changed, i = out.split("\0"), set(), 0
    while i < len(fields):
        entry, i = fields[i], i + 1
        if len(entry) > 3:
            changed.add(os.path.realpath(os.path.join(top, entry[3:])))
            if entry[0] in "RC":  # a rename or copy: the next field is the original path
                i += 1
    return changed


def _git(args: list[str], cwd: str) -> str | None:
    """git's output, or None when git is missing or fails (not a work tree, ...)."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.decode("utf-8", "surrogateescape") if proc.returncode == 0 else None


def _convert_one(text: str, filename: str, debug: bool, package: PackageFacts | None, record_edits: bool = False,
                 declined: frozenset = frozenset()) -> tuple[ConversionResult, bool]:
    """One file's result, and whether it is an internal error (run in a worker or here)."""
    try:
        if filename.endswith(".ipynb"):
            return api.convert_notebook(text, filename=filename, debug=debug, record_edits=record_edits,
                                        declined=declined), False
        return api.convert_code(text, filename=filename, debug=debug, package=package, record_edits=record_edits,
                                declined=declined), False
    except Exception as exc:  # a bug in a pass: isolate it to this file
        return _internal_error(text, filename, f"{type(exc).__name__}: {exc}"), True


def _internal_error(text: str, filename: str, what: str) -> ConversionResult:
    return ConversionResult(text, [_error(filename, f"internal error: {what}", code="MS999")], False, filename, failed=True)


def _convert_all(todo: list[_Job], jobs: int, debug: bool,
                 done: Callable[[int], None] = lambda i: None) -> list[tuple[ConversionResult, bool]]:
    """The results of ``todo``, in its order: here, or in a pool of ``jobs`` processes.
    ``done(i)`` is called when the result of ``todo[i]`` is known."""
    tasks = [(p.text, str(p.src), debug, p.package, p.record_edits, p.declined) for p in todo]
    if jobs < 2 or len(tasks) < 2:
        serial = []
        for i, task in enumerate(tasks):
            serial.append(_convert_one(*task))
            done(i)
        return serial
    try:
        api.prepare()  # built once here: forked workers inherit it
    except Exception:
        pass  # each file reports it as an internal error
    results: list[tuple[ConversionResult, bool] | None] = [None] * len(tasks)
    # Longest first, so that the last task to finish is a short one.
    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i][0]))
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)))
    try:
        futures = {pool.submit(_convert_one, *tasks[i]): i for i in order}
        for future in as_completed(futures):
            i = futures[future]
            try:
                results[i] = future.result()
            except BrokenProcessPool:
                continue  # a worker died: which file killed it is found below
            except Exception as exc:  # the result could not come back (pickling, ...)
                results[i] = _internal_error(tasks[i][0], tasks[i][1], f"{type(exc).__name__}: {exc}"), True
            done(i)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for i, result in enumerate(results):
        if result is None:  # each file the dead worker took down with it, alone in a new process
            results[i] = _convert_isolated(tasks[i])
            done(i)
    return results


def _convert_isolated(task: tuple) -> tuple[ConversionResult, bool]:
    with ProcessPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(_convert_one, *task).result()
        except Exception as exc:
            return _internal_error(task[0], task[1], f"the worker process died ({type(exc).__name__}: {exc})"), True
