"""Do two versions of the tool convert the same trees to the same bytes?

A restructuring must not change what the tool writes. This script converts the samples and
the four corpora of ``corpora.py`` (torch/nn, torchvision, timm, transformers' modeling
files) through the command line and either records the outputs (the converted trees and
each file's diagnostics from the JSON report) or compares them with a recording:

    .venv/bin/python benchmarks/identical.py --record DIR      # before the change
    .venv/bin/python benchmarks/identical.py --compare DIR     # after it

``--compare`` prints every file whose output or diagnostics differ and exits 1 when any
does. ``--tree NAME`` limits the run to some trees (samples, torch/nn, torchvision, timm,
transformers). The fixtures need no recording: ``tests/test_fixtures.py`` compares them
with their committed expected outputs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from corpora import CORPORA, fetch  # this directory is on sys.path when run as a script
from throughput import py_files

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent
TREES = ("samples", *CORPORA)


def source_tree(name: str) -> Path:
    return ROOT / "samples" if name == "samples" else fetch(CORPORA[name])


def convert(tree: Path, out: Path) -> dict[str, list]:
    """Convert ``tree`` into ``out``; each output file's diagnostics (relative path -> list)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run([str(BIN / "transpile"), "convert", str(tree), "-o", str(out), "--format", "json",
                           "--no-cache", "--jobs", "2"], capture_output=True, text=True, env=env)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"{tree}: no JSON report (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    by_file: dict[str, list] = {}
    for diag in report.get("diagnostics", []):
        name = str(Path(diag.get("filename", "")).resolve().relative_to(tree.resolve())) \
            if diag.get("filename") else ""
        by_file.setdefault(name, []).append({k: v for k, v in sorted(diag.items()) if k != "filename"})
    return by_file


def record(name: str, dest: Path) -> None:
    tree = source_tree(name)
    target = dest / name.replace("/", "-")
    if target.exists():
        shutil.rmtree(target)
    diagnostics = convert(tree, target / "out")
    (target / "diagnostics.json").write_text(json.dumps(diagnostics, indent=1, sort_keys=True))
    print(f"{name}: recorded {len(list(py_files(target / 'out')))} files", flush=True)


def compare(name: str, recorded: Path) -> int:
    tree = source_tree(name)
    expected = recorded / name.replace("/", "-")
    if not expected.is_dir():
        raise SystemExit(f"{name}: nothing recorded under {expected}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        diagnostics = convert(tree, out)
        differ = []
        files = {p.relative_to(expected / "out") for p in (expected / "out").rglob("*") if p.is_file()}
        files |= {p.relative_to(out) for p in out.rglob("*") if p.is_file()}
        for rel in sorted(files):
            if "/.transpile/" in f"/{rel}" or rel.parts[0] == ".transpile":
                continue  # the run's own records (hashes, times)
            a, b = expected / "out" / rel, out / rel
            if not a.is_file() or not b.is_file() or a.read_bytes() != b.read_bytes():
                differ.append(f"output  {rel}")
        old = json.loads((expected / "diagnostics.json").read_text())
        for rel in sorted(set(old) | set(diagnostics)):
            if old.get(rel) != diagnostics.get(rel):
                differ.append(f"diagnostics  {rel or '(run)'}")
    for line in differ:
        print(f"{name}: differs: {line}")
    print(f"{name}: {len(files)} files, {len(differ)} differences", flush=True)
    return len(differ)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", type=Path, metavar="DIR", help="convert the trees and keep the outputs in DIR")
    mode.add_argument("--compare", type=Path, metavar="DIR", help="convert the trees and compare with DIR")
    parser.add_argument("--tree", action="append", choices=TREES, metavar="NAME",
                        help=f"this tree only (repeatable; one of {', '.join(TREES)})")
    args = parser.parse_args(argv)
    names = args.tree or list(TREES)
    if args.record:
        args.record.mkdir(parents=True, exist_ok=True)
        for name in names:
            record(name, args.record)
        return 0
    return 1 if sum(compare(name, args.compare) for name in names) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
