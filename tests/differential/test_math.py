"""Differential tests for torch's math and reduction functions and Tensor methods (tables
"torch_math.toml" and "tensor_math.toml"): every converted entry has cases in several call
forms; named-tuple results are read by field and unpacked; in-place methods are checked on
both their result and the receiver they changed.
"""
from __future__ import annotations

import numpy as np

from .harness import Case, Suite, arr, bools, case_builders, ints, pos, table_tests
from .test_indexing import both as _both, inplace as _inplace

TABLES = ["torch_math.toml", "tensor_math.toml"]
CASES: list[Case] = []


def both(name: str, args: str, inputs, **kwargs) -> None:
    _both(name, args, inputs, cases=CASES, **kwargs)


def inplace(name: str, args: str, inputs, **opts) -> None:
    _inplace(name, args, inputs, cases=CASES, **opts)


forms, case = case_builders(CASES)


X = arr(3, 4)
C = (arr(4) + 1j * arr(4)).astype(np.complex64)
NAN_X = X.copy()
NAN_X[0, 1] = NAN_X[2, 3] = NAN_X[2, 0] = np.nan
SPECIAL = np.array([0.0, -0.0, 1.0, 2.0, 0.75, -3.5, 1e-40, -2e-45, np.inf, -np.inf, np.nan, 0.99999994, 3e38, 1 / 3],
                   np.float32)
TIES = ints(3, 6, high=3)

# -- reductions with named-tuple results ----------------------------------------------------
both("aminmax", "", (X,), kw="dim=1, keepdim=True", extra=("a, keepdim=True",), method_extra=("dim=-2",))
case("torch.aminmax", "torch.aminmax(a, dim=0).max", (X,), "field")
case("Tensor.aminmax", "lo, hi = a.aminmax()\n    return hi - lo", (X,), "unpacked")
both("kthvalue", "k=2, dim=1, keepdim=True", (X,), req=1, extra=("a, 3, 0",))
case("torch.kthvalue", "torch.kthvalue(a, 1, -1).indices", (X,), "field")
case("Tensor.kthvalue", "v, i = a.kthvalue(4, dim=1)\n    return v * 2, i", (X,), "unpacked")
both("nanmedian", "dim=1, keepdim=True", (NAN_X,), req=0, extra=("a, 0",))
case("torch.nanmedian", "torch.nanmedian(a, 1).values", (NAN_X,), "field")
case("Tensor.nanmedian", "a.nanmedian(-1)", (X,), "no-nan")
both("mode", "dim=1, keepdim=True", (TIES,), req=0, extra=("a, 0",))
case("torch.mode", "torch.mode(a).indices", (ints(2, 7, high=3),), "field")
case("Tensor.mode", "v, i = a.mode(0, True)\n    return v, i", (arr(5, 3).round(),), "float-ties")
# (the float64 form gets its input as float64: a float32 subnormal cast by MindSpore reads
# as 0 once an earlier op in the process has set the CPU's flush-to-zero mode)
forms("torch.frexp", "input=a", (SPECIAL,), extra=("a, out=None",))
case("torch.frexp", "torch.frexp(a.reshape(2, 7))", (SPECIAL.astype(np.float64),), "extra1")
case("torch.frexp", "torch.frexp(a).exponent", (X * 100,), "field")
case("torch.frexp", "torch.frexp(a)", (SPECIAL.astype(np.float16),), "float16")
case("torch.frexp", "torch.frexp(a)", (np.array([5e-324, -1e-310, 1e300, 0.1, -7.0], np.float64),), "float64")
forms("Tensor.frexp", "", (SPECIAL,))
case("Tensor.frexp", "m, e = a.frexp()\n    return m, e", (pos(5) * 1000,), "unpacked")

