"""Hooks of tables/linalg.toml: torch.linalg.* and torch's linear-algebra functions
(the Tensor methods of tables/tensor_linalg.toml share them).

Where MindSpore's kernel differs from torch (no batch broadcasting, a vector right-hand
side, results in another order), a small function emitted beside the code does what
torch does with kernels that run on CPU. Every composition here is exact.
"""
from __future__ import annotations

import libcst as cst

from ..syntax import (NOT_LITERAL, Unconvertible, code, emitted, emitted_spelled, entry_call, keyword_call, literal, literal_value, name_chain)
from .registry import hook

BROADCAST_SHAPES = '''
def {name}(*shapes):
    """numpy's broadcasting rule on shapes (torch broadcasts batch dimensions)."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)
'''

# torch.linalg.solve: a vector right-hand side, broadcast batches, left=False
SOLVE = '''
def {name}(A, B, left=True):
    """torch.linalg.solve: B is a (batch of) vector(s) when B.ndim == 1 or B.shape ==
    A.shape[:-1]; batch dimensions broadcast; left=False solves X A = B."""
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector:
        B = B.unsqueeze(-1)
    if not left:
        A, B = A.swapaxes(-1, -2), B.swapaxes(-1, -2)
    batch = BROADCAST(A.shape[:-2], B.shape[:-2])
    X = OPS.matrix_solve(OPS.broadcast_to(A, batch + A.shape[-2:]), OPS.broadcast_to(B, batch + B.shape[-2:]))
    if not left:
        X = X.swapaxes(-1, -2)
    return X.squeeze(-1) if vector else X
'''

# torch.linalg.solve_triangular / torch.triangular_solve: MatrixTriangularSolve reads only
# the triangle it is told; it neither broadcasts nor knows a unit diagonal
SOLVE_TRIANGULAR = '''
def {name}(A, B, upper, left=True, unitriangular=False, transpose=False):
    """torch's triangular solve: A X = B (X A = B when not left) with A upper or lower
    triangular (the other triangle ignored), its diagonal taken as ones when unitriangular,
    A transposed first when transpose; batch dimensions broadcast."""
    lower = not upper
    if unitriangular:
        eye = OPS.eye(A.shape[-1], A.shape[-1], A.dtype)
        A = A * (1 - eye) + eye
    if transpose:
        A, lower = A.swapaxes(-1, -2), not lower
    if not left:
        A, B, lower = A.swapaxes(-1, -2), B.swapaxes(-1, -2), not lower
    batch = BROADCAST(A.shape[:-2], B.shape[:-2])
    A = OPS.broadcast_to(A, batch + A.shape[-2:])
    X = OPS.MatrixTriangularSolve(lower=lower)(A, OPS.broadcast_to(B, batch + B.shape[-2:]))
    return X if left else X.swapaxes(-1, -2)
'''

# ops.svd gives (S, U, V); torch.linalg.svd (U, S, Vh), torch.svd (U, S, V)
SVD = '''
def {name}(A, full_matrices, vh):
    """torch's svd order: (U, S, Vh) for torch.linalg.svd, (U, S, V) for torch.svd."""
    S, U, V = OPS.svd(A, full_matrices=full_matrices)
    S = OPS.real(S)  # MindSpore gives a complex matrix complex singular values
    if vh:
        V = V.swapaxes(-1, -2)
        if V.dtype in (MS.complex64, MS.complex128):
            V = OPS.conj(V)
    return U, S, V
'''

# ops.cholesky_inverse takes one matrix (a batch comes out wrong): solve against I
CHOLESKY_INVERSE = '''
def {name}(L, upper=False):
    """torch.cholesky_inverse: the inverse of A from its Cholesky factor, (batches too)."""
    eye = OPS.eye(L.shape[-1], L.shape[-1], L.dtype)
    return OPS.cholesky_solve(OPS.broadcast_to(eye, L.shape), L, upper)
'''

CROSS = '''
def {name}(input, other, dim=-1):
    """torch.linalg.cross: the operands broadcast (ops.cross wants equal shapes)."""
    shape = BROADCAST(input.shape, other.shape)
    return OPS.cross(OPS.broadcast_to(input, shape), OPS.broadcast_to(other, shape), dim)
'''


