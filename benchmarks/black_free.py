"""Is the layout formatting gives without black the one black gives, wherever it answers?

``formatting.layout_without_black`` (engine/line_split.py) reproduces black's splitting of a
logical line for a subset of statements. This script converts the samples and the four
corpora of ``corpora.py`` in this process (``--jobs 1``, no cache, nothing written) with a
spy on it: every statement that reaches it is a statement the conversion would send to
black without it. For each one the spy asks both it and black, and counts the
statements sent to black before, the ones it answers, and the answers that differ from
black's text (there must be none). The spy answers "unsure" itself, so the conversion runs as
it did before the layout existed.

    .venv/bin/python benchmarks/black_free.py [--tree samples torch/nn torchvision timm transformers]

Prints one row per tree and every mismatch; exit status 1 when there is one.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from corpora import CORPORA, fetch  # noqa: E402

from transpile.engine import formatting  # noqa: E402
from transpile.io.files import convert_paths  # noqa: E402


def tree_path(name: str) -> Path:
    if name == "samples":
        return ROOT / "samples"
    return fetch(CORPORA[name])


def check(path: Path) -> tuple[int, int, list[tuple[str, int, str, str]]]:
    """(statements sent to black, answered without black, mismatches) converting ``path``."""
    real = formatting.layout_without_black
    calls = answered = 0
    mismatches = []

    def spy(stmt, code, line_length):
        nonlocal calls, answered
        calls += 1
        mine = real(stmt, code, line_length)
        if mine is not None:
            answered += 1
            try:
                theirs = formatting.black_layout(code, line_length)
            except Exception as exc:  # black refuses it: the layout must refuse too
                theirs = f"<black raised {type(exc).__name__}>"
            if mine != theirs:
                mismatches.append((code, line_length, mine, theirs))
        return None

    formatting.layout_without_black = spy
    try:
        convert_paths([path], write=False, jobs=1, cache=False)
    finally:
        formatting.layout_without_black = real
    return calls, answered, mismatches


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", nargs="+", default=["samples", *CORPORA])
    args = parser.parse_args(argv)
    failed = False
    print(f"{'tree':<14}{'to black before':>16}{'answered':>10}{'mismatches':>12}{'seconds':>9}")
    for name in args.tree:
        start = time.perf_counter()
        calls, answered, mismatches = check(tree_path(name))
        print(f"{name:<14}{calls:>16}{answered:>10}{len(mismatches):>12}{time.perf_counter() - start:>9.1f}",
              flush=True)
        for code, line_length, mine, theirs in mismatches:
            failed = True
            print(f"--- line length {line_length}:\n{code}--- black:\n{theirs}--- without black:\n{mine}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
