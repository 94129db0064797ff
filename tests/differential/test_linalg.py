"""Differential tests for torch.linalg.*, torch's linear-algebra functions and their Tensor
methods (tables "linalg.toml" and "tensor_linalg.toml").

Every converted entry is called in at least three forms. Inputs are well conditioned
(diagonally dominant, symmetric positive definite, triangular) so both frameworks answer
to float32 precision. Decompositions unique only up to signs (QR, SVD) are compared by
what is unique: the reconstruction, the singular values, |Q| and |R|.
"""
from __future__ import annotations

import numpy as np
import torch

from .harness import Case, OwnDraws, Suite, arr, call_forms, ints, table_tests

CASES: list[Case] = []
TABLES = ["linalg.toml", "tensor_linalg.toml"]


def forms(api: str, args: str, inputs=(), **kwargs) -> None:
    call_forms(CASES, api, args, inputs, **kwargs)


def case(api: str, code: str, inputs=(), form: str = "", **opts) -> None:
    CASES.append(Case(api, code, tuple(inputs), form, **opts))


def dominant(*shape: int) -> np.ndarray:
    """Square matrices far from singular: random plus n on the diagonal."""
    n = shape[-1]
    return (arr(*shape) + n * np.eye(n)).astype("float32")


def spd(*shape: int) -> np.ndarray:
    """Symmetric positive definite matrices."""
    m = arr(*shape)
    return (m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])).astype("float32")


A, AB = dominant(3, 3), dominant(2, 3, 3)
S, SB = spd(3, 3), spd(2, 3, 3)
L, LB = np.linalg.cholesky(S).astype("float32"), np.linalg.cholesky(SB).astype("float32")
U = np.ascontiguousarray(np.swapaxes(L, -1, -2))
B, BB = arr(3, 2), arr(2, 3, 2)
M, MB = arr(4, 3), arr(2, 4, 3)
QR_A, QR_TAU = (t.numpy() for t in torch.geqrf(torch.from_numpy(M)))
LU, PIV = (t.numpy() for t in torch.linalg.lu_factor(torch.from_numpy(A)))
LUB, PIVB = (t.numpy() for t in torch.linalg.lu_factor(torch.from_numpy(AB)))

# -- inverses, determinants -----------------------------------------------------------------
for name in ("inv", "det", "slogdet"):
    forms(f"torch.linalg.{name}", "A=a", (A,), extra=("a, out=None",))
    case(f"torch.linalg.{name}", f"torch.linalg.{name}(a)", (AB,), "batched")
case("torch.linalg.slogdet", "torch.linalg.slogdet(a).logabsdet", (A,), "field")
case("torch.linalg.slogdet", "sign, logabsdet = torch.linalg.slogdet(-a)\n    return sign * logabsdet.exp()", (A,), "unpacked")
forms("torch.linalg.pinv", "input=a", (M,), kw="rtol=0.1", extra=("a, atol=0.5", "a, hermitian=False", "a, out=None"))
case("torch.linalg.pinv", "torch.linalg.pinv(a)", (MB,), "batched")
# torch's older overload (input, rcond, hermitian): rcond is rtol
case("torch.linalg.pinv", "torch.linalg.pinv(a, 0.1)", (M,), "rcond-positional")
case("torch.linalg.pinv", "torch.linalg.pinv(a, rcond=0.5, hermitian=False)", (M,), "rcond-keyword")
forms("torch.pinverse", "input=a, rcond=0.1", (M,), req=1, extra=("a.mT",))
forms("Tensor.pinverse", "rcond=0.1", (MB,), req=0)
forms("torch.linalg.matrix_power", "input=a, n=3", (A,), extra=("a, -2", "a, 0", "a, 2, out=None"))
forms("torch.linalg.cholesky", "input=a", (S,), kw="upper=True", extra=("a, upper=False", "a, out=None"))
case("torch.linalg.cholesky", "torch.linalg.cholesky(a)", (SB,), "batched")

