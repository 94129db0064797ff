"""Hooks of tables/linalg.toml: torch.linalg.* and torch's linear-algebra functions
(the Tensor methods of tables/tensor_linalg.toml share them).

Where MindSpore's kernel differs from torch (no batch broadcasting, a vector right-hand
side, results in another order), a small function emitted beside the code does what
torch does with kernels that run on CPU (the run-time helpers of rewrites/runtime/linalg.py).
Every composition here is exact.
"""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import NOT_LITERAL, Unconvertible, code, entry_call, keyword_call, literal, literal_value, name_chain
from .registry import hook


def _args_with_receiver(entry, args, receiver) -> dict:
    return args if receiver is None else {entry.receiver or "input": receiver, **args}


@hook(consumes=("A", "B", "left"))
def linalg_solve(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.solve(A, b)`` -> ``_linalg_solve(A=A, B=b)`` (emitted)."""
    return keyword_call(runtime_helper(ctx, "_linalg_solve"), args)


@hook(consumes=("A", "B", "upper", "left", "unitriangular"))
def solve_triangular(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.solve_triangular(A, B, upper=True)`` -> ``_solve_triangular(A=A, B=B, upper=True)``."""
    if "upper" not in args:
        raise Unconvertible("solve_triangular needs upper=")
    return keyword_call(runtime_helper(ctx, "_solve_triangular"), args)


@hook(consumes=("input", "A", "upper", "transpose", "unitriangular"))
def triangular_solve(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.triangular_solve(b, A)`` (upper by default) -> ``(_solve_triangular(A=A, B=b,
    upper=True), A)``: torch's (solution, cloned_coefficient)."""
    args = _args_with_receiver(entry, args, receiver)
    A, b = args.pop("A"), args.pop("input")
    if not name_chain(A):
        raise Unconvertible("the coefficient matrix is used twice: give it a name first")
    args = {"A": A, "B": b, "upper": args.pop("upper", literal(True)), **args}
    solution = keyword_call(runtime_helper(ctx, "_solve_triangular"), args)
    return cst.parse_expression(f"({code(solution)}, {code(A)}.copy())")


@hook(consumes=("A", "full_matrices", "driver"), adds=("vh",))
def linalg_svd(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.svd(A)`` -> ``_svd(A=A, full_matrices=True, vh=True)``: (U, S, Vh)."""
    return keyword_call(runtime_helper(ctx, "_svd"), {**args, "vh": literal(True)})


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
    return keyword_call(runtime_helper(ctx, "_svd"), {"A": args.pop("input"), "full_matrices": full, "vh": literal(False)})


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
    """``torch.linalg.qr(A, mode)``: "reduced" and "complete" as they are; "r" ->
    ``_qr_r(A=A)`` (emitted): torch's empty Q and the reduced R."""
    mode = literal_value(args.get("mode", literal("reduced")))
    if mode == "r":
        return keyword_call(runtime_helper(ctx, "_qr_r"), {"A": args["input"]})
    if mode not in ("reduced", "complete"):
        raise Unconvertible("qr's mode must be a literal 'reduced', 'complete' or 'r'")
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
    return keyword_call(runtime_helper(ctx, "_cholesky_inverse"), args)


@hook(consumes=("input", "other", "dim"))
def linalg_cross(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.cross(a, b)`` -> ``_linalg_cross(input=a, other=b)`` (broadcasting)."""
    return keyword_call(runtime_helper(ctx, "_linalg_cross"), args)


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
    return keyword_call(runtime_helper(ctx, "_matrix_norm"), args)


@hook(consumes=("A", "p"))
def cond(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.cond(A, p)`` -> ``_cond(A=A, p=p)`` (emitted)."""
    return keyword_call(runtime_helper(ctx, "_cond"), args)


@hook(consumes=("input", "UPLO"), adds=("eigenvectors",))
def eigh(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.eigh(A)`` -> ``_eigh(A=A)``; ``eigvalsh`` -> ``_eigh(A=A, eigenvectors=False)``."""
    args = {"A": args.pop("input"), **args}
    if entry.source.endswith("eigvalsh"):
        args["eigenvectors"] = literal(False)
    return keyword_call(runtime_helper(ctx, "_eigh"), args)


@hook(consumes=("input", "A", "pivot", "get_infos"))
def lu_factor(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.lu_factor(A)`` / ``torch.lu(A)`` -> ``_lu_factor(A=A)`` (emitted);
    ``torch.linalg.lu(A)`` -> ``ops.lu_unpack(*_lu_factor(A=A))``: (P, L, U)."""
    args = _args_with_receiver(entry, args, receiver)
    factors = keyword_call(runtime_helper(ctx, "_lu_factor"), {"A": args.get("A", args.get("input"))})
    if entry.source != "torch.linalg.lu":
        return factors
    return cst.Call(func=ctx.reference("mindspore.ops.lu_unpack"), args=[cst.Arg(factors, star="*")])


def _emitted_call(name: str, first: str | None = None):
    """A hook calling the run-time helper ``name`` with the converted arguments (the
    receiver of a method as ``first``)."""
    def convert(ctx, entry, args, receiver) -> cst.BaseExpression:
        if receiver is not None:
            args = {first: receiver, **args}
        elif first is not None and first not in args and "input" in args:  # torch.f(input) -> helper(A)
            args = {first: args.pop("input"), **args}
        return keyword_call(runtime_helper(ctx, name), args)
    convert.__doc__ = f"``{name.strip('_')}``: a call of ``{name}`` (emitted)."
    return convert


@hook(consumes=("A", "tol", "atol", "rtol", "hermitian"))
def matrix_rank(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.linalg.matrix_rank(A, atol=, rtol=)`` -> ``_matrix_rank(A=A, atol=, rtol=)``
    (emitted); the older ``tol`` is ``atol=tol, rtol=0``, as torch reads it."""
    if "tol" in args:
        tol = args.pop("tol")
        args = {**args, "atol": tol, "rtol": literal(0.0)}
    return keyword_call(runtime_helper(ctx, "_matrix_rank"), args)
vander = hook("vander", consumes=("x", "N"))(_emitted_call("_vander"))
tensorinv = hook("tensorinv", consumes=("A", "ind"))(_emitted_call("_tensorinv"))
tensorsolve = hook("tensorsolve", consumes=("A", "B", "dims"))(_emitted_call("_tensorsolve"))


inv_ex = hook("inv_ex", consumes=("A", "check_errors"))(_emitted_call("_inv_ex"))
cholesky_ex = hook("cholesky_ex", consumes=("A", "upper", "check_errors"))(_emitted_call("_cholesky_ex"))
solve_ex = hook("solve_ex", consumes=("A", "B", "left", "check_errors"))(_emitted_call("_solve_ex"))
lu_factor_ex = hook("lu_factor_ex", consumes=("A", "pivot", "check_errors"))(_emitted_call("_lu_factor_ex"))

matrix_power = hook("matrix_power", consumes=("input", "n"))(_emitted_call("_matrix_power", "A"))
matrix_exp = hook("matrix_exp", consumes=("input", "A"))(_emitted_call("_matrix_exp", "A"))


@hook(consumes=("b", "LU_data", "LU_pivots", "left", "adjoint"))
def lu_solve(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.lu_solve(b, LU, piv)`` / ``torch.linalg.lu_solve(LU, piv, B, left=, adjoint=)``
    -> ``_lu_solve(B=b, LU=LU, pivots=piv, left=, adjoint=)`` (emitted)."""
    fn = runtime_helper(ctx, "_lu_solve")
    args = _args_with_receiver(entry, args, receiver)
    flags = {name: args[name] for name in ("left", "adjoint") if name in args}
    return keyword_call(fn, {"B": args["b"], "LU": args["LU_data"], "pivots": args["LU_pivots"], **flags})


ormqr = hook("ormqr", consumes=("input", "tau", "other", "left", "transpose"))(_emitted_call("_ormqr", "input"))
