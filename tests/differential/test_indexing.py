"""Differential tests for torch's indexing and scatter functions and Tensor methods
(tables "torch_indexing.toml" and "tensor_indexing.toml"): every converted entry has cases
in several call forms (all positional, all keyword, defaults omitted or mixed), in-place
methods checked on both their result and the receiver they changed.
"""
from __future__ import annotations

import numpy as np

from .harness import Case, Suite, arr, bools, call_forms, case_builders, ints, table_tests

TABLES = ["torch_indexing.toml", "tensor_indexing.toml"]
CASES: list[Case] = []


forms, case = case_builders(CASES)


def both(name: str, args: str, inputs, *, req=None, kw: str = "", extra=(), method_extra=(), cases=CASES, **opts) -> None:
    """torch.<name>(a, args) and a.<name>(args) (the receiver ``a``) in several call forms."""
    call_forms(cases, f"torch.{name}", f"input=a, {args}" if args else "input=a", inputs,
               req=None if req is None else req + 1, kw=kw, extra=extra, **opts)
    call_forms(cases, f"Tensor.{name}", args, inputs, req=req, kw=kw, extra=method_extra, **opts)


def inplace(name: str, args: str, inputs, cases=CASES, **opts) -> None:
    """``a.<name>_(...)``: the result and the receiver both, positional, keyword, and as a statement."""
    pairs = [p.split("=", 1) for p in args.split(", ")] if args else []
    for form, parts in (("positional", [v for _, v in pairs]), ("keyword", [f"{k}={v}" for k, v in pairs]),
                        ("statement", [v for _, v in pairs])):
        body = (f"a.{name}_({', '.join(parts)})\n    return a" if form == "statement"
                else f"r = a.{name}_({', '.join(parts)})\n    return r, a")
        cases.append(Case(f"Tensor.{name}_", body, tuple(inputs), form, **opts))


X = arr(3, 4)
I = np.array([0, 2], dtype=np.int64)
S2 = arr(3, 2)
IDX_REPEAT = np.array([0, 0, 3, 1, 3], dtype=np.int64)

# -- index_add / index_copy / index_fill / index_reduce ---------------------------------
both("index_add", "dim=1, index=b, source=c", (X, I, S2), req=3, kw="alpha=2", extra=("a, -1, b, c, alpha=0.5",))
case("torch.index_add", "torch.index_add(a, 0, b, c)", (X, np.array([2, 2], np.int64), arr(2, 4)), "repeated-index")
inplace("index_add", "dim=1, index=b, source=c", (X, I, S2))
both("index_copy", "dim=1, index=b, source=c", (X, I, S2))
case("torch.index_copy", "torch.index_copy(a, -2, b, c)", (X, I, arr(2, 4)), "rows")
inplace("index_copy", "dim=1, index=b, source=c", (X, I, S2))
both("index_fill", "dim=1, index=b, value=-1.5", (X, I), extra=("a, -2, b, 3",), method_extra=("0, b, c",))
CASES[-1] = Case("Tensor.index_fill", "a.index_fill(0, b, c)", (X, np.array([1], np.int64), np.array(7.0, np.float32)), "tensor-value")
inplace("index_fill", "dim=1, index=b, value=2.0", (X, I))
for reduce in ("prod", "mean", "amax", "amin"):
    forms("torch.index_reduce", f"input=a, dim=0, index=b, source=c, reduce={reduce!r}", (X, np.array([0, 2, 0, 1], np.int64), arr(4, 4)),
          kw="include_self=False", only=("positional", "keyword", "defaults") if reduce in ("prod", "amax") else ("positional",))
    forms("Tensor.index_reduce", f"dim=1, index=b, source=c, reduce={reduce!r}", (X, np.array([3, 3, 0], np.int64), arr(3, 3)),
          kw="include_self=False", only=("positional", "keyword", "defaults") if reduce in ("mean", "amin") else ("keyword",))
inplace("index_reduce", "dim=1, index=b, source=c, reduce='amax'", (X, np.array([3, 3, 0], np.int64), arr(3, 3)))

