"""The command line: a thin layer over the library API."""
from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path

from ..engine.diagnostics import Severity
from ..engine.package_index import outside_package, outside_summary
from ..io.atomic import write_file_atomic
from ..io.import_check import import_check
from ..io.files import (BACKUP_SUFFIX, CONVERTED_SUFFIXES, InterruptedRun, PathReport, RefusedError, convert_paths,
                        declared_encoding, read_source)
from ..report import read_parity_results
from ..version import __version__
from .exit_codes import (EXIT_CLOSED_PIPE, EXIT_FINDINGS, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK,
                         EXIT_TERMINATED, EXIT_USAGE)
from .explain import add_explain_parsers
from .parity import add_parity_parser, add_weights_parser
from .review import add_review_parser
from .shared import Signals, colorize_diff, interrupted_summary, notes_by_code, positive, refused, run_summary, use_color

_CONVERT_EPILOG = f"""\
exit status: {EXIT_OK} done; {EXIT_FINDINGS} a file failed or has errors (or --check: a file would change);
{EXIT_USAGE} usage error, or the run was refused (nothing is written); {EXIT_INTERNAL} internal error;
{EXIT_INTERRUPTED} interrupted (Ctrl-C), {EXIT_TERMINATED} terminated (SIGTERM): the files written are kept
and said; {EXIT_CLOSED_PIPE} the reader of the output went away (| head).
With --in-place, read-only files and files with uncommitted changes in their git work tree
are refused unless --force (or --backup, for uncommitted changes)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="transpile", description="Convert PyTorch model code to MindSpore.")
    parser.add_argument("--version", action="version", version=f"transpile {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    conv = sub.add_parser("convert", help="convert files and directory trees",
                          description="Convert PyTorch files or trees. Inputs are never modified without --in-place.",
                          epilog=_CONVERT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    conv.add_argument("paths", nargs="+", metavar="PATH")
    conv.add_argument("-o", "--output", metavar="OUT",
                      help="output directory (a tree is mirrored; files that fail are copied as they are), "
                           "or output file for one input of the same suffix (-o x.py, -o x.ipynb)")
    mode = conv.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    mode.add_argument("--check", action="store_true", help="exit 1 if any file would change; write nothing")
    mode.add_argument("--in-place", action="store_true",
                      help="overwrite the inputs (through symlinks; mode and BOM kept), not with -o")
    conv.add_argument("--backup", action="store_true",
                      help=f"with --in-place: keep each original as NAME{BACKUP_SUFFIX} (an existing backup "
                           "is never replaced: the run is refused); allows uncommitted changes")
    conv.add_argument("--force", action="store_true",
                      help="with --in-place: overwrite read-only files and files with uncommitted changes in git")
    conv.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    noise = conv.add_mutually_exclusive_group()
    noise.add_argument("-q", "--quiet", action="store_true",
                       help="print only errors and the summary line (as --min-severity error)")
    noise.add_argument("-v", "--verbose", action="store_true", dest="every_diagnostic",
                       help="print every diagnostic on its own line (default: errors and warnings one per line, "
                            "notes counted by code)")
    conv.add_argument("--min-severity", choices=("info", "warning", "error"), default="info",
                      help="print diagnostics of this severity or graver (the summary line counts them all; "
                           "--format json and --report keep them all)")
    conv.add_argument("--debug", action="store_true", help="re-parse after every pass (slow; never uses the cache)")
    conv.add_argument("-j", "--jobs", type=positive, default=None, metavar="N",
                      help="convert in N worker processes (default: one per core; 1: no workers); "
                           "outputs and report are the same whatever N")
    conv.add_argument("--no-cache", action="store_true",
                      help="neither read nor write the cache of results (by content hash, in $TRANSPILE_CACHE_DIR, "
                           "else $XDG_CACHE_HOME/transpile or ~/.cache/transpile)")
    conv.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="colour the --diff (default auto: on a terminal, unless NO_COLOR is set)")
    conv.add_argument("--report", metavar="HTML",
                      help="also write an HTML report of the run (one self-contained file: summary, side-by-side "
                           "diffs, diagnostics, unconverted APIs); alone, nothing else is written")
    conv.add_argument("--parity-results", metavar="JSON",
                      help="with --report: show the results `transpile parity ... --json > JSON` wrote")
    conv.add_argument("--import-check", action="store_true",
                      help="after writing, import every converted module in a child process (its code runs) and "
                           "report each that fails, with the file and line its import stopped at")
    conv.set_defaults(func=cmd_convert)

    apis = sub.add_parser("apis", help="list every torch API the tables know, with its status")
    apis.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    apis.set_defaults(func=cmd_apis)

    add_parity_parser(sub)
    add_weights_parser(sub)
    add_review_parser(sub)
    add_explain_parsers(sub)
    return parser


class _ProgressLine:
    """``[#######.............]  45/120 files  timm/models/resnet.py`` on a terminal, redrawn in
    place and cleared at the end: a long run shows it is alive and how far it is. At most
    ten redraws a second."""

    CELLS = 20  # of the bar

    def __init__(self, stream):
        self.stream, self.width, self.last = stream, 0, 0.0

    def __call__(self, done: int, total: int, path: Path) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        filled = self.CELLS * done // max(total, 1)
        head = f"[{'#' * filled}{'.' * (self.CELLS - filled)}] {done:>{len(str(total))}}/{total} files  "
        name, columns = str(path), self._columns()
        room = columns - 1 - len(head)
        if len(name) > room:  # keep the end of the path: the file name
            name = "..." + name[len(name) - room + 3:] if room > 3 else ""
        self._draw((head + name)[:columns - 1])  # narrower than the bar: as much of it as fits

    def _columns(self) -> int:
        """The width of this terminal (not stdout's: it may be a pipe), 80 when it says none."""
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (OSError, ValueError):
            return 80

    def clear(self) -> None:
        if self.width:
            self._draw("")
            self.stream.write("\r")
            self.stream.flush()

    def _draw(self, text: str) -> None:
        self.stream.write("\r" + text.ljust(self.width))  # spaces, not escapes: any terminal
        self.stream.flush()
        self.width = len(text)


def _usage_problem(args) -> str | None:
    """What is wrong with the combination of options, if anything."""
    dry = args.diff or args.check
    if args.in_place and args.output is not None:
        return "-o and --in-place do not go together (--in-place writes each file over itself)"
    if args.import_check and not args.in_place and args.output is None:
        return "--import-check imports the written files: give -o OUT or --in-place"
    if args.import_check and dry:
        return "--import-check imports the written files: not with --diff or --check"
    if (args.force or args.backup) and not args.in_place:
        return "--force and --backup only apply with --in-place"
    if args.parity_results is not None and args.report is None:
        return "--parity-results goes with --report"
    if args.report is not None and not os.path.isdir(os.path.dirname(os.path.abspath(args.report))):
        return f"--report {args.report}: no such directory"
    if args.report is not None and (os.path.splitext(args.report)[1] in CONVERTED_SUFFIXES or os.path.isdir(args.report)):
        return f"--report {args.report}: the report is an HTML file (report.html), never code or a directory"
    if not (dry or args.in_place or args.report) and args.output is None \
            and (len(args.paths) != 1 or not args.paths[0].endswith(".py")):
        return "give -o OUT, --in-place, --diff, --check or --report (stdout takes one .py file)"
    return None


def cmd_convert(args) -> int:
    problem = _usage_problem(args)
    if problem:
        print(f"transpile convert: {problem}", file=sys.stderr)
        return EXIT_USAGE
    dry = args.diff or args.check
    single_stdout = not dry and not args.in_place and args.output is None and args.report is None
    try:
        parity = read_parity_results(args.parity_results) if args.parity_results is not None else None
    except ValueError as exc:
        print(f"transpile convert: {exc}", file=sys.stderr)
        return EXIT_USAGE
    progress = None
    if sys.stderr.isatty() and args.format != "json" and any(os.path.isdir(p) for p in args.paths):
        progress = _ProgressLine(sys.stderr)
    sources = _SourceKeeper(progress) if args.report is not None else None
    try:
        report = convert_paths(args.paths, output=args.output, in_place=args.in_place,
                               write=not dry and (args.in_place or args.output is not None), debug=args.debug,
                               jobs=args.jobs, cache=not args.no_cache,
                               force=args.force, backup=args.backup, progress=sources or progress)
    except InterruptedRun as exc:
        if progress is not None:
            progress.clear()
        print(f"transpile convert: {interrupted_summary(exc, _signal_name(args))}", file=sys.stderr)
        raise
    except KeyboardInterrupt:  # before the first write
        print(f"transpile convert: interrupted ({_signal_name(args)}) before writing: nothing written", file=sys.stderr)
        raise
    except RefusedError as exc:
        return refused("convert", exc)
    except ValueError as exc:  # arguments that do not fit (-o x.py for a directory, ...)
        print(f"transpile convert: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if progress is not None:
            progress.clear()
    checked = None
    if args.import_check:
        try:
            checked = import_check([f.output for f in report.files if f.output is not None])
        except RuntimeError as exc:
            print(f"transpile convert: {exc}", file=sys.stderr)
            return EXIT_FINDINGS
    out = sys.stdout
    if args.diff:
        color = use_color(args.color, out)
        for f in report.files:
            r = f.result
            if r and r.changed:
                lines = difflib.unified_diff(_source_lines(f.source), r.code.splitlines(keepends=True),
                                             fromfile=str(f.source), tofile=f"{f.source} (converted)")
                out.writelines(colorize_diff(lines) if color else lines)
    elif single_stdout and report.files and report.files[0].result and not report.files[0].result.failed:
        out.write(report.files[0].result.code)
    if args.format == "json":
        payload = {
            "files": [{"path": str(f.source), "output": str(f.output) if f.output else None, "status": f.status,
                       "hand_edits": ("unrecorded" if f.unrecorded else "conflict") if f.conflict
                       else ("merged" if f.merged else None),
                       "conflict_output": str(f.conflict) if f.conflict else None}
                      for f in report.files],
            "diagnostics": [d.to_dict() for d in report.diagnostics],
            "outside_packages": {p: sorted({d.filename for d in found}) for p, found in report.outside_packages.items()},
            "summary": {"converted": report.count("converted"), "unchanged": report.count("unchanged"),
                        "failed": report.count("failed"), "copied": report.count("copied"),
                        "skipped": report.count("skipped"),
                        "merged_hand_edits": len(report.merged), "conflicts": len(report.conflicts),
                        "kept_unrecorded": len(report.unrecorded),
                        "failed_files": [str(f.source) for f in report.failed],
                        # null: no torch use was measured (every file failed, or none uses torch)
                        "conversion_rate": None if report.conversion_rate is None else round(report.conversion_rate, 4),
                        "converted_uses": report.converted_uses, "unconverted_uses": report.unconverted_uses,
                        "annotation_uses": report.annotation_uses},
        }
        if checked is not None:
            payload["import_check"] = {"modules": checked.modules, "failures": [
                {"module": f.module, "path": str(f.path), "error": f.error,
                 "where": str(f.where) if f.where else None, "line": f.line} for f in checked.failures]}
        print(json.dumps(payload, indent=2), file=sys.stderr if (args.diff or single_stdout) else sys.stdout)
    else:
        _print_diagnostics(report, Severity.ERROR if args.quiet else Severity(args.min_severity),
                           args.every_diagnostic)
        print(run_summary(report), file=sys.stderr)
        if checked is not None:
            for failure in checked.failures:
                print(failure.format(), file=sys.stderr)
            print(f"import check: {checked.modules - len(checked.failures)} of {checked.modules} converted modules "
                  f"import", file=sys.stderr)
    if args.report is not None and not _write_report(args, report, sources.texts, parity):
        return EXIT_FINDINGS
    if any(f.internal_error for f in report.files):
        return EXIT_INTERNAL
    if report.has_errors or report.failed or report.conflicts or (checked is not None and checked.failures):
        return EXIT_FINDINGS
    if args.check and any(f.status == "converted" for f in report.files):
        return EXIT_FINDINGS
    return EXIT_OK


def _print_diagnostics(report: PathReport, minimum: Severity, every: bool) -> None:
    """The diagnostics of ``minimum`` severity or graver: errors and warnings one per line
    (a package imported from outside the tree once for the run), notes counted by code,
    unless ``every`` (each on its own line)."""
    shown = [d for d in report.diagnostics if d.severity.at_least(minimum)]
    for d in shown:
        # outside packages are printed once per package, below; notes grouped, at the end
        if outside_package(d) is None and (every or d.severity is not Severity.INFO):
            print(d.format(), file=sys.stderr)
    for package, found in report.outside_packages.items():
        if found[0].severity.at_least(minimum):
            print(outside_summary(package, found), file=sys.stderr)
    notes = [] if every else [d for d in shown if d.severity is Severity.INFO]
    if notes:
        print(notes_by_code(notes), file=sys.stderr)


class _SourceKeeper:
    """A progress callback that keeps the text of each file to convert as it is reported
    done: before anything is written (convert_paths writes last), so that the report can
    show an input that --in-place then overwrites. Passes the call on to ``then``."""

    def __init__(self, then=None):
        self.then, self.texts = then, {}

    def __call__(self, done: int, total: int, path: Path) -> None:
        if path.suffix in CONVERTED_SUFFIXES:
            text = read_source(path, explicit=False)[0]  # a regular file within the size limit, or None
            if text is not None:  # else the report says what the conversion said about it
                self.texts[str(path)] = text
        if self.then is not None:
            self.then(done, total, path)


def _write_report(args, report: PathReport, sources: dict[str, str], parity) -> bool:
    """Write the HTML report atomically; False (said on stderr) when it cannot be written."""
    from ..report import render_report

    page = render_report(report, sources, parity=parity, subtitle="inputs: " + shlex.join(args.paths))
    try:
        write_file_atomic(args.report, page.encode("utf-8", "backslashreplace"))  # a file name not UTF-8: escaped
    except OSError as exc:
        print(f"transpile convert: cannot write the report {args.report}: {exc.strerror or exc}", file=sys.stderr)
        return False
    print(f"report: {args.report}", file=sys.stderr)
    return True


def cmd_apis(args) -> int:
    from ..api import api_counts, apis_markdown, form_shares, list_apis, marked_counts, shares_text

    apis = list_apis()
    counts = api_counts(apis)
    shares = form_shares(apis)
    marked = marked_counts(apis)
    if args.format == "json":
        print(json.dumps({"counts": counts["all"], "families": counts, "forms": shares, "marked": marked,
                          "apis": [a.__dict__ for a in apis]}, indent=2))
    elif args.format == "markdown":
        sys.stdout.write(apis_markdown(apis))
    else:
        family = None
        for a in apis:
            if a.family != family:
                family = a.family
                print(f"\n{family}: " + _count_text(counts[family]))
                print("  differential cases: " + shares_text(shares[family], marked[family]))
            print(f"  {a.source:50} {a.status:22} {a.target or ''}" + (f"  ({a.note})" if a.note else "")
                  + "".join(f"  [{form} inputs: {why}]" for form, why in a.marked))
        print("\nall: " + _count_text(counts["all"]))
        print("  differential cases: " + shares_text(shares["all"], marked["all"]))
    return EXIT_OK


def _count_text(row: dict[str, int]) -> str:
    return f"{row['converted']} converted, {row['converted with a note']} converted with a note, {row['unsupported']} unsupported"


def _signal_name(args) -> str:
    received = args.signals.received if hasattr(args, "signals") else None
    return signal.Signals(received).name if received is not None else "SIGINT"


def _source_lines(path) -> list[str]:
    """The lines of the input as convert read it (its coding cookie's encoding; the BOM is
    not part of the code compared). UnicodeDecodeError when it cannot be read so."""
    data = Path(path).read_bytes()
    try:
        encoding = declared_encoding(data)
    except SyntaxError:
        encoding = "utf-8"
    text = data.decode("utf-8-sig" if encoding == "utf-8" else encoding)
    return text.splitlines(keepends=True)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    # A file name that is not UTF-8 (held with surrogates) is printed escaped, as stderr does.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    signals = Signals()
    args.signals = signals
    try:
        with signals:
            status = args.func(args)
            sys.stdout.flush()  # here, so that a closed pipe is seen here and not at exit
        return status
    except BrokenPipeError:
        # The reader is gone: stop quietly. stdout goes to /dev/null so that the interpreter's
        # last flush does not fail again on the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLOSED_PIPE
    except KeyboardInterrupt:
        return signals.exit_status
    except Exception as exc:  # a bug in transpile: one line, and the code that says so
        print(f"transpile: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if getattr(args, "verbose", False):
            raise
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
