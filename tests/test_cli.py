"""The command line, run as a user would: exit codes, outputs, bad input."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SEED = Path(__file__).parent / "data" / "seeds" / "000_mycell_pt.py"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "transpile", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_diff_on_the_seed_cell() -> None:
    proc = run("convert", "--diff", SEED)
    assert proc.returncode == 0, proc.stderr
    diff = proc.stdout
    assert "-class MyCell_pt(torch_nn.Module):" in diff and "+class MyCell_pt(torch_nn.Cell):" in diff
    assert "-    def forward(self, x):" in diff and "+    def construct(self, x):" in diff
    assert 'pad_mode="pad"' in diff and "has_bias=False" in diff


def test_diff_and_check_write_nothing(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(SEED.read_text())
    assert run("convert", "--check", src).returncode == 1
    assert run("convert", "--diff", src).returncode == 0
    assert src.read_text() == SEED.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_check_passes_on_converted_code(tmp_path: Path) -> None:
    out = tmp_path / "out.py"
    assert run("convert", SEED, "-o", out).returncode == 0
    assert run("convert", "--check", out).returncode == 0


def test_tree_is_mirrored_and_other_files_copied(tmp_path: Path) -> None:
    tree = tmp_path / "pkg"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "model.py").write_text(SEED.read_text())
    (tree / "__init__.py").write_text("")
    (tree / "config.yaml").write_text("a: 1\n")
    proc = run("convert", tree, "-o", tmp_path / "out", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["summary"]["converted"] == 1 and report["summary"]["copied"] == 1
    assert "nn.Cell" in (tmp_path / "out" / "sub" / "model.py").read_text()
    assert (tmp_path / "out" / "config.yaml").read_text() == "a: 1\n"
    assert (tmp_path / "out" / "__init__.py").exists()


def test_in_place(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(SEED.read_text())
    assert run("convert", "--in-place", src).returncode == 0
    assert "construct" in src.read_text()


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, content, expect",
    [
        ("syntax.py", b"def f(:\n    pass\n", "syntax.py:1:"),
        ("latin1.py", "x = 'caf\xe9'\n".encode("latin-1"), "not UTF-8"),
        ("empty.py", b"", "empty file"),
        ("py2.py", b"import torch\nprint 'hello'\n", "Python 2"),
    ],
)
def test_bad_input_is_one_line_and_the_run_goes_on(tmp_path: Path, name, content, expect) -> None:
    bad = tmp_path / name
    bad.write_bytes(content)
    good = tmp_path / "good.py"
    good.write_text(SEED.read_text())
    out = tmp_path / "out"
    proc = run("convert", bad, good, "-o", out)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if "error" in line and name in line]
    assert len(errors) == 1 and expect in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert (out / "good.py").exists() and not (out / name).exists()
    assert bad.read_bytes() == content


def test_missing_path(tmp_path: Path) -> None:
    proc = run("convert", tmp_path / "nope.py", "-o", tmp_path / "out")
    assert proc.returncode == 1 and "nope.py" in proc.stderr and "no such file" in proc.stderr


def test_usage_errors_exit_2() -> None:
    assert run("convert").returncode == 2
    assert run("frobnicate").returncode == 2


def test_convert_never_imports_the_code(tmp_path: Path) -> None:
    src = tmp_path / "evil.py"
    marker = tmp_path / "ran"
    src.write_text(f"import torch\nopen({str(marker)!r}, 'w').write('x')\nx = torch.cat([a], 0)\n")
    assert run("convert", src, "-o", tmp_path / "out").returncode == 0
    assert not marker.exists()


def test_library_never_prints(capsys) -> None:
    from transpile import convert_code

    convert_code(SEED.read_text())
    convert_code("def f(:\n")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_apis_are_grouped_by_family_with_counts():
    """`transpile apis`: every API under its family's heading, whose counts add up to the total."""
    import json

    data = json.loads(run("apis", "--format", "json").stdout)
    families, apis = data["families"], data["apis"]
    assert families["all"] == data["counts"] and sum(data["counts"].values()) == len(apis)
    for family, row in families.items():
        if family != "all":
            assert sum(row.values()) == sum(1 for a in apis if a["family"] == family), family
    assert {"Tensor methods", "torch functions", "torch.nn.functional", "torch.nn.init"} <= set(families)
    assert next(a for a in apis if a["source"] == "torch.nn.functional.relu")["family"] == "torch.nn.functional"
    assert list(data["forms"]) == list(families)  # the forms' coverage, per family too
    for family, row in data["forms"].items():
        for form, (covered, of) in row.items():
            assert covered == sum(form in a["forms"] and form in a["owed"] for a in apis if family in (a["family"], "all"))
            assert of == sum(form in a["owed"] for a in apis if family in (a["family"], "all")), (family, form)
    text = run("apis").stdout
    headings = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert [h.split(":")[0] for h in headings] == list(families), headings


# -- whole trees, safely: refusals, the summary, progress, pipes (issue 15) ---------------

TORCH = "import torch\nx = torch.cat([a], 0)\n"


