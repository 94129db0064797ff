"""Structured diagnostics: what a pass reports, located in the ORIGINAL file."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"  # a note: printed grouped by code unless asked for one by one

    def at_least(self, other: "Severity") -> bool:
        """Whether this severity is ``other`` or graver (info < warning < error)."""
        return _RANK[self] >= _RANK[other]


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Safety(str, Enum):
    SAFE = "safe"  # same results as the original
    UNSAFE = "unsafe"  # runs, but results can differ (shape kept, rows zeroed, ...)
    MANUAL = "manual"  # left for a person: marked in the code


@dataclass(frozen=True)
class Diagnostic:
    """One finding, placed in the input. ``line`` is 1-based (a diagnostic about the whole
    file is at line 1; 0 only for a place the input does not have, such as code a pass
    wrote); ``col`` is 0-based in this object, as LibCST counts, and 1-based in everything
    printed or serialized (:meth:`format`, :meth:`to_dict`)."""

    code: str
    severity: Severity
    message: str
    filename: str = "<string>"
    line: int = 1
    col: int = 0
    safety: Safety = Safety.SAFE

    def format(self) -> str:
        """gcc style: ``model.py:42:9: MS301 warning: ...`` (col is 1-based)."""
        return f"{self.filename}:{self.line}:{self.col + 1}: {self.code} {self.severity.value}: {self.message}"

    def to_dict(self) -> dict:
        """Plain JSON data; ``col`` is 1-based there, as in :meth:`format` (0-based in the object)."""
        data = asdict(self)
        data["severity"] = self.severity.value
        data["safety"] = self.safety.value
        data["col"] = self.col + 1
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Diagnostic":
        """The diagnostic :meth:`to_dict` gave (ValueError, KeyError or TypeError for other data)."""
        return cls(str(data["code"]), Severity(data["severity"]), str(data["message"]), str(data["filename"]),
                   int(data["line"]), int(data["col"]) - 1, Safety(data["safety"]))


def error(filename: str, message: str, line: int = 1, code: str = "MS000") -> Diagnostic:
    """An error a person has to act on, at ``line`` of ``filename`` (1 for the whole file)."""
    return Diagnostic(code, Severity.ERROR, message, filename, line, 0, Safety.MANUAL)


# The codes no pass reports (the engine's and the file handling's), with what each means.
# A pass's codes are its id and its ``other_codes``; `transpile passes CODE` looks up both
# (tests/test_codes.py checks that every code written in the source has an entry).
CODES_WITHOUT_PASS = {
    "MS000": ("not converted", "The file, or one statement of it, could not be converted: it is not valid "
              "Python (a syntax error, or syntax newer than the Python transpile runs on), it cannot be read as "
              "text, it is empty, too large or nested too deeply, or it could not be written. A statement whose "
              "conversion would not be valid Python is kept as it was, with a `# transpile: MS000` marker, and "
              "the rest of the file is converted."),
    "MS001": ("skipped", "A path was not read at all: a broken symlink, a symlink loop, a device, a FIFO, a "
              "name that is not valid text, or a tree an earlier run wrote (it holds .transpile/)."),
    "MS002": ("hand edits kept", "An output was edited by hand since the last run, in lines the new "
              "conversion changes too: it is kept as edited and the new conversion is written beside it as "
              "NAME.new, to merge by hand."),
    "MS999": ("internal error", "transpile failed on this file (a bug in transpile: please report it with "
              "the file); the file is left as it was and the other files are converted."),
}