# -- products, shapes ----------------------------------------------------------------------------
both("vdot", "other=b", (arr(4), arr(4)), extra=("a, b, out=None", "b, a"))
case("Tensor.vdot", "a.vdot(b)", (C, C[::-1].copy()), "complex", atol=1e-5)
case("torch.vdot", "torch.vdot(a, b)", (C, C[::-1].copy()), "complex")
both("unflatten", "dim=1, sizes=(2, 2)", (X,), extra=("a, -1, [2, -1]",), method_extra=("0, (1, 3)",))
forms("torch.tensordot", "a=a, b=b, dims=1", (arr(2, 3, 3), arr(3, 3, 2)), req=2, extra=("a, b, ([1, 2], [0, 1])", "a, b, dims=[[2], [1]]"))

# -- statistics ------------------------------------------------------------------------------------
both("corrcoef", "", (arr(3, 6),), extra=("a.T",), method_extra=())
case("Tensor.corrcoef", "a[0].corrcoef()", (arr(3, 6),), "1-d")
case("Tensor.corrcoef", "a.corrcoef()", (arr(2, 5, dtype="float64"),), "float64")
FW = np.array([1, 2, 1, 3, 1], np.int64)
AW = pos(5)
both("cov", "", (arr(3, 5), FW, AW), kw="correction=0, fweights=b, aweights=c", extra=("a, aweights=c",), method_extra=("correction=2",))
case("torch.cov", "torch.cov(a[0])", (arr(3, 5),), "1-d")
both("renorm", "p=2, dim=0, maxnorm=1.0", (X * 3,), extra=("a, 1, 1, 0.5",), method_extra=("3, -1, 2",))
inplace("renorm", "p=2, dim=1, maxnorm=0.5", (X,))

# -- sets, integrals -------------------------------------------------------------------------------
forms("torch.isin", "elements=a, test_elements=b", (ints(3, 4, high=9), ints(5, high=9)), kw="assume_unique=False, invert=True",
      extra=("a, 3", "2, b", "a.float(), b.double()"))
case("torch.cumulative_trapezoid", "torch.cumulative_trapezoid(a)", (X,), "defaults")
case("torch.cumulative_trapezoid", "torch.cumulative_trapezoid(a, b)", (X, np.sort(arr(4))), "positional")
case("torch.cumulative_trapezoid", "torch.cumulative_trapezoid(y=a, x=b, dim=0)", (X, np.sort(arr(3, 4), axis=0)), "keyword")
case("torch.cumulative_trapezoid", "torch.cumulative_trapezoid(a, dx=0.5, dim=-2)", (arr(2, 3, 4),), "dx")
U = ints(12, high=3)
U[3] = U[4]
forms("torch.unique_consecutive", "input=a", (U,), kw="return_inverse=True, return_counts=True, dim=None", extra=("a, return_inverse=True",))
forms("Tensor.unique_consecutive", "return_inverse=True, return_counts=True, dim=None", (U,), req=0, extra=("False, True",))
case("torch.unique_consecutive", "torch.unique_consecutive(a, return_counts=True, dim=0)", (np.array([[1, 2], [1, 2], [0, 1], [1, 2]], np.int64),), "rows")

