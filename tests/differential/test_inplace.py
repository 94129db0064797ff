"""Differential tests for in-place methods and functions and torch.*_copy (tables
"tensor_inplace.toml" and "torch_inplace.toml").

An in-place case returns both the call's result and the tensor it wrote into
(``r = a.acos_()`` / ``return r, a``), and a "statement" case discards the result,
so the mutation itself is compared. A *_copy case also checks that its result is a
tensor of its own: ``b = torch.t_copy(a)``, then ``a`` changes, ``b`` must not.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from .harness import Case, Suite, arr, bools, call_forms, converted_and_run, converted_markers, coverage_gaps, ints, pos

CASES: list[Case] = []
TABLES = ("tensor_inplace.toml", "torch_inplace.toml")
F32 = "float32"


def case(api: str, code: str, inputs=(), form: str = "", **opts) -> None:
    CASES.append(Case(api, code, tuple(inputs), form, **opts))


def inplace_forms(api: str, args: str, inputs=(), **kwargs) -> None:
    """``call_forms`` with each call's result and the mutated ``a`` returned, and the
    first form once more as a statement."""
    forms: list[Case] = []
    call_forms(forms, api, args, inputs, **kwargs)
    for c in forms:
        CASES.append(dataclasses.replace(c, code=f"r = {c.code}\n    return r, a"))
    CASES.append(dataclasses.replace(forms[0], code=f"{forms[0].code}\n    return a", form="statement"))


X = arr(3, 4)
Y = arr(3, 4)
UNIT = arr(3, 4, low=-0.9, high=0.9)
ABOVE_ONE = arr(3, 4, low=1.1, high=3.0)
B_POS = pos(3, 4)
WHOLE = ints(3, 4, low=-3, high=3).astype(F32)  # float tensors of whole numbers: eq_ writes 1.0 / 0.0
WHOLE_B = ints(3, 4, low=-3, high=3).astype(F32)
INTS = ints(3, 4, low=1, high=30)
INTS_B = ints(3, 4, low=1, high=30)
SPECIAL = np.array([[1.0, np.inf, -np.inf, np.nan], [0.0, -1.0, 2.0, np.nan]], dtype=F32)
ZERO_ONE = (arr(3, 4, low=0, high=1) > 0.5).astype(F32)  # probabilities that draw surely

# -- Tensor in-place methods ---------------------------------------------------------------
UNARY = {
    "absolute": X, "acos": UNIT, "acosh": ABOVE_ONE, "arccos": UNIT, "arccosh": ABOVE_ONE, "arcsin": UNIT,
    "arcsinh": X, "arctan": X, "arctanh": UNIT, "asin": UNIT, "asinh": X, "atan": X, "atanh": UNIT,
    "cosh": X, "deg2rad": X * 90, "erfc": X, "fix": X * 3, "i0": X, "logical_not": bools(3, 4),
    "negative": X, "rad2deg": X, "sgn": X, "sinc": X, "sinh": X, "tan": UNIT, "detach": X,
}
for name, x in UNARY.items():
    inplace_forms(f"Tensor.{name}_", "", (x,))
# torch writes True/False into a float tensor as 1.0/0.0
inplace_forms("Tensor.logical_not_", "", (WHOLE,), only=("call",))

BINARY = {  # name -> (receiver, other, scalar other or None)
    "arctan2": (X, Y, None), "bitwise_and": (INTS, INTS_B, 6), "bitwise_or": (INTS, INTS_B, 6),
    "bitwise_xor": (INTS, INTS_B, 6), "copysign": (X, Y, -1.0), "eq": (WHOLE, WHOLE_B, 1.0),
    "floor_divide": (X * 4, B_POS, 1.5), "gcd": (INTS, INTS_B, None), "ge": (WHOLE, WHOLE_B, 0.5),
    "greater": (X, Y, 0.5), "greater_equal": (WHOLE, WHOLE_B, 0.0), "gt": (X, Y, 0.5),
    "igamma": (pos(3, 4), pos(3, 4), None), "igammac": (pos(3, 4), pos(3, 4), None),
    "lcm": (ints(3, 4, low=1, high=12), ints(3, 4, low=1, high=12), None),
    "ldexp": (X, ints(3, 4, high=4, dtype="int32"), None), "le": (WHOLE, WHOLE_B, 0.0), "less": (X, Y, 0.5),
    "less_equal": (WHOLE, WHOLE_B, 1.0), "logical_and": (bools(3, 4), bools(3, 4), None),
    "logical_or": (bools(3, 4), bools(3, 4), None), "logical_xor": (bools(3, 4), bools(3, 4), None),
    "lt": (X, Y, -0.5), "multiply": (X, Y, 2.5), "ne": (WHOLE, WHOLE_B, 1.0), "nextafter": (X, Y, None),
    "not_equal": (WHOLE, WHOLE_B, 0.0), "xlogy": (B_POS, pos(3, 4), None),
}
for name, (x, y, scalar) in BINARY.items():
    inplace_forms(f"Tensor.{name}_", "other=b", (x, y), extra=() if scalar is None else (repr(scalar),))
for name in ("logical_and", "logical_or", "logical_xor"):  # a float receiver keeps its dtype
    inplace_forms(f"Tensor.{name}_", "other=b", (WHOLE, WHOLE_B), only=("positional",))

HEAVISIDE = np.array([[-1.0, 0.0, 2.0, 0.0], [0.0, 3.0, -2.0, 1.0]], dtype=F32)
inplace_forms("Tensor.heaviside_", "values=b", (HEAVISIDE, arr(2, 4)))
inplace_forms("Tensor.float_power_", "exponent=b", (pos(3, 4, dtype="float64"), arr(3, 4, dtype="float64")), extra=("2",))
inplace_forms("Tensor.divide_", "other=b", (X, B_POS), kw="rounding_mode='floor'", extra=("2.0, rounding_mode='trunc'",))
inplace_forms("Tensor.subtract_", "other=b", (X, Y), kw="alpha=2", extra=("1.5",))
inplace_forms("Tensor.true_divide_", "other=b", (X, B_POS), extra=("2.0",))
inplace_forms("Tensor.multiply_", "other=b", (X, arr(4)), only=("positional",))  # broadcast other
for name, (shapes) in {"addbmm": ((3, 5), (2, 3, 4), (2, 4, 5)), "addmm": ((3, 5), (3, 4), (4, 5)),
                       "addmv": ((3,), (3, 4), (4,)), "addr": ((3, 4), (3,), (4,)),
                       "baddbmm": ((2, 3, 5), (2, 3, 4), (2, 4, 5))}.items():
    first, second = {"addbmm": ("batch1", "batch2"), "addmm": ("mat1", "mat2"), "addmv": ("mat", "vec"),
                     "addr": ("vec1", "vec2"), "baddbmm": ("batch1", "batch2")}[name]
    inplace_forms(f"Tensor.{name}_", f"{first}=b, {second}=c", tuple(arr(*s) for s in shapes),
                  kw="beta=0.5, alpha=2.0")
inplace_forms("Tensor.clip_", "min=-0.5, max=0.5", (X,), req=1, extra=("None, 0.2",))
for name in ("cumsum", "cumprod"):
    inplace_forms(f"Tensor.{name}_", "dim=1", (arr(3, 4, low=0.5, high=1.5, dtype="float64"),), kw="dtype=torch.float64", extra=("-1",))
inplace_forms("Tensor.mvlgamma_", "p=2", (arr(3, 4, low=1.5, high=3.0),), extra=("1",))
inplace_forms("Tensor.round_", "", (X * 10,), kw="decimals=0")
SCATTER_INDEX = np.argsort(arr(3, 4), axis=1)[:, :2].astype("int64")  # distinct per row: one writer each
# MindSpore's scatter takes src of the index's shape only (torch reads a corner of a larger one)
inplace_forms("Tensor.scatter_", "dim=1, index=b, src=c", (X, SCATTER_INDEX, arr(3, 2)), extra=("1, b, 0.5",))
inplace_forms("Tensor.scatter_", "dim=1, index=b, value=1.5", (X, SCATTER_INDEX), only=("keyword",))
case("Tensor.scatter_", "a.scatter_(1, b, value=0.5)\n    return a", (X, SCATTER_INDEX), "value")
inplace_forms("Tensor.scatter_add_", "dim=1, index=b, src=c", (X, ints(3, 2, high=4), arr(3, 2)))
inplace_forms("Tensor.bernoulli_", "p=b", (X, ZERO_ONE), extra=("0.0", "1.0"))
case("Tensor.bernoulli_", "r = a.bernoulli_()\n    return r, a", (X,), "defaults-random", random=True)
case("Tensor.bernoulli_", "a.bernoulli_(0.5)\n    return a", (X,), "statement-random", random=True)

TALL = arr(7, 3)
inplace_forms("Tensor.fill_diagonal_", "fill_value=2.5, wrap=True", (TALL,), req=1, extra=("-1.0",))
inplace_forms("Tensor.fill_diagonal_", "fill_value=0", (arr(3, 5),), only=("positional",))  # wide
inplace_forms("Tensor.fill_diagonal_", "fill_value=7, wrap=True", (ints(3, 3, 3, high=5),), only=("positional",))
inplace_forms("Tensor.fill_diagonal_", "fill_value=True", (bools(4, 4),), only=("positional",))

# random fills: shapes and dtypes in three forms, then the distribution: moments and
# probabilities of a large draw on both sides (two independent samples of 200000)
MANY = arr(400, 500)
SAMPLED = {"why": "two independent samples of 200000 draws agree this closely", "atol": 0.03, "rtol": 0.0}
for name, args in {"exponential": "lambd=2.0", "cauchy": "median=1.0, sigma=2.0", "log_normal": "mean=1.0, std=0.5",
                   "geometric": "p=0.3", "random": "to=7"}.items():
    inplace_forms(f"Tensor.{name}_", args, (X,), req=1 if name in ("geometric", "random") else 0, random=True)
for name, code in {
    "exponential": "a.exponential_(2.0)\n    return a.mean(), (a < 0.5).float().mean(), (a >= 0).all()",
    "cauchy": "a.cauchy_(1.0, 2.0)\n    return ((a > 1.0) & (a < 3.0)).float().mean(), (a < -1.0).float().mean()",
    "log_normal": "a.log_normal_(1.0, 0.5)\n    return a.log().mean(), a.log().std(), (a > 0).all()",
    "geometric": "a.geometric_(0.3)\n    return a.mean() / 10, (a == 1).float().mean(), (a == a.floor()).all(), (a >= 1).all()",
    "random": "a.random_(2, 7)\n    return a.mean() / 10, (a == 2).float().mean(), (a >= 2).all(), (a < 7).all(), (a == a.floor()).all()",
}.items():
    case(f"Tensor.{name}_", code, (MANY,), "distribution", **SAMPLED)
case("Tensor.random_", "a.random_(5)\n    return (a == 0).float().mean(), a.max(), a.min()", (MANY,), "distribution-end", **SAMPLED)

# resize_: the elements in order, in the new shape; torch leaves new ones uninitialized,
# so a lengthened tensor is compared on its old elements and its shape
inplace_forms("Tensor.resize_", "size=(3, 2)", (arr(2, 3),), extra=("6", "[2, 1, 3]", "2, 3"))
inplace_forms("Tensor.resize_", "size=(2, 2)", (arr(2, 3),), only=("positional",))  # cut
case("Tensor.resize_", "c = a.clone()\n    c.resize_(4, 3)\n    c.add_(1.0)\n    return c.reshape(-1)[:6], c.shape", (arr(2, 3),),
     "lengthened")  # (torch cannot grow the storage of a tensor made from numpy)
case("Tensor.resize_", "b = a\n    a.resize_(6)\n    return b", (arr(2, 3),), "alias")
inplace_forms("Tensor.resize_as_", "the_template=b", (arr(2, 3), arr(3, 2)), extra=("b.t()",))
inplace_forms("torch.resize_as_", "input=a, the_template=b", (arr(2, 3), arr(6)))

# apply_ / map_: Python numbers in, the receiver's dtype out (an int tensor truncates)
inplace_forms("Tensor.apply_", "callable=lambda v: v * 2 + 1", (X,), posonly=1, only=("positional",),
              extra=("lambda v: v / 3", "abs"))
inplace_forms("Tensor.apply_", "callable=lambda v: v / 2", (ints(3, 4, low=-5, high=5),), posonly=1, only=("positional",))
inplace_forms("Tensor.map_", "other=b, callable=lambda v, w: v * w - 1", (X, arr(4)), extra=("b, max",))
inplace_forms("Tensor.map2_", "x=b, y=c, callable=lambda u, v, w: u + v * w", (X, arr(4), arr(3, 1)), extra=("b, c, min",))

# set_: the receiver shares the source's memory, both ways
inplace_forms("Tensor.set_", "source=b", (X, arr(2, 6)))
case("Tensor.set_", "a.set_(b)\n    b.add_(1.0)\n    r = a.clone()\n    a.zero_()\n    return r, a, b", (X, arr(2, 6)), "shared")
case("Tensor.set_", "r = a.set_()\n    return r.shape, a.shape", (X,), "emptied")

# shape-changing: the receiver takes the new shape, and stays writable in place
RESHAPED = {  # name -> (args, input)
    "squeeze": ("dim=1", arr(3, 1, 4)), "unsqueeze": ("dim=0", X), "t": ("", X),
    "transpose": ("dim0=0, dim1=2", arr(2, 3, 4)), "swapaxes": ("axis0=0, axis1=2", arr(2, 3, 4)),
    "swapdims": ("dim0=2, dim1=1", arr(2, 3, 4)),
}
for name, (args, x) in RESHAPED.items():
    inplace_forms(f"Tensor.{name}_", args, (x,), req=0 if name == "squeeze" else None,
                  extra=("-1",) if name in ("squeeze", "unsqueeze") else ())
    call = f"a.{name}_({', '.join(v.split('=')[1] for v in args.split(', ')) if args else ''})"
    case(f"Tensor.{name}_", f"{call}\n    a.mul_(2.0)\n    a.add_(1.0)\n    return a", (x,), "written-after")
case("Tensor.unsqueeze_", "m = torch.zeros(3, 4).unsqueeze_(0)\n    return m", (), "fresh")
case("Tensor.t_", "a.t_()\n    return a", (arr(4),), "1-d")
case("Tensor.squeeze_", "a.squeeze_()\n    a.add_(1.0)\n    return a", (arr(1, 1),), "to-0-d")
case("Tensor.transpose_", "b = a\n    a.transpose_(0, 1)\n    return b", (arr(2, 3),), "alias")  # one tensor, two names

# edges: the receiver an attribute, a tensor bound, a fresh tensor, a 0-d tensor value
case("Tensor.cumsum_", "self.h = a\n    self.h.cumsum_(0)\n    return self.h", (X,), "attribute")
case("Tensor.clip_", "a.clip_(min=b)\n    return a", (X, Y), "tensor-min")
case("Tensor.eq_", "a.eq_(b)\n    return a", (ints(3, 4, high=3, dtype="int32"), ints(3, 4, high=3, dtype="int32")), "int")
case("torch.exp_", "torch.exp_(torch.zeros(3))", (), "fresh")
case("Tensor.fill_diagonal_", "a.fill_diagonal_(b.max())\n    return a", (arr(3, 3), arr(2)), "0-d-tensor")
for rows in (4, 9):  # wrap at height = width + 1 (nothing to wrap) and well beyond
    case("Tensor.fill_diagonal_", "a.fill_diagonal_(3.0, True)\n    return a", (arr(rows, 3),), f"wrap-{rows}")

# -- torch.* in-place functions ------------------------------------------------------------
FUNCTION_UNARY = {
    "abs": X, "acos": UNIT, "acosh": ABOVE_ONE, "arccos": UNIT, "arccosh": ABOVE_ONE, "arcsin": UNIT,
    "arcsinh": X, "arctan": X, "arctanh": UNIT, "asin": UNIT, "asinh": X, "atan": X, "atanh": UNIT,
    "ceil": X, "cos": X, "cosh": X, "deg2rad": X * 90, "detach": X, "erf": X, "erfc": X, "exp2": X,
    "exp": X, "expm1": X, "fix": X * 3, "floor": X, "frac": X * 3, "i0": X, "log10": B_POS, "log1p": B_POS,
    "log2": B_POS, "log": B_POS, "neg": X, "negative": X, "rad2deg": X, "reciprocal": B_POS,
    "rsqrt": B_POS, "sigmoid": X, "sin": X, "sinc": X, "sinh": X, "sqrt": B_POS, "square": X, "tan": UNIT,
    "tanh": X, "trunc": X * 3, "zero": X,
}
for name, x in FUNCTION_UNARY.items():
    inplace_forms(f"torch.{name}_", "input=a", (x,), extra=("a",))
inplace_forms("torch.conj_physical_", "input=a", ((arr(3, 4) + 1j * arr(3, 4)).astype("complex64"),), extra=("a",))
for name, (x, y) in {"gcd": (INTS, INTS_B), "lcm": (ints(3, 4, low=1, high=12), ints(3, 4, low=1, high=12)),
                     "ldexp": (X, ints(3, 4, high=4, dtype="int32")), "xlogy": (B_POS, pos(3, 4))}.items():
    inplace_forms(f"torch.{name}_", "input=a, other=b", (x, y))
inplace_forms("torch.addmv_", "input=a, mat=b, vec=c", (arr(3), arr(3, 4), arr(4)), kw="beta=0.5, alpha=2.0")
for name in ("clamp", "clip"):
    inplace_forms(f"torch.{name}_", "input=a, min=-0.5, max=0.5", (X,), req=2, extra=("a, None, 0.2",))
inplace_forms("torch.clamp_max_", "input=a, max=0.5", (X, Y), extra=("a, b",))
inplace_forms("torch.clamp_min_", "input=a, min=-0.5", (X, Y), extra=("a, b",))
inplace_forms("torch.fill_", "input=a, value=2.5", (X,), extra=("a, 3",))
inplace_forms("torch.logit_", "input=a, eps=1e-3", (arr(3, 4, low=0.0, high=1.0),), req=1)
inplace_forms("torch.nan_to_num_", "input=a, nan=0.5, posinf=1.0, neginf=-1.0", (SPECIAL,), req=1)
inplace_forms("torch.round_", "input=a", (X * 10,), kw="decimals=0")
inplace_forms("torch.dropout_", "input=a, p=0.0, train=True", (X,), extra=("a, 0.5, False",))
case("torch.dropout_", "r = torch.dropout_(a, 0.5, True)\n    return r, a", (X,), "random", random=True)
EMBEDDING = arr(6, 4, low=-3.0, high=3.0)
inplace_forms("torch.embedding_renorm_", "input=a, indices=b, max_norm=1.5, norm_type=2.0", (EMBEDDING, np.array([[0, 2], [2, 5]])))
for norm in ("1.0", "3.0", "float('inf')"):
    case("torch.embedding_renorm_", f"torch.embedding_renorm_(a, b, 2.0, {norm})\n    return a", (EMBEDDING, np.array([1, 3, 4])), f"p={norm}")
inplace_forms("torch.index_put_", "input=a, indices=(b,), values=c, accumulate=True", (arr(5), np.array([0, 2, 3]), arr(3)), req=3)
EMBEDDING = arr(6, 4, low=-3.0, high=3.0)
inplace_forms("torch.embedding_renorm_", "input=a, indices=b, max_norm=1.5, norm_type=2.0", (EMBEDDING, np.array([[0, 2], [2, 5]])))
for norm in ("1.0", "3.0", "float('inf')"):
    case("torch.embedding_renorm_", f"torch.embedding_renorm_(a, b, 2.0, {norm})\n    return a", (EMBEDDING, np.array([1, 3, 4])), f"p={norm}")
inplace_forms("torch.index_put_", "input=a, indices=(b, b), values=c, accumulate=False", (arr(4, 4), np.array([0, 2, 3]), arr(3)), only=("positional",))

# -- torch.*_copy ---------------------------------------------------------------------------
COPIES = {  # name -> (args, inputs, required arguments)
    "alias_copy": ("input=a", (X,), None),
    "unfold_copy": ("input=a, dimension=1, size=2, step=1", (X,), None),
    "slice_copy": ("input=a, dim=1, start=1, end=3, step=1", (X,), 1),
    "split_with_sizes_copy": ("input=a, split_sizes=[2, 3], dim=1", (arr(5, 5),), 2),
    "detach_copy": ("input=a", (X,), None),
    "diagonal_copy": ("input=a, offset=1, dim1=1, dim2=2", (arr(2, 3, 4),), 1),
    "expand_copy": ("input=a, size=(2, 3, 4)", (arr(3, 1),), None),
    "narrow_copy": ("input=a, dim=1, start=1, length=2", (X,), None),
    "permute_copy": ("input=a, dims=(2, 0, 1)", (arr(2, 3, 4),), None),
    "select_copy": ("input=a, dim=1, index=2", (X,), None),
    "split_copy": ("input=a, split_size=2, dim=1", (arr(3, 5),), 2),
    "squeeze_copy": ("input=a, dim=1", (arr(3, 1, 4),), 1),
    "t_copy": ("input=a", (X,), None),
    "transpose_copy": ("input=a, dim0=0, dim1=2", (arr(2, 3, 4),), None),
    "unbind_copy": ("input=a, dim=1", (X,), 1),
    "unsqueeze_copy": ("input=a, dim=1", (X,), None),
    "view_as_complex_copy": ("input=a", (arr(3, 2),), None),
    "view_as_real_copy": ("input=a", ((arr(3, 4) + 1j * arr(3, 4)).astype("complex64"),), None),
    "view_copy": ("input=a, size=(4, 3)", (X,), None),
}
EXTRA = {"alias_copy": "a", "unfold_copy": "a, 0, 2, 1", "slice_copy": "a, -1, None, None, 2", "detach_copy": "a", "t_copy": "a", "view_as_complex_copy": "a", "view_as_real_copy": "a",
         "expand_copy": "a, (-1, 4)", "view_copy": "a, (-1,)", "narrow_copy": "a, 0, 0, 1",
         "permute_copy": "a, [1, 2, 0]", "select_copy": "a, -1, 0", "transpose_copy": "a, -1, 0",
         "unsqueeze_copy": "a, -1"}
for name, (args, inputs, req) in COPIES.items():
    kw = "implicit=False" if name == "expand_copy" else ""
    call_forms(CASES, f"torch.{name}", args, inputs, req=req, kw=kw, extra=(EXTRA[name],) if name in EXTRA else ())
    positional = next(c for c in CASES if c.api == f"torch.{name}" and c.form == "positional")
    case(f"torch.{name}", f"b = {positional.code}\n    a.zero_()\n    return b", inputs, "independent")
case("torch.view_copy", "torch.view_copy(a, torch.int32)", (X,), "dtype")
call_forms(CASES, "Tensor.narrow_copy", "dim=1, start=1, length=2", (X,), extra=("-1, 0, 3",))
case("Tensor.narrow_copy", "b = a.narrow_copy(0, 1, 2)\n    a.zero_()\n    return b", (X,), "independent")
case("torch.slice_copy", "torch.slice_copy(a, 0, -2)", (X,), "negative-start")
case("torch.slice_copy", "torch.slice_copy(a, 1, 1, 100)", (X,), "end-beyond")  # the bits read as another dtype

SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_api(case: Case) -> None:
    SUITE.check(case)


def test_every_converted_entry_has_three_call_forms() -> None:
    assert coverage_gaps(["tensor_inplace.toml", "torch_inplace.toml"], CASES) == {
        "converted entries with no differential case": [],
        "entries taking arguments with fewer than three call forms": [],
    }


REFUSED = {
    # a view in torch, a copy in MindSpore: the tensor it was taken from would not change
    # (the result of arithmetic, held by nobody, converts: test_layer_subclass_arguments.py;
    # an item, a[0].acos_(), is written back: test_item_writes_reach_their_tensor)
    "Tensor.t_": "a[0].t_()",
    "Tensor.resize_": "a.data.resize_(4)",
    "Tensor.set_": "a.set_(b, 1, (2,), (1,))",
    "Tensor.random_": "a.random_()",
    "Tensor.exponential_": "a.exponential_(generator=torch.Generator())",  # a name: refused when it runs
    "torch.expand_copy": "torch.expand_copy(a, (2, 3), implicit=True)",
    "torch.slice_copy": "torch.slice_copy(a, b, 0, 1)",
}


@pytest.mark.parametrize("api", sorted(REFUSED))
def test_refused_calls_are_marked(api: str) -> None:
    """What cannot be converted exactly is left in place with a marker."""
    out, markers = converted_markers(f"import torch\n\n\nclass M:\n    def forward(self, a, b):\n        return {REFUSED[api]}\n")
    assert markers, out


ITEM_WRITES = {  # an in-place call on an item: torch writes through the view, the conversion stores it back
    "Tensor.acos_": "r = a[0].acos_()",
    "torch.exp_": "r = torch.exp_(a[0])",
    "F.relu_": "r = F.relu_(a[0])",
    "Tensor.scatter_": "r = a[0].scatter_(1, b, 0.5, reduce='add')",
}


@pytest.mark.framework
def test_item_writes_reach_their_tensor() -> None:
    """The tensor an item was taken from and the call's result are torch's (one process for all)."""
    import mindspore
    import torch

    for api, line in ITEM_WRITES.items():
        src = ("import torch\nimport torch.nn.functional as F\n\n\nclass M(torch.nn.Module):\n"
               f"    def forward(self, a, b):\n        {line}\n        return a, r\n")
        _, torch_ns, ms_ns = converted_and_run(src, "item_writes.py")
        rng = np.random.default_rng(0)
        a = rng.uniform(-0.9, 0.9, (2, 3, 4)).astype(np.float32)
        b = rng.integers(0, 4, (3, 2)).astype(np.int64)
        expected = torch_ns["M"]()(torch.tensor(a), torch.tensor(b))
        got = ms_ns["M"]()(mindspore.Tensor(a), mindspore.Tensor(b))
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g.asnumpy(), e.numpy(), rtol=1e-6, atol=1e-6, err_msg=api)
