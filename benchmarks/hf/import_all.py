"""Import every module of a converted package, one process, MindSpore's side:

    python import_all.py [--without-torch] CONVERTED_ROOT DEPS OUT.json MODULE ...

For each module: imported, or the error and where it was raised in the converted code
(the innermost traceback frame under CONVERTED_ROOT: file relative to it, line, code).
A module whose import fails is not retried; modules it imports that failed are reported
each under their own name (Python forgets a module whose import raised). With
``--without-torch`` the process finds no torch (``benchmarks/models/no_torch.py``).
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path


def failure_site(exc: BaseException, root: str) -> dict | None:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(root)]
    if not frames:
        return None
    frame = frames[-1]
    return {"file": os.path.relpath(frame.filename, root), "line": frame.lineno, "code": (frame.line or "").strip()}


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    if argv[0] == "--without-torch":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models"))
        from no_torch import block_torch

        block_torch()
        argv = argv[1:]
    root, deps, out = str(Path(argv[0]).resolve()), argv[1], Path(argv[2])
    sys.path.insert(0, root)
    sys.path.append(deps)
    import mindspore

    mindspore.set_device("CPU")
    results: dict[str, dict] = {}
    start = time.perf_counter()
    for name in argv[3:]:
        try:
            importlib.import_module(name)
            results[name] = {"ok": True}
        except BaseException as exc:  # SystemExit and KeyboardInterrupt from module code too
            if isinstance(exc, KeyboardInterrupt):
                raise
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                             "site": failure_site(exc, root)}
    out.write_text(json.dumps({"seconds": round(time.perf_counter() - start, 1), "modules": results}, indent=1),
                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