# -- arithmetic and creation -------------------------------------------------------------------
forms("torch.rsub", "input=a, other=b", (X, arr(3, 4)), kw="alpha=2", extra=("a, 2.5", "a, b, alpha=0.5"))
case("torch.rsub", "torch.rsub(a, 3)", (ints(3, 4),), "int")
forms("torch.scalar_tensor", "s=3.5", kw="dtype=torch.float64", extra=("2", "True, dtype=torch.int32", "7, device='cpu', requires_grad=False"))
case("torch.broadcast_tensors", "torch.broadcast_tensors(a, b)", (arr(3, 1), arr(4)), "positional")
case("torch.broadcast_tensors", "torch.broadcast_tensors(a)", (arr(3, 1),), "one")
case("torch.broadcast_tensors", "torch.broadcast_tensors(*[a, b, c])", (arr(3, 1), arr(4), arr(2, 1, 1)), "starred")
case("torch.broadcast_tensors", "x, y = torch.broadcast_tensors(a, b)\n    return x + y", (arr(1, 4), arr(3, 1)), "unpacked")
case("torch.broadcast_shapes", "torch.broadcast_shapes((2, 1), (3,))", (), "positional")
case("torch.broadcast_shapes", "torch.broadcast_shapes((1, 4), 4, (2, 1, 1))", (), "int")
case("torch.broadcast_shapes", "torch.broadcast_shapes(a.shape, b.shape)", (arr(3, 1), arr(4)), "shapes")
case("torch.broadcast_shapes", "torch.zeros(torch.broadcast_shapes(a.shape, (2, 1, 1)))", (arr(3, 1),), "as-size")
forms("Tensor.new_tensor", "data=[1, 2]", (X,), kw="dtype=torch.int32", extra=("[[1.5, 2.0]]", "data=3, dtype=torch.float64", "[4, 5], device='cpu'"))
case("Tensor.new_tensor", "a.new_tensor(b)", (ints(3), arr(2)), "tensor-data")
# Tensor.new, torch's legacy constructor: sizes (the values are not compared: zeros here,
# whatever memory held in torch, hence zero_()/fill_), a shape, data, nothing
case("Tensor.new", "a.new(2, 3).zero_()", (X,), "positional")
case("Tensor.new", "a.new(a.size()).fill_(2)", (ints(3),), "shape")
case("Tensor.new", "a.data.new(3, device='cpu').zero_() + a[0, :3]", (X,), "keyword")
case("Tensor.new", "a.new([1, 2.5])", (ints(3),), "data")
case("Tensor.new", "a.new(b)", (X.astype(np.float64), arr(2).astype(np.float64)), "tensor-data")
case("Tensor.new", "tuple(a.new().shape)", (X,), "defaults")
case("Tensor.sum_to_size", "a.sum_to_size(1, 4)", (X,), "varargs")
case("Tensor.sum_to_size", "a.sum_to_size((3, 1))", (X,), "tuple")
case("Tensor.sum_to_size", "a.sum_to_size(size=(4,))", (X,), "keyword")
case("Tensor.sum_to_size", "a.sum_to_size(2, 1, 4)", (arr(2, 3, 4),), "middle")
forms("Tensor.unfold", "dimension=1, size=2, step=1", (X,), extra=("0, 2, 1", "-1, 3, 2"))
case("Tensor.unfold", "a.unfold(1, 2, 2)", (arr(2, 5, 3),), "middle")

# -- bits, conjugates -------------------------------------------------------------------------
BITS = ints(3, 4, low=-8, high=8)
both("bitwise_not", "", (BITS,), extra=("a, out=None",))
case("torch.bitwise_not", "torch.bitwise_not(a)", (bools(3, 4),), "bool")
case("Tensor.bitwise_not", "a.bitwise_not()", (ints(5, dtype="int32", high=100),), "int32")
inplace("bitwise_not", "", (BITS,))
for name in ("bitwise_left_shift", "bitwise_right_shift"):
    both(name, "other=b", (ints(3, 4, high=64), ints(3, 4, high=4)), extra=("a, 2", "a, b, out=None"), method_extra=("1",))
    inplace(name, "other=b", (ints(3, 4, high=64), ints(3, 4, high=4)))
both("conj_physical", "", (C,), extra=("a.real",))
case("Tensor.conj_physical", "a.conj_physical()", (X,), "real")
inplace("conj_physical", "", (C,))
both("adjoint", "", (arr(2, 3, 4),), extra=("a[0]",))
case("Tensor.adjoint", "a.reshape(2, 2).adjoint()", (C,), "complex")
for name in ("resolve_conj", "resolve_neg"):
    both(name, "", (X,), extra=("a.conj()" if name == "resolve_conj" else "a.neg()",))
    case(f"Tensor.{name}", f"a.conj().{name}()", (C,), "complex")

