"""Differential tests for tables/torch_aliases.toml and tables/tensor_aliases.toml: other
spellings of converted APIs (unsafe splits, split_with_sizes, torch.range, sym_*)."""
from __future__ import annotations

import pytest

from .harness import Case, Suite, arr, case_builders, ints, table_tests

CASES: list[Case] = []
X = arr(4, 6)


forms, case = case_builders(CASES)


# -- splits -------------------------------------------------------------------------
forms("torch.unsafe_chunk", "input=a, chunks=3, dim=1", (X,), req=2)
forms("torch.unsafe_split", "input=a, split_size=2, dim=1", (X,), req=2, extra=("a, 3, -1",))
forms("torch.split_with_sizes", "input=a, split_sizes=[1, 3], dim=0", (X,), req=2, posonly=0)
forms("torch.unsafe_split_with_sizes", "input=a, split_sizes=[2, 4], dim=1", (X,), req=2, only=("positional", "keyword"))
case("torch.unsafe_split_with_sizes", "torch.unsafe_split_with_sizes(a, [3, 1])", (X,), "defaults")
forms("Tensor.unsafe_chunk", "chunks=2, dim=1", (X,), req=1)
forms("Tensor.unsafe_split", "split_size=3, dim=1", (X,), req=1, extra=("5, 1",))
forms("Tensor.split_with_sizes", "split_sizes=[3, 1], dim=0", (X,), req=1)
forms("Tensor.unsafe_split_with_sizes", "split_sizes=[1, 5], dim=1", (X,), req=1, only=("positional", "keyword"))
case("Tensor.unsafe_split_with_sizes", "a.unsafe_split_with_sizes([2, 2])", (X,), "defaults")

# -- torch.range: inclusive end, float32 by default, floor((end - start) / step) + 1 values
forms("torch.range", "start=1, end=4, step=1", (), req=2, kw="dtype=torch.int64")
case("torch.range", "torch.range(0, 2.5, 1)", (), "span-not-a-multiple")
case("torch.range", "torch.range(0, 1, 0.3)", (), "float-step", atol=1e-6)
case("torch.range", "n = 3\n    return torch.range(1, n, 0.5)", (), "variable-end")
case("torch.range", "torch.range(-2, 2, step=2, dtype=torch.float64)", (), "dtype")

# -- sym_* on Python numbers
for name, args in (("sym_max", "a=3, b=7"), ("sym_min", "a=3.5, b=-1"), ("sym_int", "a=-2.7"), ("sym_float", "a=3"),
                   ("sym_not", "a=True"), ("sym_sqrt", "a=2.0"), ("sym_ite", "b=2 > 1, t=1, f=2")):
    forms(f"torch.{name}", args, ())
case("torch.sym_int", "torch.sym_int(7.9)", (), "positive")
case("torch.sym_float", "torch.sym_float(a.shape[0]) / 3", (X,), "of-a-shape")
case("torch.sym_sqrt", "torch.sym_sqrt(9)", (), "int")
case("torch.sym_not", "torch.sym_not(0)", (), "int")
case("torch.sym_sum", "torch.sym_sum(1, 2, 3)", (), "varargs")
case("torch.sym_sum", "torch.sym_sum([1, 2, 3])", (), "list")
case("torch.sym_sum", "torch.sym_sum((1.5, 2))", (), "tuple")
case("torch.sym_max", "torch.sym_max(a.shape[0], a.shape[1])", (X,), "of-shapes")

SUITE = Suite(CASES)
TABLES = ["torch_aliases.toml", "tensor_aliases.toml"]

test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, TABLES)


@pytest.mark.parametrize("code", ["torch.sym_sum(n)"])
def test_what_cannot_convert_is_marked(code: str) -> None:
    from transpile import convert_code

    out = convert_code(f"import torch\n\n\ndef g(f, n):\n    return {code}\n").code
    assert "# transpile:" in out and "torch." in out.split("return", 1)[1], out