# -- solves ----------------------------------------------------------------------------------
forms("torch.linalg.solve", "A=a, B=b", (A, B), kw="left=True", extra=("a, b.mT, left=False", "a, b[:, 0]", "a, b, out=None"))
case("torch.linalg.solve", "torch.linalg.solve(a, b)", (AB, B), "broadcast")
case("torch.linalg.solve", "torch.linalg.solve(a, b)", (AB, arr(2, 3)), "vectors")
case("torch.linalg.solve", "torch.linalg.solve(a, b, left=False)", (AB, arr(2, 2, 3)), "right-batched")
forms("torch.linalg.solve_triangular", "input=a, B=b", (L, B), kw="upper=False", only=("positional", "keyword"), extra=("a.mT, b, upper=True", "a, b, upper=False, unitriangular=True", "a, b.mT, upper=False, left=False", "a, b, upper=False, out=None"))
case("torch.linalg.solve_triangular", "torch.linalg.solve_triangular(a, b, upper=False)", (LB, B), "broadcast")
case("torch.linalg.solve_triangular", "torch.linalg.solve_triangular(a, b, upper=True)", (A, B), "other-triangle-ignored")
forms("torch.triangular_solve", "input=b, A=a, upper=False, transpose=True, unitriangular=False", (L, B), req=2,
      extra=("b, a.mT", "b, a, False, False, True", "b, a, upper=False, out=None"))
case("torch.triangular_solve", "torch.triangular_solve(b, a).solution", (U, BB), "field")
forms("Tensor.triangular_solve", "A=b, upper=False, transpose=False, unitriangular=False", (B, L), req=1)
forms("torch.cholesky_solve", "input=b, input2=a, upper=False", (L, B), req=2, extra=("b, a.mT, True", "b, a, out=None"))
case("torch.cholesky_solve", "torch.cholesky_solve(b, a)", (LB, BB), "batched")
forms("Tensor.cholesky_solve", "input2=b, upper=False", (B, L), req=1)
forms("torch.cholesky_inverse", "input=a, upper=False", (L,), req=1, extra=("a.mT, True", "a, out=None"))
case("torch.cholesky_inverse", "torch.cholesky_inverse(a)", (LB,), "batched")
forms("Tensor.cholesky_inverse", "upper=True", (U,), req=0)
case("Tensor.cholesky_inverse", "a.cholesky_inverse()", (LB,), "batched")
forms("torch.lu_solve", "input=a, LU_data=b, LU_pivots=c", (B, LU, PIV), extra=("a, b, c, out=None",))
case("torch.lu_solve", "torch.lu_solve(a, b, c)", (BB, LUB, PIVB), "batched")
forms("Tensor.lu_solve", "LU_data=b, LU_pivots=c", (B, LU, PIV))
forms("torch.lu_unpack", "LU_data=a, LU_pivots=b, unpack_data=True, unpack_pivots=True", (LU, PIV), req=2, extra=("a, b, out=None",))
case("torch.lu_unpack", "P, L, U = torch.lu_unpack(a, b)\n    return P @ L @ U", (LUB, PIVB), "reconstructs")
case("torch.lu_unpack", "torch.lu_unpack(a, b).U", (LU, PIV), "field")

# -- QR, SVD ---------------------------------------------------------------------------------
QR_WHY = "Q and R are unique only up to the signs of Q's columns: compared as Q @ R, |Q|, |R|"
for code, inputs, form in (("torch.linalg.qr(a)", (M,), "positional"), ("torch.linalg.qr(A=a, mode='reduced')", (M,), "keyword"),
                           ("torch.linalg.qr(a, 'complete')", (M,), "mixed"), ("torch.linalg.qr(a, mode='complete', out=None)", (MB,), "out")):
    case("torch.linalg.qr", f"Q, R = {code}\n    return Q @ R, Q.abs(), R.abs()", inputs, form, why=QR_WHY)
case("torch.linalg.qr", "torch.abs(torch.linalg.qr(a).R)", (MB,), "field", why=QR_WHY)
case("torch.linalg.qr", "Q, R = torch.linalg.qr(a, mode='r')\n    return Q, R.abs()", (MB,), "mode-r", why=QR_WHY)
case("torch.linalg.qr", "torch.abs(torch.linalg.qr(A=a, mode='r').R)", (M,), "mode-r-keyword", why=QR_WHY)
for code, form in (("torch.qr(a)", "defaults"), ("torch.qr(input=a, some=False)", "keyword"), ("torch.qr(a, False)", "positional"),
                   ("torch.qr(a, some=True, out=None)", "out")):
    case("torch.qr", f"Q, R = {code}\n    return Q @ R, Q.abs(), R.abs()", (MB,), form, why=QR_WHY)
