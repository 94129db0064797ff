"""convert --import-check (transpile/io/import_check.py): every converted module imported once
in a child process, each failure reported with the converted file and line it stopped at."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from transpile.io.import_check import ImportFailure, module_names

FILES = {
    "pkg/__init__.py": "import torch\nfrom . import sub\nx = torch.zeros(2)\n",
    "pkg/sub/__init__.py": "import torch.nn as nn\n\n\nclass M(nn.Module):\n    pass\n",
    "pkg/sub/bad.py": "import torch\n\ny = torch.ones(1)\nraise RuntimeError('boom at import')\n",
    "pkg/uses_bad.py": "from .sub import bad\n",
}


def _tree(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root / "pkg"


def _convert(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "transpile", "convert", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_modules_are_named_as_their_package_imports_them(tmp_path):
    _tree(tmp_path)
    (tmp_path / "script.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "not-a-name").mkdir()
    (tmp_path / "not-a-name" / "__init__.py").write_text("", encoding="utf-8")
    files = [*tmp_path.rglob("*.py")]
    modules, roots = module_names(files)
    assert sorted(modules) == ["pkg", "pkg.sub", "pkg.sub.bad", "pkg.uses_bad", "script"]
    assert modules["pkg.sub.bad"] == (tmp_path / "pkg" / "sub" / "bad.py").resolve()
    assert roots == [str(tmp_path.resolve())]  # the folder above the outermost package, once


def test_a_failure_reads_as_a_located_diagnostic():
    failure = ImportFailure("pkg.bad", Path("out/pkg/bad.py"), "RuntimeError: boom", Path("out/pkg/bad.py"), 4)
    assert failure.format() == "out/pkg/bad.py:4: import check: `import pkg.bad` fails: RuntimeError: boom"
    unplaced = ImportFailure("pkg.x", Path("out/pkg/x.py"), "ImportError: no")
    assert unplaced.format().startswith("out/pkg/x.py: import check:")


def test_the_check_needs_written_files(tmp_path):
    pkg = _tree(tmp_path)
    for extra in (["--diff"], ["--check"], []):
        proc = _convert(str(pkg), "--import-check", *extra, cwd=tmp_path)
        assert proc.returncode == 2 and "--import-check imports the written files" in proc.stderr


@pytest.mark.framework
def test_each_module_that_fails_at_import_is_reported_at_its_line(tmp_path):
    pkg = _tree(tmp_path)
    proc = _convert(str(pkg), "-o", "out/pkg", "--import-check", "-q", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    bad = (tmp_path / "out" / "pkg" / "sub" / "bad.py").resolve()
    converted = bad.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(converted, 1) if "raise RuntimeError" in text)
    assert f"{bad}:{line}: import check: `import pkg.sub.bad` fails: RuntimeError: boom at import" in proc.stderr
    # a module whose own import of a failing one stops is reported too, at the failing line
    assert f"{bad}:{line}: import check: `import pkg.uses_bad` fails: RuntimeError: boom at import" in proc.stderr
    assert "import check: 2 of 4 converted modules import" in proc.stderr
    as_json = _convert(str(pkg), "-o", "out2/pkg", "--import-check", "--format", "json", cwd=tmp_path)
    checked = json.loads(as_json.stdout)["import_check"]
    assert checked["modules"] == 4 and sorted(f["module"] for f in checked["failures"]) == ["pkg.sub.bad", "pkg.uses_bad"]
