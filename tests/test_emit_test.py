"""`transpile parity --emit-test`: a standalone pytest file, a unit test per Cell (seed 000).

The template is rendered from a made-up result without any framework; end to end,
the command writes the file for a small model, and pytest runs it next to the
converted model (as the user keeps it) and next to a broken copy, where exactly the
tests of the broken Cell and of the whole model fail.
"""
from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from transpile import convert_code
from transpile.parity import EmitError, ModeResult, SampleResult, make_spec, render_test

NET = '''\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) + x


class Net(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(2)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 3)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(torch.tanh(self.norm(x)))
'''

needs_frameworks = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("mindspore") is None,
    reason="parity needs torch and mindspore (pip install -e '.[parity]')",
)


def _result(tmp_path, **spec_fields) -> SampleResult:
    fields = {"source": tmp_path / "net.py", "entry": "Net()", "inputs": ("float32[4,8]", "expr:np.ones(3)")}
    spec = make_spec(**(fields | spec_fields))
    cells = ({"path": "blocks.0", "torch_class": "Block", "ms_class": "Block",
              "inputs": ["rng.uniform(-1.0, 1.0, (4, 8)).astype('float32')"], "labels": ["float32[4,8]:-1..1"]},)
    mode = ModeResult("PYNATIVE", "match", 0.0, (0.0,), cells=cells,
                      weights=(("blocks.0.fc.weight", "blocks.0.fc.weight"), ("norm.weight", "norm.gamma")))
    return SampleResult("net", spec, True, {"PYNATIVE": mode}, converted_path=tmp_path / "out" / "net_ms.py")


def test_the_template_renders_a_valid_test(tmp_path):
    text = render_test(_result(tmp_path), tmp_path / "out" / "test_net.py", command="transpile parity ...")
    compile(text, "test_net.py", "exec")
    assert "ORIGINAL = HERE / '../net.py'" in text and "CONVERTED = HERE / 'net_ms.py'" in text
    assert "('norm.weight', 'norm.gamma')," in text
    assert "('blocks.0', 'Block', 'Block', [" in text
    assert "\"rng.uniform(-1.0, 1.0, (4, 8)).astype('float32')\",  # float32[4,8]:-1..1" in text
    assert "'np.ones(3)',  # expr:np.ones(3)" in text
    imported = {a.name for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ImportFrom)}
    assert imported == {"importlib.util", "pathlib", "sys", "numpy", "pytest"}  # standalone: no transpile
    assert "transpile parity ..." in text


def test_what_cannot_be_emitted(tmp_path):
    result = _result(tmp_path)
    result.converted_path = None
    with pytest.raises(EmitError, match="give --converted"):
        render_test(result, tmp_path / "t.py")
    result = _result(tmp_path)
    result.results["PYNATIVE"] = ModeResult("PYNATIVE", "error: torch side: build Net(): boom")
    with pytest.raises(EmitError, match="boom"):
        render_test(result, tmp_path / "t.py")
    masked = _result(tmp_path, config=None)
    masked.spec = make_spec(source="f.py", entry="f", kind="function", inputs=("float32[4]",))
    compile(render_test(masked, tmp_path / "t.py"), "t.py", "exec")  # a function: no cells needed


def _run(args, cwd):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.mark.framework
@needs_frameworks
def test_the_emitted_test_passes_and_catches_a_broken_cell(tmp_path):
    good, broken = tmp_path / "good", tmp_path / "broken"
    (good / "out").mkdir(parents=True)
    (good / "net.py").write_text(NET, encoding="utf-8")
    code = convert_code(NET, filename="net.py").code
    (good / "out" / "net.py").write_text(code, encoding="utf-8")
    proc = _run(["-m", "transpile", "parity", "net.py", "--converted", "out/net.py", "--model", "Net()",
                 "--input", "float32[4,8]", "--mode", "pynative", "--emit-test", "out/test_net_parity.py"], good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "wrote out/test_net_parity.py" in proc.stdout
    text = (good / "out" / "test_net_parity.py").read_text(encoding="utf-8")
    for cell in ("('blocks.0', 'Block', 'Block'", "('blocks.0.fc', 'Linear', 'Dense'", "('blocks.0.act', 'ReLU', 'ReLU'",
                 "('norm', 'LayerNorm', 'LayerNorm'"):
        assert cell in text  # one Cell per class: head is a second Linear
    assert "'head'" not in text.split("CELLS = [")[1]
    assert "--emit-test out/test_net_parity.py" in text

    shutil.copytree(good, broken)
    old = "return self.act(self.fc(x)) + x"
    assert old in code
    (broken / "out" / "net.py").write_text(code.replace(old, "return self.act(self.fc(x)) - x"), encoding="utf-8")
    pytest_args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_net_parity.py"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        ok = pool.submit(_run, pytest_args, good / "out")
        bad = pool.submit(_run, [*pytest_args, "-k", "PYNATIVE", "-rf"], broken / "out")
        ok, bad = ok.result(), bad.result()
    assert ok.returncode == 0 and "10 passed" in ok.stdout, ok.stdout + ok.stderr
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "2 failed, 3 passed" in bad.stdout
    failed = [line for line in bad.stdout.splitlines() if line.startswith("FAILED")]
    assert any("test_model[PYNATIVE]" in line for line in failed)
    assert any("blocks.0 (Block)" in line for line in failed)
    assert "max abs diff" in bad.stdout
