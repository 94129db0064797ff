"""Hooks of tables/special.toml: torch.special.* functions.

Where MindSpore has no kernel for a torch.special function, or its kernel differs from
torch's outside the function's domain, the call becomes a call of an exact composition
emitted once beside the converted code (``_special_<name>``, hook ``special_helper``).
The compositions follow torch's documented values at the edges (NaN outside the domain,
the limits at 0 and infinity) and compute in float64 where float32 would lose digits
(MindSpore's float32 Log1p is log(1 + y): 0 for y = 1e-8).
"""
from __future__ import annotations

import libcst as cst

from ..syntax import emitted, keyword_call, module_spellings
from .registry import hook
from .torch_functions import cast_input_dtype, polygamma  # noqa: F401 (shared with torch.softmax, torch.polygamma)

# name -> (source of the helper, helpers it calls). In the source ``{name}`` is the
# helper's own name, ``MS.``/``OPS.`` the file's spellings of mindspore and mindspore.ops.
# Parameter names are the entry's target keywords.
_NAN = 'float("nan")'
_INF = 'float("inf")'
HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {}


# torch.special.xlogy(x, 2.0), zeta(2.0, q): a Python number takes the other's dtype
_NUMBER_OPERANDS = """
    if not isinstance(input, MS.Tensor):
        input = MS.Tensor(input, other.dtype)
    if not isinstance(other, MS.Tensor):
        other = MS.Tensor(other, input.dtype)"""


def _define(name: str, source: str, needs: tuple[str, ...] = ()) -> None:
    source = source.replace("    NUMBER_OPERANDS", _NUMBER_OPERANDS.strip("\n"))
    HELPERS[name] = (source.replace("NAN", _NAN).replace("INF", _INF), needs)


# Bessel functions of the second kind: torch gives NaN below 0 (MindSpore: -inf or inf)
# and Y1(0) = -inf (MindSpore: NaN).
for _name, _op in (("bessel_y0", "bessel_y0"), ("modified_bessel_k0", "bessel_k0"), ("modified_bessel_k1", "bessel_k1"),
                   ("scaled_modified_bessel_k0", "bessel_k0e"), ("scaled_modified_bessel_k1", "bessel_k1e")):
    _define(_name, f'''
def {{name}}(x):
    """torch.special.{_name}: NaN below 0."""
    return OPS.where(x < 0, NAN, OPS.{_op}(x))
''')
_define("bessel_y1", '''
def {name}(x):
    """torch.special.bessel_y1: NaN below 0, -inf at 0."""
    return OPS.where(x < 0, NAN, OPS.where(x == 0, -INF, OPS.bessel_y1(x)))
''')
_define("xlogy", '''
def {name}(input, other):
    """torch.special.xlogy: x * log(y), 0 where x == 0 unless y is NaN."""
    NUMBER_OPERANDS
    return OPS.where(OPS.isnan(other), NAN, OPS.where(input == 0, 0.0, input * OPS.log(other)))
''')
_define("xlog1py", '''
def {name}(input, other):
    """torch.special.xlog1py: x * log1p(y), 0 where x == 0 unless y is NaN; log1p in
    float64 (MindSpore's float32 Log1p is log(1 + y))."""
    NUMBER_OPERANDS
    log1p = OPS.log1p(other.astype(MS.float64)).astype(other.dtype)
    return OPS.where(OPS.isnan(other), NAN, OPS.where(input == 0, 0.0, input * log1p))
''')
_define("entr", '''
def {name}(input):
    """torch.special.entr: -x * log(x), 0 at 0, -inf below 0."""
    return OPS.where(input < 0, -INF, OPS.where(input == 0, 0.0, -input * OPS.log(input)))
''')
_define("spherical_bessel_j0", '''
def {name}(input):
    """torch.special.spherical_bessel_j0: sin(x) / x, 1 at 0, 0 at +-inf."""
    safe = OPS.where(input == 0, 1.0, input)
    return OPS.where(input == 0, 1.0, OPS.where(OPS.isinf(input), 0.0, OPS.sin(safe) / safe))
''')
_define("zeta", '''
def {name}(input, other):
    """torch.special.zeta (Hurwitz): +inf at the poles q = 0, -1, -2, ... for x > 1;
    torch's NaN at q = inf and at x = inf for q > 1 (MindSpore: 0)."""
    NUMBER_OPERANDS
    pole = (input > 1) & (other <= 0) & (other == OPS.floor(other))
    nan = (other == INF) | ((input == INF) & (other > 1))
    return OPS.where(pole, INF, OPS.where(nan, NAN, OPS.zeta(input, other)))
''')
_define("gammainc", '''
def {name}(input, other):
    """torch.special.gammainc (regularized lower incomplete gamma P(a, x)): 1 at a = 0
    for x > 0, 0 for an infinite a and a finite x (MindSpore: NaN at both)."""
    edge = (input >= 0) & (other >= 0)
    a0 = edge & (input == 0)
    ainf = edge & OPS.isinf(input) & ~OPS.isinf(other)
    value = OPS.igamma(input, other)
    return OPS.where(a0, OPS.where(other > 0, 1.0, NAN), OPS.where(ainf, 0.0, value))
''')
_define("gammaincc", '''
def {name}(input, other):
    """torch.special.gammaincc (regularized upper incomplete gamma Q(a, x)): 0 at a = 0
    for x > 0, 1 for an infinite a and a finite x, 0 at x = inf (MindSpore: NaN)."""
    edge = (input >= 0) & (other >= 0)
    a0 = edge & (input == 0)
    ainf = edge & OPS.isinf(input) & ~OPS.isinf(other)
    xinf = edge & ~OPS.isinf(input) & (input > 0) & OPS.isinf(other)
    value = OPS.igammac(input, other)
    return OPS.where(a0, OPS.where(other > 0, 0.0, NAN), OPS.where(ainf, 1.0, OPS.where(xinf, 0.0, value)))
''')


