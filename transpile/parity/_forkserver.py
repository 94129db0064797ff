"""The process ``forkserver.ForkServer`` starts: ``python -m transpile.parity._forkserver``.

It imports torch and MindSpore once (what of them is installed), then reads one JSON
request per line on stdin and forks a child for each: the child starts its own session,
takes the request's working directory, environment, output files and memory limit, and
runs a module as ``python -m`` would or a script as ``python SCRIPT`` would. The server
answers on stdout, one JSON line per event: ``{"ready": true}`` once imported, then
``{"id": N, "pid": P}`` when a child started and ``{"id": N, "status": S}`` when it ended
(S as ``Popen.returncode``: negative for a signal). It stays single-threaded (a fork
beside other threads could copy a lock one of them holds). At the end of stdin it kills
its children's groups and exits.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import resource
import runpy
import select
import signal
import sys
import traceback
import warnings

os.environ.setdefault("GLOG_v", "3")  # MindSpore: errors only (as _child sets it)


def preload() -> None:
    """The imports every child would make first (the reason this process exists)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("numpy", "torch", "mindspore", "transpile.parity._child"):
            with contextlib.suppress(Exception):
                __import__(name)


def redirect(fd: int, path: str, flags: int) -> None:
    opened = os.open(path, flags, 0o644)
    os.dup2(opened, fd)
    os.close(opened)


def run_request(request: dict, wakeup: tuple[int, int]) -> int:
    """In the forked child: become the process the request describes, run it, give its
    exit status (never returns to the server's loop). ``wakeup``: the server's pipe of
    child-exit signals, closed here."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    for fd in wakeup:
        os.close(fd)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    redirect(0, os.devnull, os.O_RDONLY)
    redirect(1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    redirect(2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # what the interpreter reads from the environment at its start
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    options = [o for o in os.environ.get("PYTHONWARNINGS", "").split(",") if o.strip()]
    sys.warnoptions[:] = options
    with contextlib.suppress(Exception):
        warnings._processoptions(options)
    if request.get("memory_limit"):
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_AS, (request["memory_limit"],) * 2)
    target, args = request["target"], request["args"]
    try:
        if request["kind"] == "module":  # python -m TARGET ARGS: the working directory first on the path
            sys.argv = [target, *args]
            sys.path[0] = os.getcwd()
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:  # python TARGET ARGS: the script's directory first on the path
            sys.argv = [target, *args]
            sys.path[0] = os.path.dirname(os.path.abspath(target))
            runpy.run_path(target, run_name="__main__")
        status = 0
    except SystemExit as exc:
        code = exc.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
    except BaseException:  # as the interpreter would: the traceback on stderr, status 1
        traceback.print_exc()
        status = 1
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
    return status


def serve() -> None:
    preload()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops children itself
    out = sys.stdout

    def say(message: dict) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    # A child's exit wakes the loop: the signal's number is written to a pipe the loop
    # waits on with its input (written even when SIGCHLD comes between the reaping and
    # the wait: no exit goes unnoticed, and the loop never polls).
    wakeup = os.pipe()
    for fd in wakeup:
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    say({"ready": True})
    children: dict[int, int] = {}  # pid -> request id
    pending = b""
    open_input = True
    while open_input or children:
        readable, _, _ = select.select([0, wakeup[0]] if open_input else [wakeup[0]], [], [])
        if wakeup[0] in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wakeup[0], 4096)
        if 0 in readable:
            chunk = os.read(0, 65536)
            if not chunk:
                open_input = False
                for pid in children:  # the parent is gone: so are its runs
                    with contextlib.suppress(OSError):
                        os.killpg(pid, signal.SIGKILL)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    os._exit(run_request(request, wakeup))
                children[pid] = request["id"]
                say({"id": request["id"], "pid": pid})
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            say({"id": children.pop(pid), "status": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    serve()
