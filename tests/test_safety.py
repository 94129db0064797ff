"""A user's data on a bad day (issue 30): interrupted runs repaired by a rerun, hand edits
never overwritten without a record, typed settings, size limits before parsing, odd file
names and loops reported, signals that keep finished work (docs/safety.md)."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transpile import convert_paths
from transpile.io.cache import ResultCache, cache_key
from transpile.io.decisions import DecisionStore, DecisionsError, find_root

TORCH = "import torch\nx = torch.cat([a], 0)\n"  # converts
TRANSPILE = [sys.executable, "-m", "transpile"]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def cli(*args, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*TRANSPILE, *map(str, args)], cwd=cwd, capture_output=True, text=True, **kwargs)


# -- item 3: typed decisions and cache values; the decisions lookup stops at the project ----


def _decision(**fields) -> str:
    entry = {"file": '"m.py"', "line": "2", "pass": '"MS201"', "code": '"x"', "occurrence": "0", "apply": "false"}
    entry.update(fields)
    return "[[decision]]\n" + "".join(f"{k} = {v}\n" for k, v in entry.items())


@pytest.mark.parametrize("key, value", [("apply", '"false"'), ("apply", "0"), ("occurrence", '"0"'),
                                        ("occurrence", "true"), ("line", "1.5"), ("cell", '"2"'),
                                        ("file", "3"), ("pass", "201")])
def test_a_decision_of_the_wrong_type_is_an_error_naming_file_and_key(tmp_path, key, value) -> None:
    write(tmp_path / ".transpile" / "decisions.toml", _decision(**{key: value}))
    with pytest.raises(DecisionsError) as caught:
        DecisionStore.load(tmp_path)
    assert "decisions.toml" in str(caught.value) and f"`{key}`" in str(caught.value)


def test_a_cache_entry_with_untyped_values_is_a_miss_and_is_recomputed(tmp_path) -> None:
    src = write(tmp_path / "m.py", TORCH)
    cache_dir = tmp_path / "cache"
    first = convert_paths([src], write=False, jobs=1, cache_dir=cache_dir)
    assert first.files[0].status == "converted"
    (entry,) = cache_dir.rglob("*.json")
    for field, bad in (("changed", "false"), ("failed", "no"), ("changed", 0)):
        data = json.loads(entry.read_text())
        good = data[field]
        data[field] = bad
        entry.write_text(json.dumps(data))
        assert ResultCache(cache_dir).get(entry.stem) is None, (field, bad)
        again = convert_paths([src], write=False, jobs=1, cache_dir=cache_dir)
        assert again.files[0].status == "converted" and not again.files[0].result.failed
        data[field] = good


def test_the_decisions_lookup_stops_at_the_project_root(tmp_path, monkeypatch) -> None:
    shared = tmp_path / "shared"  # a parent directory of several projects: never honoured
    write(shared / ".transpile" / "decisions.toml", "not toml at all [")
    project = shared / "project"
    write(project / "pyproject.toml", "")
    src = write(project / "pkg" / "m.py", TORCH)
    monkeypatch.chdir(tmp_path)
    assert find_root([src]) is None
    report = convert_paths([src], write=False, jobs=1, cache=False)  # the broken file above is not read
    assert report.files[0].status == "converted"
    write(project / ".transpile" / "decisions.toml", "")
    assert find_root([src]) == project.resolve()
    # without a marker: up to the current directory when the input is below it, else its own directory
    loose = tmp_path / "loose"
    write(loose / ".transpile" / "decisions.toml", "")
    inner = write(loose / "a" / "b.py", TORCH)
    monkeypatch.chdir(loose)
    assert find_root([inner]) == loose.resolve()
    monkeypatch.chdir(loose / "a")
    assert find_root([inner]) is None


# -- item 5: size limits before parsing; explain reads as convert does ---------------------


def test_a_file_over_the_size_limit_is_refused_before_it_is_read_or_parsed(tmp_path, monkeypatch) -> None:
    from transpile.engine import package_index
    from transpile.io import files

    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1000)
    big = "import torch\n" + "".join(f"y{i} = torch.relu(x)\n" for i in range(200))  # over 1000 bytes
    write(tmp_path / "tree" / "big.py", big)
    write(tmp_path / "tree" / "small.py", TORCH)
    parsed: list[str] = []
    real_parse = package_index.ast.parse
    monkeypatch.setattr(package_index.ast, "parse", lambda text, *a, **k: parsed.append(text) or real_parse(text, *a, **k))
    real_read = files.Path.read_bytes
    monkeypatch.setattr(files.Path, "read_bytes", lambda p: pytest.fail(f"{p} read whole")
                        if p.name == "big.py" and ".transpile" not in p.parts else real_read(p))
    report = convert_paths([tmp_path / "tree"], output=tmp_path / "out", jobs=1, cache=False)
    monkeypatch.setattr(files.Path, "read_bytes", real_read)
    by_name = {f.source.name: f for f in report.files}
    assert by_name["small.py"].status == "converted"
    assert by_name["big.py"].status == "failed"
    (error,) = by_name["big.py"].result.errors
    assert f"{len(big):,} bytes" in error.message and "1,000" in error.message
    assert (tmp_path / "out" / "big.py").read_text() == big  # a failure in a mirror is copied as it is
    assert TORCH in parsed and big not in parsed  # the tree's index (and the converter) never parsed it
    # read in bounded pieces: a file that grows past the limit after its size was taken is refused too
    grow = write(tmp_path / "grow.py", TORCH)
    text, _bom, problem = files.read_source(grow, explicit=True)
    assert text == TORCH and problem is None
    grow.write_text(big)
    monkeypatch.setattr(files, "_size", lambda info: 10)  # what stat said before the file grew
    text, _bom, problem = files.read_source(grow, explicit=True)
    assert text is None and "too large" in problem.message


def _limited(*args, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI with 2 GB of address space and 60 s: today's unbounded read or hang fails quickly."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    try:
        return cli(*args, cwd=cwd, timeout=60, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args} hangs")


@pytest.mark.slow  # the CLI in subprocesses
def test_explain_refuses_what_is_not_a_regular_file_or_too_large(tmp_path, monkeypatch, capsys) -> None:
    os.symlink("/dev/zero", tmp_path / "zero.py")
    os.mkfifo(tmp_path / "fifo.py")
    for name, kind in (("zero.py", "a character device"), ("fifo.py", "a FIFO")):
        proc = _limited("explain", name, cwd=tmp_path)
        assert proc.returncode == 1, (name, proc.stderr[-500:])
        assert f"{name}:" in proc.stderr and f"not a regular file ({kind})" in proc.stderr
    from transpile.cli.main import main
    from transpile.io import files

    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    write(tmp_path / "big.py", "import torch\n" + "x = torch.relu(x)\n" * 10)
    assert main(["explain", str(tmp_path / "big.py")]) == 1
    assert "too large" in capsys.readouterr().err


# -- item 6: a file name that is not UTF-8, a symlink loop ------------------------------


@pytest.mark.slow  # the CLI in subprocesses
def test_a_file_name_not_utf8_is_named_and_the_run_goes_on(tmp_path) -> None:
    write(tmp_path / "src" / "good.py", TORCH)
    write(Path(os.fsdecode(bytes(tmp_path / "src") + b"/bad\xff.py")), TORCH)
    named = "bad\\udcff.py"  # as Python's repr shows the name: the byte that is not UTF-8 escaped
    check = cli("convert", "src", "--check", "--format", "json", cwd=tmp_path)  # the cache stores its result
    assert check.returncode == 1, check.stderr
    assert sorted(f["status"] for f in json.loads(check.stdout)["files"]) == ["converted", "converted"]
    assert named in check.stdout
    diff = cli("convert", "src", "--diff", cwd=tmp_path)
    assert diff.returncode == 0 and named in diff.stdout and "good.py" in diff.stdout, diff.stderr
    report = cli("convert", "src", "-o", "out", "--report", "r.html", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert named in (tmp_path / "r.html").read_text() and os.path.exists(bytes(tmp_path / "out") + b"/bad\xff.py")


@pytest.mark.slow  # the CLI in subprocesses
def test_a_symlink_loop_is_reported_as_such(tmp_path) -> None:
    write(tmp_path / "tree" / "good.py", TORCH)
    os.symlink("b", tmp_path / "tree" / "a.py")
    os.symlink("a.py", tmp_path / "tree" / "b")
    os.symlink("d2", tmp_path / "tree" / "d1")
    os.symlink("d1", tmp_path / "tree" / "d2")
    proc = cli("convert", "tree", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("a.py", "b", "d1", "d2"):
        assert f"tree/{name}:1:1: MS001 warning: skipped: symlink loop" in proc.stderr, name
    assert (tmp_path / "out" / "good.py").is_file()
    alone = cli("convert", "tree/a.py", "-o", "x.py", cwd=tmp_path)
    assert alone.returncode == 1 and "tree/a.py:1:1: MS000 error: symlink loop" in alone.stderr, alone.stderr


# -- item 2: hand edits and unrelated files in -o are never overwritten without a record ----


@pytest.mark.slow  # the CLI in subprocesses
def test_outputs_without_a_record_are_kept_and_the_new_output_written_beside(tmp_path) -> None:
    from transpile.io.files import CONFLICT_SUFFIX

    src, out = tmp_path / "src", tmp_path / "out"
    write(src / "m.py", TORCH)
    write(src / "notes.txt", "notes\n")
    write(src / "same.py", TORCH)
    first = convert_paths([src], output=out, jobs=1, cache=False)
    converted = (out / "m.py").read_bytes()
    assert not first.conflicts
    write(out / "m.py", converted + b"# checked by hand\n")  # a hand edit, then the record is lost
    write(out / "notes.txt", "an unrelated file of the same name\n")
    write(out / "keep.txt", "not ours\n")  # no input of that name: never touched
    import shutil

    shutil.rmtree(out / ".transpile")
    proc = cli("convert", "src", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert (out / "m.py").read_bytes() == converted + b"# checked by hand\n"
    assert (out / ("m.py" + CONFLICT_SUFFIX)).read_bytes() == converted
    assert (out / "notes.txt").read_text() == "an unrelated file of the same name\n"
    assert (out / ("notes.txt" + CONFLICT_SUFFIX)).read_text() == "notes\n"
    assert (out / "keep.txt").read_text() == "not ours\n"
    assert not (out / ("same.py" + CONFLICT_SUFFIX)).exists()  # what we would write: nothing to say
    for name in ("m.py", "notes.txt"):
        assert f"out/{name} exists and no record says transpile wrote it" in proc.stderr, proc.stderr
    assert "2 files already in the output kept" in proc.stderr.splitlines()[-1]
    # the record is written now: once the person resolves (deletes the .new files), runs go on as usual
    (out / ("m.py" + CONFLICT_SUFFIX)).unlink()
    (out / ("notes.txt" + CONFLICT_SUFFIX)).unlink()
    write(src / "notes.txt", "notes, changed\n")
    again = convert_paths([src], output=out, jobs=1, cache=False)
    # the person's version stands where the source did not change; where both changed, beside again
    assert (out / "m.py").read_bytes() == converted + b"# checked by hand\n"
    assert [f.source.name for f in again.conflicts] == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "an unrelated file of the same name\n"
    assert (out / ("notes.txt" + CONFLICT_SUFFIX)).read_text() == "notes, changed\n"
    # a copied file the person did not touch follows its source
    write(src / "other.txt", "one\n")
    convert_paths([src], output=out, jobs=1, cache=False)
    write(src / "other.txt", "two\n")
    later = convert_paths([src], output=out, jobs=1, cache=False)
    assert (out / "other.txt").read_text() == "two\n" and not [f for f in later.conflicts if f.source.name == "other.txt"]


# -- item 1: a rerun repairs an interrupted --in-place run; star imports of torch ---------

LAYERS = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Block(nn.Module):\n" \
         "    def forward(self, x):\n        return F.relu(x)\n"
MODEL = "from .layers import *\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
        "        self.fc = nn.Linear(2, 3)\n\n    def forward(self, x):\n        return F.relu(self.fc(x))\n"


def _package(root: Path) -> Path:
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "layers.py", LAYERS)
    write(root / "pkg" / "model.py", MODEL)
    return root / "pkg"


@pytest.mark.parametrize("backup, cut", [(False, "interrupt"), (True, "interrupt"), (False, "disk full")])
def test_a_rerun_repairs_an_interrupted_in_place_run(tmp_path, monkeypatch, backup, cut) -> None:
    from transpile.io import files

    whole = _package(tmp_path / "whole")
    convert_paths([whole], in_place=True, jobs=1, cache=False)
    expected = {p.name: p.read_bytes() for p in whole.glob("*.py")}
    assert expected["model.py"] != MODEL.encode()
    pkg = _package(tmp_path / "cut")
    real, written = files._overwrite, []

    def cut_short(src, data, keep):  # the run is interrupted, or the disk is full, after its first write
        if written:
            raise KeyboardInterrupt if cut == "interrupt" else OSError(errno.ENOSPC, "No space left on device")
        written.append(src)
        real(src, data, keep)

    monkeypatch.setattr(files, "_overwrite", cut_short)
    if cut == "interrupt":
        with pytest.raises(KeyboardInterrupt):
            convert_paths([pkg], in_place=True, backup=backup, jobs=1, cache=False)
    else:
        full = convert_paths([pkg], in_place=True, backup=backup, jobs=1, cache=False)
        assert [f.source.name for f in full.failed] == ["model.py"]
    monkeypatch.setattr(files, "_overwrite", real)
    assert [p.name for p in written] == ["layers.py"] and (pkg / "model.py").read_text() == MODEL
    report = convert_paths([pkg], in_place=True, backup=backup, jobs=1, cache=False)
    assert {f.source.name: f.status for f in report.files if f.source.suffix == ".py"} == \
        {"__init__.py": "unchanged", "layers.py": "converted", "model.py": "converted"}
    assert {p.name: p.read_bytes() for p in pkg.glob("*.py")} == expected
    if backup:
        assert (pkg / "layers.py.orig").read_text() == LAYERS and (pkg / "model.py.orig").read_text() == MODEL
    assert not (pkg / ".transpile").exists()  # a finished run leaves no record
    again = convert_paths([pkg], in_place=True, jobs=1, cache=False)  # converted: stays as it is
    assert {f.status for f in again.files if f.source.suffix == ".py"} == {"unchanged"}


def test_star_imports_of_torch_are_named_as_unresolved() -> None:
    from transpile import convert_code

    result = convert_code("from torch import *\nfrom torch.nn import *\nx = zeros(3)\nlayer = Linear(2, 3)\n")
    warned = [(d.line, d.severity.value) for d in result.diagnostics if "cannot be resolved" in d.message]
    assert warned == [(1, "warning"), (2, "warning")]
    assert "`from torch.nn import *`" in result.diagnostics[1].message


# -- item 7: signals keep finished work; parity's child is stopped and limited --------------

_INTERRUPT_AT_SECOND_WRITE = """
import os, signal, sys
from transpile.io import atomic
real, calls = atomic.os.replace, []
def replace(tmp, dest):
    calls.append(dest)
    if len(calls) == 3:  # a.py and its record are written, b.py's temporary file too: the signal comes now
        os.kill(os.getpid(), signal.{sig})
    real(tmp, dest)
