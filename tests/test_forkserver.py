"""Children forked from the warm server are the processes a fresh start would give
(transpile/parity/forkserver.py): the same working directory, environment, arguments,
import path, exit status and error output, each run in a session of its own; a
child that hangs is killed; the server serves every run of a process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from transpile.parity import forkserver
from transpile.parity.runner import kill_group

# what a child reports of itself: compared between a forked child and a fresh process
REPORT = """\
import json, os, sys
import neighbour
json.dump({"cwd": os.getcwd(), "argv": sys.argv[1:], "path0": sys.path[0], "name": __name__,
           "variable": os.environ.get("FORK_TEST_VARIABLE"), "session": os.getsid(0) == os.getpid(),
           "neighbour": neighbour.VALUE, "stdin": sys.stdin.read()}, sys.stdout)
sys.stderr.write("to stderr\\n")
sys.exit(int(sys.argv[1]))
"""


@pytest.fixture()
def script(tmp_path) -> Path:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "neighbour.py").write_text("VALUE = 7\n")
    path = tmp_path / "scripts" / "report.py"
    path.write_text(REPORT)
    return path


def _run(script: Path, tmp: Path, label: str, fork: str, *args: str) -> tuple[int, dict, str]:
    work = tmp / label
    work.mkdir()
    env = dict(os.environ, FORK_TEST_VARIABLE=label, TRANSPILE_PARITY_FORK=fork)
    proc = forkserver.start_child("script", str(script), list(args), python=None, cwd=str(work),
                                  stdout=tmp / f"{label}.out", stderr=tmp / f"{label}.err", env=env)
    code = proc.wait(timeout=120)
    out = (tmp / f"{label}.out").read_text()
    return code, (json.loads(out) if out else {}), (tmp / f"{label}.err").read_text()


@pytest.mark.slow
@pytest.mark.framework  # the server imports torch and MindSpore
def test_a_forked_script_is_the_process_a_fresh_start_gives(script, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_PARITY_FORK", "1")
    forked = _run(script, tmp_path, "forked", "1", "3", "x y")
    fresh = _run(script, tmp_path, "fresh", "0", "3", "x y")
    assert forked[0] == fresh[0] == 3
    assert forked[2] == fresh[2] == "to stderr\n"
    for report, label in ((forked[1], "forked"), (fresh[1], "fresh")):
        assert report == {"cwd": str(tmp_path / label), "argv": ["3", "x y"], "path0": str(script.parent),
                          "name": "__main__", "variable": label, "session": True, "neighbour": 7, "stdin": ""}


@pytest.mark.slow
@pytest.mark.framework  # the server imports torch and MindSpore
def test_a_forked_module_raising_prints_its_traceback_and_exits_1(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_PARITY_FORK", "1")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "failing.py").write_text("raise ValueError('no luck')\n")
    proc = forkserver.start_child("module", "failing", [], python=None, cwd=str(tmp_path / "work"),
                                  stdout=tmp_path / "out", stderr=tmp_path / "err", env=dict(os.environ))
    assert isinstance(proc, forkserver.ForkedChild)
    assert proc.wait(timeout=120) == 1
    err = (tmp_path / "err").read_text()
    assert err.startswith("Traceback (most recent call last):") and err.rstrip().endswith("ValueError: no luck")
    assert 'work/failing.py", line 1' in err


@pytest.mark.slow
@pytest.mark.framework  # the server imports torch and MindSpore
def test_a_hanging_child_is_killed_with_its_group_and_the_server_serves_on(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_PARITY_FORK", "1")
    (tmp_path / "sleepy.py").write_text("import subprocess, sys, time\n"
                                        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
                                        "time.sleep(300)\n")
    how = dict(python=None, cwd=str(tmp_path), stdout=tmp_path / "out", stderr=tmp_path / "err", env=dict(os.environ))
    proc = forkserver.start_child("script", str(tmp_path / "sleepy.py"), [], **how)
    server = forkserver.SERVER.proc.pid
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)
    time.sleep(0.5)  # the grandchild has started
    kill_group(proc)
    assert proc.returncode == -9 and proc.poll() == -9
    gone = time.monotonic() + 10
    while time.monotonic() < gone and _group_alive(proc.pid):
        time.sleep(0.1)
    assert not _group_alive(proc.pid)  # the script's own child went with it
    (tmp_path / "quick.py").write_text("print('again')\n")
    again = forkserver.start_child("script", str(tmp_path / "quick.py"), [], **how)
    assert again.wait(timeout=120) == 0 and (tmp_path / "out").read_text() == "again\n"
    assert forkserver.SERVER.proc.pid == server and again.pid != proc.pid


def _group_alive(group: int) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                return True
    return False


def test_another_python_or_the_variable_starts_a_fresh_process(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_PARITY_FORK", "0")
    assert forkserver.forked_child("script", "x.py", [], python=None) is None
    monkeypatch.setenv("TRANSPILE_PARITY_FORK", "1")
    assert forkserver.forked_child("script", "x.py", [], python="/somewhere/else/python") is None
    monkeypatch.setenv("TRANSPILE_PARITY_FORK", "0")
    (tmp_path / "quick.py").write_text("print('fresh')\n")
    proc = forkserver.start_child("script", str(tmp_path / "quick.py"), [], python=None, cwd=str(tmp_path),
                                  stdout=tmp_path / "out", stderr=tmp_path / "err", env=dict(os.environ))
    assert isinstance(proc, subprocess.Popen) and proc.wait(timeout=120) == 0
    assert (tmp_path / "out").read_text() == "fresh\n"
