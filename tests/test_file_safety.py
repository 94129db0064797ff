"""The file layer on whole trees: atomic writes that keep modes, symlinks, BOM and line
endings; refusals before anything is written; the -o mirror complete and never re-entered."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from transpile import convert_paths
from transpile.io.files import RefusedError

TORCH = "import torch\nx = torch.cat([a], 0)\n"  # converts: ops.cat(..., axis=0)
PLAIN = "x = 1\n"  # no torch: unchanged


def convert(paths, **kwargs):
    return convert_paths([paths] if isinstance(paths, (str, Path)) else paths, jobs=1, cache=False, **kwargs)


def write(path: Path, text: str | bytes, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    if mode is not None:
        path.chmod(mode)
    return path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def snapshot(root: Path) -> dict[str, tuple[bytes, int] | str]:
    """Every entry under ``root``: files with content and mode, symlinks with their target."""
    out: dict[str, tuple[bytes, int] | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = (path.read_bytes(), mode(path))
    return out


def outcome(report, name: str):
    (found,) = [f for f in report.files if f.source.name == name]
    return found


# -- modes and atomic writes ---------------------------------------------------------


def test_outputs_keep_the_input_mode(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    write(tree / "script.py", "#!/usr/bin/env python\n" + TORCH, 0o755)
    write(tree / "lib.py", TORCH, 0o640)
    write(tree / "plain.py", PLAIN, 0o604)
    write(tree / "run.sh", "echo hi\n", 0o750)
    write(tree / "bad.py", "import torch\ndef f(:\n", 0o711)
    convert(tree, output=tmp_path / "out")
    out = tmp_path / "out"
    assert "ops.cat" in (out / "script.py").read_text()
    assert {p.name: mode(p) for p in out.iterdir() if p.name != ".transpile"} == {
        "script.py": 0o755, "lib.py": 0o640, "plain.py": 0o604, "run.sh": 0o750, "bad.py": 0o711}
    assert not [p for p in out.iterdir() if p.name.startswith(".") and p.name != ".transpile"]  # no temporary file left


def test_in_place_keeps_mode_and_writes_through_a_symlink(tmp_path: Path) -> None:
    target = write(tmp_path / "real" / "m.py", TORCH, 0o664)
    link = tmp_path / "tree" / "m.py"
    link.parent.mkdir()
    link.symlink_to(target)
    report = convert(link, in_place=True)
    assert outcome(report, "m.py").status == "converted"
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "ops.cat" in target.read_text() and mode(target) == 0o664
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.py"]


# -- in place: refusals before anything is written ------------------------------------


def test_in_place_refuses_a_read_only_file_unless_force(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write(tree / "a.py", TORCH)
    write(tree / "b.py", TORCH, 0o444)
    before = snapshot(tree)
    with pytest.raises(RefusedError) as refused:
        convert(tree, in_place=True)
    assert refused.value.problems == [f"{tree / 'b.py'} is read-only (--force overwrites it)"]
    assert snapshot(tree) == before  # a.py was not written either
    convert(tree, in_place=True, force=True)
    assert "ops.cat" in (tree / "b.py").read_text() and mode(tree / "b.py") == 0o444


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    write(root / "clean.py", TORCH)
    write(root / "edited.py", TORCH)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    write(root / "edited.py", TORCH + "y = torch.cat([x], 1)\n")  # uncommitted
    write(root / "new.py", TORCH)  # untracked: no copy anywhere
    return root


def test_in_place_refuses_uncommitted_changes(repo: Path) -> None:
    files = {p: p.read_bytes() for p in (repo / "clean.py", repo / "edited.py", repo / "new.py")}
    with pytest.raises(RefusedError) as refused:
        convert(repo, in_place=True)
    flagged = sorted(Path(p.split(" has ")[0]).name for p in refused.value.problems)
    assert flagged == ["edited.py", "new.py"]
    assert all("uncommitted changes" in p for p in refused.value.problems)
    assert {p: p.read_bytes() for p in files} == files  # clean.py was not written either
    # committed files alone are fine
    report = convert(repo / "clean.py", in_place=True)
    assert report.files[0].status == "converted" and "ops.cat" in (repo / "clean.py").read_text()


def test_force_or_backup_overwrite_uncommitted_changes(repo: Path) -> None:
    edited = (repo / "edited.py").read_text()
    convert(repo / "edited.py", in_place=True, backup=True)
    assert (repo / "edited.py.orig").read_text() == edited
    assert "ops.cat" in (repo / "edited.py").read_text()
    convert(repo / "new.py", in_place=True, force=True)
    assert "ops.cat" in (repo / "new.py").read_text() and not (repo / "new.py.orig").exists()


def test_an_existing_backup_is_never_replaced(tmp_path: Path) -> None:
    src = write(tmp_path / "m.py", TORCH)
    write(tmp_path / "m.py.orig", "an earlier original\n")
    with pytest.raises(RefusedError) as refused:
        convert(src, in_place=True, backup=True)
    assert "m.py.orig exists" in refused.value.problems[0]
    assert src.read_text() == TORCH and (tmp_path / "m.py.orig").read_text() == "an earlier original\n"


def test_force_and_backup_need_in_place(tmp_path: Path) -> None:
    src = write(tmp_path / "m.py", TORCH)
    with pytest.raises(ValueError):
        convert(src, output=tmp_path / "out", force=True)
    with pytest.raises(ValueError):
        convert(src, output=tmp_path / "out", in_place=True)
    assert not (tmp_path / "out").exists()


# -- where outputs go -------------------------------------------------------------------


def test_two_inputs_to_one_output_is_refused_before_writing(tmp_path: Path) -> None:
    write(tmp_path / "a" / "m.py", TORCH)
    write(tmp_path / "b" / "m.py", PLAIN)
    write(tmp_path / "c.py", TORCH)
    with pytest.raises(RefusedError) as refused:
        convert([tmp_path / "c.py", tmp_path / "a" / "m.py", tmp_path / "b" / "m.py"], output=tmp_path / "out")
    (problem,) = refused.value.problems
    assert str(tmp_path / "a" / "m.py") in problem and str(tmp_path / "b" / "m.py") in problem
    assert str(tmp_path / "out" / "m.py") in problem
    assert not (tmp_path / "out").exists()


def test_an_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    write(tree / "m.py", TORCH)
    with pytest.raises(RefusedError):
        convert(tree, output=tree)
    with pytest.raises(RefusedError):
        convert(tree / "m.py", output=tree / "m.py")
    assert (tree / "m.py").read_text() == TORCH


def test_one_notebook_to_a_notebook_file(tmp_path: Path) -> None:
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import torch\n", "y = torch.cat([x], 0)"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    src = write(tmp_path / "m.ipynb", json.dumps(nb))
    convert(src, output=tmp_path / "x.ipynb")
    assert (tmp_path / "x.ipynb").is_file()
    assert "ops.cat" in "".join(json.loads((tmp_path / "x.ipynb").read_text())["cells"][0]["source"])
    with pytest.raises(ValueError):  # a notebook is not written as x.py
        convert(src, output=tmp_path / "y.py")
    with pytest.raises(ValueError):  # nor a directory as one file
        convert(tmp_path, output=tmp_path / "z.py")
    assert not (tmp_path / "y.py").exists() and not (tmp_path / "z.py").exists()


def test_an_output_directory_inside_the_input_is_not_converted_again(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    write(tree / "m.py", TORCH)
    write(tree / "pkg" / "n.py", TORCH)
    first = convert(tree, output=tree / "out")
    second = convert(tree, output=tree / "out")
    assert [f.source.relative_to(tree).as_posix() for f in second.files] == ["m.py", "pkg/n.py"]
    assert [f.status for f in second.files] == [f.status for f in first.files] == ["converted", "converted"]
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if ".transpile" not in p.parts) == [
        "m.py", "out/m.py", "out/pkg/n.py", "pkg/n.py"]


def test_failed_files_are_copied_into_the_mirror_and_listed(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    syntax = write(tree / "syntax.py", "import torch\ndef f(:\n")
    latin = write(tree / "latin1.py", "import torch\nx = 'caf\xe9'\n".encode("latin-1"))
    write(tree / "good.py", TORCH)
    report = convert(tree, output=tmp_path / "out")
    assert [f.source.name for f in report.failed] == ["latin1.py", "syntax.py"]
    assert (tmp_path / "out" / "syntax.py").read_bytes() == syntax.read_bytes()
    assert (tmp_path / "out" / "latin1.py").read_bytes() == latin.read_bytes()
    assert outcome(report, "syntax.py").output == tmp_path / "out" / "syntax.py"
    assert "ops.cat" in (tmp_path / "out" / "good.py").read_text()


def test_a_file_that_cannot_be_written_fails_alone(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    write(tree / "a.py", TORCH)
    write(tree / "pkg" / "m.py", TORCH)
    write(tmp_path / "out" / "pkg", "a file where the directory should be\n")
    report = convert(tree, output=tmp_path / "out")
    assert [f.status for f in report.files] == ["converted", "failed"]
    (diag,) = report.files[1].result.diagnostics
    assert diag.message.startswith(f"cannot write {tmp_path / 'out' / 'pkg' / 'm.py'}")
    assert report.files[1].output is None and "ops.cat" in (tmp_path / "out" / "a.py").read_text()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [".transpile", "a.py", "pkg"]  # no temporary file
    assert sorted(p.name for p in (tmp_path / "out" / ".transpile" / "generated").iterdir()) == ["a.py"]
    with pytest.raises(ValueError, match="exists and is not a directory"):
        convert(tree, output=tmp_path / "out" / "pkg")


# -- symlinks -------------------------------------------------------------------------------


def test_symlinked_directories_are_followed_and_loops_reported(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    write(shared / "layer.py", TORCH)
    tree = tmp_path / "src"
    write(tree / "m.py", TORCH)
    (tree / "layers").symlink_to(shared, target_is_directory=True)
    (tree / "loop").symlink_to(tree, target_is_directory=True)
    (tree / "gone.py").symlink_to(tmp_path / "nowhere.py")
    report = convert(tree, output=tmp_path / "out")
    statuses = {f.source.relative_to(tree).as_posix(): f.status for f in report.files}
    assert statuses == {"gone.py": "skipped", "loop": "skipped", "m.py": "converted", "layers/layer.py": "converted"}
    assert "ops.cat" in (tmp_path / "out" / "layers" / "layer.py").read_text()
    messages = {Path(d.filename).name: d.message for d in report.diagnostics}
    assert messages["gone.py"].startswith("skipped: broken symlink") and "nowhere.py" in messages["gone.py"]
    assert messages["loop"].startswith("skipped: symlink loop")
    assert not report.has_errors


def test_in_place_converts_a_file_reached_twice_once(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    write(tree / "v2" / "m.py", TORCH)
    (tree / "latest").symlink_to(tree / "v2", target_is_directory=True)
    report = convert(tree, in_place=True)
    assert [f.source.relative_to(tree).as_posix() for f in report.files] == ["latest/m.py", "v2/m.py"]
    assert [f.status for f in report.files] == ["converted", "skipped"]
    assert "the same file as " + str(tree / "latest" / "m.py") in report.files[1].result.diagnostics[0].message
    assert (tree / "latest").is_symlink() and "ops.cat" in (tree / "v2" / "m.py").read_text()


# -- BOM and line endings ----------------------------------------------------------------------


@pytest.mark.parametrize("text", [TORCH, PLAIN])
def test_a_bom_is_kept(tmp_path: Path, text: str) -> None:
    src = write(tmp_path / "m.py", b"\xef\xbb\xbf" + text.encode())
    report = convert(src, output=tmp_path / "out")
    assert report.files[0].status == ("converted" if "torch" in text else "unchanged")
    data = (tmp_path / "out" / "m.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert ("ops.cat" in data.decode()) == ("torch" in text)
    convert(src, in_place=True)
    assert src.read_bytes() == data


def test_crlf_line_endings_are_kept(tmp_path: Path) -> None:
    src = write(tmp_path / "m.py", (TORCH + "class M(torch.nn.Module):\n    pass\n").replace("\n", "\r\n"))
    convert(src, in_place=True)
    data = src.read_bytes()
    assert b"ops.cat" in data and b"nn.Cell" in data
    assert data.count(b"\r\n") == data.count(b"\n") >= 4  # imports the conversion added too


# -- progress ------------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_is_told_once_per_file(tmp_path: Path, jobs: int) -> None:
    tree = tmp_path / "src"
    for name in ("a.py", "b.py", "c.txt", "d.py"):
        write(tree / name, TORCH if name in ("b.py", "d.py") else PLAIN)
    seen = []
    report = convert_paths([tree], output=tmp_path / "out", jobs=jobs, cache=False,
                           progress=lambda done, total, path: seen.append((done, total, path.name)))
    assert [(d, t) for d, t, _ in seen] == [(i, 4) for i in range(1, 5)]
    assert sorted(name for _, _, name in seen) == sorted(f.source.name for f in report.files)