# -- scatter_reduce ------------------------------------------------------------------------
SR_INDEX = ints(2, 4, high=3)
for reduce in ("sum", "prod", "mean", "amax", "amin"):
    forms("torch.scatter_reduce", f"input=a, dim=0, index=b, src=c, reduce={reduce!r}", (X, SR_INDEX, arr(2, 4)), kw="include_self=False")
    forms("Tensor.scatter_reduce", f"dim=1, index=b, src=c, reduce={reduce!r}", (X, ints(3, 5, high=4), arr(3, 6)), kw="include_self=True",
          only=("positional", "defaults"))
case("Tensor.scatter_reduce", "a.scatter_reduce(0, b, c, 'mean', include_self=False)", (ints(3, 4, low=-9, high=9), SR_INDEX, ints(2, 4, low=-9, high=9)), "int-mean")
case("Tensor.scatter_reduce", "a.scatter_reduce(0, b, c, 'mean')", (ints(3, 4, low=-9, high=9), SR_INDEX, ints(2, 4, low=-9, high=9)), "int-mean-self")
inplace("scatter_reduce", "dim=0, index=b, src=c, reduce='sum'", (X, SR_INDEX, arr(2, 4)))

# -- index_put / put -----------------------------------------------------------------------
both("index_put", "indices=(b, c), values=d, accumulate=True", (X, np.array([0, 2, 0], np.int64), np.array([1, -1, 1], np.int64), np.array([1.0, 2.0, 3.0], np.float32)),
     req=2, extra=("a, (b,), d[:1]",), method_extra=("(b > 0,), d[0]",))
case("torch.index_put", "torch.index_put(a, (b,), c)", (X, np.array([2, 0], np.int64), arr(2, 4)), "rows")
case("Tensor.index_put", "a.index_put((b, c), d)", (arr(2, 3, 4), np.array([1, 0], np.int64), np.array([[2], [0]], np.int64), np.array(5.0, np.float32)), "broadcast")
case("Tensor.index_put", "a.index_put((b,), c)", (X, bools(3), np.array(-3.0, np.float32)), "bool-mask")
inplace("index_put", "indices=(b,), values=c, accumulate=True", (X, np.array([1, 1], np.int64), arr(4)))
both("put", "index=b, source=c, accumulate=True", (X, np.array([0, 5, -1, 5], np.int64), arr(4)), req=2)
inplace("put", "index=b, source=c, accumulate=False", (X, np.array([0, 5, -1], np.int64), arr(3)))

# -- masked_scatter, take_along_dim, nonzero_static, unravel_index --------------------------
both("masked_scatter", "mask=b, source=c", (X, bools(3, 4), arr(3, 4)), extra=("a, b[0], c",))
case("Tensor.masked_scatter", "a.masked_scatter(b[:, :1], c)", (X, bools(3, 4), arr(4, 4)), "broadcast-mask")
inplace("masked_scatter", "mask=b, source=c", (X, bools(3, 4), arr(3, 4)))
both("take_along_dim", "indices=b, dim=1", (X, ints(3, 2, high=4)), extra=("a, b.reshape(-1)",), method_extra=("b[:1], -1",))
case("torch.take_along_dim", "torch.take_along_dim(a, b, 0)", (arr(3, 1, 4), ints(2, 5, 1, high=3)), "broadcast")
case("Tensor.take_along_dim", "a.take_along_dim(torch.argsort(a, dim=1), dim=1)", (X,), "argsort")
case("Tensor.take_along_dim", "a.take_along_dim(b)", (X, ints(5, high=12)), "flat")
forms("torch.nonzero_static", "input=a", (bools(3, 4),), kw="size=4, fill_value=-2", extra=("a, size=20",), only=("positional", "keyword", "extra0"))
case("torch.nonzero_static", "torch.nonzero_static(a, size=3)", (ints(5, high=2),), "1-d")
forms("Tensor.nonzero_static", "", (bools(3, 4),), kw="size=2, fill_value=0", extra=("size=12",), only=("positional", "keyword", "extra0"))
forms("torch.unravel_index", "indices=a, shape=(3, 4)", (np.array([0, 5, 11], np.int64),), extra=("a, 12", "a.reshape(3, 1), [2, 2, 3]"))

