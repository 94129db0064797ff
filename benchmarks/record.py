"""Run a benchmark and keep what it prints as a results file to commit.

    .venv/bin/python benchmarks/record.py NAME -- COMMAND ...

writes ``benchmarks/results/NAME-<commit>.txt``: a header (the commit, whether the code
that decides the figures — transpile/, rewrites/, benchmarks/ — differs from it, the
command, the date, the machine's cores, the exit status) and then everything the command
printed on stdout, unchanged. A figure quoted in docs/benchmarks.md or benchmarks/README.md names
such a file (see benchmarks/results/README.md).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
MEASURED = ("transpile", "rewrites", "benchmarks")  # the code whose changes would change the figures


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    name, command = argv[0], argv[2:]
    commit = git("rev-parse", "--short", "HEAD")
    changed = git("status", "--porcelain", "--untracked-files=no", "--", *MEASURED, ":!*.md")
    start = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    proc = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / f"{name}-{commit}.txt"
    header = [
        f"# commit: {commit}" + (" (with uncommitted changes to the measured code:)" if changed else ""),
        *(f"#   {line}" for line in changed.splitlines()),
        f"# command: {' '.join(command)}",
        f"# started: {start}; {os.cpu_count()} cores, shared; exit status {proc.returncode}",
        "",
    ]
    target.write_text("\n".join(header) + proc.stdout, encoding="utf-8")
    sys.stdout.write(proc.stdout)
    print(f"\nrecorded in {target.relative_to(ROOT)}", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
