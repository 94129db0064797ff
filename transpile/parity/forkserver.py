"""Children started from a warm process: torch and MindSpore imported once, a fork per run.

A parity run's child spends about 3.5 s of CPU importing torch and MindSpore before it
runs anything; a sample's run takes a fraction of that. So the runner starts, once per
process, a server (``_forkserver``) that imports them and forks a child for each run. The
child is the process a fresh ``python -m transpile.parity._child REQUEST`` or ``python
SCRIPT`` would be (own session, working directory, environment, output files, memory
limit), with the imports already made: each run still has a process of its own.

``$TRANSPILE_PARITY_FORK=0`` starts every child afresh instead; so does another Python
(``--python``: its packages are not these) and a server that cannot start.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path

FORK_VARIABLE = "TRANSPILE_PARITY_FORK"
READY_SECONDS = 180.0  # the server's imports, on a loaded machine


class ForkedChild:
    """A child of the server, with the part of ``subprocess.Popen``'s interface the runner
    uses (``pid``, ``wait``, ``poll``, ``kill``, ``returncode``)."""

    def __init__(self) -> None:
        self.pid = 0
        self.returncode: int | None = None
        self.ended = threading.Event()

    def wait(self, timeout: float | None = None) -> int:
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout)
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode if self.ended.is_set() else None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)


class ForkServer:
    """One server per process, started on first use; thread-safe (the runner's threads
    start children at the same time)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.broken = False
        self.started: dict[int, ForkedChild] = {}  # request id -> child, until it ends
        self.pid_known: dict[int, threading.Event] = {}
        self.next_id = 0

    def _start(self) -> bool:
        env = dict(os.environ, GLOG_v="3")  # MindSpore reads it when imported
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "transpile.parity._forkserver"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
        except OSError:
            return False
        ready = threading.Event()
        threading.Thread(target=self._read, args=(self.proc, ready), daemon=True).start()
        if not ready.wait(READY_SECONDS) or self.proc.poll() is not None:
            self._stop()
            return False
        atexit.register(self._stop)
        return True

    def _read(self, proc: subprocess.Popen, ready: threading.Event) -> None:
        for line in proc.stdout:
            message = json.loads(line)
            if message.get("ready"):
                ready.set()
                continue
            with self.lock:
                child = self.started.get(message["id"])
                if "pid" in message and child is not None:
                    child.pid = message["pid"]
                    self.pid_known.pop(message["id"]).set()
                elif "status" in message and child is not None:
                    del self.started[message["id"]]
                    child.returncode = message["status"]
                    child.ended.set()
        with self.lock:  # the server died: no child of it will report again
            self.broken = True
            for child in self.started.values():
                child.returncode = child.returncode if child.returncode is not None else -signal.SIGKILL
                child.ended.set()
            for event in self.pid_known.values():
                event.set()
            self.started.clear()
            self.pid_known.clear()
        ready.set()

    def _stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def spawn(self, kind: str, target: str, args: list[str], *, cwd: str, stdout: Path, stderr: Path,
              env: dict, memory_limit: int | None) -> ForkedChild | None:
        """A child running ``target`` (a module for ``kind`` "module", else a script), or
        None when the server cannot be had (the caller starts a process itself)."""
        with self.lock:
            if self.broken:
                return None
            if self.proc is None and not self._start():
                self.broken = True
                return None
            self.next_id += 1
            request_id = self.next_id
            child, known = ForkedChild(), threading.Event()
            self.started[request_id], self.pid_known[request_id] = child, known
            request = {"id": request_id, "kind": kind, "target": target, "args": args, "cwd": cwd,
                       "stdout": str(stdout), "stderr": str(stderr), "env": env, "memory_limit": memory_limit}
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
            except OSError:
                self.broken = True
                del self.started[request_id], self.pid_known[request_id]
                return None
        known.wait()
        return child if child.pid else None


SERVER = ForkServer()


def forked_child(kind: str, target: str, args: list[str], *, python: str | None, **how) -> ForkedChild | None:
    """A forked child for this run, or None where a fresh process must start: another
    Python, ``$TRANSPILE_PARITY_FORK=0``, or no server."""
    if python not in (None, sys.executable) or os.environ.get(FORK_VARIABLE, "1").strip() == "0":
        return None
    return SERVER.spawn(kind, target, args, **how)


def start_child(kind: str, target: str, args: list[str], *, python: str | None, cwd: str, stdout: Path,
                stderr: Path, env: dict, memory_limit: int | None = None, fresh: bool = False):
    """``python -m TARGET ARGS`` (kind "module") or ``python TARGET ARGS`` in its own session,
    its output in the two files: forked from the server where it can be, else (and always
    when ``fresh``: a run that must not find what the server imported) a new process. The
    handle has ``pid``, ``wait``, ``poll``, ``kill`` and ``returncode``."""
    child = None if fresh else forked_child(kind, target, args, python=python, cwd=cwd, stdout=stdout,
                                            stderr=stderr, env=env, memory_limit=memory_limit)
    if child is not None:
        return child
    argv = [python or sys.executable, *(["-m", target] if kind == "module" else [target]), *args]
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                start_new_session=True)
    if memory_limit is not None:
        # set from here, right after it started: a preexec function is not safe beside the
        # threads that run children
        with contextlib.suppress(OSError, ValueError):  # the child is gone already, or a limit is not allowed
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (memory_limit, memory_limit))
    return proc
