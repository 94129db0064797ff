"""``transpile passes`` and ``transpile explain``: argument parsing and printing only.

The data comes from :mod:`transpile.explain`; this module turns it into text, Markdown or JSON.
"""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from ..engine.edits import place
from ..explain import (Explanation, PassDoc, PassExplanation, UnknownPassError, code_doc, explain_file,
                      explain_notebook, pass_doc, pass_docs)
from .exit_codes import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from .shared import colorize_diff, positive, use_color

_INDENT = "    "

_EXPLAIN_EPILOG = f"""\
a notebook (.ipynb): its code cells are converted together, as transpile convert does; a cell is
named by its place among all the notebook's cells (markdown cells count, the first is 1), and
--line then needs --cell: it is the line inside that cell.

exit status: {EXIT_OK} done; {EXIT_FINDINGS} the file failed (it does not parse, cannot be read...) or has errors,
as with transpile convert; {EXIT_USAGE} usage error (a directory, a line outside the file, --line on a
notebook without --cell, --cell on a .py file or naming no code cell)."""


def add_explain_parsers(sub) -> None:
    """Register ``passes`` and ``explain`` on the subcommands of the ``transpile`` parser."""
    passes = sub.add_parser("passes", help="list the rewrite passes in the order they run, or show one",
                            description="List the passes (id, name, stage, summary) in pipeline order; "
                                        "with an id, show that pass whole: its rule's documentation and examples.")
    passes.add_argument("pass_id", nargs="?", metavar="ID", help="a pass id, such as MS201")
    passes.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    passes.set_defaults(func=cmd_passes)

    explain = sub.add_parser("explain", help="say which pass changed what in a file or notebook, and why",
                             description="Convert FILE, a .py file or a notebook (nothing is written) and show, "
                                         "pass by pass, each edit "
                                         "it made (a diff), why, whether it was applied, and the rule's "
                                         "documentation with an example.",
                             epilog=_EXPLAIN_EPILOG)
    explain.add_argument("file", metavar="FILE")
    explain.add_argument("--line", type=positive, metavar="N",
                         help="only the edits whose code spans line N, and the diagnostics at line N "
                              "(in a notebook: line N of the cell --cell names)")
    explain.add_argument("--cell", type=positive, metavar="C",
                         help="a notebook only: only the edits and diagnostics of cell C (1: the first cell; "
                              "markdown cells count)")
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                         help="colour the diffs (default auto: on a terminal, unless NO_COLOR is set)")
    explain.set_defaults(func=cmd_explain)


def cmd_passes(args) -> int:
    """``transpile passes [ID]``."""
    try:
        docs = [pass_doc(args.pass_id)] if args.pass_id else pass_docs()
    except UnknownPassError:
        return _code(args)  # a code some pass reports besides its id, or one no pass reports
    whole = args.pass_id is not None
    if args.format == "json":
        data = [d.to_dict() for d in docs]
        print(json.dumps(data[0] if whole else data, indent=2))
    elif args.format == "markdown":
        sys.stdout.write(_pass_markdown(docs[0]) if whole else _passes_markdown(docs))
    elif whole:
        sys.stdout.write(_heading(docs[0]) + _pass_text(docs[0], examples=None))
    else:
        width = max(len(d.name) for d in docs)
        for d in docs:
            print(f"{d.id}  {d.name:{width}}  stage {d.stage}  {d.summary}")
    return EXIT_OK


