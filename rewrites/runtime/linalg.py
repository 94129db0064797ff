"""Run-time helpers: torch.linalg and torch's linear-algebra functions (tables/linalg.toml,
tensor_linalg.toml) where MindSpore's kernel differs from torch's (no batch broadcasting, a
vector right-hand side, results in another order, float64 computed in float32, no CPU
kernel): exact compositions of kernels that run on CPU.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import math

import mindspore as ms
from mindspore import ops


def _broadcast_shapes(*shapes):
    """numpy's broadcasting rule on shapes (torch broadcasts batch dimensions)."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# torch.linalg.solve: a vector right-hand side, broadcast batches, left=False
def _linalg_solve(A, B, left=True):
    """torch.linalg.solve: B is a (batch of) vector(s) when B.ndim == 1 or B.shape ==
    A.shape[:-1]; batch dimensions broadcast; left=False solves X A = B."""
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector:
        B = B.unsqueeze(-1)
    if not left:
        A, B = A.swapaxes(-1, -2), B.swapaxes(-1, -2)
    batch = _broadcast_shapes(A.shape[:-2], B.shape[:-2])
    X = ops.matrix_solve(ops.broadcast_to(A, batch + A.shape[-2:]), ops.broadcast_to(B, batch + B.shape[-2:]))
    if not left:
        X = X.swapaxes(-1, -2)
    return X.squeeze(-1) if vector else X


# torch.linalg.solve_triangular / torch.triangular_solve: MatrixTriangularSolve reads only
# the triangle it is told; it neither broadcasts nor knows a unit diagonal
def _solve_triangular(A, B, upper, left=True, unitriangular=False, transpose=False):
    """torch's triangular solve: A X = B (X A = B when not left) with A upper or lower
    triangular (the other triangle ignored), its diagonal taken as ones when unitriangular,
    A transposed first when transpose; batch dimensions broadcast."""
    lower = not upper
    if unitriangular:
        eye = ops.eye(A.shape[-1], A.shape[-1], A.dtype)
        A = A * (1 - eye) + eye
    if transpose:
        A, lower = A.swapaxes(-1, -2), not lower
    if not left:
        A, B, lower = A.swapaxes(-1, -2), B.swapaxes(-1, -2), not lower
    batch = _broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = ops.broadcast_to(A, batch + A.shape[-2:])
    X = ops.MatrixTriangularSolve(lower=lower)(A, ops.broadcast_to(B, batch + B.shape[-2:]))
    return X if left else X.swapaxes(-1, -2)


# ops.svd gives (S, U, V); torch.linalg.svd (U, S, Vh), torch.svd (U, S, V)
def _svd(A, full_matrices, vh):
    """torch's svd order: (U, S, Vh) for torch.linalg.svd, (U, S, V) for torch.svd."""
    S, U, V = ops.svd(A, full_matrices=full_matrices)
    S = ops.real(S)  # MindSpore gives a complex matrix complex singular values
    if vh:
        V = V.swapaxes(-1, -2)
        if V.dtype in (ms.complex64, ms.complex128):
            V = ops.conj(V)
    return U, S, V


# ops.cholesky_inverse takes one matrix (a batch comes out wrong): solve against I
def _cholesky_inverse(L, upper=False):
    """torch.cholesky_inverse: the inverse of A from its Cholesky factor, (batches too)."""
    eye = ops.eye(L.shape[-1], L.shape[-1], L.dtype)
    return ops.cholesky_solve(ops.broadcast_to(eye, L.shape), L, upper)


def _linalg_cross(input, other, dim=-1):
    """torch.linalg.cross: the operands broadcast (ops.cross wants equal shapes)."""
    shape = _broadcast_shapes(input.shape, other.shape)
    return ops.cross(ops.broadcast_to(input, shape), ops.broadcast_to(other, shape), dim)


