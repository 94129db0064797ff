"""`transpile parity`: run every sample spec and print a table of differences."""
from __future__ import annotations

import json
import math
import os
import sys

from .runner import DEFAULT_TIMEOUT, MODES, SampleResult

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2

VERDICT_WIDTH = 90  # longer verdicts are cut in the table and printed in full below it
COLUMNS = ("sample", "converted", "max abs diff PYNATIVE", "max abs diff GRAPH", "verdict")


def add_parity_parser(sub) -> None:
    p = sub.add_parser(
        "parity", help="run original and converted samples on the same weights and inputs",
        description="For every <sample>.parity.toml: build the torch model and the converted MindSpore "
                    "model, copy the weights, feed the same random inputs in PYNATIVE and GRAPH mode "
                    "and compare the outputs. Exit 0 only if every sample matches.",
    )
    p.add_argument("specs", nargs="*", metavar="SPEC",
                   help="spec files or sample names to run (default: every spec under --samples)")
    p.add_argument("--samples", default="samples", metavar="DIR", help="directory of samples and specs (default: samples)")
    p.add_argument("--converted", metavar="DIR",
                   help="read converted files from DIR (as `transpile convert SAMPLES -o DIR` wrote them); "
                        "default: convert on the fly")
    p.add_argument("--mode", choices=("both", "pynative", "graph"), default="both", help="MindSpore mode(s) to run")
    p.add_argument("-j", "--jobs", type=int, default=2, help="child processes at once (default: 2)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per (sample, mode) run")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    p.add_argument("-v", "--verbose", action="store_true", help="show error details and timings")
    p.set_defaults(func=cmd_parity)


def _select(args):
    from pathlib import Path

    from .runner import load_specs

    if not args.specs:
        return load_specs(args.samples)
    paths = []
    for s in args.specs:
        path = Path(s)
        if not path.name.endswith(".parity.toml"):
            path = Path(args.samples) / f"{s}.parity.toml"
        paths.append(path)
    return load_specs(paths)


def cmd_parity(args) -> int:
    from .runner import run_samples
    from .spec import SpecError

    if args.jobs < 1 or args.timeout <= 0:
        print("transpile parity: --jobs and --timeout must be positive", file=sys.stderr)
        return EXIT_USAGE
    try:
        specs = _select(args)
    except SpecError as exc:
        print(f"transpile parity: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.converted is not None and not os.path.isdir(args.converted):
        print(f"transpile parity: --converted {args.converted}: not a directory", file=sys.stderr)
        return EXIT_USAGE
    modes = MODES if args.mode == "both" else (args.mode.upper(),)
    results = run_samples(specs, converted_dir=args.converted, modes=modes, jobs=args.jobs, timeout=args.timeout)
    if args.format == "json":
        print(json.dumps([_as_dict(r) for r in results], indent=2))
    else:
        print(format_table(results, modes))
        for r in results:
            if len(r.verdict) > VERDICT_WIDTH:
                print(f"{r.sample}: {r.verdict}")
        for r in results:
            for note in r.notes:
                print(f"note: {r.sample}: {note}")
        if args.verbose:
            for r in results:
                for mode, mr in r.results.items():
                    print(f"{r.sample} ({mode}): {mr.verdict}, diffs per output {list(mr.diffs)}, {mr.seconds:.1f} s")
                    if mr.detail:
                        print(f"\n--- {r.sample} ({mode}) ---\n{mr.detail}")
        ok = sum(r.ok for r in results)
        print(f"{ok} of {len(results)} samples match")
    return EXIT_OK if results and all(r.ok for r in results) else EXIT_MISMATCH


def _diff_cell(result: SampleResult, mode: str) -> str:
    mr = result.results.get(mode)
    if mr is None:
        return "-"
    if mr.verdict.startswith("not run"):
        return mr.verdict
    if mr.max_abs_diff is None:
        return "error"
    if math.isnan(mr.max_abs_diff):
        return "nan"
    return f"{mr.max_abs_diff:.3g}"


def format_table(results: list[SampleResult], modes=MODES) -> str:
    """A plain-text table: sample | converted | max abs diff PYNATIVE | max abs diff GRAPH | verdict."""
    rows = [COLUMNS]
    for r in results:
        rows.append((
            r.sample,
            "yes" if r.converted else "no",
            _diff_cell(r, "PYNATIVE") if "PYNATIVE" in modes else "-",
            _diff_cell(r, "GRAPH") if "GRAPH" in modes else "-",
            r.verdict if len(r.verdict) <= VERDICT_WIDTH else r.verdict[: VERDICT_WIDTH - 3] + "...",
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    lines = []
    for n, row in enumerate(rows):
        lines.append(" | ".join(c.ljust(w) for c, w in zip(row, widths)) + " | " + row[-1])
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths) + "-+-" + "-" * len(COLUMNS[-1]))
    return "\n".join(lines)


def _as_dict(r: SampleResult) -> dict:
    def num(v):
        return None if v is None or math.isnan(v) else v

    return {
        "sample": r.sample,
        "converted": r.converted,
        "tolerance": r.spec.tolerance if r.spec else None,
        "max_abs_diff": {m: num(mr.max_abs_diff) for m, mr in r.results.items()},
        "verdicts": {m: mr.verdict for m, mr in r.results.items()},
        "verdict": r.verdict,
        "notes": r.notes,
        "diagnostics": [d.to_dict() for d in r.diagnostics],
    }

