"""Differential tests for tables/torch_utils.toml: activation checkpointing called as
plain calls (the values are those of the block)."""
from __future__ import annotations

from .harness import DEFAULT_HEADER, Case, Suite, arr, call_forms, table_tests

HEADER = DEFAULT_HEADER + "import torch.utils.checkpoint\nfrom torch.utils.checkpoint import checkpoint, checkpoint_sequential\n"
X, Y = arr(3, 4), arr(3, 4)
# checkpoint's varargs sit between the function and the keywords: its forms written out
CASES: list[Case] = [
    Case("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint(torch.add, a, b, use_reentrant=False)",
         (X, Y), "positional"),
    Case("torch.utils.checkpoint.checkpoint", "checkpoint(torch.mul, a, b)", (X, Y), "defaults"),
    Case("torch.utils.checkpoint.checkpoint", "xs = (a, b)\n    return checkpoint(torch.sub, *xs, use_reentrant=False)",
         (X, Y), "starred"),
    Case("torch.utils.checkpoint.checkpoint", "checkpoint(lambda u: u * 2 + 1, a, use_reentrant=False, "
         "determinism_check='default', debug=False)", (X,), "lambda"),
    Case("torch.utils.checkpoint.checkpoint", "checkpoint(nn.Sequential(nn.Tanh(), nn.Sigmoid()), a)", (X,), "layer"),
]
call_forms(CASES, "torch.utils.checkpoint.checkpoint_sequential",
           "functions=nn.Sequential(nn.Tanh(), nn.Softsign()), segments=2, input=a, use_reentrant=False", (X,), req=3,
           extra=("[torch.tanh, torch.sigmoid, torch.neg], 3, a",))
CASES.append(Case("torch.utils.checkpoint.checkpoint_sequential", "checkpoint_sequential([torch.tanh], 1, a)", (X,),
                  "imported-name"))
# dlpack: the capsule made and read back (a MindSpore tensor or a numpy array also reads as one)
call_forms(CASES, "torch.utils.dlpack.to_dlpack", "tensor=a * 2", (X,), posonly=1, extra=("a.reshape(4, 3)",))
for i, c in enumerate(CASES):
    if c.api == "torch.utils.dlpack.to_dlpack":
        CASES[i] = Case(c.api, f"torch.utils.dlpack.from_dlpack({c.code})", c.inputs, c.form)
call_forms(CASES, "torch.utils.dlpack.from_dlpack", "ext_tensor=torch.utils.dlpack.to_dlpack(a)", (X,), extra=("a",))
CASES.append(Case("torch.utils.dlpack.from_dlpack", "torch.utils.dlpack.from_dlpack(a.numpy())", (X,), "numpy"))
SUITE = Suite(CASES, header=HEADER + "import torch.utils.dlpack\n")

test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, ["torch_utils.toml"])
