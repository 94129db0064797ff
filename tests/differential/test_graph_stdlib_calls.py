"""MS501 leaves warnings, logging and random calls, and numpy's array builders, in construct
alone (graph_lint's GRAPH_SAFE_ROOTS, NUMPY_BUILDERS): MindSpore 2.10's GRAPH mode runs them as Python (JIT fallback) and the
Cell computes torch's result, run here in both modes on several inputs. If a release stops
compiling them, this fails and the roots go back to MS501."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import converted_and_imported, outputs_in_mode

SOURCE = '''
import logging
import random
import warnings

import numpy as np
import torch
import torch.nn as nn

log = logging.getLogger(__name__)


class Noted(nn.Module):
    def forward(self, x):
        if x.shape[-1] % 2:
            warnings.warn("odd width")
        log.warning("width %d", x.shape[-1])
        logging.debug("seen")
        rng = random.Random(0)
        scale = rng.choice([2.0, 2.0])
        ones = np.ones((x.shape[0], 3)) + np.zeros((x.shape[0], 3)) + np.full((x.shape[0], 3), 2.0)
        steps = np.arange(x.shape[1]) + np.eye(3)[:1, :1].sum()
        return x * scale + float(ones.sum()) + torch.tensor(steps, dtype=torch.float32)
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    result, torch_ns, ms_ns = converted_and_imported(SOURCE, "graph_stdlib_calls_case",
                                                     tmp_path_factory.mktemp("graph_stdlib_calls"))
    assert not [d for d in result.diagnostics if d.code == "MS501"], result.diagnostics
    return result, torch_ns, ms_ns


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
@pytest.mark.parametrize("shape", [(2, 3), (3, 4)])
def test_stdlib_calls_compute_torchs_result(mode, shape, built):
    x = np.random.default_rng(sum(shape)).uniform(-1, 1, shape).astype(np.float32)
    expected, actual = outputs_in_mode(built[1]["Noted"], built[2]["Noted"], (x,), mode)
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)