# -- diagonal_scatter / select_scatter / slice_scatter / argwhere ---------------------------
both("diagonal_scatter", "src=b, offset=1, dim1=0, dim2=1", (X, arr(3)), req=1, extra=("a, b[:3].reshape(3), 0, 1, 0",))
case("torch.diagonal_scatter", "torch.diagonal_scatter(a, b, -1)", (X, arr(2)), "negative-offset")
case("Tensor.diagonal_scatter", "a.diagonal_scatter(b, dim1=2, dim2=1)", (arr(2, 3, 3), arr(2, 3)), "batched")
both("select_scatter", "src=b, dim=0, index=1", (X, arr(4)), extra=("a, b[:3], 1, -1",), method_extra=("b[:3], -1, 2",))
both("slice_scatter", "src=b, dim=1, start=1, end=3, step=1", (X, arr(3, 2)), req=1, extra=("a, b[:1, :1].expand(1, 4), 0, 2",),
     only=("positional", "keyword", "extra0"))
case("torch.slice_scatter", "torch.slice_scatter(a, b)", (X, arr(3, 4)), "defaults")
case("Tensor.slice_scatter", "a.slice_scatter(b)", (X, arr(3, 4)), "defaults")
case("torch.slice_scatter", "torch.slice_scatter(a, b, 1, step=2)", (X, arr(3, 2)), "step")
case("Tensor.slice_scatter", "a.slice_scatter(b, start=-2)", (X, arr(2, 4)), "negative-start")
forms("torch.argwhere", "input=a", (X > 0,), extra=("a.sum(0) > 0",))
case("torch.argwhere", "torch.argwhere(a)", (ints(2, 3, 2, high=2),), "int-3d")
forms("Tensor.argwhere", "", (X > 0,))
# integer and boolean tensors
XI = ints(3, 4, low=-9, high=9)
case("Tensor.index_fill", "a.index_fill(1, b, 5)", (XI, I), "int")
case("Tensor.index_fill", "a.index_fill(0, b, True)", (bools(3, 4), I), "bool")
case("torch.index_add", "torch.index_add(a, 1, b, c, alpha=3)", (XI, I, ints(3, 2)), "int")
case("torch.index_copy", "torch.index_copy(a, 1, b, c)", (bools(3, 4), I, bools(3, 2)), "bool")
case("torch.scatter_reduce", "torch.scatter_reduce(a, 1, b, c, 'prod', include_self=False)", (XI, ints(3, 4, high=4), ints(3, 4, low=-3, high=3)), "int")
case("torch.scatter_reduce", "torch.scatter_reduce(a, 1, b, c, 'amin')", (XI, ints(3, 4, high=4), ints(3, 4, low=-9, high=9)), "int-amin")
case("torch.put", "torch.put(a, b, c)", (XI, np.array([11, 0], np.int64), ints(2)), "int")
case("torch.masked_scatter", "torch.masked_scatter(a, b, c)", (XI, bools(3, 4), ints(3, 4)), "int")
case("torch.index_put", "torch.index_put(a, (b,), c, True)", (XI, I, ints(2, 4)), "int")
case("Tensor.take_along_dim", "a.take_along_dim(b, 0)", (XI, ints(2, 4, high=3)), "int")
case("torch.index_add", "torch.index_add(a, 0, b, c, alpha=0.1)", (arr(3, dtype="float64"), I, arr(2, dtype="float64")), "float64",
     atol=0, rtol=1e-15)

SUITE = Suite(CASES)


test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, TABLES)


def test_functions_used_as_values_are_marked() -> None:
    """A function converted into a call of an emitted helper, named but not called
    (``g = torch.index_copy``), is left with a marker, never renamed to something else."""
    from transpile import convert_code

    out = convert_code("import torch\n\n\ndef f(a):\n    g = torch.index_copy\n    return g\n").code
    assert "# transpile: MS201 torch.index_copy: converted only where it is called" in out, out