for code, form in (("a.qr()", "defaults"), ("a.qr(some=False)", "keyword"), ("a.qr(False)", "positional")):
    case("Tensor.qr", f"Q, R = {code}\n    return Q @ R, Q.abs(), R.abs()", (M,), form, why=QR_WHY)
case("Tensor.qr", "torch.abs(a.qr().Q)", (M,), "field", why=QR_WHY)
forms("torch.geqrf", "input=a", (M,), extra=("a, out=None", "a.mT"))
forms("Tensor.geqrf", "", (MB,))
case("Tensor.geqrf", "a.geqrf().tau", (M,), "field")
forms("torch.orgqr", "input=a, input2=b", (QR_A, QR_TAU))
forms("Tensor.orgqr", "input2=b", (QR_A, QR_TAU), extra=("b[:2]",))
SQ_A, SQ_TAU = (t.numpy() for t in torch.geqrf(torch.from_numpy(A)))
QRB_A, QRB_TAU = (t.numpy() for t in torch.geqrf(torch.from_numpy(MB)))
forms("torch.ormqr", "input=a, input2=b, input3=c, left=True, transpose=True", (QR_A, QR_TAU, arr(4, 2)), req=3,
      extra=("a, b, c.mT, False", "a, b, c.mT, left=False, transpose=True", "a, b, c, out=None"))
case("torch.ormqr", "torch.ormqr(a, b, c)", (SQ_A, SQ_TAU, arr(3, 5)), "square")
case("torch.ormqr", "torch.ormqr(a, b, c, transpose=True)", (QRB_A, QRB_TAU, arr(2, 4, 3)), "batched")
case("torch.ormqr", "torch.ormqr(a, b, c, left=False)", (QR_A[:3], QR_TAU, arr(2, 3)), "right-wide")
forms("Tensor.ormqr", "input2=b, input3=c, left=True, transpose=False", (QR_A, QR_TAU, arr(4, 2)), req=2, extra=("b, c, transpose=True",))
forms("torch.linalg.householder_product", "input=a, tau=b", (QR_A, QR_TAU), extra=("a, b[:1]", "a, b, out=None"))

SVD_WHY = "U and V are unique only up to the signs (phases) of their columns: compared as U S Vh (U Vh), S, |U|, |V|"
K = 3  # the singular values of a 4 x 3 matrix
SVD_LINALG = ("torch.linalg.svd(a)", "torch.linalg.svd(A=a, full_matrices=False)", "torch.linalg.svd(a, False)",
              "torch.linalg.svd(a, True, driver=None)", "torch.linalg.svd(a, out=None)")
for code, form in zip(SVD_LINALG, ("defaults", "keyword", "positional", "driver", "out")):
    case("torch.linalg.svd", f"U, S, Vh = {code}\n    return (U[..., :{K}] * S.unsqueeze(-2)) @ Vh[..., :{K}, :], S, U.abs(), Vh.abs()",
         (MB if form == "defaults" else M,), form, why=SVD_WHY)
case("torch.linalg.svd", "torch.linalg.svd(a).S", (M,), "field")
case("torch.linalg.svd", f"U, S, Vh = torch.linalg.svd(a, full_matrices=False)\n    return (U * S.unsqueeze(-2)) @ Vh, S, U.abs(), Vh.abs()",
     (M.astype(np.float64),), "float64", why=SVD_WHY)
MC = (arr(4, 3) + 1j * arr(4, 3)).astype("complex64")
case("torch.linalg.svd", "U, S, Vh = torch.linalg.svd(a, full_matrices=False)\n    return U @ Vh, S",
     (MC,), "complex", why=SVD_WHY)
