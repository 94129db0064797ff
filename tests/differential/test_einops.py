"""Differential tests for einops lowered by MS208: the same einops code run by einops on
torch, and converted by the tool and run on MindSpore, compared on the same inputs."""
from __future__ import annotations

import re

import pytest

from transpile import convert_code

from .harness import DEFAULT_HEADER, Case, Suite, arr, ints, pos

HEADER = DEFAULT_HEADER + (
    "from einops import rearrange, reduce, repeat, einsum, pack, unpack\n"
    "from einops.layers.torch import Rearrange, Reduce\n"
)

# A torch Module built and called inside the case (layers have no weights to copy, or
# weights that start equal in both frameworks: LayerNorm's ones and zeros).
LAYERS = """class Net(nn.Module):
        def __init__(self, heads):
            super().__init__()
            self.to_patches = nn.Sequential(
                Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
                nn.LayerNorm(12),
                Reduce("b n d -> b d", "mean"),
            )
            self.flat = nn.Sequential(Rearrange("b c h w -> b (c h w)"), nn.ReLU())
            self.split = Rearrange("b (h d) -> b h d", h=heads)
            self.pool = Reduce("b c h w -> b c 1 1", "max")

        def forward(self, x):
            return self.to_patches(x), self.flat(x), self.split(self.flat(x)), self.pool(x)

    return Net(4)(a)"""

