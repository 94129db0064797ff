"""What several subcommands share: the type of a count argument, the last lines of a
conversion run, the message of a refused run, coloured diffs."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from ..io.files import CONFLICT_SUFFIX, InterruptedRun, PathReport, RefusedError
from ..report import count_by_code, summary
from .exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE


class Signals:
    """While a command runs, SIGTERM ends it as Ctrl-C does: KeyboardInterrupt is raised in
    the main thread, so that finished files are kept, temporary files removed and what was
    written said; first, any parity child process groups are killed (they run in their
    own sessions: neither a terminal's Ctrl-C nor a signal to this process reaches them).
    ``received`` is the signal that came (None: none); the handlers are restored on exit."""

    HANDLED = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, object] = {}
        self._pid = os.getpid()

    def __enter__(self) -> "Signals":
        if threading.current_thread() is not threading.main_thread():
            return self  # only the main thread may set handlers (a command run from a test's thread)
        self._pid = os.getpid()
        for signum in self.HANDLED:
            if signal.getsignal(signum) is not signal.SIG_IGN:  # a signal ignored (nohup) stays so
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, _frame) -> None:
        if os.getpid() != self._pid:  # a worker process forked from this one: what it did before
            if signum == signal.SIGINT:
                signal.default_int_handler(signum, _frame)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.received = signum
        runner = sys.modules.get("transpile.parity.runner")
        if runner is not None:
            runner.stop_children()
        raise KeyboardInterrupt

    @property
    def exit_status(self) -> int:
        return EXIT_TERMINATED if self.received == signal.SIGTERM else EXIT_INTERRUPTED


_NAMED_WRITTEN = 10  # files an interrupted run names as written


def interrupted_summary(exc: InterruptedRun, signame: str) -> str:
    """What an interrupted conversion says: what it wrote, what it did not, what to do."""
    written = [str(f.output) for f in exc.report.files if f.output is not None]
    more = len(written) - _NAMED_WRITTEN
    names = ", ".join(written[:_NAMED_WRITTEN]) + (f" and {more} more" if more > 0 else "")
    return (f"interrupted ({signame}): {len(written)} file{'' if len(written) == 1 else 's'} written"
            + (f" ({names})" if written else "") + f", {len(exc.pending)} not reached (left as they were, no "
            "temporary file left); run the same command again to finish (an --in-place run is repaired from "
            "its record, see docs/safety.md)")


def positive(text: str) -> int:
    """An argument that is a whole number >= 1 (--jobs, --line, --cell)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


_NAMED_FAILURES = 10  # failed files the summary names; the diagnostics name them all


def run_summary(report: PathReport) -> str:
    """The last lines of a text report: counts, the rate (n/a when no torch use was measured),
    and the files that failed, by name."""
    n = summary(report)
    failed = [str(f.source) for f in report.failed]
    line = (
        f"{n['converted']} converted, {n['unchanged']} unchanged, {n['failed']} failed, {n['copied']} copied"
        + (f", {n['skipped']} skipped" if n["skipped"] else "") + "; "
        f"{n['errors']} errors, {n['warnings']} warnings, {n['notes']} notes; "
        + _rate_words(n)
        + (", failed files not measured)" if failed else ")")
        + (f"; {n['annotation_uses']} torch uses left in annotations (not counted)" if n["annotation_uses"] else "")
    )
    line += _hand_edits_summary(report)
    if failed:
        more = len(failed) - _NAMED_FAILURES
        line += "\nfailed: " + ", ".join(failed[:_NAMED_FAILURES]) + (f" and {more} more" if more > 0 else "")
    return line


def notes_by_code(notes: list) -> str:
    """Notes (info diagnostics) as one line per code: its name, how many, in how many files."""
    from ..explain import code_title

    counts = count_by_code(notes)
    titles = {c.code: code_title(c.code) for c in counts}
    width = max(len(t) for t in titles.values())
    lines = [f"notes by code ({len(notes)}; each one: --verbose or --report; what a code means: "
             "transpile passes CODE):"]
    for c in counts:
        lines.append(f"  {c.code} {titles[c.code]:{width}}  {c.count} note{'s' if c.count > 1 else ''}"
                     f" in {c.files} file{'s' if c.files > 1 else ''}")
    return "\n".join(lines)


def _rate_words(n: dict) -> str:
    """The rate, when the run converted something; else what it found instead (a rate of
    0.0% for MindSpore code, or for output converted before, would read as a failure)."""
    if n["converted_uses"]:
        return f"conversion rate {n['rate']} ({n['converted_uses']} of {n['measured_uses']} torch uses"
    left = n["measured_uses"]
    return "no torch use converted (" + (f"{left} left without a MindSpore mapping" if left else
                                         "none found to convert")


def _hand_edits_summary(report: PathReport) -> str:
    """The summary's words on outputs edited by hand since the last run (none: nothing)."""

    def files(n: int) -> str:
        return f"{n} file" + ("" if n == 1 else "s")

    text = f"; merged hand edits in {files(len(report.merged))}" if report.merged else ""
    edited = len(report.conflicts) - len(report.unrecorded)
    if edited:
        text += (f"; {files(edited)} kept as edited by hand (conflict with the new conversion, "
                 f"written beside each as NAME{CONFLICT_SUFFIX})")
    if report.unrecorded:
        text += (f"; {files(len(report.unrecorded))} already in the output kept (no record that transpile wrote "
                 f"them), the new output beside each as NAME{CONFLICT_SUFFIX}")
    return text


def refused(command: str, exc: RefusedError) -> int:
    """Say why a run was refused (nothing was written); the exit status."""
    print(f"transpile {command}: refused, nothing written: {len(exc.problems)} problem(s)", file=sys.stderr)
    for line in exc.problems:
        print(f"  {line}", file=sys.stderr)
    return EXIT_USAGE


# ANSI SGR codes of a coloured diff, by the start of a line
_DIFF_COLORS = (("+++", "\x1b[1m"), ("---", "\x1b[1m"), ("@@", "\x1b[36m"), ("+", "\x1b[32m"), ("-", "\x1b[31m"))
_RESET = "\x1b[0m"


def colorize_diff(lines):
    """The lines of a unified diff with colour: file headers bold, hunk headers cyan,
    removed lines red, added lines green. Each escape ends before the line's end, so that
    removing the escapes gives back the diff as it was."""
    for line in lines:
        start = next((code for prefix, code in _DIFF_COLORS if line.startswith(prefix)), None)
        if start is None:
            yield line
            continue
        body = line.rstrip("\r\n")
        yield start + body + _RESET + line[len(body):]


def use_color(choice: str, stream) -> bool:
    """--color: always, never, or auto: on a terminal unless NO_COLOR is set (any value) or TERM is dumb."""
    if choice != "auto":
        return choice == "always"
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
