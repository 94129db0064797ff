"""The HTML report of a conversion run (``transpile convert --report report.html``).

One self-contained page rendered from ``templates/report.html.j2``: the run's summary,
the APIs left unconverted grouped by name, parity results when given, and per file a
side-by-side diff with its diagnostics linked to their lines. Nothing here prints or
writes: :func:`render_report` returns the page, the command line writes it.
"""
from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .engine.diagnostics import Diagnostic, Safety, Severity
from .io.files import FileOutcome, PathReport

TEMPLATE = "report.html.j2"
CONTEXT = 3  # unchanged lines shown around a change in a diff; the others are folded
PLACES_SHOWN = 12  # places listed for an unconverted API (the count says how many in all)

# The API a marker names: a dotted name at the start of its message, as the passes write
# them ("torch.foo: no MindSpore mapping yet", "Tensor.pin_memory: ...", "Module.train(): ...").
_API_AT_START = re.compile(r"^((?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*(?:\(\))?)[:\s]")


@dataclass(frozen=True)
class DiffRow:
    """One row of a side-by-side diff: an input line, an output line, or both."""

    kind: str  # equal, delete, insert, replace
    left_no: int | None
    left: str | None
    right_no: int | None
    right: str | None


@dataclass
class ApiGroup:
    """One API left unconverted: how often across the run, where, and why."""

    name: str
    count: int = 0
    codes: set[str] = field(default_factory=set)
    reasons: list[str] = field(default_factory=list)  # distinct, in the order met
    places: list[tuple[int, Diagnostic]] = field(default_factory=list)  # (file index, diagnostic)


@dataclass
class FileSection:
    """What the page shows for one file."""

    index: int
    outcome: FileOutcome
    rows: list[DiffRow]
    runs: list[tuple[bool, list[DiffRow]]]  # the rows, unchanged runs far from changes folded
    diagnostics: list[Diagnostic]
    badges: dict[int, list[tuple[int, Diagnostic]]]  # input line -> its diagnostics, numbered from 1
    have_source: bool

    @property
    def anchor(self) -> str:
        return f"f{self.index}"

    @property
    def status(self) -> str:
        return self.outcome.status

    @property
    def counts(self) -> dict[str, int]:
        """Its diagnostics by severity: error, warning, info."""
        return {sev.value: sum(1 for d in self.diagnostics if d.severity is sev) for sev in Severity}

    def link(self, diag: Diagnostic) -> str:
        """Where a link to a diagnostic of this file goes: its line, else the file's heading."""
        return f"#{self.anchor}-L{diag.line}" if diag.line in self.badges else f"#{self.anchor}-top"


def side_by_side(before: list[str], after: list[str]) -> list[DiffRow]:
    """The rows of a side-by-side diff of two lists of lines (without line ends)."""
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            left = (i + 1, before[i]) if i < i2 else (None, None)
            right = (j + 1, after[j]) if j < j2 else (None, None)
            rows.append(DiffRow(tag, *left, *right))
    return rows


def fold(rows: list[DiffRow], keep: set[int], context: int = CONTEXT) -> list[tuple[bool, list[DiffRow]]]:
    """The rows in runs, each folded (True: unchanged lines more than ``context`` rows away
    from a change or from a line in ``keep``) or shown; a folded run is longer than
    ``context`` rows (a shorter one is not worth a fold)."""
    near = [r.kind != "equal" or r.left_no in keep for r in rows]
    shown = [any(near[max(0, i - context):i + context + 1]) for i in range(len(rows))]
    runs: list[tuple[bool, list[DiffRow]]] = []
    for row, show in zip(rows, shown):
        if runs and runs[-1][0] == (not show):
            runs[-1][1].append(row)
        else:
            runs.append((not show, [row]))
    # a short folded run is shown, and joins its neighbours
    merged: list[tuple[bool, list[DiffRow]]] = []
    for folded, run in runs:
        folded = folded and len(run) > context
        if merged and merged[-1][0] == folded:
            merged[-1][1].extend(run)
        else:
            merged.append((folded, run))
    return merged


