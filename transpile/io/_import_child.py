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


def _stopped_at(exc: BaseException, converted: set[str]) -> tuple[str | None, int | None]:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in converted]
    if isinstance(exc, SyntaxError) and exc.filename in converted:  # raised by the parser, no frame of its own
        return exc.filename, exc.lineno
    return (frames[-1].filename, frames[-1].lineno) if frames else (None, None)


def main(request_path: str) -> int:
    warnings.filterwarnings("ignore")
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    sys.path[:0] = request["roots"]
    converted = set(request["modules"].values())
    found: dict[str, dict] = {}
    for name in request["modules"]:
        try:
            importlib.import_module(name)
            found[name] = {"ok": True}
        except BaseException as exc:  # SystemExit from module code too; Ctrl-C stops the check
            if isinstance(exc, KeyboardInterrupt):
                raise
            where, line = _stopped_at(exc, converted)
            found[name] = {"ok": False, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                           "where": where, "line": line}
    Path(request["result"]).write_text(json.dumps(found), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