# -- quantiles, histograms, dtypes, strided creation --------------------------------------
Q = np.array([0.1, 0.5, 0.93], np.float32)
for name, x in (("quantile", X), ("nanquantile", NAN_X)):
    both(name, "q=0.3, dim=1, keepdim=True", (x, Q), req=1, kw="interpolation='linear'", extra=("a, b, -2",), method_extra=("b",))
    for mode in ("lower", "higher", "nearest", "midpoint"):
        case(f"torch.{name}", f"torch.{name}(a, b, dim=0, interpolation={mode!r})", (x, Q), mode)
    case(f"Tensor.{name}", f"a.{name}(0.25, keepdim=True)", (x,), "all-keepdim")
    case(f"Tensor.{name}", f"a.{name}(torch.tensor(0.5), 1)", (arr(2, 5, 3),), "0-d-q")
case("torch.quantile", "torch.quantile(a, 0.5, dim=1)", (NAN_X,), "nan")
case("torch.nanquantile", "torch.nanquantile(a, 0.5, dim=1)", (np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32),), "all-nan")
UNIT = arr(3, 4, low=0.0, high=1.0)
both("histogram", "bins=3", (UNIT, pos(3, 4)), kw="range=(0.0, 1.0), weight=b, density=True", extra=("a, torch.tensor([0.0, 0.2, 0.7, 0.9])",),
     method_extra=("5, range=(0.25, 0.75)",))
case("torch.histogram", "torch.histogram(a, 4).hist", (arr(20),), "field")
case("torch.histogram", "h, e = torch.histogram(a, 2)\n    return h, e", (np.ones(3, np.float32),), "equal-range")
forms("torch.promote_types", "type1=torch.int64, type2=torch.float16", extra=("torch.uint8, torch.int8", "torch.float64, torch.complex64",
      "torch.bfloat16, torch.float16", "torch.bool, torch.int32", "torch.float32, torch.float32"))
case("torch.promote_types", "torch.zeros(2, dtype=torch.promote_types(a.dtype, b.dtype))", (ints(2), arr(2)), "as-dtype")
forms("torch.can_cast", "from_=torch.float32, to=torch.int32", extra=("torch.int32, torch.float32", "torch.int64, torch.bool",
      "torch.bool, torch.uint8", "torch.complex64, torch.float64", "torch.float16, torch.complex64"))
forms("torch.empty_strided", "size=(2, 3), stride=(3, 1)", kw="dtype=torch.float64", extra=("[4], [1], device='cpu'",), random=True,
      why="torch leaves the values unset")
forms("Tensor.new_empty_strided", "size=(2, 3), stride=(3, 1)", (ints(2),), kw="dtype=torch.float16", extra=("(5,), (1,), requires_grad=False",),
      random=True, why="torch leaves the values unset")
forms("torch.result_type", "tensor=a, other=b", (ints(3), np.array(2.0, np.float64)),
      extra=("a, 2.5", "a, True", "b, 1", "a.float(), 1j", "a.double(), 1j", "a.to(torch.int8), a", "a.bool(), b.half()",
             "b.float(), a", "2, 3.5", "a.to(torch.uint8), a.to(torch.int8)[0]"))
case("torch.result_type", "torch.zeros(2, dtype=torch.result_type(a, b))", (arr(2), ints(2)), "as-dtype")
G = arr(4, 5)
forms("torch.gradient", "input=a", (G, np.sort(arr(4)), np.sort(arr(5))), kw="spacing=2.0, dim=1, edge_order=2",
      extra=("a, spacing=[b, c]", "a, spacing=(b,), dim=0, edge_order=2", "a, spacing=(0.5, 3), edge_order=1", "a, dim=[1, 0]",
             "a[0], spacing=[c], edge_order=2", "a.double(), spacing=3, dim=-1"))
