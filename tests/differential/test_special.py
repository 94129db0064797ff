"""Differential tests for torch.special.* (tables "special.toml" and "special_methods.toml").

Every converted entry is called in at least three forms (positional, keyword, out=None
or defaults omitted) on a sensible range and, for the compositions emitted beside the
code, on the edges too (0, -0, below the domain, +-inf, NaN).
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import Case, OwnDraws, Suite, arr, case_builders, coverage_gaps, ints, pos

CASES: list[Case] = []
F32 = "float32"
# float32 kernels of special functions (series, continued fractions) differ from torch's
# in the last digits; relative 1e-4 is far below any wrong formula's error
LAST_DIGITS = {"rtol": 1e-4, "atol": 1e-6, "why": "float32 special-function kernels differ in the last digits"}


forms, case = case_builders(CASES)


X = arr(3, 5, low=-6.0, high=6.0)
P = pos(3, 5) * 3
UNIT = arr(3, 5, low=0.01, high=0.99)
EDGE = np.array([0.0, -0.0, 1e-6, 0.5, 1.0, 2.5, 30.0, -1.0, -2.5, np.inf, -np.inf, np.nan], dtype=F32)
EDGE_B = np.array([1.5, 0.0, 2.0, 0.0, np.inf, -1.0, 1e-7, np.nan, 3.0, 1.0, 2.0, 0.5], dtype=F32)


def unary(name: str, *inputs: np.ndarray, tol=LAST_DIGITS, param: str = "input") -> None:
    """Three forms on the first input; each further input (edges) positional only."""
    api = f"torch.special.{name}"
    forms(api, f"{param}=a", (inputs[0],), extra=("a, out=None",), **tol)
    for i, x in enumerate(inputs[1:]):
        case(api, f"{api}(a)", (x,), f"values{i}", **tol)


for name in ("bessel_j0", "bessel_j1", "i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1"):
    unary(name, X, EDGE)
for name in ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1"):
    unary(name, P, EDGE)
# (torch names the argument of these x, not input as documented)
for name in ("scaled_modified_bessel_k0", "scaled_modified_bessel_k1"):
    unary(name, P, EDGE, param="x")
INTS_AND_EDGES = np.concatenate([EDGE, np.array([-1.0, -2.0, -3.0, 1e-30, -1e-30, 1e30, 40.0], F32)])
unary("digamma", P, X, INTS_AND_EDGES)
unary("psi", P, X, INTS_AND_EDGES)
unary("gammaln", P, X, INTS_AND_EDGES)
unary("sinc", X, EDGE)
unary("exp2", X, EDGE)
unary("entr", P, EDGE, X)
unary("spherical_bessel_j0", X * 5, EDGE, param="x")
unary("round", X * 10, EDGE)
case("torch.special.round", "torch.special.round(a, decimals=0)", (X * 10,), "decimals")
# float-only functions on integer and bool tensors: computed in float32, as torch (hook float_input)
FLOAT_ONLY_DRAWS = OwnDraws(33)
for name, low in (("i0", -3), ("i0e", -3), ("i1", -3), ("i1e", -3), ("logit", 0), ("digamma", 1), ("psi", 1),
                  ("gammaln", 1)):
    case(f"torch.special.{name}", f"torch.special.{name}(a)", (FLOAT_ONLY_DRAWS.ints(3, 5, low=low, high=4),), "int64",
         **LAST_DIGITS)
    case(f"torch.special.{name}", f"torch.special.{name}(input=a)",
         (FLOAT_ONLY_DRAWS.ints(3, 5, low=low, high=4, dtype="int32"),), "int32", **LAST_DIGITS)
    if low <= 0:
        case(f"torch.special.{name}", f"torch.special.{name}(a)", (np.array([[True, False, True]]),), "bool", **LAST_DIGITS)


def binary(name: str, a: np.ndarray, b: np.ndarray, *edges: tuple, tol=LAST_DIGITS) -> None:
    api = f"torch.special.{name}"
    forms(api, "input=a, other=b", (a, b), extra=("a, b, out=None",), **tol)
    for i, (x, y) in enumerate(edges):
        case(api, f"{api}(a, b)", (x, y), f"values{i}", **tol)


binary("xlogy", X, P, (EDGE, EDGE_B), (np.zeros(4, F32), np.array([0.0, -1.0, 2.0, np.nan], F32)))
case("torch.special.xlogy", "torch.special.xlogy(a, 2.0)", (X,), "scalar")
# torch.xlogy and Tensor.xlogy are the same function (0 where x == 0: entropy terms p * log p)
forms("torch.xlogy", "input=a, other=b", (X, P), extra=("a, b, out=None",), **LAST_DIGITS)
case("torch.xlogy", "torch.xlogy(a, b)", (np.zeros(4, F32), np.array([0.0, -1.0, 2.0, np.nan], F32)), "zero-x")
case("torch.xlogy", "torch.xlogy(a, a)", (np.array([0.0, 0.25, 0.75], F32),), "entropy")
forms("Tensor.xlogy", "other=b", (X, P), extra=("2.0",), **LAST_DIGITS)
case("Tensor.xlogy", "a.xlogy(b)", (np.zeros(4, F32), np.array([0.0, -1.0, 2.0, np.nan], F32)), "zero-x")
case("torch.special.xlogy", "torch.special.xlogy(2.0, a)", (P,), "scalar_x")
binary("xlog1py", X, P, (EDGE, EDGE_B), (X, arr(3, 5, low=-1e-6, high=1e-6)),
       (np.zeros(4, F32), np.array([0.0, -1.0, 2.0, np.nan], F32)))
case("torch.special.xlog1py", "torch.special.xlog1py(a, 1e-7)", (X,), "scalar")
INF = np.inf
binary("zeta", P + 1.0, P, (EDGE + 1.0, EDGE_B), (np.array([2.0, 3.0, 2.0, 0.5, 1.0], F32), np.array([0.0, -1.0, -1.5, 1.0, 1.0], F32)),
       (np.array([2.0, 30.0, INF, INF, INF, INF], F32), np.array([INF, INF, 1.0, 0.5, 2.0, 1.5], F32)))
case("torch.special.zeta", "torch.special.zeta(a, 2.0)", (P + 1.0,), "scalar", **LAST_DIGITS)
case("torch.special.zeta", "torch.special.zeta(3.0, a)", (P,), "scalar_x", **LAST_DIGITS)
GAMMA_A = np.array([0, 0, 0, -1, 1, 1, np.inf, np.inf, 2, np.nan, 1, 3], F32)
GAMMA_X = np.array([1, 0, -1, 1, 0, np.inf, 1, np.inf, -0.5, 1, np.nan, 2.5], F32)
binary("gammainc", P, P[::-1].copy(), (GAMMA_A, GAMMA_X))
binary("gammaincc", P, P[::-1].copy(), (GAMMA_A, GAMMA_X))

forms("torch.special.multigammaln", "input=a, p=3", (P + 1.5,), extra=("a, 3, out=None", "a, 1"), **LAST_DIGITS)
forms("torch.special.polygamma", "n=2, input=a", (P,), extra=("1, a, out=None", "0, a", "3, a"), **LAST_DIGITS)
# (the poles -1, -2, ... are left out: torch's trigamma gives 1e15 there, MindSpore inf)
POLYGAMMA_EDGE = np.array([0.5, 1.0, 2.5, 30.0, 1e-3, -0.5, -2.5, np.inf, -np.inf, np.nan], F32)
for order in range(4):
    case("torch.special.polygamma", f"torch.special.polygamma({order}, a)", (POLYGAMMA_EDGE,), f"edges{order}", **LAST_DIGITS)
case("torch.special.polygamma", "torch.special.polygamma(1, a)", (ints(3, 4, low=1, high=6),), "int", **LAST_DIGITS)
LOGIT_EDGE = np.array([0.0, 1.0, -0.5, 1.5, 0.5, 1e-7, 1 - 1e-7, np.nan, np.inf], F32)
forms("torch.special.logit", "input=a, eps=1e-6", (UNIT,), extra=("a, out=None", "a, 0.1"), req=1, **LAST_DIGITS)
case("torch.special.logit", "torch.special.logit(a)", (LOGIT_EDGE,), "edges", **LAST_DIGITS)
case("torch.special.logit", "torch.special.logit(a, 0.01)", (LOGIT_EDGE,), "edges_eps", **LAST_DIGITS)
forms("torch.special.logsumexp", "input=a, dim=1, keepdim=True", (X,), extra=("a, (0, 1)", "a, -1, out=None"), req=2)
forms("torch.special.softmax", "input=a, dim=1", (X,), kw="dtype=torch.float64", extra=("a, 0",))
forms("torch.special.log_softmax", "input=a, dim=1", (X,), kw="dtype=torch.float64", extra=("a, 0",))

# erfcx, log_ndtr, ndtri: float64 compositions, checked far in the tails and in float64
WIDE = np.concatenate([arr(40, low=-8.0, high=8.0), arr(40, low=-40.0, high=40.0),
                       np.array([0.0, -0.0, 9.4, 9.5, 10.1, 24.9, 25.0, 25.1, 1e10, -9.5, -1e10, INF, -INF, np.nan], F32)])
unary("erfcx", WIDE, WIDE.astype("float64"), tol={"rtol": 1e-5, "atol": 0.0})
# log_ndtr(x) is a subnormal float32 for x in about (13.1, 14.1): flushed to 0 once an earlier
# op has set flush-to-zero (see below), so the float32 draws keep out of that band
SUBNORMAL_LOG_NDTR = (WIDE > 13.0) & (WIDE < 14.5)
unary("log_ndtr", WIDE[~SUBNORMAL_LOG_NDTR], WIDE.astype("float64"), tol={"rtol": 1e-5, "atol": 1e-40})
# float32 tails stop at the smallest normal float32: once an earlier op in the process has
# set the CPU's flush-to-zero mode, MindSpore reads a subnormal input as 0 (the float64
# case below goes down to 1e-300)
TAILS = np.concatenate([arr(30, low=0.0, high=1.0), 10.0 ** arr(30, low=-37.0, high=0.0), 1 - 10.0 ** arr(20, low=-7.0, high=0.0),
                        np.array([0.0, 1.0, 0.5, -0.1, 1.1, np.nan, 1.2e-38], F32)]).astype(F32)
unary("ndtri", TAILS, (10.0 ** arr(40, low=-300.0, high=0.0, dtype="float64")), np.concatenate([TAILS, 1 - 10.0 ** arr(20, low=-15.0, high=-7.0)]).astype("float64"),
      tol={"rtol": 1e-5, "atol": 0.0})

# torch evaluates T and U above degree 6 inside (-1, 1) by cos(n acos x) and
# sin((n + 1) acos x) / sin(acos x); the recurrence rounds otherwise (float32, values up to
# about 2n + 1): an absolute and relative 1e-4
RECURRENCE = {"rtol": 1e-4, "atol": 1e-4, "why": "torch's trigonometric formula above degree 6 rounds otherwise than the recurrence"}
POLY_X = arr(3, 5, low=-1.2, high=1.2)
DEGREES = ints(3, 5, low=-1, high=10)
for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
             "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
             "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
             "legendre_polynomial_p"):
    x = (POLY_X + 1) / 2 if name.startswith("shifted") else POLY_X
    # (NaN is left out: torch's special cases send it down odd branches, U_2(NaN) = 15)
    edge = np.array([-1.0, 1.0, 0.0, -0.5, 0.5, 2.0, -3.0], F32)
    forms(f"torch.special.{name}", "x=a, n=3", (x, DEGREES), extra=("a, b", "a, 7, out=None", "a, 0", "a, -2", "a, b.float()"),
          **RECURRENCE)
    case(f"torch.special.{name}", f"torch.special.{name}(a, b)", (np.repeat(edge, 10), np.tile(np.arange(-1, 9), 7)), "edges",
         **RECURRENCE)

# the compositions compute an integer tensor (or a Python number x) as torch does: in float32
for name in ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
             "scaled_modified_bessel_k1", "entr", "spherical_bessel_j0", "erfcx", "log_ndtr", "ndtri"):
    case(f"torch.special.{name}", f"torch.special.{name}(a)", (ints(3, 4, low=-2, high=6),), "int", **LAST_DIGITS)
for name in ("xlogy", "xlog1py", "zeta", "gammainc", "gammaincc"):
    if not name.startswith("gamma"):  # (torch's igamma refuses two integer tensors)
        case(f"torch.special.{name}", f"torch.special.{name}(a, b)", (ints(3, 4, low=0, high=6), ints(3, 4, low=1, high=6)),
             "int", **LAST_DIGITS)
    case(f"torch.special.{name}", f"torch.special.{name}(a, b)", (ints(3, 4, low=0, high=6), P[:, :4]), "int_float", **LAST_DIGITS)
for name in ("chebyshev_polynomial_t", "hermite_polynomial_h", "laguerre_polynomial_l", "legendre_polynomial_p"):
    case(f"torch.special.{name}", f"torch.special.{name}(a, b)", (ints(3, 4, low=-2, high=3), ints(3, 4, low=0, high=6)), "int",
         **RECURRENCE)
    case(f"torch.special.{name}", f"torch.special.{name}(0.5, a)", (ints(3, 4, low=0, high=6),), "number_x", **RECURRENCE)

# Tensor methods (special_methods.toml); in place: the result and the receiver
forms("Tensor.polygamma", "n=1", (P,), extra=("2", "0", "3"), **LAST_DIGITS)
case("Tensor.polygamma", "a.polygamma(1)", (POLYGAMMA_EDGE,), "edges", **LAST_DIGITS)
for form, args in (("positional", "1"), ("keyword", "n=1"), ("order2", "2"), ("order0", "0")):
    case("Tensor.polygamma_", f"b = a.clone()\n    r = b.polygamma_({args})\n    return r, b", (P,), form, **LAST_DIGITS)

SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_api(case: Case) -> None:
    SUITE.check(case)


def test_every_entry_has_three_forms() -> None:
    gaps = coverage_gaps(["special.toml", "special_methods.toml"], CASES)
    assert all(not v for v in gaps.values()), gaps


@pytest.mark.parametrize("name", ["entr", "bessel_y0", "chebyshev_polynomial_t"])
def test_a_composition_as_a_value_is_marked(name: str) -> None:
    """A composition is emitted for calls: the bare function (not called) is left, marked."""
    from transpile import convert_code

    result = convert_code(f"import torch\n\nFNS = [torch.special.{name}]\n")
    assert f"torch.special.{name}" in result.code and "# transpile:" in result.code
    assert "a lambda calling it converts" in result.code
