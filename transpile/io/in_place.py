"""The record an ``in_place`` run writes before it overwrites anything, so that running
again repairs a run that was cut short (Ctrl-C, a full disk, a crash).

A tree converted in place reads differently once some files are written: a module whose
``nn`` came from ``from .layers import *`` looks torch-free once ``layers.py`` is
MindSpore, and would be left as it is. So before the first overwrite, the run records,
in ``<input>/.transpile/in-place.json`` (beside a file given alone), each file it is
about to overwrite: its text as it was (its torch form) and the digest of what it will
write. Until the run has written every file the record stays; the next run reads a file
whose content is still its recorded source, or what the record says was written to it,
as its recorded source, for its own conversion and for the facts the tree hands its
siblings. A file changed since (by hand) is read as it is. A run that finishes removes
the entries of its files.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import write_atomic
from .decisions import DIRECTORY

RECORD_NAME = "in-place.json"
_FORMAT = 1


def record_path(base: Path) -> Path:
    """The record of the in-place runs on the files under ``base``."""
    return base / DIRECTORY / RECORD_NAME


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class InPlaceRecord:
    """The sources an in-place run recorded under one directory (``base``), by relative path."""

    base: Path
    entries: dict[str, dict[str, str]] = field(default_factory=dict)  # rel -> {"source": text, "written": sha256}

    @classmethod
    def load(cls, base: Path) -> "InPlaceRecord":
        """The record under ``base``; empty when there is none. An entry that is not as
        written (hand-edited, truncated) is left out: that file is read as it is."""
        record = cls(base)
        try:
            data = json.loads(record_path(base).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return record
        if not isinstance(data, dict) or data.get("format") != _FORMAT or not isinstance(data.get("files"), dict):
            return record
        for rel, entry in data["files"].items():
            if isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("source", "written")):
                record.entries[rel] = {"source": entry["source"], "written": entry["written"]}
        return record

    def _key(self, path: Path) -> str:
        return path.relative_to(self.base).as_posix()

    def source(self, path: Path) -> str | None:
        """The recorded first form of ``path`` (a BOM included) when the file is still it or
        what the interrupted run wrote; None when there is none or the file changed since."""
        entry = self.entries.get(self._key(path))
        if entry is None:
            return None
        try:
            current = path.read_bytes()
        except OSError:
            return None
        if digest(current) == entry["written"] or current == entry["source"].encode("utf-8", "surrogatepass"):
            return entry["source"]
        return None

    def written_before(self, path: Path) -> bool:
        """Whether ``path`` holds what an earlier, interrupted run wrote to it."""
        entry = self.entries.get(self._key(path))
        try:
            return entry is not None and digest(path.read_bytes()) == entry["written"]
        except OSError:
            return False

    def add(self, path: Path, source: str, written: bytes) -> None:
        self.entries[self._key(path)] = {"source": source, "written": digest(written)}

    def forget(self, paths: list[Path]) -> None:
        for path in paths:
            self.entries.pop(self._key(path), None)

    def save(self) -> None:
        """Write the record atomically (OSError when it cannot be); no entries: remove it."""
        path = record_path(self.base)
        if not self.entries:
            path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # the .transpile directory, when nothing else is in it
                path.parent.rmdir()
            return
        write_atomic(path, json.dumps({"format": _FORMAT, "files": self.entries}, sort_keys=True))