CASES = [
    # rearrange
    Case("rearrange", 'rearrange(a, "b (h d) n -> b h n d", h=2)', (arr(2, 6, 5),), "split-keyword"),
    Case("rearrange", 'rearrange(a, "b h n d -> b n (h d)")', (arr(2, 3, 4, 5),), "compose-right"),
    # names unpacked from map(lambda t: rearrange(...), ...) are tensors: their methods convert
    Case("rearrange", 'q, k = map(lambda t: rearrange(t, "b (h c) n -> b h c n", h=2), (a, a * 2))\n'
         '        return q.softmax(dim=-2) + k.softmax(dim=-1)', (arr(2, 6, 5),), "mapped-methods"),
    Case("rearrange", 'rearrange(a, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=3)', (arr(2, 3, 4, 6),), "patches"),
    Case("rearrange", 'rearrange(a, "(b1 b2) c -> b2 c b1", b1=2)', (arr(6, 3),), "inferred-length"),
    Case("rearrange", 'rearrange(a, "... (h d) -> ... h d", h=2)', (arr(2, 3, 8),), "ellipsis-split"),
    Case("rearrange", 'rearrange(a, "b ... d -> b d ...")', (arr(2, 3, 4, 5),), "ellipsis-moved"),
    Case("rearrange", 'rearrange(a, "b ... -> b (...)")', (arr(2, 3, 4, 5),), "ellipsis-composed"),
    Case("rearrange", 'rearrange(a, "b ... (h d) -> b h ... d", h=2)', (arr(2, 3, 4, 6),), "ellipsis-middle"),
    Case("rearrange", 'rearrange(a, "b c -> b 1 c ()")', (arr(2, 3),), "unit-right"),
    Case("rearrange", 'rearrange(a, "b 1 c -> (c b)")', (arr(2, 1, 3),), "unit-left"),
    Case("rearrange", 'n = 3\n    return rearrange(a, "b (h d) -> b d h", h=n)', (arr(2, 6),), "length-variable"),
    Case("rearrange", 'rearrange(a * 2, "b (h d) -> b d h", d=a.shape[1] // 3)', (arr(2, 6),), "input-expression"),
    Case("rearrange", 'rearrange(tensor=a, pattern="b n -> n b")', (arr(2, 3),), "keywords"),
    # reduce: each reduction
    Case("reduce", 'reduce(a, "b c h w -> b c", "mean")', (arr(2, 3, 4, 5),), "mean"),
    Case("reduce", 'reduce(a, "b (h 2) w -> b h w", "sum")', (arr(2, 4, 3),), "sum-anonymous"),
    Case("reduce", 'reduce(a, "b c ... -> b c", "max")', (arr(2, 3, 4, 5),), "max-ellipsis"),
    Case("reduce", 'reduce(a, "b n d -> d b", "min")', (arr(2, 3, 4),), "min-permuted"),
    Case("reduce", 'reduce(a, "b (h p) -> b h", "prod", p=2)', (pos(2, 6),), "prod-keyword"),
    # einops' "repeat" reduction is repeat (hyper-connections' stream expansion, a layer)
    Case("reduce", 'reduce(a, "b n -> b n r", "repeat", r=3)', (arr(2, 5),), "repeat"),
    Case("reduce", 'Reduce(pattern="b ... -> (b s) ...", reduction="repeat", s=2)(a)', (arr(2, 3, 4),), "repeat-layer"),
    Case("reduce", 'reduce(a, "b c h w -> b c 1 1", reduction="mean")', (arr(2, 3, 4, 5),), "keep-dims"),
    Case("reduce", 'reduce(a, "b n -> b", "sum")', (ints(3, 4),), "sum-int"),
    # repeat: new axes, and an existing axis repeated
    Case("repeat", 'repeat(a, "h w -> h w c", c=3)', (arr(2, 3),), "new-axis"),
    Case("repeat", 'repeat(a, "b n d -> b (n r) d", r=2)', (arr(2, 3, 4),), "interleave"),
    Case("repeat", 'repeat(a, "h w -> (r h) w", r=3)', (arr(2, 3),), "tile"),
    Case("repeat", 'repeat(a, "h w -> h w 2")', (arr(2, 3),), "anonymous"),
    Case("repeat", 'repeat(a, "b ... -> b k ...", k=2)', (arr(2, 3, 4),), "ellipsis"),
    Case("repeat", 'repeat(a, "d -> b d", b=a.shape[0] + 1)', (arr(4),), "length-expression"),
    # einsum: tensors first, the pattern last, multi-letter axes
    Case("einsum", 'einsum(a, b, "b h i d, b h j d -> b h i j")', (arr(2, 3, 4, 5), arr(2, 3, 6, 5)), "attention"),
    Case("einsum", 'einsum(a, b, "batch seq dim, dim out -> batch seq out")', (arr(2, 3, 4), arr(4, 5)), "multi-letter"),
    Case("einsum", 'einsum(a, "rows cols -> cols")', (arr(3, 4),), "one-tensor"),
    # pack / unpack
    Case("pack", 'pack([a, b], "b * d")', (arr(2, 3, 4), arr(2, 2, 5, 4)), "middle"),
    Case("pack", 'pack((a, b), "* d")', (arr(3, 4), arr(4)), "first"),
    Case("unpack", 'p, ps = pack([a, b, c], "b *")\n    return unpack(p, ps, "b *")',
         (arr(2, 3), arr(2, 4, 5), arr(2)), "round-trip"),
    Case("unpack", 'p, ps = pack([a, b], "i * j")\n    x, y = unpack(p * 2, ps, "i * j")\n    return y, x',
         (arr(2, 3, 4), arr(2, 5, 6, 4)), "expression"),
    # the layers, as Cells in an nn.Module
    Case("Rearrange/Reduce", LAYERS, (arr(2, 3, 4, 4),), "module"),
]
SUITE = Suite(CASES, header=HEADER)

