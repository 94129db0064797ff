"""Differential tests for tensor properties MindSpore spells as torch does
(rewrites/tables/tensor_properties.toml: ``x.shape``, ``x.mT``, ``x.nbytes``, left as
written) and questions about a tensor's type and size (rewrites/tables/tensor_queries.toml:
``x.element_size()``, ``x.is_signed()``, ``x.is_same_size(y)``).

Each property is read off tensors of several shapes and dtypes; each method with
arguments is called in three forms at least.
"""
from __future__ import annotations

import pytest

from .harness import Case, Suite, arr, bools, call_forms, coverage_gaps, ints

CASES: list[Case] = []

C = (arr(2, 3) + 1j * arr(2, 3)).astype("complex64")
TENSORS = {"matrix": arr(2, 3), "batch": arr(2, 3, 4), "int64": ints(5), "bool": bools(2, 2),
           "float16": arr(3, 2, dtype="float16"), "uint8": ints(4, high=200, dtype="uint8"),
           "int8": ints(3, dtype="int8"), "float64": arr(2, 2, dtype="float64"), "complex": C}


def read(api: str, code: str, kinds=None) -> None:
    """``code`` over ``a``, once per tensor kind (form: the kind)."""
    for kind, value in TENSORS.items():
        if kinds is None or kind in kinds:
            CASES.append(Case(api, code, (value,), kind))


# -- properties: left as written ------------------------------------------------------
P = "torch.Tensor."
read(P + "shape", "a.shape")
CASES.append(Case(P + "shape", "n, c = a.shape[:2]\n        return a.shape[-1], n * c, len(a.shape)", (arr(2, 3, 4),),
                  "unpacked"))
read(P + "ndim", "a.ndim")
read(P + "dtype", "a.dtype")
CASES.append(Case(P + "dtype", "torch.zeros(2, dtype=a.dtype)", (arr(2, dtype="float64"),), "reused"))
read(P + "T", "a.T", ("matrix", "batch", "int64", "complex"))
read(P + "mT", "a.mT", ("matrix", "batch", "bool", "complex"))
read(P + "H", "a.H", ("matrix", "complex", "float64"))
read(P + "mH", "a.mH", ("matrix", "batch", "complex"))
read(P + "itemsize", "a.itemsize")
read(P + "nbytes", "a.nbytes")
read(P + "data", "a.data", ("matrix", "int64", "bool"))
CASES.append(Case(P + "data", "a.data * 2 + a", (arr(2, 3),), "arithmetic"))
read(P + "is_meta", "a.is_meta", ("matrix", "int64"))

# -- queries ------------------------------------------------------------------------
read("Tensor.element_size", "a.element_size()")
read("Tensor.is_signed", "a.is_signed()")
CASES.append(Case("Tensor.is_signed", "a.is_signed() and b.is_signed()", (arr(2), ints(2, dtype="uint8")), "in-expression"))
call_forms(CASES, "Tensor.is_same_size", "other=b", (arr(2, 3), arr(2, 3)),
           extra=("b.t()", "b[:1]", "b.reshape(3, 2)"))
read("Tensor.get_device", "a.get_device()", ("matrix", "int64", "bool"))
CASES.append(Case("Tensor.get_device", "a.get_device() < 0", (arr(2),), "cpu-test"))
read("Tensor.is_pinned", "a.is_pinned()", ("matrix", "int64"))
read("Tensor.is_shared", "a.is_shared()", ("matrix", "int64"))

SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_api(case):
    SUITE.check(case)


def test_every_tensor_property_and_query_entry_has_cases():
    gaps = coverage_gaps(["tensor_properties.toml", "tensor_queries.toml"], SUITE.cases)
    assert not any(gaps.values()), gaps