# ops.norm / ops.matrix_norm / ops.cond compute singular values in float32 whatever the
# input (a float64 matrix's spectral norm comes out float32): from ops.svd instead
def _matrix_norm(A, ord=None, dim=None, keepdim=False):
    """torch.linalg.norm / matrix_norm: the spectral (2, -2) and nuclear ("nuc") norms of
    matrices from the singular values (in A's precision), vector norms by ops.vector_norm,
    the rest by ops.norm."""
    matrix = dim is not None and len(dim) == 2 if isinstance(dim, (tuple, list)) else dim is None and A.ndim == 2
    if not matrix and (dim is not None or A.ndim == 1):  # ops.norm's vector p-norms refuse float64
        if ord in (None, 0, 1, 2, float("inf"), -float("inf")):
            return ops.vector_norm(A, 2 if ord is None else ord, dim, keepdim)
        p = ms.Tensor(ord, A.dtype)  # a Python float exponent would be rounded to float32
        return ops.pow(ops.sum(ops.pow(ops.abs(A), p), dim, keepdim), 1 / p)
    if ord not in (2, -2, "nuc") or not matrix:
        return ops.norm(A, ord, dim, keepdim)
    d0, d1 = (d % A.ndim for d in (dim or (-2, -1)))
    S = ops.svd(ops.moveaxis(A, (d0, d1), (-2, -1)), compute_uv=False)
    result = ops.amax(S, -1) if ord == 2 else ops.amin(S, -1) if ord == -2 else ops.sum(S, -1)
    if keepdim:
        result = result.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    return result


def _cond(A, p=None):
    """torch.linalg.cond: the ratio of the extreme singular values for p None, 2, -2;
    else norm(A, p) * norm(inv(A), p), as torch computes it."""
    if p in (None, 2, -2):
        S = ops.svd(A, compute_uv=False)
        big, small = ops.amax(S, -1), ops.amin(S, -1)
        return small / big if p == -2 else big / small
    return _matrix_norm(A, p, (-2, -1)) * _matrix_norm(ops.inverse(A), p, (-2, -1))


# mindspore.scipy.linalg's eigh and lu_factor (imported where they run: no target module of
# the tables) take one matrix: a batch one matrix at a time
def _eigh(A, UPLO="L", eigenvectors=True):
    """torch.linalg.eigh / eigvalsh: ascending eigenvalues (real, also of a complex
    Hermitian matrix) and eigenvectors, reading the lower (UPLO "L") or upper triangle."""
    from mindspore.scipy.linalg import eigh

    n = A.shape[-1]
    parts = [eigh(m, lower=UPLO == "L", eigvals_only=not eigenvectors) for m in A.reshape((-1, n, n))]
    w = ops.stack([p[0] for p in parts] if eigenvectors else parts).reshape(A.shape[:-1])
    if w.dtype in (ms.complex64, ms.complex128):
        w = ops.real(w)
    return (w, ops.stack([p[1] for p in parts]).reshape(A.shape)) if eigenvectors else w


def _lu_factor(A):
    """torch.linalg.lu_factor: (LU, pivots) of square matrices, torch's 1-based int32 pivots."""
    from mindspore.scipy.linalg import lu_factor

    n = A.shape[-1]
    parts = [lu_factor(m) for m in A.reshape((-1, n, n))]
    LU = ops.stack([p[0] for p in parts]).reshape(A.shape)
    pivots = ops.stack([p[1] for p in parts]).reshape(A.shape[:-1]) + 1
    return LU, pivots.astype(ms.int32)


def _matrix_rank(A, atol=None, rtol=None, hermitian=False):
    """torch.linalg.matrix_rank: the singular values above max(atol, rtol * the largest);
    rtol defaults to eps * max(m, n), or 0 when only a positive atol is given (the
    singular values of a Hermitian matrix are its absolute eigenvalues: the same count)."""
    S = ops.svd(A, compute_uv=False)
    if rtol is None:
        eps = 1.1920928955078125e-07 if S.dtype == ms.float32 else 2.220446049250313e-16
        rtol = 0.0 if atol is not None and float(atol) > 0 else eps * max(A.shape[-2], A.shape[-1])
    tol = rtol * ops.amax(S, -1, keepdims=True)
    if atol is not None:
        tol = ops.maximum(tol, ops.full_like(tol, atol) if isinstance(atol, (int, float)) else atol)
    return ops.sum((S > tol).astype(ms.int64), -1)


def _vander(x, N=None):
    """torch.linalg.vander: increasing powers x**0 ... x**(N-1) along a new last axis."""
    N = x.shape[-1] if N is None else N
    ones = ops.ones(x.shape + (1,), x.dtype)
    if N <= 1:
        return ones[..., :N]
    powers = ops.cumprod(ops.broadcast_to(x.unsqueeze(-1), x.shape + (N - 1,)), -1)
    return ops.cat((ones, powers.astype(x.dtype)), -1)