case("torch.linalg.svdvals", "torch.linalg.svdvals(a)", (MC,), "complex")
case("torch.svd", "U, S, V = torch.svd(a)\n    return U @ V.mH, S", (MC,), "complex", why=SVD_WHY)
SVD_OLD = (("torch.svd(a)", "defaults"), ("torch.svd(input=a, some=False, compute_uv=True)", "keyword"), ("torch.svd(a, True, True)", "positional"),
           ("torch.svd(a, out=None)", "out"))
for code, form in SVD_OLD:
    case("torch.svd", f"U, S, V = {code}\n    return (U[..., :{K}] * S.unsqueeze(-2)) @ V[..., :{K}].mT, S, U.abs(), V.abs()", (M,), form, why=SVD_WHY)
for code, form in (("a.svd()", "defaults"), ("a.svd(some=False)", "keyword"), ("a.svd(True, True)", "positional")):
    case("Tensor.svd", f"U, S, V = {code}\n    return (U[..., :{K}] * S.unsqueeze(-2)) @ V[..., :{K}].mT, S, U.abs(), V.abs()", (MB,), form, why=SVD_WHY)
case("torch.svd", "torch.svd(a).S", (M,), "field")
forms("torch.linalg.svdvals", "A=a", (M,), extra=("a, driver=None", "a, out=None"))
case("torch.linalg.svdvals", "torch.linalg.svdvals(a)", (MB,), "batched")

# -- norms, products ------------------------------------------------------------------------
forms("torch.linalg.cond", "input=a, p='fro'", (A,), req=1, extra=("a, 1", "a, -2", "a, float('inf')", "a, 'nuc', out=None"))
case("torch.linalg.cond", "torch.linalg.cond(a)", (AB,), "batched")
forms("torch.linalg.norm", "input=a, ord=2, dim=(0, 1), keepdim=True", (A,), req=1, kw="dtype=torch.float64",
      extra=("a, 'nuc'", "a, 3, 1", "a, None, (-1, -2)", "a, out=None"))
case("torch.linalg.norm", "torch.linalg.norm(a, float('inf'), dim=-1)", (AB,), "vector-inf")
forms("torch.linalg.matrix_norm", "input=a, ord=1, dim=(-2, -1), keepdim=True", (AB,), req=1, kw="dtype=torch.float64",
      extra=("a, 'nuc'", "a, -2, (1, 2)", "a, float('inf')", "a, out=None"))
# spectral and nuclear norms of float64 matrices keep float64 precision (MindSpore's
# ops.norm would compute them in float32)
A64, AB64 = dominant(3, 3).astype("float64"), arr(2, 3, 4, dtype="float64")
F64 = {"atol": 1e-10, "rtol": 1e-10}
for code, inputs, form in (("torch.linalg.norm(a, 2)", (A64,), "spectral"), ("torch.linalg.norm(a, 'nuc', dim=(0, 2), keepdim=True)", (AB64,), "nuclear"),
                           ("torch.linalg.norm(a, -2, (1, 2))", (AB64,), "smallest"), ("torch.linalg.norm(a[0, 0], 2)", (AB64,), "vector-2"),
                           ("o = 2\n    return torch.linalg.norm(a, o, keepdim=True)", (A64,), "ord-variable"),
                           ("o = 'fro'\n    return torch.linalg.norm(a, o, (1, 2))", (AB64,), "fro-variable")):
    case("torch.linalg.norm", code, inputs, form, **F64)
for code, inputs, form in (("torch.linalg.matrix_norm(a, 2)", (A64,), "spectral"), ("torch.linalg.matrix_norm(a, 'nuc', keepdim=True)", (AB64,), "nuclear"),
                           ("torch.linalg.matrix_norm(a, -2, dim=(0, 2))", (AB64,), "smallest")):
    case("torch.linalg.matrix_norm", code, inputs, form, **F64)
for code, form in (("torch.linalg.cond(a)", "f64"), ("torch.linalg.cond(a, -2)", "f64-smallest"), ("torch.linalg.cond(a, 'nuc')", "f64-nuclear"),
                   ("torch.linalg.cond(a, 1)", "f64-1")):
    case("torch.linalg.cond", code, (A64,), form, **F64)
