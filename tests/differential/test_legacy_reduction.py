"""Deprecated ``size_average=``/``reduce=`` on losses become ``reduction=`` by torch's own
rule (rewrites/table_calls.py ``_legacy_reduction``): literal values at conversion time, a
variable through ``_legacy_reduction`` emitted beside the code. Functional losses and loss
layers, positional and keyword forms, each run against torch."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import Case, Suite, arr, ints, pos, table_entries

X, Y = arr(4, 5), arr(4, 5)
LOGP = np.log(np.full((4, 5), 0.2, dtype="float32") + arr(4, 5, low=0, high=0.1))
LABELS = ints(4, high=5)
PROB, TPROB = arr(4, 5, low=0.05, high=0.95), arr(4, 5, low=0, high=1)
SIGN = np.where(arr(6) < 0, -1.0, 1.0).astype("float32")

# (call with {legacy} where the legacy arguments go, inputs)
FUNCTIONAL = {
    "mse_loss": ("F.mse_loss(a, b, {legacy})", (X, Y)),
    "l1_loss": ("F.l1_loss(a, b, {legacy})", (X, Y)),
    "smooth_l1_loss": ("F.smooth_l1_loss(a, b, {legacy})", (X, Y)),
    "nll_loss": ("F.nll_loss(a, b, {legacy})", (LOGP, LABELS)),
    "cross_entropy": ("F.cross_entropy(a, b, {legacy})", (X, LABELS)),
    "binary_cross_entropy": ("F.binary_cross_entropy(a, b, {legacy})", (PROB, TPROB)),
    "binary_cross_entropy_with_logits": ("F.binary_cross_entropy_with_logits(a, b, {legacy})", (X, TPROB)),
    "kl_div": ("F.kl_div(a, b, {legacy})", (LOGP, PROB)),
    "margin_ranking_loss": ("F.margin_ranking_loss(a, b, c, {legacy})", (arr(6), arr(6), SIGN)),
}
LAYERS = {
    "MSELoss": ((X, Y),), "L1Loss": ((X, Y),), "SmoothL1Loss": ((X, Y),), "NLLLoss": ((LOGP, LABELS),),
    "CrossEntropyLoss": ((X, LABELS),), "BCELoss": ((PROB, TPROB),), "BCEWithLogitsLoss": ((X, TPROB),),
    "KLDivLoss": ((LOGP, PROB),),
}
# each legacy spelling and the reduction torch derives from it
LEGACY = {
    "size_average=False": "sum", "reduce=False": "none", "size_average=True, reduce=True": "mean",
    "size_average=False, reduce=False": "none", "size_average=None, reduce=None, reduction='sum'": "sum",
    "size_average=False, reduction='mean'": "sum",  # given, the legacy arguments win over reduction
}

CASES: list[Case] = []
for name, (call, inputs) in FUNCTIONAL.items():
    for i, legacy in enumerate(LEGACY):
        CASES.append(Case(f"F.{name}", call.format(legacy=legacy), inputs, f"keyword{i}"))
    # a variable: decided at run time by the emitted _legacy_reduction
    CASES.append(Case(f"F.{name}", "s = False\n    return " + call.format(legacy="size_average=s"), inputs, "variable"))
for name, (inputs,) in LAYERS.items():
    for i, legacy in enumerate(LEGACY):
        CASES.append(Case(f"nn.{name}", f"nn.{name}({legacy})(a, b)", inputs, f"keyword{i}"))
    CASES.append(Case(f"nn.{name}", f"s = False\n    return nn.{name}(size_average=s)(a, b)", inputs, "variable"))
# positional: the legacy arguments in torch's positional order
CASES += [
    Case("F.mse_loss", "F.mse_loss(a, b, False, None)", (X, Y), "positional"),
    Case("F.nll_loss", "F.nll_loss(a, b, None, False, -100, None)", (LOGP, LABELS), "positional"),
    Case("nn.MSELoss", "nn.MSELoss(None, False)(a, b)", (X, Y), "positional"),
    Case("nn.CrossEntropyLoss", "nn.CrossEntropyLoss(None, False, -100, None)(a, b)", (X, LABELS), "positional"),
]
SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_legacy_reduction(case: Case) -> None:
    SUITE.check(case)


def _with_legacy_arguments() -> dict[str, list[str]]:
    entries = table_entries(["functional.toml", "nn_losses.toml"])
    return {name: body["params"] for name, body in entries.items()
            if "size_average" in body.get("params", ()) and not body.get("unsupported")}


@pytest.mark.parametrize("name", sorted(_with_legacy_arguments()))
def test_every_loss_with_legacy_arguments_converts_them(name: str) -> None:
    """The rule holds for every table entry taking size_average/reduce: none is refused."""
    from transpile import convert_code

    import inspect

    from .symbols import resolve

    params = _with_legacy_arguments()[name]
    sig = inspect.signature(resolve(name))  # only the required arguments besides the legacy one
    before = [p for p in params[: params.index("size_average")] if p in sig.parameters and sig.parameters[p].default is inspect.Parameter.empty]
    args = ", ".join([*(f"{p}={p}" for p in before), "size_average=False"])
    call = name.replace("torch.nn.functional.", "F.").replace("torch.nn.", "nn.")
    src = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
           f"def f({', '.join(before)}):\n    return {call}({args})\n")
    out = convert_code(src).code
    assert "# transpile:" not in out and "size_average" not in out, out
    assert "reduction=\"sum\"" in out or "reduction='sum'" in out, out
