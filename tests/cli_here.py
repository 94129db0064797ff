"""``transpile ARGS`` run in the test process as the console script runs it (``main`` with
the arguments), from a given directory: its exit status and what it printed, as
``subprocess.run(..., capture_output=True, text=True)`` gives them.

For the commands whose own process would import torch and MindSpore (``parity``,
``weights``): in the test process those are imported once, and parity's children are
forked from one warm server (transpile/parity/forkserver.py), instead of each command's
process importing them again (about 3 s of CPU a command). One run at a time: the
standard streams and the working directory are the process's.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
from pathlib import Path

from transpile.cli.main import main


def run(args, cwd: Path) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(a) for a in args])
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())
