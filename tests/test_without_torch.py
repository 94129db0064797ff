"""A converted module that keeps imports needing torch for code left as torch's (``import
torch``, a submodule under its own name, ``from torch... import``, safetensors' torch flavour,
one under a guard that runs at import, annotations naming them) imports where torch is
missing (MS903), checked in a process that finds no torch: the benchmarks' blocker
(benchmarks/models/no_torch.py), itself checked here too."""
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
import torch.distributed as dist
from torch.utils._pytree import tree_flatten as flatten
from safetensors.torch import save_file

if math.pi > 3:  # a guard that runs at import (transformers': is_torch_available())
    from torch.autograd.graph import saved_tensors_hooks


def fused(x):
    return torch.classes.ext.fused(x)  # no MindSpore counterpart: left as torch's


def graph(pool: torch.cuda.graph_pool_handle = None) -> torch.cuda.CUDAGraph:  # evaluated at definition
    return dist.get_rank(), flatten, save_file, saved_tensors_hooks


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
print(converted.dist, converted.flatten, converted.save_file, converted.saved_tensors_hooks)
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
    assert done.stdout.split("\n")[:3] == [f"{2.0 * 3.141592653589793} None", "None None None None",
                                           "fused needs torch"], done.stdout


AVAILABILITY = '''import importlib.metadata
import importlib.util

import torch
from torch.nn.attention.flex_attention import BlockMask


def _is_package_available(pkg_name, return_version=False):
    spec = importlib.util.find_spec(pkg_name)
    if spec is not None and return_version:
        return True, importlib.metadata.version(pkg_name)
    return spec is not None, "N/A"


def is_torch_available():
    return _is_package_available("torch", return_version=True)


def is_torch_importable():
    try:
        import torch
    except ImportError:
        return False
    return True


def is_torch_distributed_available():
    if not is_torch_available()[0]:
        return False
    import torch

    return torch.distributed.is_available()


def numpy_found():
    return importlib.util.find_spec("numpy") is not None


def zeros(n):
    return torch.zeros(n)


def is_block_mask(mask):
    return isinstance(mask, BlockMask)
'''

AVAILABILITY_CHECK = '''import sys
sys.path.insert(0, sys.argv[1])
if sys.argv[3] == "without":
    from no_torch import block_torch
    block_torch()
sys.path.insert(0, sys.argv[2])
import converted
print(converted.is_torch_available(), converted.is_torch_importable(), converted.is_torch_distributed_available(),
      converted.numpy_found(), converted.is_block_mask(1.0), "torch" in sys.modules)
'''


def test_the_converted_package_s_availability_checks_answer_for_mindspore(tmp_path):
    """Asked whether torch is installed (find_spec and the version by name, an import that only
    probes), the converted module answers for MindSpore, which its code runs on, with torch absent
    and present alike; the distributed query answers as one process; numpy is still asked of
    itself. A torch class the module checks values against is a class without torch too."""
    result = convert_code(AVAILABILITY, filename="converted.py")
    assert "    import torch\n" not in result.code, result.code
    (tmp_path / "converted.py").write_text(result.code)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRANSPILE_TEST_FRAMEWORK_LOG")}
    for torch_there in ("without", "with"):
        done = subprocess.run([sys.executable, "-c", AVAILABILITY_CHECK, str(BLOCKER), str(tmp_path), torch_there],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        # (BlockMask's import, left as torch's, imports torch where it is there)
        expected = f"(True, '2.13.0') True False True False {torch_there == 'with'}"
        assert done.stdout.strip().splitlines()[-1] == expected, (torch_there, done.stdout)
