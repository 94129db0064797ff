"""Parallel runs (--jobs) and the cache of results: same outputs, less work."""
from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from transpile import api
from transpile.cli.main import main
from transpile.io import files as files_module
from transpile.io.cache import ResultCache, cache_key

ROOT = Path(__file__).resolve().parent.parent
FORK = multiprocessing.get_start_method() == "fork"  # workers see the test's monkeypatches


# A model of each kind the samples hold (a layer stack, a residual network, a training script)
SAMPLES = ("lenet.py", "resnet.py", "train_mnist_cnn.py")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """Torch files of several kinds (a fixture of each rewrite, some samples), a file that
    does not parse, one that is not UTF-8. The tests only read it: it is made once."""
    root = tmp_path_factory.mktemp("parallel") / "tree"
    for folder in sorted(p for p in (ROOT / "tests" / "fixtures").iterdir() if p.is_dir()):
        src = next((f for f in sorted(folder.glob("*.py")) if not f.name.endswith(".expected.py")), None)
        if src is not None:
            dest = root / folder.name / src.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    (root / "samples").mkdir()
    for name in SAMPLES:
        shutil.copyfile(ROOT / "samples" / name, root / "samples" / name)
    (root / "broken.py").write_text("import torch\ndef f(:\n    pass\n")
    (root / "latin1.py").write_bytes("import torch\nx = 'caf\xe9'\n".encode("latin-1"))
    return root


@pytest.fixture(scope="module")
def serial(tree: Path) -> files_module.PathReport:
    """The tree converted here, one file after the other (what every parallel run must equal)."""
    return files_module.convert_paths([tree], write=False, jobs=1, cache=False)


def cli(*args, cache_dir: Path):
    """``transpile convert ARGS`` in a process of its own (for what is about processes)."""
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-m", "transpile", "convert", *map(str, args)],
                          capture_output=True, text=True, env=env)


def cli_here(capsys, monkeypatch, *args, cache_dir: Path) -> subprocess.CompletedProcess:
    """``transpile convert ARGS`` in this process: its exit status and what it printed."""
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(cache_dir))
    capsys.readouterr()
    status = main(["convert", *map(str, args)])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, status, out, err)


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.rglob("*.json")) if cache_dir.exists() else []


def outcomes(report: files_module.PathReport) -> list:
    return [(f.source, f.output, f.status, f.internal_error, f.result) for f in report.files]


def test_jobs_2_is_jobs_1_byte_for_byte(tree: Path, tmp_path: Path) -> None:
    one = cli(tree, "-o", tmp_path / "out1", "--jobs", "1", "--no-cache", cache_dir=tmp_path / "cache")
    two = cli(tree, "-o", tmp_path / "out2", "--jobs", "2", "--no-cache", cache_dir=tmp_path / "cache")
    assert one.returncode == two.returncode == 1  # broken.py and latin1.py are errors
    assert "Traceback" not in one.stderr + two.stderr
    assert two.stderr == one.stderr  # every diagnostic, in the same order, and the summary
    # where the parser places the error is the pipeline's business; that it is located is checked here
    assert re.search(r"broken\.py:[1-9]\d*:[1-9]\d*: MS000 error: syntax error", one.stderr), one.stderr
    assert "not UTF-8" in one.stderr
    assert files(tmp_path / "out2") == files(tmp_path / "out1")
    outputs = {name for name in files(tmp_path / "out1") if not name.startswith(".transpile/")}
    assert outputs == set(files(tree))  # every input has its output (a failed file is copied)
    assert entries(tmp_path / "cache") == []  # --no-cache writes nothing


