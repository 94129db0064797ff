"""The command line: a thin layer over the library API."""
from __future__ import annotations

import argparse
import difflib
import json
import sys

from . import __version__
from .api import PathReport, convert_paths
from .diagnostics import Severity
from .package_index import outside_package, outside_summary

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 123


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="transpile", description="Convert PyTorch model code to MindSpore.")
    parser.add_argument("--version", action="version", version=f"transpile {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    conv = sub.add_parser("convert", help="convert files and directory trees",
                          description="Convert PyTorch files or trees. Inputs are never modified without --in-place.")
    conv.add_argument("paths", nargs="+", metavar="PATH")
    conv.add_argument("-o", "--output", metavar="OUT", help="output file or directory (a tree is mirrored)")
    mode = conv.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    mode.add_argument("--check", action="store_true", help="exit 1 if any file would change; write nothing")
    mode.add_argument("--in-place", action="store_true", help="overwrite the inputs")
    conv.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    conv.add_argument("--debug", action="store_true", help="re-parse after every pass (slow; never uses the cache)")
    conv.add_argument("-j", "--jobs", type=_positive, default=None, metavar="N",
                      help="convert in N worker processes (default: one per core; 1: no workers); "
                           "outputs and report are the same whatever N")
    conv.add_argument("--no-cache", action="store_true",
                      help="neither read nor write the cache of results (by content hash, in $TRANSPILE_CACHE_DIR, "
                           "else $XDG_CACHE_HOME/transpile or ~/.cache/transpile)")
    conv.set_defaults(func=cmd_convert)

    apis = sub.add_parser("apis", help="list every torch API the tables know, with its status")
    apis.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    apis.set_defaults(func=cmd_apis)

    from .parity.cli import add_parity_parser, add_weights_parser

    add_parity_parser(sub)
    add_weights_parser(sub)
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _summary(report: PathReport) -> str:
    diags = report.diagnostics
    by = {s: sum(1 for d in diags if d.severity is s) for s in Severity}
    return (
        f"{report.count('converted')} converted, {report.count('unchanged')} unchanged, "
        f"{report.count('failed')} failed, {report.count('copied')} copied; "
        f"{by[Severity.ERROR]} errors, {by[Severity.WARNING]} warnings, {by[Severity.INFO]} notes; "
        f"conversion rate {report.conversion_rate:.1%} "
        f"({report.converted_uses} of {report.converted_uses + report.unconverted_uses} torch uses)"
        + (f"; {report.annotation_uses} torch uses left in annotations (not counted)" if report.annotation_uses else "")
    )


def cmd_convert(args) -> int:
    dry = args.diff or args.check
    single_stdout = not dry and not args.in_place and args.output is None
    if single_stdout and (len(args.paths) != 1 or not args.paths[0].endswith(".py")):
        print("transpile convert: give -o OUT, --in-place, --diff or --check (stdout takes one .py file)", file=sys.stderr)
        return EXIT_USAGE
    report = convert_paths(args.paths, output=args.output, in_place=args.in_place,
                           write=not (dry or single_stdout), debug=args.debug,
                           jobs=args.jobs, cache=not args.no_cache)
    out = sys.stdout
    if args.diff:
        for f in report.files:
            r = f.result
            if r and r.changed:
                out.writelines(difflib.unified_diff(
                    _source_lines(f.source), r.code.splitlines(keepends=True),
                    fromfile=str(f.source), tofile=f"{f.source} (converted)"))
    elif single_stdout and report.files and report.files[0].result and not report.files[0].result.failed:
        out.write(report.files[0].result.code)
    if args.format == "json":
        payload = {
            "files": [{"path": str(f.source), "output": str(f.output) if f.output else None, "status": f.status}
                      for f in report.files],
            "diagnostics": [d.to_dict() for d in report.diagnostics],
            "outside_packages": {p: sorted({d.filename for d in found}) for p, found in report.outside_packages.items()},
            "summary": {"converted": report.count("converted"), "unchanged": report.count("unchanged"),
                        "failed": report.count("failed"), "copied": report.count("copied"),
                        "conversion_rate": round(report.conversion_rate, 4),
                        "converted_uses": report.converted_uses, "unconverted_uses": report.unconverted_uses,
                        "annotation_uses": report.annotation_uses},
        }
        print(json.dumps(payload, indent=2), file=sys.stderr if (args.diff or single_stdout) else sys.stdout)
    else:
        for d in report.diagnostics:
            if outside_package(d) is None:  # those are printed once per package, below
                print(d.format(), file=sys.stderr)
        for package, found in report.outside_packages.items():
            print(outside_summary(package, found), file=sys.stderr)
        print(_summary(report), file=sys.stderr)
    if any(f.internal_error for f in report.files):
        return EXIT_INTERNAL
    if report.has_errors:
        return EXIT_FINDINGS
    if args.check and any(f.status == "converted" for f in report.files):
        return EXIT_FINDINGS
    return EXIT_OK


def cmd_apis(args) -> int:
    from .api import api_counts, apis_markdown, list_apis

    apis = list_apis()
    counts = api_counts(apis)
    if args.format == "json":
        print(json.dumps({"counts": counts["all"], "families": counts, "apis": [a.__dict__ for a in apis]}, indent=2))
    elif args.format == "markdown":
        sys.stdout.write(apis_markdown(apis))
    else:
        family = None
        for a in apis:
            if a.family != family:
                family = a.family
                print(f"\n{family}: " + _count_text(counts[family]))
            print(f"  {a.source:50} {a.status:22} {a.target or ''}" + (f"  ({a.note})" if a.note else ""))
        print("\nall: " + _count_text(counts["all"]))
    return EXIT_OK


def _count_text(row: dict[str, int]) -> str:
    return f"{row['converted']} converted, {row['converted with a note']} converted with a note, {row['unsupported']} unsupported"


def _source_lines(path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read().splitlines(keepends=True)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug in transpile: one line, and the code that says so
        print(f"transpile: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if getattr(args, "verbose", False):
            raise
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