def _tensorinv(A, ind=2):
    """torch.linalg.tensorinv: the inverse of A read as a matrix of its first ind axes by
    the rest, shaped A.shape[ind:] + A.shape[:ind]."""
    rows = math.prod(A.shape[:ind])
    return ops.inverse(A.reshape(rows, -1)).reshape(A.shape[ind:] + A.shape[:ind])


def _tensorsolve(A, B, dims=None):
    """torch.linalg.tensorsolve: X with tensordot(A, X, X.ndim) == B (the axes dims of A
    moved to the end first)."""
    if dims is not None:
        moved = [d % A.ndim for d in dims]
        A = ops.permute(A, tuple(d for d in range(A.ndim) if d not in moved) + tuple(moved))
    n = math.prod(B.shape)
    return ops.matrix_solve(A.reshape(n, -1), B.reshape(n, 1)).reshape(A.shape[B.ndim:])


# ops.matrix_power and ops.lu_solve compute float64 in float32; ops.matrix_exp has no CPU
# kernel: all three from matmul and solves, which keep the input's precision
def _matrix_power(A, n):
    """torch.linalg.matrix_power by repeated squaring (of the inverse for n < 0)."""
    if n < 0:
        A, n = ops.inverse(A), -n
    result = None
    while n:
        if n & 1:
            result = A if result is None else ops.matmul(result, A)
        n >>= 1
        if n:
            A = ops.matmul(A, A)
    if result is None:
        return ops.broadcast_to(ops.eye(A.shape[-1], A.shape[-1], A.dtype), A.shape)
    return result


