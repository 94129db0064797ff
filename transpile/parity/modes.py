"""The parity runs' settings the command line needs to define its options: a module of its
own, so that the command line starts without importing numpy and the runner."""
from __future__ import annotations

MODES = ("PYNATIVE", "GRAPH")  # MindSpore's execution modes, each a run of its own
DEFAULT_TIMEOUT = 300.0  # seconds per child process
