"""Whole corpora through the command line, as a user runs it: crashes, idempotence, rate.

Four corpora are fetched into ``benchmarks/.corpora/<name>/src`` (a wheel unpacked, never
installed; skipped when already there): torch's ``torch/nn``, torchvision, timm and every
``transformers/models/*/modeling_*.py``. For each one the script runs

    transpile convert <src> -o <out1> --format json --no-cache --jobs 2
    transpile convert <out1> -o <out2> ...          (the outputs, converted again)

and prints one row: files, lines, internal errors (files with an MS999 diagnostic; a run
that exits 123, is killed by a signal or writes no JSON report and names no such file
counts as one), outputs
that do not parse, files the second pass changes, the first pass's wall time and the
honest conversion rate. ``--determinism`` converts the corpus once more with another
``PYTHONHASHSEED`` and ``--jobs 1`` and counts outputs that differ from the first pass.

    .venv/bin/python benchmarks/corpora.py [--corpus NAME ...] [--determinism]

Exit status 1 when any corpus has an internal error, an unparsable output, a file changed
by the second pass or (with ``--determinism``) an output that depends on the run.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from throughput import py_files  # the .py files convert walks (this directory is on sys.path)

from transpile.cli.exit_codes import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_OK

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STORE = HERE / ".corpora"
BIN = Path(sys.executable).parent  # the venv whose transpile and pip are used
SHOWN = 5  # paths listed per kind of problem


@dataclass(frozen=True)
class Corpus:
    """A package release and which of its files make the corpus (as paths inside ``src``)."""

    name: str
    package: str
    version: str

    def select(self, member: str) -> str | None:
        """Where an archive member goes inside the corpus, or None when it is not part of it."""
        parts = member.split("/")
        if self.name == "torch/nn":
            return member if member.startswith("torch/nn/") else None
        if self.name == "transformers":
            # transformers/models/<model>/modeling_<x>.py -> models/<model>/modeling_<x>.py
            if (len(parts) == 4 and parts[:2] == ["transformers", "models"]
                    and parts[3].startswith("modeling_") and parts[3].endswith(".py")):
                return "/".join(parts[1:])
            return None
        return member if member.startswith(f"{self.package}/") else None


# torchvision: 0.29.1, the newest this machine's pip constraints allow (0.29.2 is refused).
CORPORA = {c.name: c for c in (
    Corpus("torch/nn", "torch", "2.13.0"),
    Corpus("torchvision", "torchvision", "0.29.1"),
    Corpus("timm", "timm", "1.0.31"),
    Corpus("transformers", "transformers", "5.23.0"),
)}


# -- fetching -------------------------------------------------------------------------
def corpus_dir(corpus: Corpus) -> Path:
    return STORE / corpus.name.replace("/", "-")


WORK: Path | None = None  # --work: where the outputs go (default: beside each corpus's src)


def work_dir(corpus: Corpus) -> Path:
    """Where a corpus's outputs go: ``--work DIR/<corpus>``, or beside its ``src``."""
    return WORK / corpus.name.replace("/", "-") if WORK else corpus_dir(corpus)


