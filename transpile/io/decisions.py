"""Decisions on edits (``transpile review``), kept in ``.transpile/decisions.toml``.

The file lives at the root of the project (the directory holding ``.transpile``); each
decision names a file relative to that root and an edit by its key (pass, the code at
that place, occurrence). A notebook's decisions name the notebook, and key its edits the
same way over all its code cells; their ``cell`` and ``line`` are for people to read.
Later ``convert`` and ``review`` runs find it by looking up from their inputs and honour
it: a declined edit is not made. A decision stops matching once the code at that place
changes, and is then asked again.
"""
from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..engine.edits import Edit, EditKey
from .atomic import write_file_atomic

DIRECTORY = ".transpile"
FILENAME = "decisions.toml"
_HEADER = """\
# Decisions on the edits of transpile (written by `transpile review`, read by every run).
# apply = false: the edit is not made. A decision stops applying once the code at its place
# changes. Edit by hand or delete entries freely.
"""


class DecisionsError(ValueError):
    """The decisions file cannot be read (its path and why in the message)."""


@dataclass(frozen=True)
class Decision:
    file: str  # relative to the root, with / separators
    key: EditKey
    line: int  # where the edit was when decided (shown to people; the key is what matches)
    apply: bool
    cell: int | None = None  # in a notebook: the cell ``line`` is in (shown to people too)


def decisions_path(root: Path) -> Path:
    return root / DIRECTORY / FILENAME


PROJECT_MARKERS = (".git", "pyproject.toml")  # a directory holding one is a project's root


def find_root(paths: Iterable[str | os.PathLike]) -> Path | None:
    """The nearest directory at or above any of ``paths`` holding a decisions file, looking
    no higher than the project: the first directory on the way up that holds ``.git`` or
    ``pyproject.toml``, or the current directory (where ``review`` saves by default) when
    the input is below it; with neither above, only the input's own directory. A decisions
    file in a shared parent directory (``/tmp``, a home directory) is never honoured."""
    cwd = Path.cwd().resolve()
    for given in paths:
        here = Path(os.path.realpath(given))  # Path.resolve raises on a symlink loop
        start = here if here.is_dir() else here.parent
        climb = (start, *start.parents)
        top = next((f for f in climb if f == cwd or any(os.path.lexists(f / m) for m in PROJECT_MARKERS)), start)
        for folder in climb[:climb.index(top) + 1]:
            if decisions_path(folder).is_file():
                return folder
    return None


class DecisionStore:
    """The decisions of one project: read, looked up by file and edit, changed, saved."""

    def __init__(self, root: Path, decisions: Iterable[Decision] = ()) -> None:
        self.root = Path(root).resolve()
        self._by_key: dict[tuple[str, EditKey], Decision] = {(d.file, d.key): d for d in decisions}

    @property
    def path(self) -> Path:
        return decisions_path(self.root)

    @classmethod
    def load(cls, root: str | os.PathLike) -> "DecisionStore":
        """The store of ``root`` (empty when it has no decisions file yet)."""
        store = cls(Path(root))
        if not store.path.exists():
            return store
        try:
            data = tomllib.loads(store.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise DecisionsError(f"{store.path}: cannot read the decisions ({type(exc).__name__}: {exc})") from exc
        entries = data.get("decision", [])
        if not isinstance(entries, list):
            raise DecisionsError(f"{store.path}: cannot read the decisions (`decision` must be a list of tables)")
        decisions = [_decision(store.path, number, entry) for number, entry in enumerate(entries, 1)]
        return cls(store.root, decisions)

    def __len__(self) -> int:
        return len(self._by_key)

    def relative(self, path: str | os.PathLike) -> str:
        """``path`` as the decisions file names it (relative to the root when inside it)."""
        full = Path(path).resolve()
        try:
            return full.relative_to(self.root).as_posix()
        except ValueError:
            return full.as_posix()

    def decided(self, path: str | os.PathLike, edit: Edit) -> bool | None:
        """True (apply), False (decline) or None (not decided) for ``edit`` of ``path``."""
        found = self._by_key.get((self.relative(path), edit.key))
        return None if found is None else found.apply

    def declined(self, path: str | os.PathLike) -> frozenset[EditKey]:
        """The keys of the edits of ``path`` that are not to be made."""
        name = self.relative(path)
        return frozenset(key for (file, key), d in self._by_key.items() if file == name and not d.apply)

    def record(self, path: str | os.PathLike, edit: Edit, apply: bool) -> None:
        name = self.relative(path)
        self._by_key[(name, edit.key)] = Decision(name, edit.key, edit.line, apply, edit.cell)

    def forget_stale(self, path: str | os.PathLike, edits: Iterable[Edit]) -> int:
        """Drop the decisions of ``path`` that match none of its ``edits`` (its code changed
        there); how many were dropped."""
        name = self.relative(path)
        current = {e.key for e in edits}
        stale = [k for k in self._by_key if k[0] == name and k[1] not in current]
        for k in stale:
            del self._by_key[k]
        return len(stale)

    def to_toml(self) -> str:
        parts = [_HEADER]
        for d in sorted(self._by_key.values(), key=lambda d: (d.file, d.cell or 0, d.line, d.key)):
            parts.append("\n[[decision]]\n")
            parts.append(f"file = {_string(d.file)}\n")
            if d.cell is not None:
                parts.append(f"cell = {d.cell}\n")
            parts.append(f"line = {d.line}\n")
            parts.append(f"pass = {_string(d.key.pass_id)}\n")
            parts.append(f"code = {_string(d.key.code)}\n")
            parts.append(f"occurrence = {d.key.occurrence}\n")
            parts.append(f"apply = {'true' if d.apply else 'false'}\n")
        return "".join(parts)

    def save(self) -> Path:
        """Write the decisions atomically (the directory is made when missing)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_file_atomic(self.path, self.to_toml())
        return self.path


# A decision's keys and the type each must have (TOML's own types: ``apply = "false"`` is
# a string, and a string is never read as a boolean); ``cell`` and ``line`` may be absent.
_TYPES = {"file": str, "pass": str, "code": str, "occurrence": int, "apply": bool, "line": int, "cell": int}
_OPTIONAL = {"line": 0, "cell": None}


def _decision(path: Path, number: int, entry) -> Decision:
    """The ``number``-th ``[[decision]]`` table of ``path``; DecisionsError naming the file,
    the entry and the key when a key is missing or of another type."""
    if not isinstance(entry, dict):
        raise DecisionsError(f"{path}: cannot read the decisions (decision {number} is not a table)")
    values = {}
    for key, kind in _TYPES.items():
        if key not in entry:
            if key in _OPTIONAL:
                values[key] = _OPTIONAL[key]
                continue
            raise DecisionsError(f"{path}: cannot read the decisions (decision {number} has no `{key}`)")
        value = entry[key]
        if type(value) is not kind:  # bool is an int to isinstance: `occurrence = true` is refused too
            raise DecisionsError(f"{path}: cannot read the decisions (decision {number}: `{key}` must be "
                                 f"{_TYPE_NAMES[kind]}, not {type(value).__name__} {value!r})")
        values[key] = value
    return Decision(values["file"], EditKey(values["pass"], values["code"], values["occurrence"]),
                    values["line"], values["apply"], values["cell"])


_TYPE_NAMES = {str: "a string", int: "a whole number", bool: "true or false"}


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (\\n, \\", \\\\, \\uXXXX)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")  # TOML refuses a raw DEL