forms("torch.linalg.cross", "input=a, other=b", (arr(4, 3), arr(4, 3)), kw="dim=1", extra=("a, b[:1]", "a.mT, b.mT, dim=0", "a, b, out=None"))
forms("torch.linalg.vecdot", "x=a, y=b", (arr(4, 3), arr(4, 3)), kw="dim=0", extra=("a, b[:1]", "a, b, out=None"))
case("torch.linalg.vecdot", "torch.linalg.vecdot(a, b)", ((arr(2, 3) + 1j * arr(2, 3)).astype("complex64"), (arr(2, 3) + 1j * arr(2, 3)).astype("complex64")), "complex")
forms("torch.linalg.diagonal", "A=a", (AB,), kw="offset=1, dim1=0, dim2=2", extra=("a, offset=-1",))
forms("torch.linalg.matmul", "input=a, other=b", (AB, B), extra=("a, b, out=None", "a[0, 0], b"))
forms("torch.linalg.multi_dot", "tensors=[a, b, c]", (A, B, arr(2, 4)), extra=("(a, b, c), out=None", "[a[0], b, c[:, 0]]", "[a, b]"))
for code, form in (("a, b, c", "three"), ("a, b", "two"), ("a, b, c, out=None", "out")):
    case("torch.chain_matmul", f"torch.chain_matmul({code})", (A, B, arr(2, 4)), form)

# -- eigen-decompositions of symmetric / Hermitian matrices, LU -------------------------------
EIGH_WHY = "eigenvectors are unique only up to sign: compared as V diag(w) V^T, w, |V|"
SC = (S + 1j * (np.triu(np.ones((3, 3)), 1) - np.tril(np.ones((3, 3)), -1))).astype("complex64")  # Hermitian
for code, inputs, form in (("torch.linalg.eigh(a)", (S,), "positional"), ("torch.linalg.eigh(input=a, UPLO='U')", (S,), "keyword"),
                           ("torch.linalg.eigh(a, 'L')", (SB,), "mixed"), ("torch.linalg.eigh(a, out=None)", (SB,), "out")):
    case("torch.linalg.eigh", f"w, V = {code}\n    return (V * w.unsqueeze(-2)) @ V.mT, w, V.abs()", inputs, form, why=EIGH_WHY)
case("torch.linalg.eigh", "torch.linalg.eigh(a).eigenvalues", (np.triu(S),), "field")
case("torch.linalg.eigh", "torch.linalg.eigh(a, UPLO='U')[0]", (np.triu(S),), "upper-only")
forms("torch.linalg.eigvalsh", "input=a, UPLO='U'", (S,), req=1, extra=("a, out=None", "a.tril()"))
case("torch.linalg.eigvalsh", "torch.linalg.eigvalsh(a)", (SB,), "batched")
case("torch.linalg.eigvalsh", "torch.linalg.eigvalsh(a)", (SC,), "hermitian")
forms("torch.linalg.lu_factor", "A=a", (A,), extra=("a, pivot=True", "a, out=None"))
case("torch.linalg.lu_factor", "torch.linalg.lu_factor(a)", (AB,), "batched")
case("torch.linalg.lu_factor", "LU, piv = torch.linalg.lu_factor(a)\n    return torch.linalg.lu_solve(LU, piv, b)", (AB, BB), "then-solve")
for code, inputs, form in (("torch.linalg.lu(a)", (A,), "positional"), ("torch.linalg.lu(A=a, pivot=True)", (A,), "keyword"),
                           ("torch.linalg.lu(a, out=None)", (AB,), "batched")):
    case("torch.linalg.lu", f"P, L, U = {code}\n    return P, L, U, P @ L @ U", inputs, form)
