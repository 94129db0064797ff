"""Import every converted module once, in a child process (``convert --import-check``).

A converted file can be valid Python and still fail the moment it is imported: a name the
conversion left to torch where torch is not installed, a MindSpore API the code reaches at
module level, a package's own module that failed first. Each module is imported as its
package would import it (the directory above the outermost ``__init__.py`` goes on the
path), all of them in one fresh interpreter (the code runs: that is the check), and a
failure is reported with the converted file and line where the import stopped.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

CHECK_SECONDS = 900.0  # the whole check: one interpreter importing every module


@dataclass(frozen=True)
class ImportFailure:
    module: str
    path: Path  # the converted file of the module
    error: str  # the exception, one line
    where: Path | None = None  # the converted file the import stopped in (None: outside them)
    line: int | None = None

    def format(self) -> str:
        at = f"{self.where}:{self.line}" if self.where is not None else str(self.path)
        return f"{at}: import check: `import {self.module}` fails: {self.error}"


@dataclass(frozen=True)
class ImportCheck:
    modules: int  # how many were imported
    failures: tuple[ImportFailure, ...]


def module_names(files) -> tuple[dict[str, Path], list[str]]:
    """Each .py file's module name as its package imports it, and the folders to put on the
    path for that: the folder above a file's outermost package (a folder with an
    ``__init__.py``), or the file's own folder when it is in none."""
    modules: dict[str, Path] = {}
    roots: list[str] = []
    for file in sorted({Path(f).resolve() for f in files if str(f).endswith(".py")}):
        parts = [] if file.name == "__init__.py" else [file.stem]
        folder = file.parent
        while (folder / "__init__.py").is_file() and folder.parent != folder:
            parts.insert(0, folder.name)
            folder = folder.parent
        if not parts or not all(p.isidentifier() for p in parts):
            continue  # not importable by name (a folder named like `my-scripts`)
        modules.setdefault(".".join(parts), file)
        if str(folder) not in roots:
            roots.append(str(folder))
    return modules, roots


def import_check(files, python: str | None = None, timeout: float = CHECK_SECONDS) -> ImportCheck:
    """Import the modules of ``files`` (converted .py files, written) in a child process."""
    modules, roots = module_names(files)
    if not modules:
        return ImportCheck(0, ())
    with tempfile.TemporaryDirectory(prefix="transpile-import-check-") as tmp:
        request, result = Path(tmp) / "request.json", Path(tmp) / "result.json"
        request.write_text(json.dumps({"roots": roots, "modules": {m: str(f) for m, f in modules.items()},
                                       "result": str(result)}), encoding="utf-8")
        env = dict(os.environ, PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1", GLOG_v="3")
        try:
            proc = subprocess.run([python or sys.executable, "-m", "transpile.io._import_child", str(request)],
                                  capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the import check did not finish in {timeout:g} s") from None
        if not result.is_file():
            tail = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            raise RuntimeError(f"the import check's process died: {tail[0]}")
        found = json.loads(result.read_text(encoding="utf-8"))
    failures = tuple(
        ImportFailure(name, modules[name], item["error"],
                      Path(item["where"]) if item.get("where") else None, item.get("line"))
        for name, item in sorted(found.items()) if not item["ok"])
    return ImportCheck(len(modules), failures)
