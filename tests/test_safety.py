"""A user's data on a bad day (issue 30): interrupted runs repaired by a rerun, hand edits
never overwritten without a record, typed settings, size limits before parsing, odd file
names and loops reported, signals that keep finished work (docs/safety.md)."""
from __future__ import annotations

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