forms("torch.lu", "A=a, pivot=True, get_infos=False", (A,), req=1)
case("torch.lu", "torch.lu(a)", (AB,), "batched")
forms("Tensor.lu", "pivot=True, get_infos=False", (AB,), req=0)
# eig / eigvals: MindSpore's eigenvalue order is not torch's (LAPACK geev's), so both sides
# are compared sorted by one rule: by imaginary part (rounded to 4 decimals: a real
# eigenvalue may come with a 1e-9 imaginary part), then by real part (SORTED_EIGENVALUES, the
# keys of EIGENVALUE_KEYS for a batch); eigenvectors by their residual A V - V diag(w)
EIG_WHY = "eigenvalue order is MindSpore's (compared sorted); float32 eigensolvers differ in the last digits"
EIG = {"atol": 1e-4, "rtol": 1e-4, "why": EIG_WHY}
SORTED_EIGENVALUES = "w[torch.argsort(torch.round(w.imag * 1e4) * 1e3 + w.real)]"
EIGENVALUE_KEYS = "torch.sort(torch.round(w.imag * 1e4) * 1e3 + w.real, dim=-1).values"
RESIDUAL = "r = a.to(V.dtype) @ V - V * w.unsqueeze(-2)\n    small = (r.real.abs().max() < 1e-4) & (r.imag.abs().max() < 1e-4)"
# drawn apart: the cases after these keep their draws
EIG_DRAWS = OwnDraws(33)
GENERAL = EIG_DRAWS.arr(4, 4)
for code, inputs, form in (("torch.linalg.eig(a)", (GENERAL,), "positional"), ("torch.linalg.eig(input=a)", (A,), "keyword"),
                           ("torch.linalg.eig(a, out=None)", (A.astype("float64"),), "float64")):
    case("torch.linalg.eig", f"w, V = {code}\n    {RESIDUAL}\n    return {SORTED_EIGENVALUES}, small", inputs, form, **EIG)
case("torch.linalg.eig", f"w, V = torch.linalg.eig(a)\n    {RESIDUAL}\n    return {EIGENVALUE_KEYS}, small", (EIG_DRAWS.arr(2, 3, 3),),
     "batched", **EIG)
case("torch.linalg.eig", f"w, V = torch.linalg.eig(a)\n    return {SORTED_EIGENVALUES}", (np.diag([3.0, -1.0, 2.0]).astype("float32"),),
     "real-spectrum", **EIG)
for code, inputs, form in (("torch.linalg.eigvals(a)", (GENERAL,), "positional"), ("torch.linalg.eigvals(input=a)", (A,), "keyword"),
                           ("torch.linalg.eigvals(a, out=None)", (A.astype("float64"),), "float64")):
    case("torch.linalg.eigvals", f"w = {code}\n    return {SORTED_EIGENVALUES}", inputs, form, **EIG)
case("torch.linalg.eigvals", f"w = torch.linalg.eigvals(a)\n    return {EIGENVALUE_KEYS}", (EIG_DRAWS.arr(2, 4, 4, dtype="float64"),),
     "batched", **EIG)
# the *_ex forms: the result and LAPACK's info (0; else where the factorization failed)
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]], dtype="float32")
forms("torch.linalg.inv_ex", "A=a", (A,), kw="check_errors=False", extra=("a, out=None",))
case("torch.linalg.inv_ex", "X, info = torch.linalg.inv_ex(a)\n    return X, info", (AB,), "batched")
case("torch.linalg.inv_ex", "torch.linalg.inv_ex(a).info", (SINGULAR,), "singular-info")
forms("torch.linalg.cholesky_ex", "input=a", (S,), kw="upper=True, check_errors=False", extra=("a, out=None",))
case("torch.linalg.cholesky_ex", "torch.linalg.cholesky_ex(a).L", (SB.astype("float64"),), "float64")
case("torch.linalg.cholesky_ex", "L, info = torch.linalg.cholesky_ex(a)\n    return info", (np.stack([S, -S]),), "not-positive-definite")
case("torch.linalg.cholesky_ex", "torch.linalg.cholesky_ex(a).info", (np.array([[1.0, 2.0], [2.0, 1.0]], "float32"),),
     "second-minor")
forms("torch.linalg.solve_ex", "A=a, B=b", (A, B), kw="left=True, check_errors=False", extra=("a, b.mT, left=False", "a, b, out=None"))
case("torch.linalg.solve_ex", "torch.linalg.solve_ex(a, b).result", (AB, B), "broadcast")
case("torch.linalg.solve_ex", "torch.linalg.solve_ex(a, b[:, 0])[1]", (SINGULAR, EIG_DRAWS.arr(2, 2)), "singular-info")
forms("torch.linalg.lu_factor_ex", "A=a", (A,), kw="pivot=True, check_errors=False", extra=("a, out=None",))
case("torch.linalg.lu_factor_ex", "LU, piv, info = torch.linalg.lu_factor_ex(a)\n    return LU, piv, info", (AB,), "batched")
case("torch.linalg.lu_factor_ex", "torch.linalg.lu_factor_ex(a).info", (np.stack([SINGULAR, np.zeros((2, 2), "float32")]),),
     "singular-info")
