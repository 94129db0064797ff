"""Differential tests for torch.nn.init (rewrites/tables/nn_init.toml), with the shared
function-style harness: each case fills an input tensor in place through the
converted code and returns it (deterministic initialisers: compared exactly) or its
statistics (random initialisers: mean, std and range of 256x256 draws compared with
a tolerance of 5 % of the distribution's spread, since the RNG streams differ; both
streams are seeded so that a run is reproducible).

Every converted entry has cases; entries with arguments have three call forms.
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import Case, Suite, arr, coverage_gaps, table_entries
from .layer_harness import signature_problems

CASES: list[Case] = []


def _seed() -> None:
    import mindspore
    import torch

    torch.manual_seed(0)
    mindspore.set_seed(0)


PREFIX = "torch.nn.init."
BIG = np.zeros((256, 256), "float32")
CONV = np.zeros((64, 32, 3, 3), "float32")
STATS = "return a.mean(), a.std(), a.min(), a.max()"
MOMENTS = "return a.mean(), a.std()"
WHY = "random initialiser: compares the statistics of 65536 draws"


def case(name: str, call: str, inputs=(BIG,), form: str = "", **opts) -> None:
    CASES.append(Case(PREFIX + name, call, tuple(inputs), form, **opts))


def stats(name: str, calls: dict[str, str], inputs=(BIG,), ret: str = STATS, scale: float = 1.0) -> None:
    """Random initialisers: the torch and converted statistics agree within 5 % of
    ``scale`` (the distribution's spread; the standard error of the mean of 65536 draws
    is ~0.4 % of it)."""
    for form, call in calls.items():
        case(name, f"{call}\n{ret}", inputs, form, atol=0.05 * scale, rtol=0.0, why=WHY)


def deterministic(name: str, calls: dict[str, str], inputs) -> None:
    for form, call in calls.items():
        case(name, call, inputs, form)


for suffix in ("_", ""):
    # deterministic
    if suffix:
        deterministic("constant", {"positional": "nn.init.constant(a, 0.5)", "keyword": "nn.init.constant(tensor=a, val=0.5)",
                                   "int": "nn.init.constant(a, 3)"}, (arr(3, 4),))
        deterministic("eye", {"positional": "nn.init.eye(a)", "keyword": "nn.init.eye(tensor=a)",
                              "square": "nn.init.eye(a)"}, (arr(3, 5),))
        deterministic("dirac", {"positional": "nn.init.dirac(a, 2)", "keyword": "nn.init.dirac(tensor=a, groups=2)",
                                "defaults": "nn.init.dirac(a)"}, (arr(4, 2, 3, 3),))
    n = lambda f: f"nn.init.{f}{suffix}"  # noqa: E731
    stats(f"normal{suffix}", {
        "positional": f"{n('normal')}(a, 2.0, 0.5, None)",
        "keyword": f"{n('normal')}(tensor=a, mean=2.0, std=0.5, generator=None)",
        "defaults": f"{n('normal')}(a)",
    }, ret=MOMENTS, scale=1.0)
    stats(f"uniform{suffix}", {
        "positional": f"{n('uniform')}(a, 0.5, 2.0, None)",
        "keyword": f"{n('uniform')}(tensor=a, a=-1.5, b=1.5, generator=None)",
        "defaults": f"{n('uniform')}(a)",
    })
    stats(f"xavier_uniform{suffix}", {
        "positional": f"{n('xavier_uniform')}(a, 2.0, None)",
        "keyword": f"{n('xavier_uniform')}(tensor=a, gain=2.0, generator=None)",
        "defaults": f"{n('xavier_uniform')}(a)",
    }, scale=0.2)
    stats(f"xavier_normal{suffix}", {
        "positional": f"{n('xavier_normal')}(a, 2.0, None)",
        "keyword": f"{n('xavier_normal')}(tensor=a, gain=2.0, generator=None)",
        "defaults": f"{n('xavier_normal')}(a)",
    }, ret=MOMENTS, scale=0.1)
    stats(f"kaiming_uniform{suffix}", {
        "positional": f"{n('kaiming_uniform')}(a, 0.2, 'fan_out', 'leaky_relu', None)",
        "keyword": f"{n('kaiming_uniform')}(tensor=a, a=0.0, mode='fan_in', nonlinearity='relu', generator=None)",
        "defaults": f"{n('kaiming_uniform')}(a)",
    }, inputs=(CONV,), scale=0.1)
    stats(f"kaiming_normal{suffix}", {
        "positional": f"{n('kaiming_normal')}(a, 0.2, 'fan_out', 'leaky_relu', None)",
        "keyword": f"{n('kaiming_normal')}(tensor=a, a=0.0, mode='fan_in', nonlinearity='relu', generator=None)",
        "defaults": f"{n('kaiming_normal')}(a)",
    }, inputs=(CONV,), ret=MOMENTS, scale=0.1)
    stats(f"orthogonal{suffix}", {
        "positional": f"{n('orthogonal')}(a, 2.0, None)",
        "keyword": f"{n('orthogonal')}(tensor=a, gain=2.0, generator=None)",
        "defaults": f"{n('orthogonal')}(a)",
    }, inputs=(np.zeros((6, 4), "float32"),), ret="return a.t() @ a", scale=0.5)
    stats(f"sparse{suffix}", {
        "positional": f"{n('sparse')}(a, 0.5, 0.1, None)",
        "keyword": f"{n('sparse')}(tensor=a, sparsity=0.5, std=0.1, generator=None)",
        "defaults": f"{n('sparse')}(a, 0.3)",
    }, ret="return (a == 0).float().mean(), a.std()", scale=0.5)

deterministic("zeros_", {"positional": "nn.init.zeros_(a)", "keyword": "nn.init.zeros_(tensor=a)",
                         "3d": "nn.init.zeros_(a)"}, (arr(2, 3, 4),))
deterministic("ones_", {"positional": "nn.init.ones_(a)", "keyword": "nn.init.ones_(tensor=a)",
                        "1d": "nn.init.ones_(a)"}, (arr(5),))
deterministic("constant_", {"positional": "nn.init.constant_(a, 0.5)", "keyword": "nn.init.constant_(tensor=a, val=0.5)",
                            "int": "nn.init.constant_(a, 3)"}, (arr(3, 4),))
deterministic("eye_", {"positional": "nn.init.eye_(a)", "keyword": "nn.init.eye_(tensor=a)", "wide": "nn.init.eye_(a)"},
              (arr(3, 5),))
deterministic("dirac_", {"positional": "nn.init.dirac_(a, 2)", "keyword": "nn.init.dirac_(tensor=a, groups=2)",
                         "defaults": "nn.init.dirac_(a)"}, (arr(4, 2, 3, 3),))
stats("trunc_normal_", {
    "positional": "nn.init.trunc_normal_(a, 1.0, 0.5, 0.0, 2.0, None)",
    "keyword": "nn.init.trunc_normal_(tensor=a, mean=1.0, std=0.5, a=0.0, b=2.0, generator=None)",
    "defaults": "nn.init.trunc_normal_(a)",
})
case("trunc_normal_", f"nn.init.trunc_normal_(a, std=0.02)\n{MOMENTS}", (BIG,), "std", atol=0.001, rtol=0.0, why=WHY)
case("normal_", "w = a[0]\nnn.init.normal_(w, 0.0, 0.01)\nreturn w.shape", (arr(3, 4),), "view")

# the in-place functions used as values (transformers keeps them in a dict before patching
# torch): a call through the value takes torch's arguments and fills in place, a
# Parameter too
VALUES = 'fills = {"normal_": nn.init.normal_, "uniform_": nn.init.uniform_, "constant_": nn.init.constant_}'
stats("normal_", {"value": f'{VALUES}\nfills["normal_"](a, mean=2.0, std=0.5, generator=None)'}, ret=MOMENTS)
stats("uniform_", {"value": f'{VALUES}\nr = fills["uniform_"](a, 0.5, 2.0)\nassert r is a'})
stats("trunc_normal_", {"value": "fill = nn.init.trunc_normal_\nfill(a, std=0.5, a=-1.0, b=1.0)"}, scale=0.5)
stats("kaiming_uniform_", {"value": "fill = nn.init.kaiming_uniform_\nfill(a, a=0.2, mode='fan_out')"},
      inputs=(CONV,), scale=0.1)
deterministic("constant_", {"value": f'{VALUES}\np = nn.Parameter(a)\nfills["constant_"](p, val=0.25)\nreturn p * 1'},
              (arr(3, 4),))
deterministic("zeros_", {"value": "fill = nn.init.zeros_\np = nn.Parameter(a)\nfill(p)\nreturn p + 1"}, (arr(2, 3),))
deterministic("eye_", {"value": "fills = [nn.init.eye_, nn.init.ones_]\nfills[0](a)\nreturn a"}, (arr(3, 5),))
deterministic("dirac_", {"value": "fill = nn.init.dirac_\nfill(a, groups=2)\nreturn a"}, (arr(4, 2, 3, 3),))
# an integer buffer (BERT's token_type_ids) stays integer
deterministic("zeros_", {"int": "ids = torch.ones(2, 3, dtype=torch.long)\nfill = nn.init.zeros_\nfill(ids)\nreturn ids"},
              ())

for form, call in {
    "positional": "nn.init.calculate_gain('leaky_relu', 0.2)",
    "keyword": "nn.init.calculate_gain(nonlinearity='tanh', param=None)",
    "defaults": "nn.init.calculate_gain('relu')",
    "selu": "nn.init.calculate_gain('selu')",
    "conv": "nn.init.calculate_gain('conv2d')",
    "default_slope": "nn.init.calculate_gain('leaky_relu')",
}.items():
    case("calculate_gain", call, (), form)

for form, call in {"positional": "nn.init._calculate_fan_in_and_fan_out(a)",
                   "keyword": "nn.init._calculate_fan_in_and_fan_out(tensor=a)",
                   "slice": "nn.init._calculate_fan_in_and_fan_out(a[0])"}.items():
    case("_calculate_fan_in_and_fan_out", call, (arr(8, 4, 3, 3),), form)
case("_calculate_fan_in_and_fan_out", "nn.init._calculate_fan_in_and_fan_out(a)", (arr(5, 7),), "linear")

SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_init(case):
    _seed()
    SUITE.check(case)


def test_every_init_entry_has_cases():
    gaps = coverage_gaps(["nn_init.toml"], SUITE.cases)
    assert not any(gaps.values()), gaps


def test_entries_match_installed_signatures():
    problems = signature_problems(table_entries(["nn_init.toml"]))
    assert not problems, "\n".join(problems)


APPLY_INIT = '''
import torch
import torch.nn as nn


def init_weights(m):
    # the DCGAN example's dispatch on the class name: the layer's type is unknown here
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.constant_(m.weight.data, 0.25)
    elif classname.find("BatchNorm") != -1:
        nn.init.constant_(m.weight.data, 1.5)
        nn.init.zeros_(m.bias)
    elif classname.find("Embedding") != -1:
        nn.init.uniform_(m.weight, 2.0, 2.0)
    elif type(m).__name__ == "Linear":  # MindSpore's class is Dense
        nn.init.constant_(m.weight, 0.75)


def build():
    model = nn.Sequential(nn.Embedding(5, 4), nn.Conv1d(5, 3, 1), nn.BatchNorm1d(3), nn.Linear(4, 2))
    model.apply(init_weights)
    return model
'''


def test_init_function_given_to_apply_reaches_every_layers_parameters():
    """``model.apply(init)`` with ``m.weight``/``m.bias`` read on a layer of any class: each
    converted layer's parameter under its MindSpore name is filled as torch fills the torch
    one (BatchNorm's gamma/beta, Embedding's embedding_table); the class names compared are
    torch's (Linear, whose MindSpore class is Dense)."""
    import torch  # noqa: F401
    from transpile import convert_code

    result = convert_code(APPLY_INIT, filename="apply_init.py")
    assert "# transpile:" not in result.code, result.code
    torch_namespace: dict = {"__name__": "torch_apply_init"}
    exec(compile(APPLY_INIT, "torch_apply_init", "exec"), torch_namespace)
    expected = {k: v.detach().numpy() for k, v in torch_namespace["build"]().state_dict().items()}
    namespace: dict = {"__name__": "converted_apply_init"}
    exec(compile(result.code, "converted_apply_init", "exec"), namespace)
    model = namespace["build"]()
    actual = {p.name: p.asnumpy() for p in model.get_parameters()}
    pairs = {"0.weight": "0.embedding_table", "1.weight": "1.weight", "2.weight": "2.gamma", "2.bias": "2.beta",
             "3.weight": "3.weight"}
    for torch_name, ms_name in pairs.items():
        ms_key = next(k for k in actual if k.endswith(ms_name))
        np.testing.assert_allclose(actual[ms_key].reshape(expected[torch_name].shape), expected[torch_name],
                                   err_msg=torch_name)


