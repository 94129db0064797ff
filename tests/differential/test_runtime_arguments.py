"""Differential tests: torch functions called with ``*args``/``**kwargs`` that cannot be
matched to parameters where they are written; MS205 converts them when they run.

timm writes ``torch.zeros(1, 1, dim, **dd)`` with ``dd = dict(device=..., dtype=...)``
in nearly every model's constructor; a starred sequence of tensors goes to
``torch.meshgrid(*grids)``. A torch function passed as a value (``partial(torch.cat,
dim=-1)``, denoising-diffusion's attention) becomes a generated function taking torch's
arguments.
"""
from __future__ import annotations

import pytest

from .harness import Case, Suite, arr

DD = 'dd = {"device": None, "dtype": torch.float32}\n        '
CASES = [
    Case("torch.zeros", DD + "return torch.zeros(2, 3, **dd)", (), "varargs-kwargs"),
    Case("torch.zeros", DD + "return torch.zeros((2, 3), **dd)", (), "tuple-kwargs"),
    Case("torch.ones", DD + "return a * torch.ones(3, **dd)", (arr(2, 3),), "renamed-size"),
    Case("torch.empty", DD + "return torch.empty(2, 3, **dd).shape", (), "shape"),
    Case("torch.zeros", 'kw = {"size": (2, 2)}\n        return torch.zeros(**kw)', (), "size-keyword"),
    Case("torch.randn", DD + "return torch.randn(2, 3, **dd).shape", (), "positional-sizes"),
    Case("torch.rand", DD + "return torch.rand((2, 3), **dd).shape", (), "tuple-size"),
    Case("torch.randn", DD + "return torch.randn(4, **dd).dtype", (), "one-size"),
    Case("torch.cat", 'kw = {"dim": 1}\n        return torch.cat([a, b], **kw)', (arr(2, 3), arr(2, 2)), "kwargs"),
    Case("torch.nn.functional.softmax", 'kw = {"dim": -1}\n        return F.softmax(a, **kw)', (arr(2, 3),), "kwargs"),
    Case("torch.meshgrid", "grids = [a, b]\n        return torch.meshgrid(*grids, indexing='ij')", (arr(3), arr(4)), "starred"),
    Case("torch.meshgrid", "return torch.meshgrid(*[a, b], indexing='xy')", (arr(3), arr(4)), "starred-list"),
    # functions passed as values: a generated caller takes torch's arguments
    Case("torch.cat", "import functools\n        return list(map(functools.partial(torch.cat, dim=-1), ((a, b), (b, a))))",
         (arr(2, 3), arr(2, 2)), "partial-value"),
    Case("torch.nn.functional.softmax", "f = F.softmax\n        return f(a, dim=0), f(a, 1)", (arr(2, 3),), "value"),
    Case("torch.sum", "return list(map(torch.sum, (a, b)))", (arr(2, 3), arr(4)), "map-value"),
    # an entry whose hook casts integer inputs (integer_via_float): its value takes torch's arguments
    Case("torch.nn.functional.relu6", "f = F.relu6\n        return f(a * 4), f(input=a, inplace=False)", (arr(2, 3),),
         "value"),
    Case("torch.floor", "return list(map(torch.floor, (a, b)))", (arr(2, 3), arr(4)), "map-value"),
    # getattr on a torch module: a literal name, and names known only at run time
    Case("torch.nn.functional.softmax", "return getattr(F, 'softmax')(a, dim=0)", (arr(2, 3),), "getattr-literal"),
    Case("torch.nn.functional.softmax",
         "names = ['softmax', 'log_softmax']\n        return [getattr(F, n)(a, 1) for n in names]", (arr(2, 3),),
         "getattr-run-time"),
]
SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_api(case: Case) -> None:
    SUITE.check(case)


def test_out_given_at_run_time_is_refused() -> None:
    """What the table refuses is refused when the arguments arrive at run time too."""
    import warnings

    from transpile import convert_code

    source = ("import torch\n\ndef f(x):\n    kw = {'out': x}\n    return torch.zeros(2, **kw)\n")
    result = convert_code(source)
    namespace: dict = {}
    warnings.filterwarnings("ignore")
    exec(compile(result.code, "converted", "exec"), namespace)
    import mindspore

    with pytest.raises(ValueError, match="out"):
        namespace["f"](mindspore.Tensor([0.0, 0.0]))