def fetch(corpus: Corpus) -> Path:
    """The corpus tree, downloaded and unpacked when missing (atomically: a complete tree or none)."""
    src = corpus_dir(corpus) / "src"
    if src.is_dir():
        return src
    src.parent.mkdir(parents=True, exist_ok=True)
    print(f"{corpus.name}: fetching {corpus.package}=={corpus.version} ...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=src.parent) as tmp:
        archive = _download(corpus, Path(tmp) / "dl")
        unpacked = Path(tmp) / "src"
        count = _unpack(corpus, archive, unpacked)
        if count == 0:
            raise SystemExit(f"{corpus.name}: no file of {archive.name} belongs to the corpus")
        os.replace(unpacked, src)
    return src


def _download(corpus: Corpus, dest: Path) -> Path:
    """The wheel of the release (the sdist when there is no wheel), without dependencies."""
    pin = f"{corpus.package}=={corpus.version}"
    for only in (["--only-binary", ":all:"], ["--no-binary", ":all:"]):
        proc = subprocess.run([str(BIN / "pip"), "download", "-q", "--no-deps", *only, pin, "-d", str(dest)],
                              capture_output=True, text=True)
        found = sorted(dest.glob("*.whl")) + sorted(dest.glob("*.tar.gz"))
        if proc.returncode == 0 and found:
            return found[0]
    raise SystemExit(f"{corpus.name}: could not download {pin}:\n{proc.stderr.strip()}")


def _unpack(corpus: Corpus, archive: Path, dest: Path) -> int:
    """Extract the corpus's members of a wheel or sdist into ``dest``; how many files."""
    count = 0
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                target = None if info.is_dir() else corpus.select(info.filename)
                if target is not None:
                    path = dest / target
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(zf.read(info))
                    count += 1
        return count
    with tarfile.open(archive) as tf:  # an sdist: <name>-<version>/[src/]<package>/...
        for member in tf.getmembers():
            inner = member.name.split("/", 1)[-1].removeprefix("src/")
            target = corpus.select(inner) if member.isfile() else None
            if target is not None:
                path = dest / target
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(tf.extractfile(member).read())
                count += 1
    return count


# -- one conversion through the CLI ---------------------------------------------------
@dataclass
class Run:
    """One ``transpile convert`` of a tree: exit code, time and the JSON report."""

    exit_code: int
    seconds: float
    report: dict
    stderr: str

    def internal_error_files(self) -> list[str]:
        files = {d["filename"] for d in self.report.get("diagnostics", []) if d.get("code") == "MS999"}
        return sorted(files)

    def failed_files(self) -> list[str]:
        return [f["path"] for f in self.report.get("files", []) if f.get("status") == "failed"]

    @property
    def crashed(self) -> bool:
        """An internal error of the run itself: exit 123, killed by a signal (a negative
        exit code: out of memory, a segfault) or no JSON report on stdout."""
        return self.exit_code == EXIT_INTERNAL or self.exit_code < 0 or not self.report


def convert(tree: Path, out: Path, *, jobs: int = 2, seed: str = "0") -> Run:
    """``transpile convert tree -o out --format json --no-cache --jobs N`` with a fresh ``out``."""
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, PYTHONHASHSEED=seed)
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / "transpile"), "convert", str(tree), "-o", str(out), "--format", "json",
                           "--no-cache", "--jobs", str(jobs)], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:  # the process died before its report: counted as an internal error
        report = {}
    return Run(proc.returncode, seconds, report, proc.stderr)


# -- what the outputs say ---------------------------------------------------------------
def unparsable(root: Path) -> list[Path]:
    """The .py files under ``root`` that ``ast.parse`` refuses."""
    bad = []
    for path in py_files(root):
        try:
            ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError):
            bad.append(path)
    return bad


def differing(first: Path, second: Path) -> list[Path]:
    """The .py files of ``first`` whose copy under ``second`` is missing or not byte-for-byte equal."""
    changed = []
    for path in py_files(first):
        other = second / path.relative_to(first)
        if not other.is_file() or other.read_bytes() != path.read_bytes():
            changed.append(path.relative_to(first))
    return changed


def torch_uses(path: Path) -> int:
    """An estimate of a file's torch uses: loads of names its torch imports bind (for a file
    Python does not parse, the ``torch.`` spelled outside import lines).

    Used for the files the converter fails on, whose uses its summary does not count.
    """
    data = path.read_bytes()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        lines = data.decode("utf-8", "replace").splitlines()
        return sum(len(re.findall(r"\btorch\.", line)) for line in lines
                   if not line.lstrip().startswith(("import ", "from ")))
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound |= {(a.asname or a.name.split(".")[0]) for a in node.names if a.name.split(".")[0] == "torch"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch" and not node.level:
            bound |= {a.asname or a.name for a in node.names if a.name != "*"}
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id in bound
               and isinstance(node.ctx, ast.Load))


@dataclass
class Row:
    """One corpus's figures."""

    name: str
    files: int = 0
    lines: int = 0
    internal: list[str] = field(default_factory=list)
    exit_code: int = 0
    crashed: bool = False  # the first run died (Run.crashed)
    second_internal: list[str] = field(default_factory=list)
    second_crashed: bool = False
    unparsable: list[Path] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    converted_uses: int = 0
    unconverted_uses: int = 0
    failed: list[str] = field(default_factory=list)
    failed_uses: int = 0  # the failed files' torch uses (estimated here when the summary leaves them out)
    nondeterministic: list[Path] | None = None

    @property
    def rate(self) -> float:
        total = self.converted_uses + self.unconverted_uses + self.failed_uses
        return 0.0 if total == 0 else self.converted_uses / total

    @property
    def internal_errors(self) -> int:
        """The first run's files with an internal error; a run that died naming none counts as one."""
        return len(self.internal) + (self.crashed and not self.internal)

    @property
    def problems(self) -> int:
        return (self.internal_errors + len(self.second_internal) + (self.second_crashed and not self.second_internal)
                + len(self.unparsable) + len(self.changed) + len(self.nondeterministic or []))