# Patterns known only at run time: einops itself runs them on MindSpore tensors, through
# the backend the pass emits beside the code.
RUNTIME_CASES = [
    Case("rearrange", 'p = "b (h c) n -> b h n c"\n        return rearrange(a, p, h=2)', (arr(2, 6, 5),), "runtime-pattern"),
    Case("reduce", 'p, r = "b c n -> b n", "max"\n        return reduce(a, p, r)', (arr(2, 6, 5),), "runtime-pattern"),
    Case("repeat", 'p = "b n -> b n r"\n        return repeat(a, p, r=3)', (arr(2, 5),), "runtime-pattern"),
    # an einops function passed as a value (alphadev's ``maybe(rearrange)(t, ...)``): the
    # backend lets einops run it on the MindSpore tensors it is given
    Case("rearrange", 'wrapped = (lambda fn: lambda t, *rest, **kw: fn(t, *rest, **kw))(rearrange)\n'
         '        return wrapped(a, "b (h c) n -> b h n c", h=2)', (arr(2, 6, 5),), "as-value"),
    Case("reduce", 'reducers = {"max": reduce}\n        return reducers["max"](a, "b c n -> b n", "max")',
         (arr(2, 6, 5),), "as-value"),
    Case("pack", 'p = "b *"\n        x, ps = pack([a, b], p)\n        return x, unpack(x * 2, ps, p)',
         (arr(2, 3, 4), arr(2, 5)), "runtime-pattern"),
    # einsum is not run by einops (its backend needs ops.einsum, which has no CPU kernel):
    # _einsum_at_run_time, emitted beside the code, reads the pattern when it runs
    Case("einsum", 'kv = "b j d" if b.ndim == 3 else "b h j d"\n        return einsum(a, b, f"b h i d, {kv} -> b h i j")',
         (arr(2, 3, 4, 5), arr(2, 6, 5)), "f-string"),
    Case("einsum", 'kv = "b j d" if b.ndim == 3 else "b h j d"\n        return einsum(a, b, f"b h i d, {kv} -> b h i j")',
         (arr(2, 3, 4, 5), arr(2, 3, 6, 5)), "f-string-4d"),
    Case("einsum", 'einsum(a, b, "... i, ... i -> ...")', (arr(2, 3, 4), arr(2, 3, 4)), "ellipsis"),
    Case("einsum", 'einsum(a, b, a, "x y, y z, u z -> x u")', (arr(3, 3), arr(3, 3)), "three"),
]
RUNTIME_SUITE = Suite(RUNTIME_CASES, header=HEADER)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_einops(case):
    SUITE.check(case)


@pytest.mark.parametrize("case", RUNTIME_SUITE.cases, ids=RUNTIME_SUITE.ids)
def test_einops_at_run_time(case):
    RUNTIME_SUITE.check(case)


def test_no_einops_or_torch_left():
    """The lowered code imports neither einops nor torch: it runs without them."""
    converted = SUITE.built.converted
    assert converted and not re.search(r"^\s*(import|from)\s+(einops|torch)\b", converted, re.M), converted


@pytest.mark.parametrize("source", [
    'rearrange(x, pattern)',
    'rearrange(x, f"b n -> {pattern}")',
    'reduce(x, "b n -> b", "median")',
    'reduce(x, "b n -> b", pattern)',
    'rearrange(x, "b (h d) -> b h d")',
    'rearrange([x, x], "l b -> b l")',
    'rearrange(x, "b n -> b n k")',
])
def test_not_lowered_runs_through_the_backend(source):
    """A function call this pass cannot lower stays an einops call, which runs on
    MindSpore tensors through the emitted backend (einops raises where it would on torch)."""
    code = f"from einops import rearrange, reduce, einsum\n\ndef f(x, pattern):\n    return {source}\n"
    result = convert_code(code)
    assert "# transpile: MS208" not in result.code and source in result.code
    assert "(einops._backends.AbstractBackend):" in result.code
    assert result.stats.unconverted == 0 and result.stats.converted == 1
    assert any(d.code == "MS208" and "backend" in d.message for d in result.diagnostics)