# scaling and squaring with the degree-13 Pade approximant (Higham 2005); the coefficients
# are tensors of A's dtype (a Python float times a float64 tensor is rounded to float32)
def _matrix_exp(A):
    """torch.linalg.matrix_exp: exp(A / 2**s) by a degree-13 Pade approximant, squared s times."""
    b = [ms.Tensor(c, A.dtype) for c in (
        64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
        129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
        40840800.0, 960960.0, 16380.0, 182.0, 1.0)]
    norm = float(ops.amax(ops.sum(ops.abs(A), -2))) if A.size else 0.0
    s = max(0, math.ceil(math.log2(norm / 5.371920351148152))) if norm > 0 else 0
    A = A / ms.Tensor(2.0 ** s, A.dtype)
    eye = ops.broadcast_to(ops.eye(A.shape[-1], A.shape[-1], A.dtype), A.shape)
    A2 = ops.matmul(A, A)
    A4 = ops.matmul(A2, A2)
    A6 = ops.matmul(A4, A2)
    U = ops.matmul(A, ops.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
    V = ops.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    R = ops.matrix_solve(V - U, V + U)
    for _ in range(s):
        R = ops.matmul(R, R)
    return R


def _lu_solve(B, LU, pivots, left=True, adjoint=False):
    """torch's lu_solve: A X = B from A's LU factorization (A = P L U), by two triangular
    solves; A^H X = B when adjoint (U^H, then L^H, then P); X A = B when not left (the
    adjoint system of B^H, conjugate-transposed back); batch dimensions broadcast."""
    if not left:
        return _adjoint(_lu_solve(_adjoint(B), LU, pivots, True, not adjoint))
    P, L, U = ops.lu_unpack(LU, pivots)
    if adjoint:
        Y = _solve_triangular(_adjoint(U), B, upper=False)
        return ops.matmul(P, _solve_triangular(_adjoint(L), Y, upper=True, unitriangular=True))
    Y = _solve_triangular(L, ops.matmul(P.swapaxes(-1, -2), B), upper=False, unitriangular=True)
    return _solve_triangular(U, Y, upper=True)


def _adjoint(M):
    """The conjugate transpose of a (batch of) matrices."""
    M = M.swapaxes(-1, -2)
    return ops.conj(M) if M.dtype in (ms.complex64, ms.complex128) else M


def _qr_r(A):
    """torch.linalg.qr(A, mode="r"): an empty Q and the reduced R."""
    return ops.zeros((0,), A.dtype), ops.qr(A, mode="reduced")[1]


# ops.ormqr has no CPU kernel: Q built whole by orgqr (identity reflectors padded in)
def _ormqr(input, tau, other, left=True, transpose=False):
    """torch.ormqr: op(Q) @ other (other @ op(Q) when not left), Q the product of the
    Householder reflectors (input, tau); op(Q) is Q's conjugate transpose when transpose."""
    mn = other.shape[-2] if left else other.shape[-1]
    A, tau = input[..., :mn], tau[..., :mn]
    A = ops.pad(A, (0, mn - A.shape[-1]))
    Q = ops.orgqr(A, ops.pad(tau, (0, mn - tau.shape[-1])))
    if transpose:
        Q = Q.swapaxes(-1, -2)
        if Q.dtype in (ms.complex64, ms.complex128):
            Q = ops.conj(Q)
    return ops.matmul(Q, other) if left else ops.matmul(other, Q)


# torch's *_ex functions return LAPACK's info beside the result instead of raising;
# MindSpore raises (cholesky) or returns NaN (lu_factor) and reports no info
def _lu_info(LU):
    """getrf's info of an LU factorization: the 1-based index of U's first zero (or not
    finite) pivot, 0 when there is none (per matrix of a batch, int32)."""
    d = ops.diagonal(LU, 0, -2, -1)
    n = d.shape[-1]
    index = ops.arange(1, n + 1, dtype=ms.int32)
    bad = ops.logical_or(d == 0, ops.logical_not(ops.isfinite(d)))
    first = ops.amin(ops.where(bad, index, ops.full_like(index, n + 1)), -1)
    return ops.where(first > n, ops.zeros_like(first), first).astype(ms.int32)


def _check_info(info, check_errors, what):
    """torch's check_errors=True: a failed factorization raises instead of returning info."""
    if check_errors and bool((info > 0).any()):
        raise ValueError(f"{what}: the factorization could not be completed (info {info.asnumpy().tolist()})")


def _lu_factor_ex(A, pivot=True, check_errors=False):
    """torch.linalg.lu_factor_ex: (LU, pivots, info), info > 0 for a singular matrix."""
    LU, pivots = _lu_factor(A)
    info = _lu_info(LU)
    _check_info(info, check_errors, "torch.linalg.lu_factor_ex")
    return LU, pivots, info


def _inv_ex(A, check_errors=False):
    """torch.linalg.inv_ex: (inverse, info), info from A's LU factorization."""
    info = _lu_info(_lu_factor(A)[0])
    _check_info(info, check_errors, "torch.linalg.inv_ex")
    return ops.inverse(A), info


def _solve_ex(A, B, left=True, check_errors=False):
    """torch.linalg.solve_ex: (solution, info), info from A's LU factorization; a singular
    matrix is solved as the identity (torch's solution there is LAPACK's partial values;
    MindSpore's MatrixSolve raises)."""
    info = _lu_info(_lu_factor(A)[0])
    _check_info(info, check_errors, "torch.linalg.solve_ex")
    eye = ops.eye(A.shape[-1], A.shape[-1], A.dtype)
    return _linalg_solve(ops.where((info > 0)[..., None, None], eye, A), B, left), info


def _cholesky_ex(A, upper=False, check_errors=False):
    """torch.linalg.cholesky_ex: (L, info) of real symmetric matrices, column by column as
    LAPACK's potrf; info is the order of the first leading minor that is not positive
    definite (0 when A is), where the factorization stops (the factor is then not torch's)."""
    n = A.shape[-1]
    rows = ops.arange(n).reshape(n, 1)
    info = ops.zeros(A.shape[:-2], ms.int32)
    columns = []
    for j in range(n):
        done = ops.stack(columns, -1) if columns else ops.zeros(A.shape[:-1] + (1,), A.dtype)
        d = A[..., j, j] - ops.sum(done[..., j, :] ** 2, -1)
        failed = ops.logical_not(d > 0)  # also NaN
        info = ops.where(ops.logical_and(info == 0, failed), ops.full_like(info, j + 1), info)
        pivot = ops.sqrt(ops.where(failed, ops.ones_like(d), d))
        column = (A[..., :, j:j + 1] - ops.matmul(done, done[..., j, :].unsqueeze(-1))) / pivot[..., None, None]
        column = ops.where(rows > j, column, ops.where(rows == j, pivot[..., None, None], ops.zeros_like(column)))
        columns.append(column.squeeze(-1))
    L = ops.stack(columns, -1)
    _check_info(info, check_errors, "torch.linalg.cholesky_ex")
    return (L.swapaxes(-1, -2) if upper else L), info
