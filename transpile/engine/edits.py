"""Edits: one rewrite by one pass at one place, which a person may accept or decline.

The pipeline records every replacement a pass makes (when asked to) as an :class:`Edit`,
and takes a set of :class:`EditKey` to decline: a declined edit leaves the code at that
place as the pass found it, and the references it makes to the source framework are
spelled so that they still name it (the file stays runnable, its imports kept).

An edit is known by its pass, the code at that place in the input and how many earlier
edits of the same pass had the same code in that file: a key survives edits elsewhere in
the file and stops matching once the code at that place changes.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import NamedTuple

from .diagnostics import Safety

# ``# transpile: ignore`` or ``# transpile: ignore[MS301, MS302]`` at the end of a line
IGNORE_COMMENT = re.compile(r"#\s*transpile:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?\s*$")


class EditKey(NamedTuple):
    pass_id: str
    code: str  # the code at that place in the input, as written
    occurrence: int  # earlier edits of this pass with the same code in the file


@dataclass(frozen=True)
class Edit:
    """One replacement one pass made (or would have made, when ``applied`` is False)."""

    pass_id: str
    line: int  # 1-based line of the place in the input (0: code an earlier pass wrote)
    col: int  # 0-based column
    code: str  # the code at that place in the input
    before: str  # the code as the pass found it (inner edits already made)
    after: str  # what the pass made of it
    reason: str  # what the pass reported there, else what the pass does
    safety: Safety  # UNSAFE: it runs, but results can differ; MANUAL: a person must finish it
    occurrence: int
    applied: bool = True
    why_not: str = ""  # when not applied: the decision or comment that declined it
    pass_name: str = ""
    cell: int | None = None  # in a notebook: the 1-based cell holding the place (0: none), ``line`` inside it

    @property
    def key(self) -> EditKey:
        return EditKey(self.pass_id, self.code, self.occurrence)

    @property
    def end_line(self) -> int:
        return self.line + self.code.count("\n") if self.line else 0

    def diff(self, filename: str = "") -> str:
        """A unified diff of the place before and after this edit."""
        where = place(filename, self.line, self.cell)
        lines = difflib.unified_diff(self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
                                     f"{where} (before {self.pass_id})", f"{where} (after {self.pass_id})", n=0)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def to_dict(self) -> dict:
        """Plain JSON data (``col`` 1-based); ``cell`` only for an edit of a notebook."""
        return {
            "pass": self.pass_id, **({} if self.cell is None else {"cell": self.cell}), "line": self.line,
            "col": self.col + 1, "code": self.code, "before": self.before,
            "after": self.after, "reason": self.reason, "safety": self.safety.value,
            "occurrence": self.occurrence, "applied": self.applied, "why_not": self.why_not, "pass_name": self.pass_name,
        }


def place(filename: str, line: int, cell: int | None = None) -> str:
    """Where a line is, for people: ``model.py:8``, ``nb.ipynb cell 3 line 2`` (``cell``: in a
    notebook), ``line 8`` / ``cell 3 line 2`` without a filename."""
    where = f"line {line}" if cell is None else f"cell {cell} line {line}"
    if not filename:
        return where
    return f"{filename}:{line}" if cell is None else f"{filename} {where}"


def ignored_passes(comment: str | None) -> frozenset[str] | None:
    """The pass ids a ``# transpile: ignore[...]`` comment names (empty: all), or None."""
    if not comment:
        return None
    found = IGNORE_COMMENT.search(comment)
    if found is None:
        return None
    return frozenset(p.strip().upper() for p in (found.group(1) or "").split(",") if p.strip())