NARROWED_INIT = '''
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.relative_bias = nn.Embedding(6, 2)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Embedding(5, 4)
        self.attention = Attention()
        self.norm = nn.LayerNorm(4)


class Decoder(Encoder):
    pass


def init_weights(module):
    # transformers' _init_weights: the layer's class is known from an isinstance test of a
    # class of the file, not of torch
    if isinstance(module, Attention):
        nn.init.constant_(module.q.weight, 0.5)
        nn.init.constant_(module.relative_bias.weight, 0.25)
    elif isinstance(module, (Encoder, Decoder)):
        nn.init.constant_(module.shared.weight, 1.5)
        nn.init.constant_(module.norm.weight, 2.0)
        nn.init.constant_(module.norm.bias, -1.0)


def build():
    model = Encoder()
    for each in model.modules():
        init_weights(each)
    return model
'''


def test_init_reaches_layers_of_a_class_an_isinstance_test_names():
    """``module.relative_bias.weight`` in ``if isinstance(module, Attention)`` (a class of the
    file): the type index knows what the class's attribute holds, so the Embedding's and the
    LayerNorm's parameters are written under MindSpore's names, as torch writes its own."""
    from transpile import convert_code

    result = convert_code(NARROWED_INIT, filename="narrowed_init.py")
    assert "relative_bias.embedding_table" in result.code and "shared.embedding_table" in result.code, result.code
    torch_namespace: dict = {"__name__": "torch_narrowed_init"}
    exec(compile(NARROWED_INIT, "torch_narrowed_init", "exec"), torch_namespace)
    expected = {k: v.detach().numpy() for k, v in torch_namespace["build"]().state_dict().items()}
    namespace: dict = {"__name__": "converted_narrowed_init"}
    exec(compile(result.code, "converted_narrowed_init", "exec"), namespace)
    actual = {p.name: p.asnumpy() for p in namespace["build"]().get_parameters()}
    pairs = {"shared.weight": "shared.embedding_table", "attention.q.weight": "attention.q.weight",
             "attention.relative_bias.weight": "attention.relative_bias.embedding_table",
             "norm.weight": "norm.gamma", "norm.bias": "norm.beta"}
    for torch_name, ms_name in pairs.items():
        np.testing.assert_allclose(actual[ms_name], expected[torch_name], err_msg=torch_name)