def folded_lines(run: list[DiffRow]):
    """A folded run as JSON for a ``<script type="application/json">`` element, from which
    the page builds its rows when asked: the first line number on each side and the lines
    (a folded run is unchanged: both sides are the same).

    Only ``<``, ``>`` and ``&`` are escaped (as JSON's \\u escapes): without them no text can
    end the element or open a comment, and quotes need no escape there (jinja's tojson also
    escapes ``'``, made for attributes, which makes Python code's JSON larger).
    """
    from markupsafe import Markup

    data = {"left": run[0].left_no, "right": run[0].right_no, "lines": [r.left for r in run]}
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def unconverted_api(diag: Diagnostic) -> str | None:
    """The API a diagnostic says was left unconverted (None: not such a diagnostic).

    Unconverted uses are the ones a pass marks in the code for a person (safety MANUAL);
    errors (a file that does not parse, ...) are not about an API.
    """
    if diag.safety is not Safety.MANUAL or diag.severity is Severity.ERROR:
        return None
    found = _API_AT_START.match(diag.message)
    return found.group(1) if found else f"other {diag.code} markers"


def group_unconverted(report: PathReport) -> list[ApiGroup]:
    """The unconverted APIs of the run, most frequent first, each with its places."""
    groups: dict[str, ApiGroup] = {}
    for index, outcome in enumerate(report.files):
        for diag in outcome.result.diagnostics if outcome.result else ():
            name = unconverted_api(diag)
            if name is None:
                continue
            group = groups.setdefault(name, ApiGroup(name))
            group.count += 1
            group.codes.add(diag.code)
            reason = diag.message[len(name):].lstrip(": ") if diag.message.startswith(name) else diag.message
            if reason not in group.reasons:
                group.reasons.append(reason)
            group.places.append((index, diag))
    return sorted(groups.values(), key=lambda g: (-g.count, g.name))


@dataclass(frozen=True)
class CodeCount:
    """How many diagnostics of one code a run has, in how many files."""

    code: str
    count: int
    files: int


def count_by_code(diagnostics: list[Diagnostic]) -> list[CodeCount]:
    """The diagnostics grouped by code, the most frequent first (then by code)."""
    found: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        found.setdefault(d.code, []).append(d)
    counts = [CodeCount(code, len(ds), len({d.filename for d in ds})) for code, ds in found.items()]
    return sorted(counts, key=lambda c: (-c.count, c.code))


def summary(report: PathReport) -> dict:
    """The counts of the run, as ``transpile convert`` prints them in its last line."""
    diags = report.diagnostics
    rate = report.conversion_rate
    return {
        "files": len(report.files),
        **{status: report.count(status) for status in ("converted", "unchanged", "failed", "copied", "skipped")},
        "errors": sum(1 for d in diags if d.severity is Severity.ERROR),
        "warnings": sum(1 for d in diags if d.severity is Severity.WARNING),
        "notes": sum(1 for d in diags if d.severity is Severity.INFO),
        "rate": None if rate is None else f"{rate:.1%}",
        "converted_uses": report.converted_uses,
        "measured_uses": report.converted_uses + report.unconverted_uses,
        "annotation_uses": report.annotation_uses,
        "failed_not_measured": bool(report.failed),
        "merged": len(report.merged),  # outputs whose hand edits were carried onto the new conversion
        "conflicts": len(report.conflicts),  # outputs kept as edited by hand
    }


def _section(index: int, outcome: FileOutcome, source: str | None) -> FileSection:
    """A file's side-by-side rows (input left, output right) and its diagnostics by line."""
    result = outcome.result
    diagnostics = sorted(result.diagnostics, key=lambda d: (d.line, d.col, d.code))
    before = source.splitlines() if source is not None else []
    if source is None:
        after: list[str] = []
    elif result.failed or not result.changed:
        after = before  # the output is the input (nothing written for a failure)
    else:
        after = result.code.splitlines()
    rows = side_by_side(before, after)
    badges: dict[int, list[tuple[int, Diagnostic]]] = {}
    for number, diag in enumerate(diagnostics, 1):
        # a notebook's diagnostics count lines in a cell ("nb.ipynb[cell 3]"), not in its JSON
        if 1 <= diag.line <= len(before) and diag.filename == str(outcome.source):
            badges.setdefault(diag.line, []).append((number, diag))
    runs = fold(rows, set(badges))
    return FileSection(index, outcome, rows, runs, diagnostics, badges, source is not None)


