"""The parity runs' settings the command line needs to define its options: a module of its
own, so that the command line starts without importing numpy and the runner."""
from __future__ import annotations

import os

MODES = ("PYNATIVE", "GRAPH")  # MindSpore's execution modes, each a run of its own
DEFAULT_TIMEOUT = 300.0  # seconds per child process
# The address space a child may take (RLIMIT_AS): torch and MindSpore with a small model
# take under 3 GiB of it; a model that would take the machine down gets a MemoryError
# instead. $TRANSPILE_CHILD_MEMORY_GB (``parity --memory-limit``) sets another; 0: none.
DEFAULT_MEMORY_LIMIT_GB = 16.0
MEMORY_LIMIT_VARIABLE = "TRANSPILE_CHILD_MEMORY_GB"


def memory_limit() -> int | None:
    """The address space a child may take, in bytes (None: no limit): from
    ``$TRANSPILE_CHILD_MEMORY_GB``, else ``DEFAULT_MEMORY_LIMIT_GB``; ValueError for a bad value."""
    text = os.environ.get(MEMORY_LIMIT_VARIABLE, "")
    try:
        gigabytes = float(text) if text.strip() else DEFAULT_MEMORY_LIMIT_GB
    except ValueError:
        gigabytes = -1.0
    if not gigabytes >= 0:
        raise ValueError(f"${MEMORY_LIMIT_VARIABLE} must be a number of GiB >= 0 (0: no limit), not {text!r}")
    return int(gigabytes * 2**30) or None
