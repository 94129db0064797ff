"""Differential tests for tables/torch_foreach.toml: torch._foreach_* on lists of tensors
(out of place: the list of results; in place: what the call returns and the tensors after it)."""
from __future__ import annotations

import numpy as np

from .harness import Case, Suite, arr, pos, table_tests

CASES: list[Case] = []
A, B = arr(2, 3), arr(4)
P, Q = pos(2, 3), pos(4)
U, V = arr(2, 3, low=-0.9, high=0.9), arr(4, low=-0.9, high=0.9)
UNARY_INPUTS = {"log": (P, Q), "log10": (P, Q), "log1p": (P, Q), "log2": (P, Q), "sqrt": (P, Q), "rsqrt": (P, Q),
                "lgamma": (P, Q), "reciprocal": (P, Q), "acos": (U, V), "asin": (U, V)}
UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg reciprocal "
         "round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()
LOOSE = {"atol": 1e-5, "rtol": 1e-4, "why": "float32 kernels of transcendental functions differ in the last digits"}


def inplace(call: str) -> str:
    """The in-place form: what the call returns, and the tensors after it."""
    return f"ts = [a, b]\n    r = {call}\n    return r, ts"


for op in UNARY:
    x, y = UNARY_INPUTS.get(op, (A * 3, B * 3))
    CASES += [Case(f"torch._foreach_{op}", f"torch._foreach_{op}([a, b])", (x, y), "positional", **LOOSE),
              Case(f"torch._foreach_{op}", f"torch._foreach_{op}(self=[a, b])", (x, y), "keyword", **LOOSE),
              Case(f"torch._foreach_{op}", f"torch._foreach_{op}((a, b))", (x, y), "tuple", **LOOSE),
              Case(f"torch._foreach_{op}_", inplace(f"torch._foreach_{op}_(ts)"), (x, y), "positional", **LOOSE),
              Case(f"torch._foreach_{op}_", inplace(f"torch._foreach_{op}_(self=ts)"), (x, y), "keyword", **LOOSE),
              Case(f"torch._foreach_{op}_", "ts = (a, b)\n    torch._foreach_" + op + "_(ts)\n    return ts", (x, y),
                   "tuple", **LOOSE)]

C, D = arr(2, 3), arr(4)
for op, name in (("add", "other"), ("sub", "other"), ("mul", "other"), ("div", "other"), ("maximum", "other"),
                 ("minimum", "other"), ("pow", "exponent"), ("clamp_min", "other"), ("clamp_max", "other")):
    x, y = (P, Q) if op == "pow" else (A, B)
    others = (C, D) if op != "div" else (P, Q)
    scalar = "0.5" if op != "div" else "2.0"
    for suffix in ("", "_"):
        api = f"torch._foreach_{op}{suffix}"
        wrap = inplace if suffix else (lambda call: call)
        first = "ts" if suffix else "[a, b]"
        CASES += [Case(api, wrap(f"{api}({first}, [c, d])"), (x, y, *others), "positional", **LOOSE),
                  Case(api, wrap(f"{api}(self={first}, {name}=[c, d])"), (x, y, *others), "keyword", **LOOSE),
                  Case(api, wrap(f"{api}({first}, {scalar})"), (x, y), "scalar", **LOOSE),
                  Case(api, wrap(f"{api}({first}, [1.5, {scalar}])"), (x, y), "scalars", **LOOSE)]
        if op in ("add", "sub"):
            CASES.append(Case(api, wrap(f"{api}({first}, [c, d], alpha=-0.1)"), (x, y, *others), "alpha"))
            # factors whose text starts with "1": only a whole factor of one is left out
            CASES += [Case(api, wrap(f"{api}({first}, [c, d], alpha=1.0)"), (x, y, *others), "alpha-one-float"),
                      Case(api, wrap(f"{api}({first}, [c, d], alpha=10)"), (x, y, *others), "alpha-ten", **LOOSE)]

E, F = pos(2, 3), pos(4)
for op in ("addcmul", "addcdiv"):
    for suffix in ("", "_"):
        api = f"torch._foreach_{op}{suffix}"
        wrap = inplace if suffix else (lambda call: call)
        first = "ts" if suffix else "[a, b]"
        CASES += [Case(api, wrap(f"{api}({first}, [c, d], [e, f], 0.3)"), (A, B, C, D, E, F), "positional", **LOOSE),
                  Case(api, wrap(f"{api}(self={first}, tensor1=[c, d], tensor2=[e, f], value=-2)"), (A, B, C, D, E, F),
                       "keyword", **LOOSE),
                  Case(api, wrap(f"{api}({first}, [c, d], [e, f])"), (A, B, C, D, E, F), "defaults", **LOOSE),
                  Case(api, wrap(f"{api}({first}, [c, d], [e, f], value=1.5)"), (A, B, C, D, E, F), "value-1.5",
                       **LOOSE)]
for suffix in ("", "_"):
    api = f"torch._foreach_lerp{suffix}"
    wrap = inplace if suffix else (lambda call: call)
    first = "ts" if suffix else "[a, b]"
    CASES += [Case(api, wrap(f"{api}({first}, [c, d], 0.25)"), (A, B, C, D), "positional", **LOOSE),
              Case(api, wrap(f"{api}(self={first}, tensors1=[c, d], weight=0.75)"), (A, B, C, D), "keyword", **LOOSE),
              Case(api, wrap(f"{api}({first}, [c, d], [e, f])"), (A, B, C, D, E / 4, F / 4), "weights", **LOOSE)]
CASES += [
    Case("torch._foreach_zero_", inplace("torch._foreach_zero_(ts)"), (A, B), "positional"),
    Case("torch._foreach_zero_", inplace("torch._foreach_zero_(self=ts)"), (A, B), "keyword"),
    Case("torch._foreach_zero_", "ts = (a, b)\n    torch._foreach_zero_(ts)\n    return ts", (A, B), "tuple"),
    Case("torch._foreach_copy_", inplace("torch._foreach_copy_(ts, [c, d], False)"), (A, B, C, D), "positional"),
    Case("torch._foreach_copy_", inplace("torch._foreach_copy_(self=ts, src=[c, d], non_blocking=True)"),
         (A, B, C, D), "keyword"),
    Case("torch._foreach_copy_", inplace("torch._foreach_copy_(ts, [c, d])"),
         (A, B, (C * 4).astype("int64"), (D * 4).astype("int64")), "defaults-cast"),
    Case("torch._foreach_norm", "torch._foreach_norm([a, b], 3, None)", (A, B), "positional", **LOOSE),
    Case("torch._foreach_norm", "torch._foreach_norm(self=[a, b], ord=1)", (A, B), "keyword", **LOOSE),
    Case("torch._foreach_norm", "torch._foreach_norm([a, b])", (A, B), "defaults", **LOOSE),
    Case("torch._foreach_clone", "torch._foreach_clone([a, b])", (A, B), "positional"),
    Case("torch._foreach_clone", "torch._foreach_clone(self=[a, b])", (A, B), "keyword"),
    Case("torch._foreach_clone", "ts = [a, b]\n    cs = torch._foreach_clone(ts)\n    a.add_(1.0)\n    return cs", (A, B),
         "independent"),
    # an EMA update as ema_pytorch writes it
    Case("torch._foreach_lerp_", "ema = [a, b]\n    torch._foreach_lerp_(ema, [c, d], 1.0 - 0.99)\n    return ema",
         (A, B, C, D), "ema", **LOOSE),
]
SUITE = Suite(CASES)
test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, ["torch_foreach.toml"])
