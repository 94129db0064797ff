"""Three-way merge of lines: hand edits to a converted file, carried onto its new conversion.

``convert -o OUT`` keeps the text it wrote to each output file (``generated``). When the
file on disk no longer reads so, a person edited it: the changes from ``generated`` to
the file on disk (``edited``) are applied to the new conversion (``converted``). Where
both changed the same lines differently, the merge conflicts and nothing is decided.

The algorithm is the usual diff3 one: lines of ``generated`` that both other texts keep
(matched by ``difflib.SequenceMatcher``) are stable; each stretch between two stable
lines is taken from the side that changed it, or from either when both changed it alike.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Merge:
    """What merging gave: the merged text, or ``conflicts`` > 0 (then ``text`` is None)."""

    text: str | None
    conflicts: int = 0  # stretches of lines both sides changed differently

    @property
    def clean(self) -> bool:
        return self.conflicts == 0


def _matched(base: list[str], other: list[str]) -> dict[int, int]:
    """Line of ``base`` -> the line of ``other`` it is matched with (each in order)."""
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return {b + k: o + k for b, o, size in matcher.get_matching_blocks() for k in range(size)}


def _next_stable(start: int, base: list[str], mine: dict[int, int], theirs: dict[int, int]) -> int:
    """The first line of ``base`` at or after ``start`` both sides keep; ``len(base)`` if none."""
    return next((k for k in range(start, len(base)) if k in mine and k in theirs), len(base))


def _resolve(base: list[str], mine: list[str], theirs: list[str]) -> list[str] | None:
    """One stretch: the side that changed it, either if both changed it alike, None if both differ."""
    if mine == base or mine == theirs:
        return theirs
    if theirs == base:
        return mine
    return None


def merge_lines(generated: str, edited: str, converted: str) -> Merge:
    """``converted`` with the changes from ``generated`` to ``edited`` applied to it.

    Lines keep their endings, so a file's own (CRLF, no newline at the end) survives.
    """
    base = generated.splitlines(keepends=True)
    mine_lines = edited.splitlines(keepends=True)
    theirs_lines = converted.splitlines(keepends=True)
    mine, theirs = _matched(base, mine_lines), _matched(base, theirs_lines)
    out: list[str] = []
    conflicts = 0
    b = m = t = 0  # cursors in base, mine, theirs
    while b < len(base) or m < len(mine_lines) or t < len(theirs_lines):
        if b < len(base) and mine.get(b) == m and theirs.get(b) == t:  # a stable line
            out.append(base[b])
            b, m, t = b + 1, m + 1, t + 1
            continue
        k = _next_stable(b, base, mine, theirs)
        m_end = mine[k] if k < len(base) else len(mine_lines)
        t_end = theirs[k] if k < len(base) else len(theirs_lines)
        taken = _resolve(base[b:k], mine_lines[m:m_end], theirs_lines[t:t_end])
        if taken is None:
            conflicts += 1
        else:
            out.extend(taken)
        b, m, t = k, m_end, t_end
    return Merge(None, conflicts) if conflicts else Merge("".join(out))


@dataclass(frozen=True)
class HandEdits:
    """What to do with an output file a person may have edited since the last run wrote it."""

    write: bytes | None  # the file's new content; None: the file stays as it is
    merged: bool = False  # the person's edits were carried onto the new conversion
    conflict: bool = False  # they conflict with it: the file stays, the new conversion goes beside it
    unrecorded: bool = False  # the conflict is that no record says the tool wrote the file at all


def carry_hand_edits(new: bytes, generated: bytes | None, on_disk: bytes | None, unresolved: bool = False,
                     mergeable: bool = True) -> HandEdits:
    """``new`` (the new conversion) with the edits from ``generated`` (what the last run
    wrote, None when there is no record of it) to ``on_disk`` (the file now, None when
    missing) applied.

    An unedited file: ``new`` as it is. A file there with no record of an earlier run (the
    record was deleted, or the file is not ours) that differs from ``new`` is never
    overwritten: a conflict. Text that is not UTF-8, or not ``mergeable`` (files only
    copied, compared by digest), cannot be merged by lines: a conflict whenever both sides
    changed. ``unresolved``: an earlier conflict's conversion is still beside the file: it
    conflicts until the person has merged it (and removed it), or made the file what the
    conversion gives.
    """
    if on_disk == new:
        return HandEdits(None)  # the person wrote what the conversion now gives
    if on_disk is None:
        return HandEdits(new)
    if unresolved:
        return HandEdits(None, conflict=True)
    if generated is None:
        return HandEdits(None, conflict=True, unrecorded=True)
    if on_disk == generated:
        return HandEdits(new)
    if new == generated:
        return HandEdits(None, merged=True)  # nothing new from the conversion: the edits stand
    try:
        texts = [data.decode("utf-8") for data in (generated, on_disk, new)] if mergeable else None
    except UnicodeDecodeError:
        texts = None
    if texts is None:
        return HandEdits(None, conflict=True)
    merged = merge_lines(*texts)
    if not merged.clean:
        return HandEdits(None, conflict=True)
    return HandEdits(merged.text.encode("utf-8"), merged=True)