# edge values: NaN through the reductions, infinities
EDGE = np.array([[np.nan, 1.0, -np.inf, 2.0], [np.nan, np.nan, np.nan, np.nan], [3.0, np.inf, 0.0, -1.0]], np.float32)
case("torch.aminmax", "torch.aminmax(a, dim=1)", (EDGE,), "nan")
case("torch.nanmedian", "torch.nanmedian(a, 1)", (EDGE,), "nan-rows")
case("torch.nanmedian", "torch.nanmedian(a)", (EDGE,), "nan-all")
case("torch.quantile", "torch.quantile(a, 0.4, dim=1, interpolation='nearest')", (EDGE,), "inf")
case("torch.nanquantile", "torch.nanquantile(a, b, dim=1)", (EDGE, Q), "inf")
case("torch.isin", "torch.isin(a, b)", (EDGE, np.array([np.nan, 1.0, np.inf], np.float32)), "nan")
case("Tensor.kthvalue", "a.kthvalue(2, 1)", (EDGE[2:],), "inf")
case("Tensor.kthvalue", "a.kthvalue(4, 1)", (EDGE[::2],), "nan")
case("Tensor.kthvalue", "a.kthvalue(2, 1)", (EDGE[::2],), "nan-early")
case("torch.frexp", "torch.frexp(a)", (EDGE,), "nan-inf")
for name in ("cfloat", "cdouble"):
    case(f"Tensor.{name}", f"a.{name}()", (X,), "call")
    case(f"Tensor.{name}", f"a.{name}()", (ints(3),), "from-int")
    case(f"Tensor.{name}", f"(a * 2).{name}()", (X.astype(np.float64),), "expr")
# other dtypes
XI = ints(3, 4, low=-9, high=9)
case("torch.aminmax", "torch.aminmax(a, dim=0)", (XI,), "int")
case("torch.conj_physical", "torch.conj_physical(a)", (XI,), "int")  # a real tensor as it is, its dtype kept
case("Tensor.conj_physical_", "a.conj_physical_()\n    return a", (XI,), "int")
case("torch.conj_physical_", "torch.conj_physical_(a)\n    return a", (XI,), "int")
case("torch.aminmax", "torch.aminmax(a)", (bools(3, 4),), "bool")
case("torch.kthvalue", "torch.kthvalue(a, 2)", (np.argsort(arr(3, 4), axis=1).astype(np.int64),), "int")
case("torch.kthvalue", "torch.kthvalue(a, 2, 0)", (arr(3, 4, dtype="float64"),), "float64")
case("torch.nanmedian", "torch.nanmedian(a, 0)", (NAN_X.astype(np.float64),), "float64")
case("torch.mode", "torch.mode(a, 0)", (arr(6, 3).round(),), "float")
case("torch.vdot", "torch.vdot(a, b)", (ints(5), ints(5)), "int")
case("torch.unflatten", "torch.unflatten(a, 0, (3, 1))", (bools(3, 4),), "bool")
case("torch.cumulative_trapezoid", "torch.cumulative_trapezoid(a, dim=0)", (arr(3, 4, dtype="float64"),), "float64")
case("torch.rsub", "torch.rsub(a, b, alpha=2)", (XI, ints(3, 4)), "int-alpha")
case("torch.tensordot", "torch.tensordot(a, b, 1)", (ints(2, 3), ints(3, 2)), "int")
case("torch.cov", "torch.cov(a)", (arr(2, 5, dtype="float64"),), "float64")
case("torch.quantile", "torch.quantile(a, 0.3, 1)", (arr(3, 5, dtype="float64"),), "float64")
case("torch.histogram", "torch.histogram(a, 3)", (arr(10, dtype="float64"),), "float64")
case("Tensor.sum_to_size", "a.sum_to_size(1, 4)", (XI,), "int")
case("Tensor.unfold", "a.unfold(0, 2, 1)", (XI,), "int")
case("torch.bitwise_left_shift", "torch.bitwise_left_shift(a, b)", (ints(4, dtype="int32", high=9), ints(4, dtype="int32", high=4)), "int32")
case("torch.bitwise_right_shift", "torch.bitwise_right_shift(a, 1)", (ints(4, dtype="uint8", high=200),), "uint8")
case("Tensor.bitwise_right_shift", "a.bitwise_right_shift(b)", (ints(4, low=-64, high=64), ints(4, high=4)), "negative")
case("torch.isin", "torch.isin(a, b, invert=True)", (arr(3, 4).round(), np.array([0.0, 1.0], np.float32)), "float")
case("Tensor.new_tensor", "a.new_tensor([[True, False]])", (bools(2),), "bool")
# float64 beside Python floats: computed in double, as torch does
case("torch.rsub", "torch.rsub(a, 0.1, alpha=0.3)", (arr(3, dtype="float64"),), "float64", atol=0, rtol=1e-15)
case("torch.cumulative_trapezoid", "torch.cumulative_trapezoid(a, dx=0.1)", (arr(5, dtype="float64"),), "float64-dx", atol=0, rtol=1e-15)
case("torch.gradient", "torch.gradient(a, spacing=0.1)", (arr(5, dtype="float64"),), "float64", atol=0, rtol=1e-15)
case("torch.isin", "torch.isin(0.1, a)", (np.array([0.1, 0.2]),), "float64-number")
case("torch.isin", "torch.isin(a, 0.1)", (np.array([0.1, 0.2]),), "float64-test")
# torch's index of a value that occurs several times is any of its places: checked to hold the value
case("torch.mode", "v, i = torch.mode(a, 0, True)\n    return v, torch.gather(a, 0, i) == v", (ints(40, 3, high=6, dtype="int32"),), "long")
case("Tensor.mode", "a.mode()", (np.array([[2, 2, 1, 1, 3], [5, 5, 5, 5, 5], [9, 8, 7, 6, 5]], np.int64),), "runs")
case("Tensor.kthvalue", "a.kthvalue(2, dim=0).values * 2", (X,), "method-field")
case("Tensor.aminmax", "a.aminmax(dim=1).min", (X,), "method-field")
case("Tensor.frexp", "a.frexp().mantissa", (X,), "method-field")
PTS = arr(12, 2, low=0.0, high=1.0)
forms("torch.histogramdd", "input=a, bins=[2, 3]", (PTS, pos(12)), kw="range=[0.0, 1.0, 0.25, 0.75], weight=b, density=True",
      extra=("a, 2", "a, [torch.tensor([0.0, 0.5, 1.0]), torch.tensor([0.0, 0.3, 0.6, 0.9])]"))