def parity_rows(parity) -> list[dict]:
    """One row per model of ``transpile parity --json`` output (a list of results, or one):
    its name, verdict, and per mode the verdict, max abs and max rel difference."""
    results = parity if isinstance(parity, list) else [parity]
    rows = []
    for res in results:
        if not isinstance(res, dict):
            raise ValueError("parity results: expected the JSON `transpile parity --json` prints")
        modes = []
        for mode, data in (res.get("modes") or {}).items():
            outputs = data.get("outputs") or []
            modes.append({
                "mode": mode, "verdict": data.get("verdict"),
                "max_abs": _worst(o.get("max_abs_diff") for o in outputs),
                "max_rel": _worst(o.get("max_rel_diff") for o in outputs),
                "detail": data.get("detail", ""),
            })
        rows.append({"name": res.get("sample") or res.get("entry") or res.get("source") or "?",
                     "source": res.get("source"), "entry": res.get("entry"), "verdict": res.get("verdict"),
                     "ok": bool(res.get("ok")), "modes": modes, "notes": res.get("notes") or []})
    return rows


def _worst(values) -> str:
    """The largest of some metrics as JSON has them (None: not comparable, "inf"), as text."""
    numbers, unknown = [], False
    for value in values:
        if value is None:
            unknown = True
        else:
            numbers.append(float(value))
    if unknown:
        return "n/a (not comparable)"
    return "" if not numbers else f"{max(numbers):.3g}"


def read_parity_results(path: str | os.PathLike):
    """The JSON ``transpile parity --json`` wrote to ``path`` (ValueError when it is not)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        parity_rows(data)  # checks its shape
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read parity results {path}: {exc}") from exc
    except (json.JSONDecodeError, AttributeError, TypeError) as exc:
        raise ValueError(f"parity results {path}: not the JSON `transpile parity --json` prints ({exc})") from exc
    return data


def _environment():
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env


def _template_text() -> str:
    from importlib import resources

    return resources.files("transpile.templates").joinpath(TEMPLATE).read_text(encoding="utf-8")


def render_report(report: PathReport, sources: Mapping[str, str] | None = None, *,
                  title: str = "transpile conversion report", parity=None, subtitle: str = "") -> str:
    """The HTML page of a run: one self-contained file (styles and script inline, no network).

    ``sources`` maps ``str(outcome.source)`` to the input's text (the side-by-side diff's
    left column; a file without one lists only its diagnostics). ``parity`` is what
    ``transpile parity --json`` printed (see :func:`read_parity_results`); ``subtitle``
    is shown under the title (the inputs of the run).
    """
    sources = sources or {}
    sections = [_section(i, f, sources.get(str(f.source))) for i, f in enumerate(report.files)
                if f.result is not None]
    env = _environment()
    env.filters["folded_lines"] = folded_lines
    env.filters["short"] = _shortener([f.source for f in report.files])
    template = env.from_string(_template_text())
    return template.render(
        title=title, subtitle=subtitle, summary=summary(report), sections=sections,
        by_index={s.index: s for s in sections}, apis=group_unconverted(report),
        parity=parity_rows(parity) if parity is not None else None,
        copied=[f for f in report.files if f.status == "copied"], places_shown=PLACES_SHOWN,
        statuses=[st for st in ("converted", "failed", "unchanged", "skipped") if any(x.status == st for x in sections)],
    )


def _shortener(paths: list[Path]):
    """A function giving a path relative to the folder all ``paths`` share (a file's name
    for one file), for places named in a table."""
    parents = [os.path.dirname(os.path.abspath(p)) for p in paths]
    try:
        root = os.path.commonpath(parents) if parents else ""
    except ValueError:  # different drives
        root = ""

    def short(path) -> str:
        full = os.path.abspath(str(path))
        return os.path.relpath(full, root) if root and full.startswith(os.path.join(root, "")) else str(path)

    return short
