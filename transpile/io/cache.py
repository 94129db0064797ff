"""A content-hash cache of conversion results, so that re-running on an unchanged tree skips the work.

The key is the sha256 of the input text, the file name given to the converter (the
diagnostics carry it), the tool's version and a fingerprint of the tool itself (every
.py and .toml file of the ``transpile`` and ``transpile.rewrites`` packages). The value
is the :class:`ConversionResult` as JSON. Entries are written atomically; an entry
that cannot be read or does not make sense is a miss, never an error.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from .. import version
from ..engine.context import Stats
from ..engine.diagnostics import Diagnostic
from ..engine.pipeline import ConversionResult
from .atomic import write_atomic

_FORMAT = 3  # bump when the JSON layout of an entry changes (2: stats.annotations; 3: col 1-based)


def default_cache_dir() -> Path:
    """``$TRANSPILE_CACHE_DIR``, else ``$XDG_CACHE_HOME/transpile``, else ``~/.cache/transpile``."""
    explicit = os.environ.get("TRANSPILE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "transpile"


def tool_files() -> list[Path]:
    """Every .py and .toml file of the ``transpile`` and ``transpile.rewrites`` packages."""
    import importlib.util

    # transpile.rewrites's file, found without importing it (and every pass with it)
    rewrites = importlib.util.find_spec("transpile.rewrites").origin
    roots = {Path(__file__).resolve().parents[1], Path(rewrites).resolve().parent}  # transpile/, rewrites/
    return sorted({p for root in roots for ext in ("*.py", "*.toml") for p in root.rglob(ext)
                   if "__pycache__" not in p.parts})


@functools.lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """sha256 of the tool's own code and tables (once per process)."""
    digest = hashlib.sha256()
    for path in tool_files():
        data = path.read_bytes()
        digest.update(f"{path.as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def cache_key(text: str, filename: str, handed=None, declined=()) -> str:
    """``handed``: what the file's tree hands it (a ``PackageFacts``, or star-imported
    bindings): a change in a sibling that reaches the file changes its key. ``declined``:
    the keys of the edits a decision declines there."""
    digest = hashlib.sha256()
    handed = handed.fingerprint() if hasattr(handed, "fingerprint") else sorted((handed or {}).items())
    header = json.dumps([_FORMAT, version.__version__, tool_fingerprint(), filename, handed, [list(k) for k in declined]])
    digest.update(header.encode("utf-8") + b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _to_json(result: ConversionResult, ascii_only: bool = False) -> str:
    return json.dumps({
        "format": _FORMAT,
        "code": result.code,
        "diagnostics": [d.to_dict() for d in result.diagnostics],
        "changed": result.changed,
        "filename": result.filename,
        "stats": {"converted": result.stats.converted, "unconverted": result.stats.unconverted,
                  "annotations": result.stats.annotations},
        "failed": result.failed,
    }, ensure_ascii=ascii_only)


def _from_json(text: str) -> ConversionResult:
    data = json.loads(text)
    if data["format"] != _FORMAT:
        raise ValueError("another entry format")
    diagnostics = [Diagnostic.from_dict(_typed_diagnostic(d)) for d in data["diagnostics"]]
    counts = [data["stats"][k] for k in ("converted", "unconverted", "annotations")]
    code, filename, changed, failed = data["code"], data["filename"], data["changed"], data["failed"]
    # Each value of its own type: "false" is not read as true, nor 1.5 as a count.
    if not isinstance(code, str) or not isinstance(filename, str):
        raise ValueError("code and filename must be text")
    if type(changed) is not bool or type(failed) is not bool:
        raise ValueError("changed and failed must be true or false")
    if any(type(n) is not int or n < 0 for n in counts):
        raise ValueError("the counts must be whole numbers")
    return ConversionResult(code, diagnostics, changed, filename, Stats(*counts), failed)


_DIAGNOSTIC_TYPES = {"code": str, "severity": str, "message": str, "filename": str, "line": int, "col": int,
                     "safety": str}


def _typed_diagnostic(data: dict) -> dict:
    """``data`` when each field of a stored diagnostic has its type (else ValueError: a miss)."""
    if any(type(data[key]) is not kind for key, kind in _DIAGNOSTIC_TYPES.items()):
        raise ValueError("a diagnostic's field of another type")
    return data


class ResultCache:
    """Conversion results on disk, one JSON file per key (``dir/ab/abcd....json``)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ConversionResult | None:
        """The stored result, or None when there is none or it cannot be used."""
        try:
            return _from_json(self._path(key).read_text(encoding="utf-8"))
        except Exception:  # missing, unreadable, corrupt, another layout: a miss
            return None

    def put(self, key: str, result: ConversionResult) -> None:
        """Store atomically (temp file + rename); a cache that cannot be written is skipped."""
        text = _to_json(result)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a file name that is not UTF-8): escaped, it round-trips
            data = _to_json(result, ascii_only=True).encode("ascii")
        try:
            write_atomic(self._path(key), data)
        except OSError:
            pass
