"""Refuses imports of torch and MindSpore in a test run that selected no framework test.

A test not marked ``framework`` must run neither framework; this is what checks it. The
conftest installs the guard in its own process when the run's ``-m`` expression leaves out
the framework tests, and puts this directory first on ``PYTHONPATH`` so that every Python
child of the run (the CLI in a subprocess) installs it too, from ``sitecustomize``. An
import is refused with an ImportError and written to a log file; the conftest fails the
test that was running when the log grew (code that catches the ImportError would
otherwise hide the import).
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

FRAMEWORKS = ("torch", "mindspore")
LOG_VARIABLE = "TRANSPILE_TEST_FRAMEWORK_LOG"


class _RefusingLoader(importlib.abc.Loader):
    def __init__(self, log_path: str) -> None:
        self.log_path = log_path

    def create_module(self, spec):
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(f"process {os.getpid()} ({' '.join(sys.argv)[:200]}) imported {spec.name}\n")
        raise ImportError(f"{spec.name} imported in a test run without framework tests: mark the test "
                          "`framework` (tests/conftest.py)", name=spec.name)

    def exec_module(self, module) -> None:  # never reached: create_module raises
        raise ImportError(module.__name__)


class FrameworkGuard(importlib.abc.MetaPathFinder):
    """Finds torch and mindspore (so ``importlib.util.find_spec`` still says they are
    installed) with a loader that refuses to load them."""

    def __init__(self, log_path: str) -> None:
        self.loader = _RefusingLoader(log_path)

    def find_spec(self, name, path=None, target=None):
        if name in FRAMEWORKS:
            return importlib.machinery.ModuleSpec(name, self.loader)
        return None


def install(log_path: str) -> None:
    """Refuse the frameworks in this process and log each attempt to ``log_path`` (an
    xdist worker inherits a guard from its parent's environment: it gets its own log)."""
    for finder in sys.meta_path:
        if isinstance(finder, FrameworkGuard):
            finder.loader.log_path = log_path
            return
    sys.meta_path.insert(0, FrameworkGuard(log_path))
