"""einx's elementwise functions with a literal description of named axes (MS208): the
converted code runs on MindSpore tensors (einx has no MindSpore backend) and gives what the
description means, checked against numpy's broadcasting of the same operands. einx itself is
not installed here; the converted code does not import it."""
from __future__ import annotations

import numpy as np
import pytest

from transpile import convert_code

from .harness import import_converted

SOURCE = '''
import torch
import einx
from einx import add, multiply, greater


def pair_bias(x, y):
    return add("b n d, b d", x, y)


def symmetric(t):
    return add("b i j ..., b j i ... -> b i j ...", t, t) * 0.5


def outer_greater(widths, distances):
    return greater("j, i -> i j", widths, distances)


def scaled(x, scale):
    return einx.multiply("b p h, t h -> b p t h", x, scale)


def signed(sign, embeds):
    return multiply("i, i j", sign, embeds)


def shifted(x, offset):
    return einx.subtract("b n, n", x, offset)
'''

RESULT = convert_code(SOURCE, filename="einx_ops.py")
RNG = np.random.default_rng(31)


def _run(name, *arrays):
    import mindspore as ms

    namespace: dict = {}
    exec(compile(RESULT.code, "<converted>", "exec"), namespace)
    return namespace[name](*[ms.Tensor(a) for a in arrays]).asnumpy()


def test_the_converted_code_no_longer_names_einx_where_it_converted():
    code = RESULT.code
    assert "import einx" not in code and "from einx" not in code and "# transpile:" not in code, code
    assert code.count("_einx_elementwise(ops.") == 6, code


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name, operands, expected", [
    ("pair_bias", lambda: (_f32(2, 3, 4), _f32(2, 4)), lambda x, y: x + y[:, None, :]),
    ("symmetric", lambda: (_f32(2, 3, 3, 5),), lambda t: (t + t.transpose(0, 2, 1, 3)) * 0.5),
    ("symmetric", lambda: (_f32(2, 4, 4),), lambda t: (t + t.transpose(0, 2, 1)) * 0.5),
    ("outer_greater", lambda: (_f32(4), _f32(3)), lambda w, d: w[None, :] > d[:, None]),
    ("scaled", lambda: (_f32(2, 5, 3), _f32(4, 3)), lambda x, s: x[:, :, None, :] * s[None, None]),
    ("signed", lambda: (_f32(3), _f32(3, 6)), lambda s, e: s[:, None] * e),
    ("shifted", lambda: (_f32(2, 5), _f32(5)), lambda x, o: x - o[None, :]),
])
def test_named_axes_broadcast_as_the_description_says(name, operands, expected):
    arrays = operands()
    np.testing.assert_allclose(_run(name, *arrays), expected(*arrays), rtol=1e-6)


@pytest.mark.parametrize("name, operands, expected", [
    ("pair_bias", lambda: (_f32(2, 3, 4), _f32(2, 4)), lambda x, y: x + y[:, None, :]),
    ("symmetric", lambda: (_f32(2, 3, 3, 5),), lambda t: (t + t.transpose(0, 2, 1, 3)) * 0.5),
    ("outer_greater", lambda: (_f32(4), _f32(3)), lambda w, d: w[None, :] > d[:, None]),
])
def test_the_converted_calls_compile_in_graph_mode(name, operands, expected, tmp_path):
    """In a Cell's construct under GRAPH_MODE, the plan (Python on the description and the
    shapes) is computed while compiling: alphagenome-pytorch's GRAPH run stopped at its
    `next(a for a in ...)` ("name 'a' is not defined") when it ran in the graph."""
    import mindspore as ms

    function = import_converted(RESULT.code, f"einx_graph_{name}", tmp_path)[name]

    class Wrapper(ms.nn.Cell):
        def construct(self, *args):
            return function(*args)

    arrays = operands()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = Wrapper()(*[ms.Tensor(a) for a in arrays]).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, expected(*arrays), rtol=1e-6)
