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
    text = run("apis").stdout
    headings = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert [h.split(":")[0] for h in headings] == list(families), headings
