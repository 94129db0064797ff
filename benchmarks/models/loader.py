"""The real-model harness (``run.py`` beside this file) as the other benchmarks reuse it:
loaded as a module of its own with their work directory, torch-side virtualenv and
dependency directory; and the converter commit their records name."""
from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CONVERTER_PATHS = ("rewrites", "transpile")  # what "the converter" is, for the commit record


def load_harness(work: Path, venv: Path, deps: Path):
    """``run.py`` as a fresh module whose ``WORK``, ``DEFAULT_VENV`` and ``DEPS`` are these."""
    spec = importlib.util.spec_from_file_location("bench_models_run", HERE / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.WORK, module.DEFAULT_VENV, module.DEPS = work, venv, deps
    return module


def converter_commit(short: bool = False) -> str:
    """HEAD, and whether the converter's sources differ from it in the work tree."""
    command = ["git", "rev-parse", *(["--short"] if short else []), "HEAD"]
    head = subprocess.run(command, cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *CONVERTER_PATHS], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    return head + (" (converter sources modified in the work tree)" if dirty else "")