@pytest.mark.parametrize("source", [
    'einsum(x, x, "... i, ... i -> ...")',
    'einsum(x, x, pattern)',
    'einsum(x, x, f"b i d, {pattern} -> b i j")',
])
def test_einsum_not_written_out_is_read_when_it_runs(source):
    """An einsum whose pattern the conversion cannot write out becomes a call of the
    function emitted beside the code (einops' backend cannot run it: no ops.einsum on CPU)."""
    code = f"from einops import einsum\n\ndef f(x, pattern):\n    return {source}\n"
    result = convert_code(code)
    pattern = source.removeprefix("einsum(x, x, ").removesuffix(")")
    assert f"_einsum_at_run_time({pattern}, (x, x), True)" in result.code
    assert "def _einsum_at_run_time(" in result.code
    assert not re.search(r"^\s*(import|from)\s+einops", result.code, re.M)  # nor einops' backend
    assert result.stats.unconverted == 0 and result.stats.converted == 1


@pytest.mark.parametrize("source", [
    'Rearrange(pattern)',
])
def test_not_lowered_is_marked_and_counted(source):
    code = (f"from einops import rearrange, reduce, einsum\nfrom einops.layers.torch import Rearrange\n\n"
            f"def f(x, pattern):\n    return {source}\n")
    result = convert_code(code)
    assert "# transpile: MS208" in result.code
    assert source in result.code  # left as it was
    assert result.stats.unconverted == 1 and result.stats.converted == 0
    assert re.search(r"^from einops", result.code, re.M)  # still needed: kept


def test_einops_only_file_converts():
    """A file that imports einops and not torch is converted, its einops import dropped."""
    result = convert_code('from einops import rearrange\n\ndef f(x):\n    return rearrange(x, "a b -> b a")\n')
    assert "einops" not in result.code and "ops.permute(x, (1, 0))" in result.code
    assert result.stats.converted == 1


# x-transformers' attention: the kv pattern chosen when it runs, in an f-string; torch.einsum
# with an ellipsis beside it. The emitted function plans in ms.constexpr, so GRAPH mode
# compiles it with the equation and the shapes as constants.
RUNTIME_EINSUM_MODULE = '''import torch
import torch.nn as nn
from einops import einsum


class Attend(nn.Module):
    def forward(self, q, k, w):
        kv_einsum_eq = "b j d" if k.ndim == 3 else "b h j d"
        sim = einsum(q, k, f"b h i d, {kv_einsum_eq} -> b h i j")
        attn = sim.softmax(dim=-1)
        out = einsum(attn, k, f"b h i j, {kv_einsum_eq} -> b h i d")
        return torch.einsum("...d,de->...e", out, w)
'''


@pytest.mark.parametrize("kv_heads", [False, True])
@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_einsum_read_when_it_runs_in_both_modes(mode, kv_heads, tmp_path, monkeypatch):
    import importlib
    import sys

    import mindspore
    import numpy as np
    import torch

    result = convert_code(RUNTIME_EINSUM_MODULE)
    assert "_einsum_at_run_time(" in result.code and "# transpile:" not in result.code, result.code
    assert not re.search(r"^\s*(import|from)\s+(einops|torch)\b", result.code, re.M), result.code
    (tmp_path / "runtime_einsum_case.py").write_text(result.code)  # GRAPH mode reads construct's module
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "runtime_einsum_case", raising=False)
    ms_ns = vars(importlib.import_module("runtime_einsum_case"))
    torch_ns: dict = {}
    exec(compile(RUNTIME_EINSUM_MODULE, "<torch>", "exec"), torch_ns)
    rng = np.random.default_rng(0)
    inputs = (rng.standard_normal((2, 3, 4, 5)).astype("float32"),
              rng.standard_normal((2, 3, 6, 5) if kv_heads else (2, 6, 5)).astype("float32"),
              rng.standard_normal((5, 7)).astype("float32"))
    expected = torch_ns["Attend"]()(*(torch.from_numpy(x) for x in inputs)).numpy()
    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        actual = ms_ns["Attend"]()(*(mindspore.Tensor(x) for x in inputs)).asnumpy()
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, atol=1e-5, rtol=1e-5)