def special_function(ctx, name: str) -> cst.Name:
    """The helper ``_special_<name>`` (and those it calls), emitted beside the code."""
    source, needs = HELPERS[name]
    for other in needs:
        special_function(ctx, other)
    ms_, ops_, _ = module_spellings(ctx)
    text = source.replace("MS.", f"{ms_}.").replace("OPS.", f"{ops_}.")
    for other in needs:
        text = text.replace(f"{other.upper()}(", f"_special_{other}(")
    return emitted(ctx, f"_special_{name}", text)


@hook()
def special_helper(ctx, entry, args, receiver) -> cst.Call:
    """``torch.special.entr(x)`` -> ``_special_entr(input=x)``, the exact composition of
    HELPERS defined once beside the code (keywords: the entry's target names)."""
    if receiver is not None:
        args = {entry.receiver or "input": receiver, **args}
    return keyword_call(special_function(ctx, entry.source.rsplit(".", 1)[-1]), args)


# Orthogonal polynomials by their three-term recurrence over k = 1 .. max(n) - 1: p is
# P_k, q is P_(k-1); n is truncated to an integer (torch casts it to int64) and may be a
# tensor (one degree per element); 0 for n < 0.
_POLYNOMIALS = {
    "chebyshev_polynomial_t": ("x", "2 * x * p - q"),
    "chebyshev_polynomial_u": ("2 * x", "2 * x * p - q"),
    "chebyshev_polynomial_v": ("2 * x - 1", "2 * x * p - q"),
    "chebyshev_polynomial_w": ("2 * x + 1", "2 * x * p - q"),
    "hermite_polynomial_h": ("2 * x", "2 * x * p - 2 * k * q"),
    "hermite_polynomial_he": ("x", "x * p - k * q"),
    "laguerre_polynomial_l": ("1 - x", "((2 * k + 1 - x) * p - k * q) / (k + 1)"),
    "legendre_polynomial_p": ("x", "((2 * k + 1) * x * p - k * q) / (k + 1)"),
}
_POLYNOMIAL = '''
def {name}(x, n):
    """torch.special.POLY: by its recurrence, one degree per element of n (0 for n < 0)."""
    if not isinstance(x, MS.Tensor):
        x = MS.Tensor(x, MS.float32)
    n = (n if isinstance(n, MS.Tensor) else MS.Tensor(n)).astype(MS.int64)SHIFT
    q, p = OPS.ones_like(x), FIRST
    out = OPS.where(n == 0, q, OPS.where(n == 1, p, OPS.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, STEP
        out = OPS.where(n == k + 1, p, out)
    return out
'''
for _name, (_first, _step) in _POLYNOMIALS.items():
    for _shifted in ((False, True) if _name.startswith("chebyshev") else (False,)):
        _full = f"shifted_{_name}" if _shifted else _name
        _define(_full, _POLYNOMIAL.replace("POLY", _full).replace("FIRST", _first).replace("STEP", _step)
                .replace("SHIFT", "\n    x = x + x - 1  # T*_n(x) = T_n(2x - 1)" if _shifted else ""))