case("torch.histogramdd", "torch.histogramdd(a, 3).hist", (arr(2, 5, 3, dtype="float64"),), "3-d")
SEG = np.array([2, 0, 3], np.int64)
SEG_DATA = np.array([1.0, np.nan, 3.0, -4.0, 5.0], np.float32)
for reduce in ("sum", "mean", "max", "min", "prod"):
    forms("torch.segment_reduce", f"data=a, reduce={reduce!r}", (arr(5, 2), SEG, np.array([0, 2, 2, 5], np.int64)), kw="lengths=b, axis=0, initial=1.5",
          extra=(f"a, {reduce!r}, offsets=c", f"a, {reduce!r}, lengths=b, unsafe=True"),
          only=("positional", "keyword", "extra0") if reduce != "sum" else ("positional", "keyword", "extra0", "extra1"))
    case("torch.segment_reduce", f"torch.segment_reduce(a, {reduce!r}, lengths=b)", (SEG_DATA, SEG), f"nan-{reduce}")

SUITE = Suite(CASES)


test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, TABLES)


def test_positional_flags_of_unique_consecutive_stay_unconverted() -> None:
    """torch.unique_consecutive(x, True): torch's dispatch reads its flags from the wrong
    places (an empty inverse comes back); the call is left with a marker, never guessed."""
    from transpile import convert_code

    out = convert_code("import torch\n\n\ndef f(a):\n    return torch.unique_consecutive(a, True)\n").code
    assert "# transpile:" in out and "torch.unique_consecutive(" in out, out
