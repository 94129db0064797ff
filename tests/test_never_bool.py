"""Bool-input helpers (_torch_bool_as_int64, _torch_bool_via_float) wrap only calls whose
input may be a bool tensor: a difference, a negation, floating arithmetic or a sum with a
number literal is never bool, and the MindSpore op is called directly."""
from __future__ import annotations

import pytest

from transpile import convert_code


@pytest.mark.parametrize("expr, wrapped", [
    ("torch.clamp(x - t, min=0)", False),
    ("torch.clamp(-x, min=0)", False),
    ("torch.clamp(x + 1, 0, 3)", False),
    ("torch.clamp(x / 2, 0, 1)", False),
    ("torch.sort(x * 2.0)", False),
    ("torch.clamp(x, 0, 1)", True),
    ("torch.clamp(x + y, 0, 1)", True),  # bool + bool is bool in torch
    ("torch.sort(x * y)", True),
])
def test_only_a_possibly_bool_input_goes_through_the_helper(expr: str, wrapped: bool) -> None:
    code = convert_code(f"import torch\ndef f(x, y, t):\n    return {expr}\n").code
    assert ("_torch_bool_" in code) is wrapped, code