def linalg_helper(ctx, name: str, source: str) -> cst.Name:
    """``name`` emitted beside the code (with the shape-broadcasting helper it calls)."""
    if "BROADCAST" in source:
        source = source.replace("BROADCAST(", f"{emitted(ctx, '_broadcast_shapes', BROADCAST_SHAPES).value}(")
    return emitted_spelled(ctx, name, source)


def _args_with_receiver(entry, args, receiver) -> dict:
    return args if receiver is None else {entry.receiver or "input": receiver, **args}


@hook(consumes=("A", "B", "left"))
def linalg_solve(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.solve(A, b)`` -> ``_linalg_solve(A=A, B=b)`` (emitted)."""
    return keyword_call(linalg_helper(ctx, "_linalg_solve", SOLVE), args)


@hook(consumes=("A", "B", "upper", "left", "unitriangular"))
def solve_triangular(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.solve_triangular(A, B, upper=True)`` -> ``_solve_triangular(A=A, B=B, upper=True)``."""
    if "upper" not in args:
        raise Unconvertible("solve_triangular needs upper=")
    return keyword_call(linalg_helper(ctx, "_solve_triangular", SOLVE_TRIANGULAR), args)


@hook(consumes=("input", "A", "upper", "transpose", "unitriangular"))
def triangular_solve(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.triangular_solve(b, A)`` (upper by default) -> ``(_solve_triangular(A=A, B=b,
    upper=True), A)``: torch's (solution, cloned_coefficient)."""
    args = _args_with_receiver(entry, args, receiver)
    A, b = args.pop("A"), args.pop("input")
    if not name_chain(A):
        raise Unconvertible("the coefficient matrix is used twice: give it a name first")
    args = {"A": A, "B": b, "upper": args.pop("upper", literal(True)), **args}
    solution = keyword_call(linalg_helper(ctx, "_solve_triangular", SOLVE_TRIANGULAR), args)
    return cst.parse_expression(f"({code(solution)}, {code(A)}.copy())")


@hook(consumes=("A", "full_matrices", "driver"), adds=("vh",))
def linalg_svd(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.svd(A)`` -> ``_svd(A=A, full_matrices=True, vh=True)``: (U, S, Vh)."""
    return keyword_call(linalg_helper(ctx, "_svd", SVD), {**args, "vh": literal(True)})


@hook()
def svdvals(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.svdvals(A)`` -> ``ops.real(ops.svd(A, compute_uv=False))``: real
    singular values of a complex matrix too."""
    return keyword_call(ctx.reference("mindspore.ops.real"), {"input": entry_call(ctx, entry, args, receiver)})


@hook(consumes=("input", "some"))
def svd_some(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.svd(A, some=True)`` -> ``_svd(A=A, full_matrices=False, vh=False)``: (U, S, V)."""
    args = _args_with_receiver(entry, args, receiver)
    full = negated(args.pop("some", literal(True)))
    return keyword_call(linalg_helper(ctx, "_svd", SVD), {"A": args.pop("input"), "full_matrices": full, "vh": literal(False)})


def negated(flag: cst.BaseExpression) -> cst.BaseExpression:
    value = literal_value(flag)
    return literal(not value) if isinstance(value, bool) else cst.parse_expression(f"not ({code(flag)})")


@hook(consumes=("some",), adds=("mode",))
def qr_some(ctx, entry, args, receiver) -> dict:
    """``torch.qr(A, some=False)`` -> ``ops.qr(A, mode="complete")``."""
    some = args.pop("some", literal(True))
    value = literal_value(some)
    if isinstance(value, bool):
        args["mode"] = literal("reduced" if value else "complete")
    else:
        args["mode"] = cst.parse_expression(f'"reduced" if {code(some)} else "complete"')
    return entry_call(ctx, entry, args, receiver)


@hook()
def qr_mode(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.qr(A, mode)``: "reduced" and "complete" as they are; "r" (an empty
    Q) is refused."""
    mode = literal_value(args.get("mode", literal("reduced")))
    if mode not in ("reduced", "complete"):
        raise Unconvertible("qr's mode must be a literal 'reduced' or 'complete'")
    return entry_call(ctx, entry, args, receiver)


@hook(consumes=("tensors", "matrices"))
def multi_dot(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.multi_dot([a, b, c])`` / ``torch.chain_matmul(a, b, c)`` ->
    ``ops.matmul(ops.matmul(a, b), c)`` (a list written out in the call)."""
    packed = args.get("tensors", args.get("matrices"))
    if not isinstance(packed, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in packed.elements):
        raise Unconvertible("the matrices must be written out in the call")
    operands = [e.value for e in packed.elements]
    if not operands:
        raise Unconvertible("no matrices")
    matmul = ctx.reference("mindspore.ops.matmul")
    result = operands[0]
    for other in operands[1:]:
        result = keyword_call(matmul, {"input": result, "other": other})
    return result


@hook(consumes=("input", "upper"))
def cholesky_inverse(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.cholesky_inverse(L)`` -> ``_cholesky_inverse(L=L)`` (emitted)."""
    args = _args_with_receiver(entry, args, receiver)
    args["L"] = args.pop("input")
    return keyword_call(linalg_helper(ctx, "_cholesky_inverse", CHOLESKY_INVERSE), args)


@hook(consumes=("input", "other", "dim"))
def linalg_cross(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.cross(a, b)`` -> ``_linalg_cross(input=a, other=b)`` (broadcasting)."""
    return keyword_call(linalg_helper(ctx, "_linalg_cross", CROSS), args)


# ops.norm / ops.matrix_norm / ops.cond compute singular values in float32 whatever the
# input (a float64 matrix's spectral norm comes out float32): from ops.svd instead
MATRIX_NORM = '''
def {name}(A, ord=None, dim=None, keepdim=False):
    """torch.linalg.norm / matrix_norm: the spectral (2, -2) and nuclear ("nuc") norms of
    matrices from the singular values (in A's precision), vector norms by ops.vector_norm,
    the rest by ops.norm."""
    matrix = dim is not None and len(dim) == 2 if isinstance(dim, (tuple, list)) else dim is None and A.ndim == 2
    if not matrix and (dim is not None or A.ndim == 1):  # ops.norm's vector p-norms refuse float64
        if ord in (None, 0, 1, 2, float("inf"), -float("inf")):
            return OPS.vector_norm(A, 2 if ord is None else ord, dim, keepdim)
        p = MS.Tensor(ord, A.dtype)  # a Python float exponent would be rounded to float32
        return OPS.pow(OPS.sum(OPS.pow(OPS.abs(A), p), dim, keepdim), 1 / p)
    if ord not in (2, -2, "nuc") or not matrix:
        return OPS.norm(A, ord, dim, keepdim)
    d0, d1 = (d % A.ndim for d in (dim or (-2, -1)))
    S = OPS.svd(OPS.moveaxis(A, (d0, d1), (-2, -1)), compute_uv=False)
    result = OPS.amax(S, -1) if ord == 2 else OPS.amin(S, -1) if ord == -2 else OPS.sum(S, -1)
    if keepdim:
        result = result.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    return result
'''

COND = '''
def {name}(A, p=None):
    """torch.linalg.cond: the ratio of the extreme singular values for p None, 2, -2;
    else norm(A, p) * norm(inv(A), p), as torch computes it."""
    if p in (None, 2, -2):
        S = OPS.svd(A, compute_uv=False)
        big, small = OPS.amax(S, -1), OPS.amin(S, -1)
        return small / big if p == -2 else big / small
    return NORM(A, p, (-2, -1)) * NORM(OPS.inverse(A), p, (-2, -1))
'''


@hook(consumes=("A", "ord", "dim", "keepdim", "keepdims", "axis", "dtype"))
def norm_dtype(ctx, entry, args, receiver) -> cst.BaseExpression:
    """torch.linalg.norm / matrix_norm: ``dtype=`` casts the input first. torch.linalg.norm
    -> ``_matrix_norm(A=A, ord=2)`` (emitted: the kind of norm depends on dim and the rank);
    matrix_norm too where the norm may be spectral or nuclear (a literal ord 2, -2, "nuc",
    or one known only when it runs), else ``ops.matrix_norm``."""
    dtype = args.pop("dtype", None)
    if dtype is not None and literal_value(dtype) is not None:
        args["A"] = keyword_call(ctx.reference("mindspore.ops.cast"), {"input": args["A"], "dtype": dtype})
    if entry.target.endswith("matrix_norm"):  # ops.matrix_norm's names; dim (-2, -1) by default
        ord_ = literal_value(args.get("ord", literal("fro")))
        if ord_ is not NOT_LITERAL and ord_ not in (2, -2, "nuc"):
            return entry_call(ctx, entry, args, receiver)
        args = {"A": args["A"], "ord": args["ord"], "dim": args.get("axis", literal((-2, -1))),
                **({"keepdim": args["keepdims"]} if "keepdims" in args else {})}
    return keyword_call(linalg_helper(ctx, "_matrix_norm", MATRIX_NORM), args)


@hook(consumes=("A", "p"))
def cond(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.cond(A, p)`` -> ``_cond(A=A, p=p)`` (emitted)."""
    norm = linalg_helper(ctx, "_matrix_norm", MATRIX_NORM).value
    return keyword_call(linalg_helper(ctx, "_cond", COND.replace("NORM(", f"{norm}(")), args)


# mindspore.scipy.linalg's eigh and lu_factor (imported where they run: no target module of
# the tables) take one matrix: a batch one matrix at a time
EIGH = '''
def {name}(A, UPLO="L", eigenvectors=True):
    """torch.linalg.eigh / eigvalsh: ascending eigenvalues (real, also of a complex
    Hermitian matrix) and eigenvectors, reading the lower (UPLO "L") or upper triangle."""
    from mindspore.scipy.linalg import eigh

    n = A.shape[-1]
    parts = [eigh(m, lower=UPLO == "L", eigvals_only=not eigenvectors) for m in A.reshape((-1, n, n))]
    w = OPS.stack([p[0] for p in parts] if eigenvectors else parts).reshape(A.shape[:-1])
    if w.dtype in (MS.complex64, MS.complex128):
        w = OPS.real(w)
    return (w, OPS.stack([p[1] for p in parts]).reshape(A.shape)) if eigenvectors else w
'''

LU_FACTOR = '''
def {name}(A):
    """torch.linalg.lu_factor: (LU, pivots) of square matrices, torch's 1-based int32 pivots."""
    from mindspore.scipy.linalg import lu_factor

    n = A.shape[-1]
    parts = [lu_factor(m) for m in A.reshape((-1, n, n))]
    LU = OPS.stack([p[0] for p in parts]).reshape(A.shape)
    pivots = OPS.stack([p[1] for p in parts]).reshape(A.shape[:-1]) + 1
    return LU, pivots.astype(MS.int32)
'''


@hook(consumes=("input", "UPLO"), adds=("eigenvectors",))
def eigh(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.eigh(A)`` -> ``_eigh(A=A)``; ``eigvalsh`` -> ``_eigh(A=A, eigenvectors=False)``."""
    args = {"A": args.pop("input"), **args}
    if entry.source.endswith("eigvalsh"):
        args["eigenvectors"] = literal(False)
    return keyword_call(linalg_helper(ctx, "_eigh", EIGH), args)


@hook(consumes=("input", "A", "pivot", "get_infos"))
def lu_factor(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.lu_factor(A)`` / ``torch.lu(A)`` -> ``_lu_factor(A=A)`` (emitted);
    ``torch.linalg.lu(A)`` -> ``ops.lu_unpack(*_lu_factor(A=A))``: (P, L, U)."""
    args = _args_with_receiver(entry, args, receiver)
    factors = keyword_call(linalg_helper(ctx, "_lu_factor", LU_FACTOR), {"A": args.get("A", args.get("input"))})
    if entry.source != "torch.linalg.lu":
        return factors
    return cst.Call(func=ctx.reference("mindspore.ops.lu_unpack"), args=[cst.Arg(factors, star="*")])


MATRIX_RANK = '''
def {name}(A, atol=None, rtol=None, hermitian=False):
    """torch.linalg.matrix_rank: the singular values above max(atol, rtol * the largest);
    rtol defaults to eps * max(m, n), or 0 when only a positive atol is given (the
    singular values of a Hermitian matrix are its absolute eigenvalues: the same count)."""
    S = OPS.svd(A, compute_uv=False)
    if rtol is None:
        eps = 1.1920928955078125e-07 if S.dtype == MS.float32 else 2.220446049250313e-16
        rtol = 0.0 if atol is not None and float(atol) > 0 else eps * max(A.shape[-2], A.shape[-1])
    tol = rtol * OPS.amax(S, -1, keepdims=True)
    if atol is not None:
        tol = OPS.maximum(tol, OPS.full_like(tol, atol) if isinstance(atol, (int, float)) else atol)
    return OPS.sum((S > tol).astype(MS.int64), -1)
'''

VANDER = '''
def {name}(x, N=None):
    """torch.linalg.vander: increasing powers x**0 ... x**(N-1) along a new last axis."""
    N = x.shape[-1] if N is None else N
    ones = OPS.ones(x.shape + (1,), x.dtype)
    if N <= 1:
        return ones[..., :N]
    powers = OPS.cumprod(OPS.broadcast_to(x.unsqueeze(-1), x.shape + (N - 1,)), -1)
    return OPS.cat((ones, powers.astype(x.dtype)), -1)
'''

TENSORINV = '''
def {name}(A, ind=2):
    """torch.linalg.tensorinv: the inverse of A read as a matrix of its first ind axes by
    the rest, shaped A.shape[ind:] + A.shape[:ind]."""
    import math

    rows = math.prod(A.shape[:ind])
    return OPS.inverse(A.reshape(rows, -1)).reshape(A.shape[ind:] + A.shape[:ind])
'''

TENSORSOLVE = '''
def {name}(A, B, dims=None):
    """torch.linalg.tensorsolve: X with tensordot(A, X, X.ndim) == B (the axes dims of A
    moved to the end first)."""
    import math

    if dims is not None:
        moved = [d % A.ndim for d in dims]
        A = OPS.permute(A, tuple(d for d in range(A.ndim) if d not in moved) + tuple(moved))
    n = math.prod(B.shape)
    return OPS.matrix_solve(A.reshape(n, -1), B.reshape(n, 1)).reshape(A.shape[B.ndim:])
'''


def _emitted_call(name: str, source: str, first: str | None = None):
    """A hook calling the function ``source`` emitted beside the code with the converted
    arguments (the receiver of a method as ``first``)."""
    def convert(ctx, entry, args, receiver) -> cst.BaseExpression:
        if receiver is not None:
            args = {first: receiver, **args}
        elif first is not None and first not in args and "input" in args:  # torch.f(input) -> helper(A)
            args = {first: args.pop("input"), **args}
        return keyword_call(linalg_helper(ctx, name, source), args)
    convert.__doc__ = f"``{name.strip('_')}``: a call of ``{name}`` (emitted)."
    return convert


matrix_rank = hook("matrix_rank", consumes=("input", "atol", "rtol", "hermitian"))(_emitted_call("_matrix_rank", MATRIX_RANK))
vander = hook("vander", consumes=("x", "N"))(_emitted_call("_vander", VANDER))
tensorinv = hook("tensorinv", consumes=("A", "ind"))(_emitted_call("_tensorinv", TENSORINV))
tensorsolve = hook("tensorsolve", consumes=("A", "B", "dims"))(_emitted_call("_tensorsolve", TENSORSOLVE))


# ops.matrix_power and ops.lu_solve compute float64 in float32; ops.matrix_exp has no CPU
# kernel: all three from matmul and solves, which keep the input's precision
MATRIX_POWER = '''
def {name}(A, n):
    """torch.linalg.matrix_power by repeated squaring (of the inverse for n < 0)."""
    if n < 0:
        A, n = OPS.inverse(A), -n
    result = None
    while n:
        if n & 1:
            result = A if result is None else OPS.matmul(result, A)
        n >>= 1
        if n:
            A = OPS.matmul(A, A)
    if result is None:
        return OPS.broadcast_to(OPS.eye(A.shape[-1], A.shape[-1], A.dtype), A.shape)
    return result
'''

# scaling and squaring with the degree-13 Pade approximant (Higham 2005); the coefficients
# are tensors of A's dtype (a Python float times a float64 tensor is rounded to float32)
MATRIX_EXP = '''
def {name}(A):
    """torch.linalg.matrix_exp: exp(A / 2**s) by a degree-13 Pade approximant, squared s times."""
    import math

    b = [MS.Tensor(c, A.dtype) for c in (
        64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
        129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
        40840800.0, 960960.0, 16380.0, 182.0, 1.0)]
    norm = float(OPS.amax(OPS.sum(OPS.abs(A), -2))) if A.size else 0.0
    s = max(0, math.ceil(math.log2(norm / 5.371920351148152))) if norm > 0 else 0
    A = A / MS.Tensor(2.0 ** s, A.dtype)
    eye = OPS.broadcast_to(OPS.eye(A.shape[-1], A.shape[-1], A.dtype), A.shape)
    A2 = OPS.matmul(A, A)
    A4 = OPS.matmul(A2, A2)
    A6 = OPS.matmul(A4, A2)
    U = OPS.matmul(A, OPS.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
    V = OPS.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    R = OPS.matrix_solve(V - U, V + U)
    for _ in range(s):
        R = OPS.matmul(R, R)
    return R
'''

LU_SOLVE = '''
def {name}(B, LU, pivots):
    """torch's lu_solve: A X = B from A's LU factorization (A = P L U), by two triangular
    solves; batch dimensions broadcast."""
    P, L, U = OPS.lu_unpack(LU, pivots)
    Y = SOLVE_TRIANGULAR(L, OPS.matmul(P.swapaxes(-1, -2), B), upper=False, unitriangular=True)
    return SOLVE_TRIANGULAR(U, Y, upper=True)
'''

matrix_power = hook("matrix_power", consumes=("input", "n"))(_emitted_call("_matrix_power", MATRIX_POWER, "A"))
matrix_exp = hook("matrix_exp", consumes=("input", "A"))(_emitted_call("_matrix_exp", MATRIX_EXP, "A"))


@hook(consumes=("b", "LU_data", "LU_pivots"))
def lu_solve(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.lu_solve(b, LU, piv)`` -> ``_lu_solve(B=b, LU=LU, pivots=piv)`` (emitted)."""
    solve = linalg_helper(ctx, "_solve_triangular", SOLVE_TRIANGULAR).value
    fn = linalg_helper(ctx, "_lu_solve", LU_SOLVE.replace("SOLVE_TRIANGULAR(", f"{solve}("))
    args = _args_with_receiver(entry, args, receiver)
    return keyword_call(fn, {"B": args["b"], "LU": args["LU_data"], "pivots": args["LU_pivots"]})


# ops.ormqr has no CPU kernel: Q built whole by orgqr (identity reflectors padded in)
ORMQR = '''
def {name}(input, tau, other, left=True, transpose=False):
    """torch.ormqr: op(Q) @ other (other @ op(Q) when not left), Q the product of the
    Householder reflectors (input, tau); op(Q) is Q's conjugate transpose when transpose."""
    mn = other.shape[-2] if left else other.shape[-1]
    A, tau = input[..., :mn], tau[..., :mn]
    A = OPS.pad(A, (0, mn - A.shape[-1]))
    Q = OPS.orgqr(A, OPS.pad(tau, (0, mn - tau.shape[-1])))
    if transpose:
        Q = Q.swapaxes(-1, -2)
        if Q.dtype in (MS.complex64, MS.complex128):
            Q = OPS.conj(Q)
    return OPS.matmul(Q, other) if left else OPS.matmul(other, Q)
'''

ormqr = hook("ormqr", consumes=("input", "tau", "other", "left", "transpose"))(_emitted_call("_ormqr", ORMQR, "input"))