forms("torch.linalg.lu_solve", "LU=a, pivots=b, B=c", (LU, PIV, B), kw="left=True, adjoint=False", extra=("a, b, c[:, :1]", "a, b, c, out=None"))
case("torch.linalg.lu_solve", "torch.linalg.lu_solve(a, b, c)", (LUB, PIVB, BB), "batched")
case("torch.linalg.lu_solve", "torch.linalg.lu_solve(a, b, c, adjoint=True)", (LU, PIV, B), "adjoint")
case("torch.linalg.lu_solve", "torch.linalg.lu_solve(a, b, c.mT, left=False)", (LU, PIV, B), "right")
case("torch.linalg.lu_solve", "torch.linalg.lu_solve(LU=a, pivots=b, B=c.mT, left=False, adjoint=True)", (LUB, PIVB, BB), "right-adjoint")
forms("Tensor.stft", "n_fft=16, hop_length=4, win_length=12, window=b, center=False, pad_mode='constant', normalized=True, onesided=True, return_complex=True",
      (arr(64), np.hanning(12).astype("float32")), only=("positional", "keyword"))
case("Tensor.stft", "a.stft(8, return_complex=True)", (arr(2, 40),), "defaults")
case("Tensor.stft", "a.stft(16, window=b, win_length=12, return_complex=True)", (arr(64), np.hanning(12).astype("float32")), "window")
# -- rank, Vandermonde, tensor inverse and solve -------------------------------------------
LOW_RANK = (arr(4, 2) @ arr(2, 5)).astype("float32")
forms("torch.linalg.matrix_rank", "input=a", (LOW_RANK,), kw="atol=0.5, rtol=0.1, hermitian=False",
      extra=("a, atol=1.0", "a, rtol=0.3", "a, out=None"))
case("torch.linalg.matrix_rank", "torch.linalg.matrix_rank(a)", (np.stack([LOW_RANK, arr(4, 5)]),), "batched")
case("torch.linalg.matrix_rank", "torch.linalg.matrix_rank(a, hermitian=True)", (S,), "hermitian")
# torch's older overload (input, tol, hermitian): tol is atol with rtol 0
case("torch.linalg.matrix_rank", "torch.linalg.matrix_rank(a, 0.5)", (LOW_RANK,), "tol-positional")
case("torch.linalg.matrix_rank", "torch.linalg.matrix_rank(a, tol=2.0)", (LOW_RANK,), "tol-keyword")
case("torch.linalg.matrix_rank", "torch.linalg.matrix_rank(a, 0.5, False)", (LOW_RANK,), "tol-hermitian-positional")
case("torch.linalg.matrix_rank", "torch.linalg.matrix_rank(a)", (LOW_RANK.astype("float64"),), "f64")
forms("torch.linalg.vander", "x=a", (arr(4),), kw="N=3", extra=("a, N=2",))
case("torch.linalg.vander", "torch.linalg.vander(a)", (arr(2, 3),), "batched")
case("torch.linalg.vander", "torch.linalg.vander(a, N=5)", (ints(3, low=-3, high=4),), "int")
T4 = dominant(6, 6).reshape(6, 2, 3)
case("torch.linalg.tensorinv", "torch.linalg.tensorinv(a.reshape(2, 3, 6))", (T4,), "defaults")
forms("torch.linalg.tensorinv", "input=a, ind=1", (T4,), extra=("a.reshape(2, 3, 2, 3), 2", "a.reshape(2, 3, 3, 2), ind=2, out=None"))
forms("torch.linalg.tensorsolve", "input=a, other=b, dims=None", (T4.reshape(2, 3, 6), arr(2, 3)), req=2,
      extra=("a.reshape(2, 3, 2, 3), b", "a.permute(2, 0, 1), b, dims=(0,)", "a, b, out=None"))
