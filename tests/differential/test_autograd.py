"""Differential tests for torch.autograd (table "autograd.toml"): the functional API
(jacobian, hessian, jvp, vjp) converted to MindSpore's function transforms, and Variable.
torch's tape (autograd.grad, backward) is refused with why (test_refused_*). Tensor methods
on a lambda's parameter (``lambda t: (t ** 3).sum()``) stay as they are, with a note (the
parameter is not known to be a tensor): the cases call torch's functions."""
from __future__ import annotations

import pytest

from .harness import DEFAULT_HEADER, Case, OwnDraws, Suite, converted_markers, table_tests

HEADER = DEFAULT_HEADER + "from torch.autograd import Variable\nfrom torch.autograd.functional import jacobian, vjp\n"
CASES: list[Case] = []
DRAWS = OwnDraws(29)  # this module's own draws: the modules collected after it keep theirs
X, Y, X64 = DRAWS.arr(3), DRAWS.arr(3), DRAWS.arr(2, 3, dtype="float64")
AF = "torch.autograd.functional"


def case(api: str, code: str, inputs=(), form: str = "", **opts) -> None:
    CASES.append(Case(api, code, tuple(inputs), form, **opts))


# -- jacobian ---------------------------------------------------------------------------------
case(f"{AF}.jacobian", f"{AF}.jacobian(lambda t: t ** 2, a)", (X,), "positional")
case(f"{AF}.jacobian", f"{AF}.jacobian(func=lambda t: torch.sin(t) * 2, inputs=a, create_graph=False, strict=False)", (X,),
     "keyword")
case(f"{AF}.jacobian", f"{AF}.jacobian(lambda s, t: s * t + s, (a, b))", (X, Y), "tuple-inputs")
case(f"{AF}.jacobian", f"{AF}.jacobian(lambda t: torch.sum(t, 0) ** 3, a, strategy='forward-mode', vectorize=True)", (X64,),
     "forward-mode-float64")
case(f"{AF}.jacobian", "jacobian(lambda t: torch.exp(t), a)", (X,), "imported-name")
case(f"{AF}.jacobian", f"def f(t):\n    return torch.tanh(t) * t\n\nreturn {AF}.jacobian(f, a)", (X,), "local-function")
# -- hessian: the function on a line of its own (compiled from its source; an inline lambda is refused)
case(f"{AF}.hessian", f"f = lambda t: torch.sum(t ** 3)\nreturn {AF}.hessian(f, a)", (X,), "positional")
case(f"{AF}.hessian", f"def f(t):\n    return torch.sum(torch.sum(t, 1) ** 2)\n\nreturn {AF}.hessian(func=f, inputs=a, create_graph=False)",
     (X64.astype("float32"),), "keyword")
case(f"{AF}.hessian", f"f = lambda t: torch.sum(torch.sin(t))\nreturn {AF}.hessian(f, a, False, False)", (X,), "flags-positional")
# -- jvp, vjp -------------------------------------------------------------------------------------
case(f"{AF}.jvp", f"{AF}.jvp(lambda t: t ** 2, a, b)", (X, Y), "positional")
case(f"{AF}.jvp", f"{AF}.jvp(func=lambda t: torch.cos(t), inputs=a, v=b, create_graph=False, strict=False)", (X, Y),
     "keyword")
case(f"{AF}.jvp", f"{AF}.jvp(lambda s, t: s * t, (a, b), (b, a))", (X, Y), "tuple-inputs")
case(f"{AF}.jvp", f"{AF}.jvp(lambda t: t * 3, a[:1])", (X,), "default-v")
case(f"{AF}.vjp", f"{AF}.vjp(lambda t: t ** 2, a, b)", (X, Y), "positional")
case(f"{AF}.vjp", f"{AF}.vjp(func=lambda t: torch.sum(t ** 3), inputs=a)", (X,), "keyword-scalar")
case(f"{AF}.vjp", f"{AF}.vjp(lambda s, t: s * t, (a, b), a, False, False)", (X, Y), "tuple-inputs")
case(f"{AF}.vjp", "out, grad = vjp(lambda t: torch.tanh(t), a, b)\nreturn out, grad", (X64[0], X64[1]), "imported-float64")
# -- Variable -------------------------------------------------------------------------------------
case("torch.autograd.Variable", "torch.autograd.Variable(a) * 2", (X,), "positional")
case("torch.autograd.Variable", "Variable(data=a, requires_grad=True) + 1", (X,), "keyword")
case("torch.autograd.Variable", "Variable(a, False)", (X64,), "flag-positional")
case("torch.autograd.Variable", "Variable(a) * 2", (DRAWS.ints(2, 3),), "int64")

SUITE = Suite(CASES, header=HEADER, from_file=True)
test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, ["autograd.toml"])


REFUSED = {
    "torch.autograd.grad": "y = (a * b).sum()\n    return torch.autograd.grad(y, b, retain_graph=True)",
    "torch.autograd.backward": "y = (a * b).sum()\n    torch.autograd.backward(y)\n    return b.grad",
    "torch.autograd.functional.hvp": f"return {AF}.hvp(lambda t: torch.sum(t ** 3), a, b)",
}


def test_hessian_of_an_inline_lambda_is_marked() -> None:
    """MindSpore compiles the Hessian's function from its source: a lambda inside the call is refused."""
    _, markers = converted_markers(f"{HEADER}\n\nclass M:\n    def forward(self, a):\n"
                                   f"        return {AF}.hessian(lambda t: torch.sum(t ** 3), a)\n")
    assert any("define it on a line of its own" in m for m in markers), markers


@pytest.mark.parametrize("api", sorted(REFUSED))
def test_refused_calls_are_marked_with_why(api: str) -> None:
    """torch's tape is not converted: the call stays, marked with the table's reason."""
    from transpile.rewrites.table_calls import tables

    body = REFUSED[api].replace("\n    ", "\n        ")
    _, markers = converted_markers(f"{HEADER}\n\nclass M:\n    def forward(self, a, b):\n        {body}\n")
    reason = tables().lookup(api).unsupported
    assert any(api in m and reason[:60] in m for m in markers), markers