def measure(corpus: Corpus, determinism: bool) -> Row:
    src = fetch(corpus)
    work = work_dir(corpus)
    out1, out2 = work / "out1", work / "out2"
    sources = py_files(src)
    row = Row(corpus.name, len(sources), sum(p.read_bytes().count(b"\n") for p in sources))
    print(f"{corpus.name}: converting {row.files} files ({row.lines:,} lines) ...", file=sys.stderr, flush=True)
    first = convert(src, out1)
    row.seconds, row.exit_code, row.crashed = first.seconds, first.exit_code, first.crashed
    row.internal = first.internal_error_files()
    if not first.report:
        print(f"{corpus.name}: no JSON report (exit {first.exit_code}):\n{first.stderr[-2000:]}", file=sys.stderr)
    summary = first.report.get("summary", {})
    row.converted_uses = summary.get("converted_uses", 0)
    row.unconverted_uses = summary.get("unconverted_uses", 0)
    row.failed = first.failed_files()
    row.failed_uses = summary.get("failed_uses", sum(torch_uses(Path(p)) for p in row.failed))
    row.unparsable = unparsable(out1)
    print(f"{corpus.name}: converting the outputs again ...", file=sys.stderr, flush=True)
    second = convert(out1, out2)
    row.second_internal = second.internal_error_files()
    row.second_crashed = second.crashed
    row.changed = differing(out1, out2)
    if determinism:
        print(f"{corpus.name}: converting again with another hash seed and --jobs 1 ...", file=sys.stderr, flush=True)
        out3 = work / "out-seed"
        convert(src, out3, jobs=1, seed="12345")
        row.nondeterministic = differing(out1, out3) + [p.relative_to(out3) for p in py_files(out3)
                                                        if not (out1 / p.relative_to(out3)).exists()]
    return row


# -- the table ---------------------------------------------------------------------------
def print_table(rows: list[Row], determinism: bool) -> None:
    head = (f"{'corpus':13} {'files':>6} {'lines':>9} {'internal':>8} {'unparsable':>10} "
            f"{'2nd pass changed':>16} {'time (s)':>9} {'rate':>24}")
    if determinism:
        head += f" {'seed/jobs differ':>16}"
    print(head)
    for r in rows:
        internal = r.internal_errors
        total = r.converted_uses + r.unconverted_uses + r.failed_uses
        line = (f"{r.name:13} {r.files:6} {r.lines:9,} {internal:8} {len(r.unparsable):10} "
                f"{len(r.changed):16} {r.seconds:9.1f} {f'{r.rate:.1%} ({r.converted_uses:,}/{total:,})':>24}")
        if determinism:
            line += f" {len(r.nondeterministic or []):16}"
        print(line)
    print("rate: converted torch uses / all torch uses; the uses of failed files (estimated from their torch "
          "imports when the summary leaves them out) count as not converted.")
    for r in rows:
        print_paths(r)


def print_paths(row: Row) -> None:
    """The first few files of each kind of problem, so a developer can look."""
    out1 = work_dir(CORPORA[row.name]) / "out1"
    kinds = [
        ("internal errors", row.internal),
        ("internal errors on the second pass", row.second_internal),
        ("unparsable outputs", row.unparsable),
        ("changed by the second pass (out1 vs out2)", [out1 / p for p in row.changed]),
        ("differing with another hash seed and --jobs 1", [out1 / p for p in (row.nondeterministic or [])]),
        ("failed files", row.failed),
    ]
    for label, paths in kinds:
        if paths:
            print(f"\n{row.name}: {len(paths)} {label}:")
            for p in paths[:SHOWN]:
                print(f"  {p}")
            if len(paths) > SHOWN:
                print(f"  ... and {len(paths) - SHOWN} more")
    if row.exit_code < 0:
        print(f"\n{row.name}: the first pass was killed by signal {-row.exit_code}")
    elif row.exit_code not in (EXIT_OK, EXIT_FINDINGS):
        print(f"\n{row.name}: the first pass exited with {row.exit_code}")
    if row.second_crashed:
        print(f"\n{row.name}: the second pass died (killed by a signal, exit 123 or no JSON report)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), metavar="NAME",
                        help=f"run this corpus only (repeatable; one of {', '.join(CORPORA)})")
    parser.add_argument("--work", metavar="DIR",
                        help="write the outputs under DIR/<corpus> (default: beside each corpus's src); "
                             "runs with their own --work can go side by side over one shared .corpora")
    parser.add_argument("--determinism", action="store_true",
                        help="also convert each corpus with another PYTHONHASHSEED and --jobs 1 and compare")
    args = parser.parse_args(argv)
    global WORK
    WORK = Path(args.work).resolve() if args.work else None
    names = args.corpus or list(CORPORA)
    rows = [measure(CORPORA[n], args.determinism) for n in names]
    print_table(rows, args.determinism)
    return 1 if any(r.problems for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
