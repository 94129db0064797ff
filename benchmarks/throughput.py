"""Conversion throughput on a real code base, as ratios measured in one run.

Converts every file of the installed ``torch/nn`` package (the tree DESIGN.md
measured) in-process and compares with a bare LibCST parse and with one no-op
LibCST traversal of the same files, so the ratios hold on a noisy shared machine.

    .venv/bin/python benchmarks/throughput.py [TREE]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import libcst as cst

from transpile import convert_code


def _files(root: Path) -> list[tuple[Path, str]]:
    out = []
    for path in sorted(root.rglob("*.py")):
        try:
            out.append((path, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _timed(fn, sources) -> float:
    start = time.perf_counter()
    for _, src in sources:
        fn(src)
    return time.perf_counter() - start


class _NoOp(cst.CSTTransformer):
    pass


def main(argv: list[str]) -> int:
    if argv:
        root = Path(argv[0])
    else:
        import torch

        root = Path(torch.__file__).parent / "nn"
    sources = _files(root)
    lines = sum(src.count("\n") for _, src in sources)
    convert_code("import torch\nx = torch.cat([a], 0)\n")  # warm the tables and black
    parse = _timed(cst.parse_module, sources)
    visit = _timed(lambda s: cst.parse_module(s).visit(_NoOp()), sources)
    convert = _timed(lambda s: convert_code(s), sources)
    changed = sum(1 for _, s in sources if convert_code(s).changed)
    print(f"tree: {root} ({len(sources)} files, {lines} lines; {changed} changed by conversion)")
    print(f"LibCST parse only:            {parse:6.2f} s")
    print(f"parse + one no-op traversal:  {visit:6.2f} s")
    print(f"transpile convert_code:       {convert:6.2f} s  ({lines / convert:,.0f} lines/s)")
    print(f"ratio convert / parse:        {convert / parse:6.2f}x")
    print(f"ratio convert / parse+visit:  {convert / visit:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