# -- float64 keeps its precision (ops.matrix_power and ops.lu_solve would compute in float32) --
A64B, B64 = dominant(2, 3, 3).astype("float64"), arr(2, 3, 2, dtype="float64")
LU64, PIV64 = (t.numpy() for t in torch.linalg.lu_factor(torch.from_numpy(A64B)))
case("torch.linalg.matrix_power", "torch.linalg.matrix_power(a, 5)", (A64B,), "f64", **F64)
case("torch.linalg.matrix_power", "torch.linalg.matrix_power(a, -3)", (A64B,), "f64-negative", **F64)
forms("torch.matrix_power", "input=a, n=3", (A,), extra=("a, -2",))
case("torch.matrix_power", "torch.matrix_power(a, 5)", (A64B,), "f64", **F64)
forms("Tensor.matrix_power", "n=2", (A,), extra=("0",))
case("Tensor.matrix_power", "a.matrix_power(-3)", (A64B,), "f64-negative", **F64)
case("torch.lu_solve", "torch.lu_solve(a, b, c)", (B64, LU64, PIV64), "f64", **F64)
case("torch.linalg.lu_solve", "torch.linalg.lu_solve(a, b, c)", (LU64, PIV64, B64), "f64", **F64)
case("torch.linalg.lu_solve", "torch.linalg.lu_solve(a, b, c)", (LU64, PIV64, B64[0]), "broadcast", **F64)
case("torch.linalg.norm", "torch.linalg.norm(a, 3, 1)", (AB64,), "f64-vector", **F64)
case("torch.linalg.norm", "torch.linalg.norm(a, dim=-1)", (AB64,), "f64-vector-default", **F64)
case("torch.linalg.norm", "torch.linalg.norm(a)", (AB64,), "f64-all", **F64)
case("torch.linalg.norm", "torch.linalg.norm(a[0, 0], 1)", (AB64,), "f64-1d", **F64)

# -- matrix exponential: torch's degree-18 Taylor and the Pade form agree to rounding --------
EXP_WHY = "torch (Taylor) and the conversion (Pade) round differently: float32 to 1e-5 relative"
EXPM = (np.random.default_rng(4).uniform(-2, 2, (2, 4, 4)) * 0.7).astype("float32")  # own draws: the norm decides the rounding
for code, inputs, form in (("torch.linalg.matrix_exp(a)", (EXPM,), "positional"), ("torch.linalg.matrix_exp(input=a)", (EXPM[0],), "keyword"),
                           ("torch.linalg.matrix_exp(a * 4)", (EXPM,), "scaled"), ("torch.linalg.matrix_exp(a - a)", (EXPM,), "zero")):
    case("torch.linalg.matrix_exp", code, inputs, form, why=EXP_WHY)
case("torch.linalg.matrix_exp", "torch.linalg.matrix_exp(a)", (EXPM.astype("float64") * 3,), "f64", atol=1e-12, rtol=1e-12)
for code, inputs, form in (("torch.matrix_exp(a)", (EXPM,), "positional"), ("torch.matrix_exp(input=a)", (EXPM[0],), "keyword"),
                           ("torch.matrix_exp(a * 2)", (EXPM,), "scaled")):
    case("torch.matrix_exp", code, inputs, form, why=EXP_WHY)
case("Tensor.matrix_exp", "a.matrix_exp()", (EXPM,), "call", why=EXP_WHY)
case("Tensor.matrix_exp", "(a * 3).matrix_exp()", (EXPM[0],), "scaled", why=EXP_WHY)
SPECTROGRAM = torch.stft(torch.from_numpy(arr(2, 120)), 16, return_complex=True).numpy()
forms("Tensor.istft", "n_fft=16, hop_length=4, win_length=16, window=None, center=True, normalized=False, onesided=True, length=110, return_complex=False",
      (SPECTROGRAM,), req=1)
case("Tensor.istft", "a.istft(16, window=torch.ones(16))", (SPECTROGRAM,), "window")

SUITE = Suite(CASES)


test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, TABLES)