def test_library_jobs_uses_a_pool_and_keeps_the_order(tree: Path, serial, monkeypatch) -> None:
    pools = []

    class CountingPool(files_module.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            pools.append(kwargs.get("max_workers"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(files_module, "ProcessPoolExecutor", CountingPool)
    files_module.convert_paths([tree / "samples"], write=False, jobs=1, cache=False)  # several files, one job
    assert pools == []
    parallel = files_module.convert_paths([tree], write=False, jobs=2, cache=False)
    assert pools == [2]
    assert outcomes(parallel) == outcomes(serial)
    assert [d.format() for d in parallel.diagnostics] == [d.format() for d in serial.diagnostics]
    # one file to convert: no pool
    files_module.convert_paths([tree / "samples" / "lenet.py"], write=False, jobs=2, cache=False)
    assert pools == [2]


def test_results_pickle() -> None:
    result = api.convert_code((ROOT / "samples" / "resnet.py").read_text(), filename="resnet.py")
    assert result.diagnostics and result.stats.converted
    assert pickle.loads(pickle.dumps(result)) == result


@pytest.mark.skipif(not FORK, reason="the workers must inherit the monkeypatch")
def test_an_exception_in_a_worker_stays_with_its_file(tree: Path, serial, monkeypatch) -> None:
    real = api.convert_code

    def convert(text, *, filename=None, debug=False, **kwargs):
        if filename.endswith("lenet.py"):
            raise RuntimeError("boom")
        return real(text, filename=filename, debug=debug, **kwargs)

    monkeypatch.setattr(api, "convert_code", convert)
    report = files_module.convert_paths([tree], write=False, jobs=2, cache=False)
    bad = [f for f in report.files if f.internal_error]
    assert [f.source.name for f in bad] == ["lenet.py"]
    assert bad[0].result.failed and bad[0].result.diagnostics[0].code == "MS999"
    assert "RuntimeError: boom" in bad[0].result.diagnostics[0].message
    assert report.count("converted") == serial.count("converted") - 1  # every other file converted


@pytest.mark.skipif(not FORK, reason="the workers must inherit the monkeypatch")
def test_a_worker_that_dies_takes_down_only_its_file(tree: Path, serial, monkeypatch) -> None:
    real = api.convert_code

    def convert(text, *, filename=None, debug=False, **kwargs):
        if filename.endswith("lenet.py"):
            os._exit(3)  # as a segfault would
        return real(text, filename=filename, debug=debug, **kwargs)

    monkeypatch.setattr(api, "convert_code", convert)
    report = files_module.convert_paths([tree], write=False, jobs=2, cache=False)
    bad = [f for f in report.files if f.internal_error]
    assert [f.source.name for f in bad] == ["lenet.py"]
    assert "worker process died" in bad[0].result.diagnostics[0].message
    good = [o for o in outcomes(report) if o[0].name != "lenet.py"]
    assert good == [o for o in outcomes(serial) if o[0].name != "lenet.py"]


def test_cached_rerun_is_the_same_and_converts_nothing(tree: Path, tmp_path: Path, monkeypatch) -> None:
    cache_dir = tmp_path / "cache"
    first = files_module.convert_paths([tree], output=tmp_path / "out1", jobs=1, cache_dir=cache_dir)
    converted = [f for f in first.files if f.result and f.source.name != "latin1.py"]  # not read: nothing to cache
    assert len(entries(cache_dir)) == len(converted) == len(files(tree)) - 1
    assert not [p for p in cache_dir.rglob("*") if p.is_file() and p.suffix != ".json"]  # no temp files left

    def no_conversion():
        raise AssertionError("the cached re-run converted a file")

    monkeypatch.setattr(api, "shared_pipeline", no_conversion)
    again = files_module.convert_paths([tree], output=tmp_path / "out2", jobs=1, cache_dir=cache_dir)
    assert not any(f.internal_error for f in again.files)
    assert [o[2:] for o in outcomes(again)] == [o[2:] for o in outcomes(first)]
    assert files(tmp_path / "out2") == files(tmp_path / "out1")
    assert any(f.source.name == "broken.py" and f.result.failed for f in again.files)  # cached too


def test_cached_cli_rerun_prints_the_same(tree: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    cache_dir = tmp_path / "cache"
    first = cli_here(capsys, monkeypatch, tree, "-o", tmp_path / "out1", cache_dir=cache_dir)
    assert entries(cache_dir) and first.stderr
    monkeypatch.setattr(api, "shared_pipeline", lambda: pytest.fail("the cached re-run converted a file"))
    again = cli_here(capsys, monkeypatch, tree, "-o", tmp_path / "out2", cache_dir=cache_dir)
    assert (again.returncode, again.stderr) == (first.returncode, first.stderr)
    assert files(tmp_path / "out2") == files(tmp_path / "out1")


def _tamper(cache_dir: Path, text: str | None = None) -> None:
    for entry in entries(cache_dir):
        if text is None:
            data = json.loads(entry.read_text())
            data["code"] = "# from the cache\n"
            entry.write_text(json.dumps(data))
        else:
            entry.write_text(text)


def test_no_cache_recomputes(tree: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    cache_dir = tmp_path / "cache"
    model = tree / "samples" / "lenet.py"

    def cli(*args, cache_dir: Path):
        return cli_here(capsys, monkeypatch, *args, cache_dir=cache_dir)

    assert cli(model, "-o", tmp_path / "a.py", cache_dir=cache_dir).returncode == 0
    _tamper(cache_dir)  # valid entries that say something else: shows which runs read them
    assert cli(model, "-o", tmp_path / "b.py", cache_dir=cache_dir).returncode == 0
    assert (tmp_path / "b.py").read_text() == "# from the cache\n"
    assert cli(model, "-o", tmp_path / "c.py", "--no-cache", cache_dir=cache_dir).returncode == 0
    assert (tmp_path / "c.py").read_text() == (tmp_path / "a.py").read_text()
    assert cli(model, "-o", tmp_path / "d.py", "--debug", cache_dir=cache_dir).returncode == 0
    assert (tmp_path / "d.py").read_text() == (tmp_path / "a.py").read_text()  # debug never reads it


@pytest.mark.parametrize("garbage", ["", "{not json", '{"format": 1}', '["a list"]',
                                     '{"format": 1, "code": 3, "diagnostics": [], "changed": true, '
                                     '"filename": "x", "stats": {"converted": 0, "unconverted": 0}, "failed": false}'])
def test_a_corrupt_entry_is_a_miss(tree: Path, tmp_path: Path, garbage: str) -> None:
    cache_dir = tmp_path / "cache"
    first = files_module.convert_paths([tree / "samples"], write=False, jobs=1, cache_dir=cache_dir)
    _tamper(cache_dir, garbage)
    again = files_module.convert_paths([tree / "samples"], write=False, jobs=1, cache_dir=cache_dir)
    assert outcomes(again) == outcomes(first)
    # and the entry is written anew
    assert all(json.loads(e.read_text())["code"] for e in entries(cache_dir))


def test_an_unreadable_or_unwritable_cache_is_no_error(tree: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    report = files_module.convert_paths([tree / "samples"], write=False, jobs=1, cache_dir=blocker / "cache")
    samples = len(list((tree / "samples").glob("*.py")))
    assert report.count("converted") == samples and not report.has_errors


def test_changing_the_input_or_its_name_invalidates(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    src = tmp_path / "m.py"
    src.write_text("import torch\nx = torch.cat([a], 0)\ny = torch.no_such(x)\n")
    first = files_module.convert_paths([src], write=False, cache_dir=cache_dir).files[0].result
    assert "axis=0" in first.code
    src.write_text("import torch\nx = torch.cat([a], 1)\ny = torch.no_such(x)\n")
    second = files_module.convert_paths([src], write=False, cache_dir=cache_dir).files[0].result
    assert "axis=1" in second.code
    other = tmp_path / "n.py"
    shutil.copyfile(src, other)
    third = files_module.convert_paths([other], write=False, cache_dir=cache_dir).files[0].result
    assert third.code == second.code
    assert {d.filename for d in third.diagnostics} == {str(other)}
    assert len(entries(cache_dir)) == 3


def test_the_key_covers_the_tool(monkeypatch) -> None:
    from transpile.io import cache

    key = cache_key("import torch\n", "m.py")
    assert cache_key("import torch\n", "m.py") == key
    assert cache_key("import torch\n", "n.py") != key
    monkeypatch.setattr("transpile.version.__version__", "99.0")
    assert cache_key("import torch\n", "m.py") != key
    monkeypatch.undo()
    monkeypatch.setattr(cache, "tool_fingerprint", lambda: "another build of the tool")
    assert cache_key("import torch\n", "m.py") != key


def test_entries_round_trip_as_json(tmp_path: Path) -> None:
    result = api.convert_code((ROOT / "samples" / "resnet.py").read_text(), filename="resnet.py")
    store = ResultCache(tmp_path)
    store.put("ab" * 32, result)
    (entry,) = entries(tmp_path)
    json.loads(entry.read_text())  # JSON, not pickle
    assert store.get("ab" * 32) == result
    assert store.get("cd" * 32) is None


def test_cache_dir_defaults(monkeypatch, tmp_path: Path) -> None:
    from transpile.io.cache import default_cache_dir

    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("TRANSPILE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "transpile"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "transpile"


def test_jobs_must_be_positive(tmp_path: Path, capsys, monkeypatch) -> None:
    proc = cli_here(capsys, monkeypatch, ROOT / "samples" / "lenet.py", "--check", "--jobs", "0", cache_dir=tmp_path)
    assert proc.returncode == 2 and "--jobs" in proc.stderr
    with pytest.raises(ValueError):
        files_module.convert_paths([ROOT / "samples"], write=False, jobs=0)
