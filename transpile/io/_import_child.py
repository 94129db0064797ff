"""The process ``import_check`` starts: ``python -m transpile.io._import_child REQUEST.json``.

It imports each module the request names (its package roots first on the path) and writes,
per module, whether it imported and, if not, the error and the innermost frame in the
converted files. Module code runs here, not in the converter's process."""
from __future__ import annotations

import importlib
import json
import sys
import traceback
import warnings
from pathlib import Path


def _stopped_at(exc: BaseException, converted) -> tuple[str | None, int | None, str]:
    """The innermost frame of ``exc`` in a file ``converted(filename)`` accepts: file, line
    and the line's code (a SyntaxError in such a file has no frame of its own)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if converted(f.filename)]
    if isinstance(exc, SyntaxError) and exc.filename and converted(exc.filename):
        return exc.filename, exc.lineno, (exc.text or "").strip()
    return (frames[-1].filename, frames[-1].lineno, (frames[-1].line or "").strip()) if frames else (None, None, "")


def import_each(names, converted) -> dict[str, dict]:
    """Import each module of ``names`` in turn: ``{"ok": True}``, or the error (one line)
    and where in the files ``converted(filename)`` accepts the import stopped (``where``,
    ``line``, ``code``; None where it stopped outside them). A module whose import failed
    is not retried; a module it imported that failed is reported under its own name."""
    found: dict[str, dict] = {}
    for name in names:
        try:
            importlib.import_module(name)
            found[name] = {"ok": True}
        except BaseException as exc:  # SystemExit from module code too; Ctrl-C stops the check
            if isinstance(exc, KeyboardInterrupt):
                raise
            where, line, code = _stopped_at(exc, converted)
            found[name] = {"ok": False, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                           "where": where, "line": line, "code": code}
    return found


def main(request_path: str) -> int:
    warnings.filterwarnings("ignore")
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    sys.path[:0] = request["roots"]
    converted = set(request["modules"].values())
    found = import_each(request["modules"], converted.__contains__)
    Path(request["result"]).write_text(json.dumps(found), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
