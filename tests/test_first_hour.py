"""A user's first hour, scripted: the demo in a fresh copy of the samples (the commands of
`make demo`, read from the Makefile), a small package of their own with relative imports
converted, `explain`, a `review` session typed on a pseudo-terminal, an HTML `--report`,
and `parity --root` on the package's model (PYNATIVE only, for time). Every step must
exit as documented.

The installed environment is used as it is (no `make install`). `make demo` checks every
sample and every training sample; here one of each kind of command runs on one sample
(`lenet`), which keeps the test under a minute: training parity (about a minute a sample)
is left to tests/test_training_parity.py.
"""
from __future__ import annotations

import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_review import _Terminal

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.slow, pytest.mark.framework]

# The user's package: absolute imports from its root (`from models.blocks import ...`) and
# relative ones between siblings
PACKAGE = {
    "models/__init__.py": "from .net import Net\n",
    "models/blocks.py": '''\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(torch.relu(self.fc(x)))
''',
    "models/net.py": '''\
import torch.nn as nn

from models.blocks import Block
from .scale import double


class Net(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.blocks = nn.Sequential(Block(width), Block(width))
        self.head = nn.Linear(width, 3)

    def forward(self, x):
        return double(self.head(self.blocks(x)))
''',
    "models/scale.py": "def double(x):\n    return x * 2\n",
    "train.py": '''\
import torch
from models import Net

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
''',
}


def _demo_commands() -> list[list[str]]:
    """The commands of the Makefile's demo target, each as argv (the venv's programs)."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    block = re.search(r"^demo:.*\n((?:\t.*\n)+)", text, re.M).group(1)
    return [shlex.split(line.strip().replace("$(BIN)/", f"{BIN}/")) for line in block.splitlines()]


def _run(args, cwd: Path, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _answer_every_edit(term: _Terminal, answer: str, timeout: float = 60.0) -> None:
    """Type ``answer`` at each prompt until the session says how many edits were decided."""
    answered, end = 0, time.monotonic() + timeout
    while "edits decided" not in term.seen and "no edit to decide" not in term.seen:
        assert time.monotonic() < end, f"the review hung:\n{term.seen}"
        ready, _, _ = select.select([term.master], [], [], 1.0)
        if ready:
            try:
                term.seen += os.read(term.master, 4096).decode("utf-8", "replace").replace("\r\n", "\n")
            except OSError:
                break
        prompts = term.seen.count("apply this edit? [")
        if prompts > answered:
            term.type(answer + "\r")
            answered = prompts


def test_the_first_hour(tmp_path: Path) -> None:
    env = {**os.environ, "TRANSPILE_CACHE_DIR": str(tmp_path / "cache"), "NO_COLOR": "1"}
    shutil.copytree(REPO / "samples", tmp_path / "samples")

    # make demo: convert the samples, then parity (here: one sample, in both modes)
    convert, parity, training = _demo_commands()
    assert convert[1:] == ["convert", "samples", "-o", "out"]
    assert parity[1:4] == ["parity", "--samples", "samples"] and training[1:3] == ["parity", "--training"]
    done = _run(convert, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "22 converted" in done.stderr and "notes by code" in done.stderr and " info: " not in done.stderr
    demo_parity = subprocess.Popen([*parity, "lenet"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)

    # their own package: converted as a tree, its imports kept working
    for name, text in PACKAGE.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    done = _run([BIN / "transpile", "convert", "pkg", "-o", "pkg_ms"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    net = (tmp_path / "pkg_ms" / "models" / "net.py").read_text(encoding="utf-8")
    assert "from .scale import double" in net and "from models.blocks import Block" in net
    assert "class Net(nn.Cell):" in net and "def construct(self, x):" in net
    root_parity = subprocess.Popen(
        [BIN / "transpile", "parity", "pkg/models/net.py", "--root", "pkg", "--converted", "pkg_ms",
         "--model", "Net()", "--input", "float32[2,8]", "--mode", "pynative"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    # explain: which pass did what, and what a code means
    done = _run([BIN / "transpile", "explain", "pkg/models/blocks.py"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "MS101 cell-class" in done.stdout and "construct" in done.stdout
    done = _run([BIN / "transpile", "explain", "pkg/models/blocks.py", "--line", "8"], tmp_path, env)
    assert done.returncode == 0 and "nn.Dense" in done.stdout, done.stdout + done.stderr
    done = _run([BIN / "transpile", "passes", "MS901"], tmp_path, env)
    assert done.returncode == 0 and "MS901" in done.stdout

    # review on a terminal: quit after one answer (nothing written, told how to go on) ...
    term = _Terminal([str(BIN / "transpile"), "review", "pkg", "-o", "reviewed"], tmp_path)
    term.expect("apply this edit? [")
    term.type("n\r")
    term.expect("apply this edit? [")
    term.type("q\r")
    assert term.finish() == 0, term.seen
    assert "quit: nothing written to reviewed" in term.seen and "transpile convert pkg -o reviewed" in term.seen
    assert not (tmp_path / "reviewed").exists()
    # ... then again: the first answer is kept, the rest applied file by file, the tree written
    term = _Terminal([str(BIN / "transpile"), "review", "pkg", "-o", "reviewed"], tmp_path)
    _answer_every_edit(term, "a")
    assert term.finish() == 0, term.seen
    train = (tmp_path / "reviewed" / "train.py").read_text(encoding="utf-8")  # the first file asked about
    assert "# transpile: ignore[" in train, train
    assert "class Net(nn.Cell):" in (tmp_path / "reviewed" / "models" / "net.py").read_text(encoding="utf-8")

    # the HTML report alone writes nothing else
    done = _run([BIN / "transpile", "convert", "pkg", "--report", "report.html"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["cache", "samples", "out", "pkg", "pkg_ms", "reviewed", "report.html", ".transpile"])

    # parity: the demo's sample, and the package's model imported from its root
    out, err = demo_parity.communicate(timeout=180)
    assert demo_parity.returncode == 0, out + err
    assert out.splitlines()[-1] == "1 of 1 samples match"
    out, err = root_parity.communicate(timeout=180)
    assert root_parity.returncode == 0, out + err
    assert out.rstrip().endswith("match")
