"""Converting files and directory trees: reading, workers, the cache, writing.

The package (``transpile``) exports ``convert_paths``, ``PathReport`` and ``RefusedError``;
each file's text is converted by the library API (``transpile.api``). This module never prints.

A run has four steps: plan (walk the inputs, map each file to its output, refuse
outputs that collide), read and convert, check what would be overwritten (``in_place``:
read-only files, uncommitted changes, existing backups), then write. Nothing is written
before the last step, and every write is atomic: a refused run leaves the disk as it was.
"""
from __future__ import annotations

import contextlib
import errno
import gc
import hashlib
import io
import os
import re
import stat
import subprocess
import tokenize
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .. import api
from ..engine.diagnostics import Diagnostic, Safety, Severity, error as _error
from ..engine.package_index import PackageFacts, PackageIndex, outside_package, scan_files
from ..engine.pipeline import MAX_SOURCE_CHARS, ConversionResult
from .atomic import copy_atomic, write_atomic
from .cache import ResultCache, cache_key, default_cache_dir
from .decisions import DecisionStore, find_root
from .in_place import InPlaceRecord, record_path
from .merge import HandEdits, carry_hand_edits

CONVERTED_SUFFIXES = (".py", ".ipynb")  # other files of a tree are copied as they are
BACKUP_SUFFIX = ".orig"  # in_place with backup: ``m.py`` is kept as ``m.py.orig``
# In an output tree: what the last run wrote to each converted file (hidden: never an input)
GENERATED_DIR = Path(".transpile") / "generated"
COPIED_DIR = Path(".transpile") / "copied"  # the same for files only copied: the digest of what was written
CONFLICT_SUFFIX = ".new"  # hand edits that conflict: ``m.py`` is kept, the new conversion is ``m.py.new``
_BOM = "\ufeff"
# The most bytes of a file that are read: a .py file as many as the converter takes
# characters (a larger one, such as a generated data table, would cost gigabytes to parse,
# and is refused before it is read or parsed); a notebook ten times that (its JSON holds
# the cells' outputs, images too, which are not converted).
MAX_FILE_BYTES = MAX_SOURCE_CHARS
MAX_NOTEBOOK_BYTES = 10 * MAX_SOURCE_CHARS

Progress = Callable[[int, int, Path], None]  # (files done, files in the run, the file just done)