atomic.os.replace = replace
from transpile.cli.main import main
sys.exit(main(["convert", "src", "-o", "out", "--no-cache", "-j", "1"]))
"""


@pytest.mark.slow  # the CLI in a subprocess
@pytest.mark.parametrize("sig, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_an_interrupted_conversion_keeps_finished_files_and_says_so(tmp_path, sig, status) -> None:
    for name in ("a.py", "b.py", "c.py"):
        write(tmp_path / "src" / name, TORCH)
    proc = subprocess.run([sys.executable, "-c", _INTERRUPT_AT_SECOND_WRITE.format(sig=sig)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == status, proc.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [".transpile", "a.py"]  # b.py's temporary file is removed
    assert not [p for p in out.rglob(".*") if p.is_file()]
    said = proc.stderr.strip().splitlines()[-1]
    assert said.startswith(f"transpile convert: interrupted ({sig}): 1 file written (out/a.py), 2 not reached"), said


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                status = Path(f"/proc/{entry}/status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status:
                found.append(int(entry))
    return found


def _address_limit(pid: int) -> str | None:
    try:
        line = next(ln for ln in Path(f"/proc/{pid}/limits").read_text().splitlines() if ln.startswith("Max address space"))
    except (OSError, StopIteration):
        return None
    return line.split()[3]  # the soft limit, in bytes


def _descendants_of(pid: int) -> list[int]:
    """Children, then their children (a parity run's child is forked from the warm server)."""
    found, frontier = [], [pid]
    while frontier:
        kids = [kid for parent in frontier for kid in _children_of(parent)]
        found += kids
        frontier = kids
    return found


def _gone(pid: int) -> bool:
    """Not running: no such process, or a zombie its parent has yet to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.framework
@pytest.mark.parametrize("fork", ["1", "0"])
def test_sigterm_to_parity_kills_its_child_which_has_a_memory_limit(tmp_path, fork) -> None:
    """Forked from the warm server or started afresh ($TRANSPILE_PARITY_FORK=0), the run's
    child has the memory limit, and SIGTERM to parity leaves no process of it behind."""
    import signal
    import time

    write(tmp_path / "model.py", "import time\nimport torch\n\n\nclass M(torch.nn.Module):\n"
          "    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(2, 2)\n"
          "        time.sleep(300)\n\n    def forward(self, x):\n        return self.fc(x)\n")
    parent = subprocess.Popen([*TRANSPILE, "parity", "model.py", "--model", "M()", "--input", "float32[1,2]",
                               "--mode", "pynative", "--memory-limit", "6"], cwd=tmp_path,
                              env=dict(os.environ, TRANSPILE_PARITY_FORK=fork),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline, limited, processes = time.monotonic() + 120, [], []
        while time.monotonic() < deadline and not limited:
            processes = _descendants_of(parent.pid)
            limited = [pid for pid in processes if _address_limit(pid) == str(6 * 2**30)]
            time.sleep(0.2)
        assert len(limited) == 1, processes
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) == 143
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(_gone(pid) for pid in processes):
            time.sleep(0.1)
        assert all(_gone(pid) for pid in processes), processes  # killed, the server too: none left running
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