def test_output_with_in_place_is_a_usage_error(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(TORCH)
    proc = run("convert", "--in-place", src, "-o", tmp_path / "out")
    assert proc.returncode == 2 and "-o and --in-place" in proc.stderr
    proc = run("convert", "--force", src, "-o", tmp_path / "out")
    assert proc.returncode == 2 and "only apply with --in-place" in proc.stderr
    assert src.read_text() == TORCH and not (tmp_path / "out").exists()


def test_refused_runs_exit_2_and_write_nothing(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text(TORCH)
    proc = run("convert", tmp_path / "a" / "m.py", tmp_path / "b" / "m.py", "-o", tmp_path / "out")
    assert proc.returncode == 2 and "refused, nothing written" in proc.stderr
    assert "would both be written to" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
    (tmp_path / "a" / "m.py").chmod(0o444)
    proc = run("convert", "--in-place", tmp_path / "a", tmp_path / "b")
    assert proc.returncode == 2 and "a/m.py is read-only (--force overwrites it)" in proc.stderr
    assert (tmp_path / "b" / "m.py").read_text() == TORCH  # refused before anything was written
    assert run("convert", "--in-place", "--force", tmp_path / "a", tmp_path / "b").returncode == 0
    assert "ops.cat" in (tmp_path / "a" / "m.py").read_text()


def test_help_names_the_safety_flags() -> None:
    text = run("convert", "--help").stdout
    assert "--force" in text and "--backup" in text and ".orig" in text and "exit status" in text


def test_an_all_failed_run_reports_failure(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("import torch\ndef f(:\n")
    proc = run("convert", tmp_path / "a.py", tmp_path / "b.py", "-o", tmp_path / "out")
    assert proc.returncode == 1
    summary = proc.stderr.splitlines()[-2:]
    assert "0 converted, 0 unchanged, 2 failed" in summary[0] and "no torch use converted" in summary[0]
    assert "100.0%" not in proc.stderr
    assert summary[1] == f"failed: {tmp_path / 'a.py'}, {tmp_path / 'b.py'}"
    data = json.loads(run("convert", tmp_path / "a.py", tmp_path / "b.py", "-o", tmp_path / "out",
                          "--format", "json").stdout)
    assert data["summary"]["conversion_rate"] is None
    assert data["summary"]["failed_files"] == [str(tmp_path / "a.py"), str(tmp_path / "b.py")]


def test_a_missing_input_among_several_is_reported_and_the_others_convert(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text(TORCH)
    proc = run("convert", tmp_path / "nope.py", good, "-o", tmp_path / "out")
    assert proc.returncode == 1 and f"{tmp_path / 'nope.py'}:1:1: MS000 error: no such file" in proc.stderr
    assert "ops.cat" in (tmp_path / "out" / "good.py").read_text()


def test_json_columns_are_one_based_like_the_text(tmp_path: Path) -> None:
    import os

    src = tmp_path / "m.py"
    src.write_text("import torch\ny = 1;  z = torch.no_such_api(y)\n")
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"))
    texts = []
    for _ in range(2):  # the second run reads the cache
        proc = subprocess.run([sys.executable, "-m", "transpile", "convert", src, "--check", "--format", "json"],
                              capture_output=True, text=True, env=env)
        texts.append(proc.stdout)
        (diag,) = [d for d in json.loads(proc.stdout)["diagnostics"] if "no_such_api" in d["message"]]
        assert (diag["line"], diag["col"]) == (2, 13)  # `torch.no_such_api` starts at the 13th character
    assert texts[0] == texts[1]
    text = run("convert", src, "--check").stderr
    assert f"{src}:2:13:" in text


@pytest.mark.slow
def test_progress_on_a_terminal_only(tmp_path: Path) -> None:
    import os

    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (tree / name).write_text(TORCH)
    args = [sys.executable, "-m", "transpile", "convert", tree, "-o", tmp_path / "out", "--no-cache", "-j", "1"]
    leader, follower = os.openpty()
    import fcntl, struct, termios  # a terminal wide enough for the bar and the whole path

    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 300, 0, 0))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the other end closed (Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=300) == 0
    shown = b"".join(chunks).decode()
    bar = {n: f"[{'#' * (20 * n // 3)}{'.' * (20 - 20 * n // 3)}] {n}/3 files  " for n in (1, 3)}
    assert f"\r{bar[1]}{tree / 'a.py'}" in shown and f"\r{bar[3]}{tree / 'c.py'}" in shown
    progress_end = shown.rindex("\r" + bar[3])
    cleared = shown[progress_end:].split("\r")[2]  # after the last line: spaces over it, then the report
    assert cleared.strip() == "" and len(cleared) == len(f"{bar[3]}{tree / 'c.py'}")
    assert "3 converted" in shown[progress_end:]
    piped = run("convert", tree, "-o", tmp_path / "out2")
    assert piped.returncode == 0 and "1/3 files" not in piped.stderr and "\r" not in piped.stderr


def test_a_closed_pipe_ends_quietly() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "transpile", "apis"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(200)
    proc.stdout.close()  # as `| head` does: the rest (over 100 kB) cannot be written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141 and err == ""
