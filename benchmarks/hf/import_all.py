"""Import every module of a converted package, one process, MindSpore's side:

    python import_all.py [--without-torch] CONVERTED_ROOT DEPS OUT.json MODULE ...

For each module: imported, or the error and where it was raised in the converted code
(the innermost traceback frame under CONVERTED_ROOT: file relative to it, line, code).
A module whose import fails is not retried; modules it imports that failed are reported
each under their own name (Python forgets a module whose import raised). With
``--without-torch`` the process finds no torch (``benchmarks/models/no_torch.py``).
"""
from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path

from transpile.io._import_child import import_each


def failure_site(item: dict, root: str) -> dict | None:
    """Where ``import_each`` says an import stopped, relative to the converted root."""
    if item.get("where") is None:
        return None
    return {"file": os.path.relpath(item["where"], root), "line": item["line"], "code": item["code"]}


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
    start = time.perf_counter()
    found = import_each(argv[3:], lambda filename: filename.startswith(root))
    results = {name: {"ok": True} if item["ok"] else {"ok": False, "error": item["error"],
                                                       "site": failure_site(item, root)}
               for name, item in found.items()}
    out.write_text(json.dumps({"seconds": round(time.perf_counter() - start, 1), "modules": results}, indent=1),
                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
