"""Differential tests of the indexing and selection family in the call forms people write
(issue 33): ``scatter``/``scatter_`` with ``reduce=``, a scalar ``src`` and ``value=``;
``unique`` with ``dim``, ``return_inverse``, ``return_counts``, ``sorted``;
``unique_consecutive``; ``gather`` with ``sparse_grad``; ``max``/``min`` reading named-tuple
fields and with a second tensor; ``masked_select``; ``multinomial``; ``quantile``,
``nanquantile``, ``nanmedian``. Integer, bool and float64 inputs beside float32; function,
method, ``out=``, module-path (``torch.functional``) and numpy-keyword (``axis=``,
``keepdims=``) spellings.

Not converted yet: ``max``/``min`` of a bool tensor (MindSpore's reductions have no bool
kernel, and the converter cannot tell a tensor's dtype).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import DEFAULT_HEADER, Case, Suite, arr, bools, case_builders, ints, pos

CASES: list[Case] = []
forms, case = case_builders(CASES)

X = arr(3, 4)
XI = ints(3, 4, low=-9, high=9)
X64 = arr(3, 4, dtype="float64")
IDX = np.array([[0, 1, 2, 0], [1, 2, 0, 1]], np.int64)  # no repeated position in a column
REP = np.array([[0, 1, 2, 0], [0, 2, 0, 1]], np.int64)  # (0, 0) repeated: reductions accumulate
SRC = arr(2, 4)

# -- scatter / scatter_ ------------------------------------------------------------------------
case("torch.scatter", "torch.scatter(a, 0, b, 1.5)", (X, IDX), "scalar-src")
case("torch.scatter", "torch.scatter(a, 0, b, value=-2.0)", (X, IDX), "value")
case("torch.scatter", "torch.scatter(a, dim=1, index=b, value=7)", (XI, IDX), "int-value")
case("torch.scatter", "torch.scatter(a, 0, b, c, reduce='add')", (X, REP, SRC), "reduce-add")
case("torch.scatter", "torch.scatter(a, 0, b, c, reduce='multiply')", (X, REP, SRC), "reduce-multiply")
case("torch.scatter", "torch.scatter(a, 0, b, 2.0, reduce='multiply')", (X, REP), "reduce-scalar")
case("torch.scatter", "torch.scatter(a, 0, b, c)", (X, IDX, arr(3, 5)), "larger-src")
case("torch.scatter", "torch.scatter(a, 1, b, c)", (XI, IDX[:, :3], ints(2, 3)), "int")
case("torch.scatter", "torch.scatter(a, 1, b, c)", (bools(3, 4), IDX, bools(2, 4)), "bool")
case("torch.scatter", "torch.scatter(a, -1, b, c)", (X64, IDX, arr(2, 4, dtype="float64")), "float64")
case("Tensor.scatter", "a.scatter(0, b, 1.5)", (X, IDX), "scalar-src")
case("Tensor.scatter", "a.scatter(0, b, value=3.0)", (X, IDX), "value")
case("Tensor.scatter", "a.scatter(dim=0, index=b, src=c, reduce='add')", (X, REP, SRC), "reduce-add")
case("Tensor.scatter", "a.scatter(0, b, c, reduce='multiply')", (XI, REP, ints(2, 4)), "int-reduce-multiply")
case("Tensor.scatter", "a.scatter(0, b, 1, reduce='add')", (XI, REP), "int-reduce-scalar")
case("Tensor.scatter_", "a.scatter_(0, b, c, reduce='add')\n    return a", (X, REP, SRC), "reduce-add")
case("Tensor.scatter_", "r = a.scatter_(0, b, 0.5, reduce='multiply')\n    return r, a", (X, REP), "reduce-scalar")
case("Tensor.scatter_", "a.scatter_(1, b, value=2)\n    return a", (XI, IDX), "int-value")
case("Tensor.scatter_", "a.scatter_(0, b, c)\n    return a", (X, IDX, arr(3, 5)), "larger-src")

# -- unique / unique_consecutive ----------------------------------------------------------------
DUPS = np.array([[3, 1, 2], [3, 1, 5]], np.int64)
ROWS = np.array([[1, 2], [0, 1], [1, 2], [0, 0]], np.int64)
case("torch.unique", "torch.unique(a, return_inverse=True)", (DUPS,), "inverse")
case("torch.unique", "torch.unique(a, sorted=True, return_inverse=True, return_counts=True)", (DUPS,), "inverse-counts")
case("torch.unique", "torch.unique(a, True, True, True)", (DUPS,), "positional-all")
case("torch.unique", "torch.unique(a, dim=0)", (ROWS,), "dim")
case("torch.unique", "torch.unique(a, dim=1, return_inverse=True, return_counts=True)", (ROWS.T.copy(),), "dim-all")
case("torch.unique", "torch.unique(a, return_counts=True, dim=0)", (arr(4, 3).round(),), "float-dim")
case("torch.unique", "v, i = torch.unique(a, return_inverse=True)\n    return v, i, v[i]", (arr(7).round(),), "float-inverse")
case("torch.unique", "torch.unique(a, return_counts=True)", (bools(9),), "bool")
case("torch.unique", "torch.unique(a)", (arr(6, dtype="float64").round(),), "float64")
case("torch.unique", "torch.unique(a, sorted=False, return_inverse=True)", (DUPS,), "unsorted-inverse")
case("Tensor.unique", "a.unique(return_inverse=True, return_counts=True)", (DUPS,), "inverse-counts")
case("Tensor.unique", "a.unique(dim=0)", (ROWS,), "dim")
case("Tensor.unique", "a.unique(True, True)", (DUPS,), "positional")
case("torch.unique", "torch.functional.unique(a, return_counts=True)", (DUPS,), "module-path")
case("torch.unique_consecutive", "torch.functional.unique_consecutive(a, return_counts=True)", (np.array([2, 2, 0, 2], np.int64),), "module-path")
case("torch.unique_consecutive", "torch.unique_consecutive(a)", (np.array([1, 1, 2, 2, 3, 1, 1], np.int64),), "plain")
case("torch.unique_consecutive", "torch.unique_consecutive(a, return_inverse=True, return_counts=True)",
     (np.array([1.0, 1.0, 2.0, 2.0, 3.0, 1.0], np.float32),), "float")
case("torch.unique_consecutive", "torch.unique_consecutive(a, return_counts=True, dim=1)", (ROWS.T.copy(),), "dim1")
case("torch.unique_consecutive", "torch.unique_consecutive(a, return_inverse=True, dim=0)", (ROWS[[0, 0, 1, 2]].copy(),), "dim0-inverse")
case("Tensor.unique_consecutive", "a.unique_consecutive(return_counts=True)", (np.array([True, True, False, True]),), "bool")
case("Tensor.unique_consecutive", "a.unique_consecutive(dim=0)", (ROWS[[0, 0, 1, 2]].copy(),), "dim")

# -- gather ---------------------------------------------------------------------------------------
G = ints(3, 2, high=4)
case("torch.gather", "torch.gather(a, 1, b, sparse_grad=True)", (X, G), "sparse-grad")
case("Tensor.gather", "a.gather(1, b, sparse_grad=True)", (X, G), "sparse-grad")
case("torch.gather", "torch.gather(a, 0, b)", (XI, ints(2, 4, high=3)), "int")
case("torch.gather", "torch.gather(a, -1, b)", (X64, G), "float64")
case("Tensor.gather", "a.gather(dim=1, index=b)", (bools(3, 4), G), "bool")
case("torch.gather", "torch.gather(a, 1, b)", (X, ints(2, 2, high=4)), "smaller-index")
case("Tensor.gather", "a.gather(axis=1, index=b)", (X, G), "numpy-axis")

# -- max / min -------------------------------------------------------------------------------------
for name in ("max", "min"):
    case(f"torch.{name}", f"torch.{name}(a, 1).values", (X,), "values")
    case(f"torch.{name}", f"torch.{name}(a, dim=1, keepdim=True).indices", (X,), "indices-keepdim")
    case(f"torch.{name}", f"r = torch.{name}(a, 0)\n    return r[0], r[1]", (XI,), "int-tuple")
    case(f"torch.{name}", f"v, i = torch.{name}(a, -1)\n    return v, i", (X64,), "float64")
    case(f"torch.{name}", f"torch.{name}(a, b)", (X, arr(3, 4)), "tensor")
    case(f"torch.{name}", f"torch.{name}(a, b + 1)", (X, arr(3, 4)), "tensor-expression")
    case(f"torch.{name}", f"torch.{name}(a, other=b)", (X, arr(1, 4)), "other")
    case(f"torch.{name}", f"torch.{name}(a, b)", (XI, ints(3, 4)), "int-tensor")
    case(f"Tensor.{name}", f"a.{name}(dim=0).values", (X,), "values")
    case(f"Tensor.{name}", f"a.{name}(1, True).indices", (XI,), "int-indices")
    case(f"Tensor.{name}", f"a.{name}(b)", (X, arr(3, 4)), "tensor")
    case(f"Tensor.{name}", f"a.{name}(other=b)", (X, arr(3, 4)), "other")
    case(f"Tensor.{name}", f"a.{name}()", (X64,), "float64")
    case(f"torch.{name}", f"torch.{name}(a, axis=1, keepdims=True).values", (X,), "numpy-keywords")
    case(f"Tensor.{name}", f"a.{name}(axis=0).indices", (XI,), "numpy-axis")

# -- masked_select ----------------------------------------------------------------------------------
case("torch.masked_select", "torch.masked_select(a, b)", (X, bools(4)), "broadcast-mask")
case("torch.masked_select", "torch.masked_select(a, b)", (arr(4), bools(3, 4)), "broadcast-input")
case("torch.masked_select", "torch.masked_select(a, a > 0)", (XI,), "int")
case("Tensor.masked_select", "a.masked_select(b)", (X64, bools(3, 4)), "float64")
case("Tensor.masked_select", "a.masked_select(b)", (bools(3, 4), bools(3, 4)), "bool")
case("torch.masked_select", "o = torch.empty(0)\n    torch.masked_select(a, b, out=o)\n    return o", (X, bools(3, 4)), "out")

# -- multinomial --------------------------------------------------------------------------------------
case("torch.multinomial", "torch.multinomial(a, 3)", (pos(5),), "1-d", random=True)
case("torch.multinomial", "torch.multinomial(a, 5).sort().values", (pos(5),), "1-d-permutation")
case("torch.multinomial", "torch.multinomial(a, 3, True)", (pos(2, 4, dtype="float64"),), "float64", random=True)
case("Tensor.multinomial", "a.multinomial(2)", (pos(4),), "1-d", random=True)
case("torch.multinomial", "torch.multinomial(a, 6, replacement=True).max() < 2", (np.array([1.0, 3.0, 0.0, 0.0], np.float32),),
     "zero-weights")

# -- quantile / nanquantile / nanmedian ----------------------------------------------------------------
NAN_X = X.copy()
NAN_X[0, 1] = NAN_X[2, 3] = np.nan
Q = np.array([0.2, 0.75], np.float32)
for name, x in (("quantile", X), ("nanquantile", NAN_X)):
    case(f"torch.{name}", f"torch.{name}(a, 0.4, dim=1, keepdim=True, interpolation='midpoint')", (x,), "all-keywords")
    case(f"torch.{name}", f"torch.{name}(a, b, 0, True)", (x, Q), "positional-keepdim")
    case(f"torch.{name}", f"torch.{name}(a.double(), 0.9, -1, interpolation='higher')", (x,), "float64")
    case(f"torch.{name}", f"torch.{name}(input=a, q=b)", (x, Q), "keyword-flat")
    case(f"Tensor.{name}", f"a.{name}(b, dim=1, interpolation='lower')", (x, Q), "method-tensor-q")
    case(f"torch.{name}", f"o = torch.empty(0)\n    torch.{name}(a, 0.5, 1, out=o)\n    return o", (x,), "out")
case("torch.nanquantile", "torch.nanquantile(a, 0.3, dim=0, interpolation='nearest')", (NAN_X.astype(np.float64),), "float64-input")
case("torch.quantile", "torch.quantile(a, 0.3, dim=0, interpolation='linear')", (X.astype(np.float64),), "float64-input")
case("torch.nanmedian", "torch.nanmedian(a, dim=1, keepdim=True)", (NAN_X,), "keyword")
case("torch.nanmedian", "v, i = torch.nanmedian(a, 0)\n    return v, i", (NAN_X.astype(np.float64),), "float64-unpacked")
case("torch.nanmedian", "torch.nanmedian(a, 1)", (XI,), "int")
case("torch.nanmedian", "torch.nanmedian(a)", (XI,), "int-all")
case("Tensor.nanmedian", "a.nanmedian(dim=0, keepdim=True).indices", (NAN_X,), "indices")
case("Tensor.nanmedian", "a.nanmedian()", (NAN_X,), "all")

SUITE = Suite(CASES, header=DEFAULT_HEADER + "import torch.functional\n")


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_form(case: Case) -> None:
    SUITE.check(case)
