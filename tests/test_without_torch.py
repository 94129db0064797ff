"""A converted module that keeps ``import torch`` for code left as torch's imports where
torch is missing (MS903), checked in a process that finds no torch: the benchmarks'
blocker (benchmarks/models/no_torch.py), itself checked here too."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from transpile import convert_code

REPO = Path(__file__).resolve().parent.parent
BLOCKER = REPO / "benchmarks" / "models"

SOURCE = '''import math

import torch


def fused(x):
    return torch.classes.ext.fused(x)  # no MindSpore counterpart: left as torch's


def scale(x):
    return x * math.pi
'''

CHECK = '''import importlib.metadata, importlib.util, sys
sys.path.insert(0, sys.argv[1])
from no_torch import block_torch
block_torch()
assert importlib.util.find_spec("torch") is None
try:
    importlib.metadata.version("torch")
    raise SystemExit("torch's distribution is still found")
except importlib.metadata.PackageNotFoundError:
    pass
try:
    import torch
    raise SystemExit("torch imported")
except ModuleNotFoundError:
    pass
sys.path.insert(0, sys.argv[2])
import converted
print(converted.scale(2.0), converted.torch)
try:
    converted.fused(1.0)
except AttributeError:
    print("fused needs torch")
'''


def test_the_module_imports_without_torch_and_only_the_code_left_as_torch_needs_it(tmp_path):
    result = convert_code(SOURCE, filename="converted.py")
    assert "try:\n    import torch\nexcept ImportError:" in result.code, result.code
    (tmp_path / "converted.py").write_text(result.code)
    # (without the test run's framework guard, whose finder answers for torch in children)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRANSPILE_TEST_FRAMEWORK_LOG")}
    done = subprocess.run([sys.executable, "-c", CHECK, str(BLOCKER), str(tmp_path)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [f"{2.0 * 3.141592653589793} None", "fused needs torch"], done.stdout