class RefusedError(ValueError):
    """``convert_paths`` refused the run before writing anything; ``problems`` says why, one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


class InterruptedRun(KeyboardInterrupt):
    """``convert_paths`` was interrupted while writing (Ctrl-C, or a signal the caller turns
    into KeyboardInterrupt). ``report``: the files finished before it, each written whole
    (``output``); ``pending``: those not reached, left as they were (no temporary file is
    left: writes are atomic). An ``in_place`` run's record repairs it on the next run."""

    def __init__(self, report: "PathReport", pending: list[Path]):
        super().__init__(f"interrupted after {len(report.files)} of {len(report.files) + len(pending)} files")
        self.report, self.pending = report, pending


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
    unrecorded: bool = False  # the conflict: the output was there with no record that a run wrote it

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
    def _measured(self) -> list[ConversionResult]:
        """The results the rate counts: not those of failed files (a file that converted
        but could not be written failed too: its conversion is not where the user will run it)."""
        return [f.result for f in self.files if f.result and not f.result.failed]

    @property
    def converted_uses(self) -> int:
        return sum(r.stats.converted for r in self._measured)

    @property
    def unconverted_uses(self) -> int:
        return sum(r.stats.unconverted for r in self._measured)

    @property
    def annotation_uses(self) -> int:
        """torch types left in annotations: counted apart, not in the rate (they run nothing)."""
        return sum(r.stats.annotations for r in self._measured)

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
        """Outputs kept as they are, the new output written beside them: edited by hand
        since the last run, or there with no record that a run wrote them (``unrecorded``)."""
        return [f for f in self.files if f.conflict is not None]

    @property
    def unrecorded(self) -> list[FileOutcome]:
        """Outputs that were there with no record that a run wrote them: kept, the new one beside."""
        return [f for f in self.files if f.unrecorded]

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def read_source(path: Path, explicit: bool) -> tuple[str | None, bool, Diagnostic | None]:
    """The text of ``path`` without its UTF-8 BOM, whether it had one, or why it cannot be converted.

    Only a regular file is read (through symlinks): a FIFO, a device or a socket is refused
    before it is read (opened without blocking, so a FIFO does not hang the run); and only up
    to the size limit (``MAX_FILE_BYTES``, a notebook ``MAX_NOTEBOOK_BYTES``), refused from
    its size before reading and while reading (a file that grows), never read whole.

    The BOM is removed here and put back on writing: CPython's parser rejects it in a str
    (so a BOM file without torch failed its syntax check) and LibCST drops it.
    """
    limit = size_limit(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return None, False, _error(str(path), f"cannot read: {exc.strerror or exc}")
    with os.fdopen(fd, "rb") as fh:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None, False, _error(str(path), f"not a regular file ({_file_kind(info.st_mode)})")
            if _size(info) > limit:
                return None, False, _too_large(path, f"{_size(info):,} bytes", limit)
            data = fh.read(limit + 1)
        except OSError as exc:
            return None, False, _error(str(path), f"cannot read: {exc.strerror or exc}")
    if len(data) > limit:  # it grew since its size was taken
        return None, False, _too_large(path, f"more than {limit:,} bytes", limit)
    try:
        encoding = declared_encoding(data)
    except SyntaxError as exc:  # a cookie naming no codec Python knows
        return None, False, _error(str(path), f"its coding cookie: {exc}")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        what = "not UTF-8" if encoding == "utf-8" else f"not valid {encoding}, which its coding cookie declares"
        return None, False, _error(str(path), f"{what} (byte {exc.start})", line)
    bom = text.startswith(_BOM)
    text = text[len(_BOM):] if bom else text
    if explicit and not text.strip():
        return None, bom, _error(str(path), "empty file: nothing to convert")
    return text, bom, None


def size_limit(path: Path) -> int:
    """The most bytes of ``path`` that are read (a notebook's JSON holds its outputs too)."""
    return MAX_NOTEBOOK_BYTES if path.suffix == ".ipynb" else MAX_FILE_BYTES


def _size(info: os.stat_result) -> int:
    return info.st_size


def _too_large(path: Path, size: str, limit: int) -> Diagnostic:
    return _error(str(path), f"too large to convert: {size}; files over {limit:,} bytes are neither read nor "
                  "parsed (a generated data table? keep it out of the converted tree)")


def _file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for a message."""
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return kind
    return "not a file"


def _within_limit(path: Path) -> bool:
    """Whether ``path``'s size (from stat) is within its limit: larger files are not even indexed."""
    try:
        return _size(path.stat()) <= size_limit(path)
    except OSError:
        return False
def declared_encoding(data: bytes) -> str:
    """The encoding a Python source's coding cookie declares (PEP 263), as Python reads it;
    "utf-8" without one (a BOM is removed by the caller). SyntaxError for an unknown codec."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        if any(_COOKIE.match(line.decode("latin-1")) for line in data.split(b"\n", 2)[:2]):
            raise  # the cookie names no codec (or contradicts a BOM)
        return "utf-8"  # no cookie, and not UTF-8: decoding says where
    return "utf-8" if encoding in ("utf-8", "utf-8-sig") else encoding


def encode_source(code: str) -> bytes:
    """``code`` in the encoding its own coding cookie declares (a converted file keeps its
    input's cookie: a Latin-1 file stays Latin-1); UTF-8 without one. Converted code that the
    declared encoding cannot hold is written as UTF-8 with the cookie saying so."""
    try:
        encoding = declared_encoding(code.encode("utf-8"))
    except SyntaxError:
        encoding = "utf-8"
    try:
        return code.encode(encoding)
    except UnicodeEncodeError:
        head = code.split("\n", 2)
        for i, line in enumerate(head[:2]):
            cookie = _COOKIE.match(line)
            if cookie:
                head[i] = line[:cookie.start(1)] + "utf-8" + line[cookie.end(1):]
                break
        return "\n".join(head).encode("utf-8")


_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")  # PEP 263's


def _walk(root: Path, exclude: frozenset[str]) -> Iterator[tuple[Path, str | None]]:
    """The files under ``root``, each with None or why it is skipped (broken symlink, loop, ...).

    Sorted, a directory's files before its subdirectories. Symlinked directories are
    followed (os.walk does not), except one leading back to a directory being walked;
    hidden directories, ``__pycache__`` and the real paths in ``exclude`` (an output
    directory inside the input) are left out; a subdirectory an earlier run wrote (it
    holds ``.transpile/generated``) is skipped, saying so.
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
            if _loops(entry):
                yield path, f"symlink loop (through {os.readlink(path)})"
            elif entry.is_dir():  # through a symlink too
                if entry.name.startswith(".") or entry.name == "__pycache__":
                    continue
                real = os.path.realpath(path)
                if real in exclude:
                    continue
                if real in ancestors:
                    yield path, f"symlink loop: leads back to {real}"
                elif (path / GENERATED_DIR).is_dir():  # converting converted code again would mirror it in
                    yield path, f"an output tree of an earlier run (it holds {GENERATED_DIR}): not converted again"
                else:
                    subdirs.append((path, (*ancestors, real)))
            elif entry.is_file():
                yield path, None
            elif entry.is_symlink():
                yield path, f"broken symlink (to {os.readlink(path)})"
            else:
                yield path, "not a regular file"
        stack.extend(reversed(subdirs))


def _loops(entry: os.DirEntry | Path) -> bool:
    """Whether ``entry`` is a symlink that never leads to a file (a chain back to itself)."""
    if not entry.is_symlink():
        return False
    try:
        os.stat(entry)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


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
    records = {base: InPlaceRecord.load(base) for base in {_record_base(p) for p in paths}}
    with _Workers(jobs, converting=store is None) as workers:  # (started only if the index's scan or the conversion uses them)
        plan = _check_destinations(_plan(paths, out_root, in_place, records, workers.scan_all), in_place)
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
        converted = _convert_all(todo, workers, debug, lambda i: counter.step(todo[i].src))
    for job, (result, internal) in zip(todo, converted):
        job.result, job.internal_error = result, internal
        if store is not None and not internal:
            store.put(job.key, result)
    jobs_done = [e for e in plan if isinstance(e, _Job)]
    if write and in_place:
        overwrites = [e for e in jobs_done if e.overwrites_source]
        _refuse(_overwrite_problems([e for e in overwrites if not e.written_before], force, backup))
        _refuse(_record_sources(overwrites))
    outcomes: list[FileOutcome] = []
    try:
        for entry in plan:
            outcomes.append(entry.finish(write, backup) if isinstance(entry, _Job) else entry)
    except KeyboardInterrupt as exc:  # Ctrl-C, or a signal the caller turned into one: say what was done
        raise InterruptedRun(PathReport(outcomes), [e.src if isinstance(e, _Job) else e.source
                                                    for e in plan[len(outcomes):]]) from exc
    written = {f.source for f in outcomes if f.output is not None}
    if write and in_place and all(e.src in written for e in overwrites):  # all written: nothing left to repair
        for record in records.values():
            record.forget([e.src for e in jobs_done if e.record is record])
            with contextlib.suppress(OSError):
                record.save()
    return PathReport(outcomes)


def _record_base(given: Path) -> Path:
    """The directory whose in-place record covers ``given`` (itself, or a file's folder)."""
    return given if given.is_dir() else given.parent


def _record_sources(overwrites: list[_Job]) -> list[str]:
    """Record the first form of each file about to be overwritten, before the first write
    (``in_place.InPlaceRecord``); why the run is refused when that cannot be done."""
    changed = {}
    for job in overwrites:  # a file an interrupted run recorded keeps its first form: job.text is it
        job.record.add(job.src, (_BOM if job.bom else "") + job.text, job._encoded())
        changed[id(job.record)] = job.record
    problems = []
    for record in changed.values():
        try:
            record.save()
        except OSError as exc:
            problems.append(f"cannot record the sources before overwriting them, in {record_path(record.base)}: "
                            f"{exc.strerror or exc} (nothing was written)")
    return problems


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
    record: InPlaceRecord | None = None  # the first forms of the files an in-place run overwrites
    written_before: bool = False  # it holds what an interrupted in-place run wrote (its backup is made)
    by_digest: bool = False  # -o: copied as it is (not converted, or over the size limit), recorded by digest

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
                    _overwrite(self.src, self._encoded(), backup and not self.written_before)
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
        recorded) carried onto the new conversion; on a conflict, or when ``dest`` is there with
        no record of an earlier run, ``dest`` stays as it is and the new output goes to
        ``dest.new``. Then record what was written, for the next run. A file only copied (or
        one over the size limit, copied as it is) is compared by digest (its record is one),
        never read whole nor merged."""
        converted = self.converts and not self.failed and self.result.changed
        mode = stat.S_IMODE(self.src.stat().st_mode)
        beside = dest.with_name(dest.name + CONFLICT_SUFFIX)
        if not self.by_digest:
            new = self._encoded() if converted else self.src.read_bytes()
            plan = carry_hand_edits(new, _read_or_none(self.generated), _read_or_none(dest), beside.exists())
        else:
            new = _digest(self.src)
            plan = carry_hand_edits(new, _read_or_none(self.generated), _digest_or_none(dest), beside.exists(),
                                    mergeable=False)
        if plan.write is not None and not self.by_digest and (converted or plan.write != new):
            write_atomic(dest, plan.write, mode)
        elif plan.write is not None:  # as it is, byte for byte
            copy_atomic(self.src, dest)
        if plan.conflict:
            if not self.by_digest:
                write_atomic(beside, new, mode)
            else:
                copy_atomic(self.src, beside)
            outcome = replace(outcome, conflict=beside, unrecorded=plan.unrecorded,
                              result=_with_diagnostic(self.result, self.src, self._conflict(dest, beside, plan)))
        write_atomic(self.generated, new)  # after the output: a run cut short reads as a hand edit, not lost
        return replace(outcome, merged=plan.merged)

    def _conflict(self, dest: Path, beside: Path, plan: HandEdits) -> Diagnostic:
        """The MS002 warning of an output kept as it is, the new one beside it."""
        if plan.unrecorded:
            why = (f"{dest} exists and no record says transpile wrote it ({self.generated.parent} has none: deleted, "
                   f"or the file is not ours): kept as it is; the new output is {beside} (compare them, keep what "
                   "you want, then delete it: until then every run says so)")
        else:
            why = (f"{dest} was edited by hand since the last run, in lines the new conversion changes too: kept as "
                   f"it is; the new conversion is {beside} (merge it by hand, then delete it: until then every run "
                   "says so)")
        return Diagnostic("MS002", Severity.WARNING, why, str(self.src), 1, 0, Safety.MANUAL)

    def _encoded(self) -> bytes:
        return ("\ufeff".encode("utf-8") if self.bom else b"") + encode_source(self.result.code)


def _with_diagnostic(result: ConversionResult | None, src: Path, diag: Diagnostic) -> ConversionResult:
    """``result`` (an empty one for a file only copied) with ``diag`` added."""
    base = result or ConversionResult("", [], False, str(src))
    return replace(base, diagnostics=[*base.diagnostics, diag])


def _digest(path: Path) -> bytes:
    """The sha256 of ``path``'s content (read in pieces: a copied file may be large), as text."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest().encode("ascii") + b"\n"


def _digest_or_none(path: Path) -> bytes | None:
    try:
        return _digest(path)
    except OSError:
        return None


def _read_or_none(path: Path) -> bytes | None:
    """The bytes of ``path``; None when it is missing or unreadable (nothing known of it)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def generated_record(out_root: Path, dest: Path, to_file: bool, copied: bool = False) -> Path:
    """Where a run writing ``dest`` under ``out_root`` (``out_root`` itself when ``to_file``)
    records what it wrote: ``OUT/.transpile/generated/<path in OUT>``, beside ``-o x.py``
    (a file only copied: its digest, in ``OUT/.transpile/copied/<path in OUT>``)."""
    folder = COPIED_DIR if copied else GENERATED_DIR
    if to_file:
        return out_root.parent / folder / out_root.name
    return out_root / folder / dest.relative_to(out_root)


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


def _plan(paths: list[Path], out_root: Path | None, in_place: bool,
          records: dict[Path, InPlaceRecord], scan_all=scan_files) -> list[_Job | FileOutcome]:
    """Every file of the inputs with its output (``out_root`` mirrored, the file itself in
    place, None on a dry run); unusable inputs and skipped tree entries as outcomes. The
    tree's index reads the sources an interrupted in-place run recorded (``records``)."""
    to_file = _output_is_file(paths, out_root)
    if out_root is not None and not to_file and out_root.exists() and not out_root.is_dir():
        raise ValueError(f"output {out_root} exists and is not a directory")
    exclude = frozenset({os.path.realpath(out_root)}) if out_root is not None else frozenset()
    plan: list[_Job | FileOutcome] = []
    for given in paths:
        if given.is_dir():
            base = out_root if len(paths) == 1 else (out_root / given.resolve().name if out_root else None)
            found = list(_walk(given, exclude))
            indexed = _inside(given, [p for p, why in found if why is None and _within_limit(p)])
            record = records[_record_base(given)]
            first_forms = {p.resolve(): text for p in indexed if (text := record.source(p)) is not None}
            index = PackageIndex(given, indexed, first_forms, scan_all)
            for path, why in found:
                if why is not None:
                    plan.append(_skipped(path, why))
                else:
                    dest = path if in_place else (base / path.relative_to(given) if base else None)
                    plan.append(_Job(path, dest, False, index.facts(path), record=record))
        elif given.is_file():
            dest = given if in_place else ((out_root if to_file else out_root / given.name) if out_root else None)
            plan.append(_Job(given, dest, True, record=records[_record_base(given)]))
        else:
            plan.append(_unusable(given))
    if out_root is not None:  # an output keeps its hand edits across runs; one not ours is never overwritten
        for job in plan:
            if isinstance(job, _Job):
                job.by_digest = not job.converts or not _within_limit(job.src)
                job.generated = generated_record(out_root, job.dest, to_file, copied=job.by_digest)
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
    diag = Diagnostic("MS001", Severity.WARNING, f"skipped: {why}", str(path), 1, 0, Safety.MANUAL)
    return FileOutcome(path, None, ConversionResult("", [diag], False, str(path)), skipped=True)


def _unusable(given: Path) -> FileOutcome:
    """An input that is neither a file nor a directory: missing, a broken symlink, a device."""
    if _loops(given):
        why = f"symlink loop (through {os.readlink(given)})"
    elif given.is_symlink():
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
    recorded = job.record.source(job.src) if job.record is not None else None
    if recorded is not None:  # an interrupted in-place run overwrote it, or was about to: its first form
        job.bom, text = recorded.startswith(_BOM), recorded.removeprefix(_BOM)
        job.written_before = job.record.written_before(job.src)
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


class _Workers:
    """A run's worker processes: started on first use, after the pipeline is built (forked
    workers inherit it), and shared by the tree index's scan and the conversion."""

    # Fewer files than this per worker are scanned here (starting workers costs more).
    MIN_SCANS_PER_WORKER = 8

    def __init__(self, jobs: int, converting: bool = False) -> None:
        """``converting``: the run converts whatever the index finds (no cache to answer
        from), so the workers the index's scan starts are forked with the pipeline built and
        convert too (else the conversion starts others)."""
        self.jobs = jobs
        self.converting = converting
        self._pool: ProcessPoolExecutor | None = None
        self._converters = False  # the workers were forked with the pipeline built

    def __enter__(self) -> "_Workers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers (what is queued is not started); a later use starts others."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def pool(self, most: int | None = None, converting: bool = True) -> ProcessPoolExecutor:
        """The pool, started with ``jobs`` workers (at most ``most``) if there is none.
        Workers that will convert are forked with the pipeline built (they inherit it);
        the index's scan does not build it (a run whose files are all cached never does)."""
        if self._pool is not None and converting and not self._converters:
            self.close()
        if self._pool is None:
            if converting:
                try:
                    api.prepare()  # built once here: forked workers inherit it
                except Exception:
                    pass  # each file reports it as an internal error
            self._converters = api.prepared()
            # What is alive now is the workers' too: frozen while they are forked, no
            # collection in a worker traces (and so copies) those pages.
            gc.freeze()
            try:
                self._pool = ProcessPoolExecutor(max_workers=min(self.jobs, most or self.jobs))
                self._pool.submit(int).result()  # (a fork pool starts all its workers at the first task)
            finally:
                gc.unfreeze()
        return self._pool

    def scan_all(self, tasks: list) -> list:
        """``package_index.scan_files(tasks)``, in the workers when there are enough files."""
        if self.jobs < 2 or len(tasks) < self.MIN_SCANS_PER_WORKER * self.jobs:
            return scan_files(tasks)
        size = -(-len(tasks) // (4 * self.jobs))  # several pieces a worker: one large file does not hold the rest
        pieces = [tasks[i:i + size] for i in range(0, len(tasks), size)]
        try:
            return [info for piece in self.pool(converting=self.converting).map(scan_files, pieces) for info in piece]
        except Exception:  # a worker died, or a result could not come back: scanned here
            self.close()
            return scan_files(tasks)


def _convert_all(todo: list[_Job], workers: _Workers, debug: bool,
                 done: Callable[[int], None] = lambda i: None) -> list[tuple[ConversionResult, bool]]:
    """The results of ``todo``, in its order: here, or in the ``workers``' processes.
    ``done(i)`` is called when the result of ``todo[i]`` is known."""
    tasks = [(p.text, str(p.src), debug, p.package, p.record_edits, p.declined) for p in todo]
    if workers.jobs < 2 or len(tasks) < 2:
        workers.close()  # (started for the index's scan)
        serial = []
        if tasks:
            try:
                api.prepare()  # built before the heap is frozen
            except Exception:
                pass  # each file reports it as an internal error
        # What is alive now (the tool, its tables, the run's plan) outlives the files: frozen,
        # the collections between files do not trace it again and again.
        gc.freeze()
        try:
            for i, task in enumerate(tasks):
                serial.append(_convert_one(*task))
                done(i)
        finally:
            gc.unfreeze()
        return serial
    results: list[tuple[ConversionResult, bool] | None] = [None] * len(tasks)
    # Longest first, so that the last task to finish is a short one.
    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i][0]))
    pool = workers.pool(most=len(tasks))
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
        workers.close()
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
