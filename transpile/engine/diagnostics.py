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
    code: str
    severity: Severity
    message: str
    filename: str = "<string>"
    line: int = 0
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


def error(filename: str, message: str, line: int = 0, code: str = "MS000") -> Diagnostic:
    """An error a person has to act on, at ``line`` of ``filename`` (0: the whole file)."""
    return Diagnostic(code, Severity.ERROR, message, filename, line, 0, Safety.MANUAL)
