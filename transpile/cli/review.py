"""``transpile review``: go through the proposed edits one at a time and decide.

Every file is converted with its edits recorded (the decisions already made applied);
each edit not decided yet is shown (place, pass, reason, safety, a diff) and answered
with one line (a letter, then Enter). The answers go to ``.transpile/decisions.toml`` at once, so quitting (or a
crash) keeps what was decided; later ``convert`` and ``review`` runs honour them.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..engine.diagnostics import Safety
from ..engine.edits import Edit, place
from ..io.decisions import DecisionStore, DecisionsError, find_root
from ..io.files import RefusedError, convert_paths
from .exit_codes import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from .shared import refused, run_summary

HELP = """\
  y  apply this edit              n  skip it (the code stays as it is)
  a  apply the rest in this file  d  skip the rest in this file
  q  quit (the decisions so far are kept)
  ?  this help
Enter takes the default (the capital letter): no for an unsafe edit or one a person must finish.
"""


def add_review_parser(sub) -> None:
    review = sub.add_parser(
        "review", help="go through the proposed edits one by one; the decisions are kept for later runs",
        description="Show each proposed edit (one rewrite at one place) with its pass, reason and diff, and "
                    "ask whether to apply it. Decisions are saved in .transpile/decisions.toml (found above "
                    "the inputs, else created in the current directory) and honoured by later convert and "
                    "review runs until the code at that place changes. In a notebook (.ipynb) an edit's place "
                    "is 'cell N line L': N counts all the notebook's cells (markdown too) from 1, L is the "
                    "line inside that cell.",
        epilog=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    review.add_argument("paths", nargs="+", metavar="PATH", help=".py files, notebooks (.ipynb) or directories")
    review.add_argument("--unsafe-only", action="store_true",
                        help="ask only about unsafe edits and those a person must finish (the others are applied)")
    where = review.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT", help="at the end, write the converted tree to OUT")
    where.add_argument("--in-place", action="store_true", help="at the end, convert the inputs in place")
    review.add_argument("--root", metavar="DIR",
                        help="the directory whose .transpile/decisions.toml is used (default: the nearest above "
                             "the inputs, no higher than their project's root (.git, pyproject.toml) or the "
                             "current directory; else the current directory)")
    review.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes for converting")
    review.set_defaults(func=cmd_review)


@dataclass
class _Answer:
    apply: bool | None  # None: quit
    rest: bool = False  # the same for the rest of the file


def _asked(edit: Edit, unsafe_only: bool) -> bool:
    """Whether ``edit`` is put to the person (not: code a pass wrote, or already declined by a comment)."""
    if not edit.line or (not edit.applied and edit.why_not != "a decision"):
        return False
    return not unsafe_only or edit.safety is not Safety.SAFE


class _Answers:
    """The person's answers, one line each (a terminal or a pipe alike): ``y`` and Enter
    answers the edit on the screen, never the next one."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def read(self) -> str | None:
        """The answer's first letter (lower case; "" for an empty line), None at the end of the input."""
        line = self.stream.readline()
        return None if line == "" else line.strip().lower()[:1]


def _ask(answers: _Answers, out, default_yes: bool) -> _Answer:
    prompt = "apply this edit? [" + ("Y/n" if default_yes else "y/N") + "/a/d/q/?] "
    while True:
        out.write(prompt)
        out.flush()
        key = answers.read()
        if key is None or key == "q":
            return _Answer(None)
        if key == "":
            return _Answer(default_yes)
        if key in ("y", "n"):
            return _Answer(key == "y")
        if key in ("a", "d"):
            return _Answer(key == "a", rest=True)
        out.write(HELP if key == "?" else f"unknown answer {key!r}; ? for help\n")


def _show(edit: Edit, path: str, index: int, total: int, out) -> None:
    state = "" if edit.applied else " (declined before)"
    if edit.cell is None:
        where = f"{path}:{edit.line}:{edit.col + 1}"
    else:  # a notebook's: nb.ipynb cell 3 line 2 col 5
        where = f"{place(path, edit.line, edit.cell)} col {edit.col + 1}"
    out.write(f"\n[{index}/{total}] {where}  {edit.pass_id} {edit.pass_name}  "
              f"{edit.safety.value}{state}\n")
    out.write(f"  {edit.reason}\n")
    diff = edit.diff(path)
    out.write(diff if edit.before != edit.after else
              f"  {edit.before}\n  (same text; its names now refer to MindSpore's)\n")