def _code(args) -> int:
    """``transpile passes CODE`` for a code that is no pass's id: what it means, what reports it."""
    try:
        doc = code_doc(args.pass_id)
    except UnknownPassError as exc:
        print(f"transpile passes: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "json":
        print(json.dumps(doc.to_dict(), indent=2))
        return EXIT_OK
    by = (f"reported by pass {doc.reported_by.id} {doc.reported_by.name}" if doc.reported_by is not None
          else f"{doc.title}: reported by transpile itself, not by a pass")
    text = f"{doc.code}: {by}\n\n" + textwrap.indent(textwrap.fill(doc.description, 88), _INDENT) + "\n"
    if doc.reported_by is not None:
        text += "\n" + _heading(doc.reported_by) + _pass_text(doc.reported_by, examples=1)
    sys.stdout.write(text if args.format == "text" else f"## {doc.code}\n\n{by}\n\n{doc.description}\n")
    return EXIT_OK


def _passes_markdown(docs: list[PassDoc]) -> str:
    """A table of the passes."""
    rows = ["| id | name | stage | summary |", "| --- | --- | --- | --- |"]
    rows += [f"| {d.id} | {d.name} | {d.stage} | {d.summary.replace('|', chr(92) + '|')} |" for d in docs]
    return "\n".join(rows) + "\n"


def _pass_markdown(doc: PassDoc) -> str:
    """One pass as a Markdown section: summary, documentation, examples in code blocks."""
    parts = [f"## {doc.id} {doc.name}", "", f"{doc.summary} (stage {doc.stage})", ""]
    if doc.documentation:
        parts += ["```text", doc.documentation, "```", ""]
    for n, example in enumerate(doc.examples, 1):
        parts += [f"Example {n}, before:", "", "```python", example.before.rstrip("\n"), "```", "",
                  "after:", "", "```python", example.after.rstrip("\n"), "```", ""]
    return "\n".join(parts)


def _heading(doc: PassDoc) -> str:
    return f"{doc.id} {doc.name} (stage {doc.stage}): {doc.summary}\n"


def _pass_text(doc: PassDoc, examples: int | None) -> str:
    """One pass as text: its documentation and ``examples`` of its examples (None: all)."""
    shown = doc.examples if examples is None else doc.examples[:examples]
    parts = ["\n" + textwrap.indent(doc.documentation, _INDENT) + "\n"] if doc.documentation else []
    for n, example in enumerate(shown, 1):
        label = "example" if len(shown) == 1 else f"example {n}"
        parts.append(f"\n{label}, before:\n" + textwrap.indent(example.before, _INDENT)
                     + "after:\n" + textwrap.indent(example.after, _INDENT))
    return "".join(parts)


def cmd_explain(args) -> int:
    """``transpile explain FILE [--line N] [--cell C]``."""
    path = Path(args.file)
    notebook = path.suffix == ".ipynb"
    usage = _usage_problem(path, notebook, args.line, args.cell)
    if usage:
        print(f"transpile explain: {usage}", file=sys.stderr)
        return EXIT_USAGE
    from ..io.files import read_source  # the reading convert does: BOM, UTF-8, empty files

    source, _bom, problem = read_source(path, explicit=True) if path.exists() else (None, False, None)
    if source is None:
        why = problem.format() if problem else f"{path}:1:1: MS000 error: no such file or directory"
        print(why, file=sys.stderr)
        return EXIT_FINDINGS
    try:
        if notebook:
            explanation = explain_notebook(source, str(path), args.cell, args.line, _declined(path))
        else:
            explanation = explain_file(source, str(path), args.line, _declined(path))
    except ValueError as exc:  # a line outside the file, no such cell, a decisions file that cannot be read
        print(f"transpile explain: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "json":
        print(json.dumps(explanation.to_dict(), indent=2))
    else:
        sys.stdout.write(_explanation_text(explanation, use_color(args.color, sys.stdout)))
    return EXIT_FINDINGS if explanation.has_errors else EXIT_OK


def _usage_problem(path: Path, notebook: bool, line: int | None, cell: int | None) -> str | None:
    """What is wrong with the arguments, before reading the file (None: nothing)."""
    if path.is_dir():
        return f"{path} is a directory; explain takes one .py file or notebook"
    if notebook and line is not None and cell is None:
        return f"{path} is a notebook: --line {line} needs --cell (the cell that line is in)"
    if not notebook and cell is not None:
        return f"--cell is for a notebook (.ipynb); {path} is not one"
    return None


def _declined(path: Path) -> frozenset:
    """The edits in ``path`` that the saved review decisions decline, as convert declines
    them (none without a store; an unreadable store: ValueError, a usage error as in convert)."""
    try:
        from ..io.decisions import DecisionStore, find_root
    except ImportError:  # no review decisions in this version
        return frozenset()
    root = find_root([path])
    return DecisionStore.load(root).declined(path) if root is not None else frozenset()


def _explanation_text(explanation: Explanation, color: bool) -> str:
    """The whole explanation as text: a heading line, then each pass's part."""
    parts = [_summary_line(explanation)]
    parts += [f"{_INDENT}{d.format()}\n" for d in explanation.diagnostics]
    if explanation.line_change is not None:
        lines = explanation.line_change.diff(explanation.filename).splitlines(keepends=True)
        parts.append("\nwhat the conversion made of it, all passes together:\n"
                     + textwrap.indent("".join(colorize_diff(lines) if color else lines), _INDENT))
    if explanation.unplaced_edits:
        option = "--cell" if explanation.cell is not None else "--line"
        parts.append(f"(not shown: {_count(explanation.unplaced_edits, 'edit')} in code an earlier pass wrote, "
                     f"which has no line in the input; run without {option} to see them)\n")
    parts += ["\n" + _pass_part(p, explanation.filename, color) for p in explanation.passes]
    return "".join(parts)


def _summary_line(explanation: Explanation) -> str:
    """``model.py, line 8: 1 edit by 1 pass (1 declined); 2 diagnostics``, or why there is none."""
    where = (explanation.filename + (f", cell {explanation.cell}" if explanation.cell is not None else "")
             + (f", line {explanation.line}" if explanation.line is not None else ""))
    if explanation.failed:
        return f"{explanation.filename}: not converted, nothing to explain:\n"
    if not explanation.passes and explanation.line_change is None:
        return f"{where}: no pass changed anything or reported anything here\n"
    edits = [e for p in explanation.passes for e in p.edits]
    declined = sum(1 for e in edits if not e.applied)
    diagnostics = len(explanation.diagnostics) + sum(len(p.diagnostics) for p in explanation.passes)
    derived = [f"{p.doc.id} {p.doc.name}" for p in explanation.passes if p.doc.derived_edits]
    if edits:
        changed = f"{_count(len(edits), 'edit')} by {_count(sum(1 for p in explanation.passes if p.edits), 'pass')}"
    elif derived and explanation.line_change is not None:
        changed = f"changed by {', '.join(derived)} (from what the other passes' edits need)"
    else:
        changed = "no edits"
    return (f"{where}: {changed}" + (f" ({declined} declined)" if declined else "")
            + (f"; {_count(diagnostics, 'diagnostic')}" if diagnostics else "") + "\n")


def _count(n: int, noun: str) -> str:
    """``1 edit``, ``2 edits``, ``3 passes``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('s') else 's'}"


def _pass_part(part: PassExplanation, filename: str, color: bool) -> str:
    """One pass: its edits (place, state, reason, diff), its diagnostics, its documentation and an example."""
    doc = part.doc
    text = ["=== " + _heading(doc)]
    for edit in part.edits:
        where = (f"{place('', edit.line, edit.cell)}, col {edit.col + 1}" if edit.line
                 else "in code an earlier pass wrote (no line in the input)")
        state = "applied" if edit.applied else f"NOT applied: declined by {edit.why_not}"
        text.append(f"\n{where}: {state}; {edit.safety.value}\n{_INDENT}why: {edit.reason}\n")
        diff = edit.diff(filename)
        if not diff:
            diff = f"(the text stays {edit.after!r}: what it names changes with the imports)\n"
        lines = diff.splitlines(keepends=True)
        text.append(textwrap.indent("".join(colorize_diff(lines) if color else lines), _INDENT))
    if doc.derived_edits:
        text.append("\n(its edits follow from the other passes': not listed one by one, never declined)\n")
    if part.diagnostics:
        text.append("\ndiagnostics:\n" + "".join(f"{_INDENT}{d.format()}\n" for d in part.diagnostics))
    text.append(f"\nthe rule ({doc.id}):\n" + _pass_text(doc, examples=1))
    return "".join(text)