def _root(args) -> Path:
    if args.root:
        return Path(args.root)
    return find_root(args.paths) or Path.cwd()


def cmd_review(args) -> int:
    for given in args.paths:
        if not os.path.exists(given):
            print(f"transpile review: {given}: no such file or directory", file=sys.stderr)
            return EXIT_USAGE
    try:
        store = DecisionStore.load(_root(args))
        report = convert_paths(args.paths, write=False, record_edits=True, decisions=store, jobs=args.jobs)
    except (DecisionsError, ValueError) as exc:
        print(f"transpile review: {exc}", file=sys.stderr)
        return EXIT_USAGE
    out, answers = sys.stdout, _Answers(sys.stdin)
    pending = []  # (file, edits to ask), in the report's order
    for outcome in report.files:
        result = outcome.result
        if result is None or result.failed:
            continue
        if store.forget_stale(outcome.source, result.edits):
            store.save()
        asked = sorted((e for e in result.edits if _asked(e, args.unsafe_only) and store.decided(outcome.source, e) is None),
                       key=lambda e: (e.cell or 0, e.line))  # in the order of the file (inner edits first on a line)
        if asked:
            pending.append((outcome.source, asked))
    total = sum(len(asked) for _, asked in pending)
    decided = quit_early = 0
    for source, asked in pending:
        rest: bool | None = None
        for edit in asked:
            if rest is None:
                decided += 1
                _show(edit, str(source), decided, total, out)
                answer = _ask(answers, out, default_yes=edit.safety is Safety.SAFE)
                if answer.apply is None:
                    quit_early = 1
                    break
                if answer.rest:
                    rest = answer.apply
                store.record(source, edit, answer.apply)
            else:
                decided += 1
                store.record(source, edit, rest)
            store.save()  # each answer at once: quitting or a crash keeps it
        if quit_early:
            break
    out.write(f"\n{decided - quit_early} of {total} edits decided; decisions in {store.path}\n" if total else
              "no edit to decide\n")
    if quit_early and (args.output or args.in_place):
        out.write(_after_quitting(args))
    if quit_early or not (args.output or args.in_place):
        if total and not quit_early:
            out.write("`transpile convert` applies them\n")
        return EXIT_FINDINGS if _unreadable(report) else EXIT_OK
    status = _write(args, store)
    return max(status, EXIT_FINDINGS if _unreadable(report) else EXIT_OK)


def _after_quitting(args) -> str:
    """What a person who quit a review meant to write learns: nothing was written, and the
    two ways on (the edits not decided are applied by convert, as every edit is by default)."""
    where = ["-o", args.output] if args.output else ["--in-place"]
    target = args.output if args.output else "the inputs"
    return (f"quit: nothing written to {target}. To write it now with these decisions (the edits not decided "
            f"yet are applied): {shlex.join(['transpile', 'convert', *args.paths, *where])}\n"
            f"To go on deciding: {shlex.join(['transpile', 'review', *args.paths, *where])}\n")


def _unreadable(report) -> bool:
    """Whether an input could not be reviewed (not text, not Python...): said on stderr."""
    failed = [f for f in report.files if f.result is not None and f.result.failed]
    for outcome in failed:
        for d in outcome.result.errors:
            print(d.format(), file=sys.stderr)
    if failed:
        print(f"transpile review: {len(failed)} file(s) could not be reviewed", file=sys.stderr)
    return bool(failed)


def _write(args, store: DecisionStore) -> int:
    """Convert the inputs with the decisions and write them (-o or --in-place)."""
    try:
        report = convert_paths(args.paths, output=args.output, in_place=args.in_place, decisions=store,
                               jobs=args.jobs)
    except RefusedError as exc:
        return refused("review", exc)
    except ValueError as exc:
        print(f"transpile review: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(run_summary(report), file=sys.stderr)
    return EXIT_FINDINGS if report.has_errors or report.failed else EXIT_OK
