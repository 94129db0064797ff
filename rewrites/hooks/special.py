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

from ..syntax import emitted, keyword_call, spelled
from .registry import hook
from .torch_functions import cast_input_dtype  # noqa: F401 (shared with torch.softmax)

# name -> source of the helper ``_special_<name>``. In the source ``{name}`` is the
# helper's own name, ``MS.``/``OPS.`` the file's spellings of mindspore and mindspore.ops,
# ``NAN``/``INF`` the float constants; parameter names are the entry's target keywords.
_NAN = 'float("nan")'
_INF = 'float("inf")'
HELPERS: dict[str, str] = {}


def _define(name: str, source: str) -> None:
    """A helper; ``OTHER(`` in its source calls the helper ``other`` (emitted with it)."""
    HELPERS[name] = source.replace("NAN", _NAN).replace("INF", _INF)


_define("float", '''
def {name}(x, like=None):
    """torch computes special functions in floating point: an integer or bool tensor as
    float32; a Python number (xlogy(x, 2.0)) as a tensor of the other operand's dtype."""
    if isinstance(x, MS.Tensor):
        return x if OPS.is_floating_point(x) else x.astype(MS.float32)
    if isinstance(like, MS.Tensor) and OPS.is_floating_point(like):
        return MS.Tensor(x, like.dtype)
    return MS.Tensor(x, MS.float32)
''')


# Bessel functions of the second kind: torch gives NaN below 0 (MindSpore: -inf or inf)
# and Y1(0) = -inf (MindSpore: NaN).
for _name, _op in (("bessel_y0", "bessel_y0"), ("modified_bessel_k0", "bessel_k0"), ("modified_bessel_k1", "bessel_k1"),
                   ("scaled_modified_bessel_k0", "bessel_k0e"), ("scaled_modified_bessel_k1", "bessel_k1e")):
    _define(_name, f'''
def {{name}}(x):
    """torch.special.{_name}: NaN below 0."""
    x = FLOAT(x)
    return OPS.where(x < 0, NAN, OPS.{_op}(x))
''')
_define("bessel_y1", '''
def {name}(x):
    """torch.special.bessel_y1: NaN below 0, -inf at 0."""
    x = FLOAT(x)
    return OPS.where(x < 0, NAN, OPS.where(x == 0, -INF, OPS.bessel_y1(x)))
''')
_define("xlogy", '''
def {name}(input, other):
    """torch.special.xlogy: x * log(y), 0 where x == 0 unless y is NaN."""
    input, other = FLOAT(input, other), FLOAT(other, input)
    return OPS.where(OPS.isnan(other), NAN, OPS.where(input == 0, 0.0, input * OPS.log(other)))
''')
_define("xlog1py", '''
def {name}(input, other):
    """torch.special.xlog1py: x * log1p(y), 0 where x == 0 unless y is NaN."""
    input, other = FLOAT(input, other), FLOAT(other, input)
    return OPS.where(OPS.isnan(other), NAN, OPS.where(input == 0, 0.0, input * LOG1P(other)))
''')
_define("entr", '''
def {name}(input):
    """torch.special.entr: -x * log(x), 0 at 0, -inf below 0."""
    input = FLOAT(input)
    return OPS.where(input < 0, -INF, OPS.where(input == 0, 0.0, -input * OPS.log(input)))
''')
_define("spherical_bessel_j0", '''
def {name}(input):
    """torch.special.spherical_bessel_j0: sin(x) / x, 1 at 0, 0 at +-inf."""
    input = FLOAT(input)
    safe = OPS.where(input == 0, 1.0, input)
    return OPS.where(input == 0, 1.0, OPS.where(OPS.isinf(input), 0.0, OPS.sin(safe) / safe))
''')
_define("polygamma", '''
def {name}(n, input):
    """torch.special.polygamma: ops.polygamma with the order as a tensor; torch's trigamma
    (n = 1) is 0 at +inf and NaN at -inf (MindSpore's: NaN and inf)."""
    input = FLOAT(input)
    n = n if isinstance(n, MS.Tensor) else MS.Tensor(n, MS.int64)
    value = OPS.polygamma(n, input)
    return OPS.where((n == 1) & (input == INF), 0.0, OPS.where((n == 1) & (input == -INF), NAN, value))
''')
_define("zeta", '''
def {name}(input, other):
    """torch.special.zeta (Hurwitz): +inf at the poles q = 0, -1, -2, ... for x > 1;
    torch's NaN at q = inf and at x = inf for q > 1 (MindSpore: 0)."""
    input, other = FLOAT(input, other), FLOAT(other, input)
    pole = (input > 1) & (other <= 0) & (other == OPS.floor(other))
    nan = (other == INF) | ((input == INF) & (other > 1))
    return OPS.where(pole, INF, OPS.where(nan, NAN, OPS.zeta(input, other)))
''')
_define("gammainc", '''
def {name}(input, other):
    """torch.special.gammainc (regularized lower incomplete gamma P(a, x)): 1 at a = 0
    for x > 0, 0 for an infinite a and a finite x (MindSpore: NaN at both)."""
    input, other = FLOAT(input), FLOAT(other)
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
    input, other = FLOAT(input), FLOAT(other)
    edge = (input >= 0) & (other >= 0)
    a0 = edge & (input == 0)
    ainf = edge & OPS.isinf(input) & ~OPS.isinf(other)
    xinf = edge & ~OPS.isinf(input) & (input > 0) & OPS.isinf(other)
    value = OPS.igammac(input, other)
    return OPS.where(a0, OPS.where(other > 0, 0.0, NAN), OPS.where(ainf, 1.0, OPS.where(xinf, 0.0, value)))
''')


# The float64 compositions below write their inexact constants as float64 tensors:
# MindSpore rounds a Python float to float32 before it meets a float64 tensor.
_define("log1p", '''
def {name}(y):
    """log(1 + y) to the last digit of y's dtype: MindSpore's Log1p is log(1 + y) to
    about float32 precision (0 at y = 1e-8 in float32), so log(u) * y / (u - 1) with
    u = 1 + y in float64 (the rounding of u cancels), y where u == 1."""
    x = y.astype(MS.float64)
    u = 1 + x
    exact = OPS.where((u == 1) | OPS.isinf(u), 1.0, u - 1)
    value = OPS.where(u == 1, x, OPS.where(OPS.isinf(u), u, OPS.log(u) * (x / exact)))
    return value.astype(y.dtype)
''')
_define("erfcx", '''
def {name}(input):
    """torch.special.erfcx, exp(x^2) * erfc(x), in float64: as it reads up to x = 25,
    beyond by its asymptotic series 1/(x sqrt(pi)) * sum (-1)^k (2k-1)!! / (2x^2)^k
    (exp(x^2) overflows; 9 terms leave an error below 1e-20)."""
    input = FLOAT(input)
    x = input.astype(MS.float64)
    far = x > 25
    near = OPS.where(far, 0.0, x)
    z = 1 / (2 * x * x)
    series = 1.0
    for odd in (15, 13, 11, 9, 7, 5, 3, 1):
        series = 1 - odd * z * series
    sqrt_pi = MS.Tensor(1.7724538509055160, MS.float64)
    value = OPS.where(far, series / (x * sqrt_pi), OPS.exp(near * near) * OPS.erfc(near))
    return value.astype(input.dtype)
''')
_define("log_ndtr", '''
def {name}(input):
    """torch.special.log_ndtr, log of the standard normal CDF, in float64: below -1 as
    log(erfcx(-x / sqrt(2)) / 2) - x^2 / 2 (the CDF itself underflows), else as
    log1p(-erfc(x / sqrt(2)) / 2)."""
    input = FLOAT(input)
    x = input.astype(MS.float64)
    t = x * MS.Tensor(0.7071067811865476, MS.float64)
    low = x < -1
    tl = OPS.where(low, t, -1.0)
    lower = OPS.log(ERFCX(-tl) / 2) - tl * tl
    upper = LOG1P(-OPS.erfc(t) / 2)
    return OPS.where(low, lower, upper).astype(input.dtype)
''')
_define("ndtri", '''
def {name}(input):
    """torch.special.ndtri, the inverse of the standard normal CDF, in float64, by the
    lower tail r = min(p, 1 - p) (ndtri(p) = -ndtri(1 - p); 1 - p is exact for p > 0.5):
    a rational approximation in sqrt(-2 log r) (error below 5e-4) refined by Newton steps
    on 0.5 * erfc(-x / sqrt(2)) - r; -inf at 0, inf at 1, NaN outside [0, 1]."""
    input = FLOAT(input)
    p = input.astype(MS.float64)
    inside = (p > 0) & (p < 1)
    upper = p > 0.5
    r = OPS.where(inside, OPS.where(upper, 1 - p, p), 0.5)
    t = OPS.sqrt(-2 * OPS.log(r))
    x = (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t) - t
    half_sqrt2 = MS.Tensor(0.7071067811865476, MS.float64)
    density = MS.Tensor(0.3989422804014327, MS.float64)
    for _ in range(5):
        x = x - (0.5 * OPS.erfc(-x * half_sqrt2) - r) / (density * OPS.exp(-0.5 * x * x))
    x = OPS.where(upper, -x, OPS.where(p == 0.5, 0.0, x))
    x = OPS.where(p == 0, -INF, OPS.where(p == 1, INF, OPS.where(inside, x, NAN)))
    return x.astype(input.dtype)
''')

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
    x = FLOAT(x)
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


def special_function(ctx, name: str) -> cst.Name:
    """The helper ``_special_<name>`` (and those it calls), emitted beside the code."""
    text = spelled(ctx, HELPERS[name])
    for other in HELPERS:
        if f"{other.upper()}(" in text:
            special_function(ctx, other)
            text = text.replace(f"{other.upper()}(", f"_special_{other}(")
    return emitted(ctx, f"_special_{name}", text)


@hook(not_a_value="as a value (not called) it cannot become the composition emitted for its calls: "
                   "call it where it is used (a lambda calling it converts)")
def special_helper(ctx, entry, args, receiver) -> cst.Call:
    """``torch.special.entr(x)`` -> ``_special_entr(input=x)``, the exact composition of
    HELPERS defined once beside the code (keywords: the entry's target names)."""
    if receiver is not None:
        args = {entry.receiver or "input": receiver, **args}
    return keyword_call(special_function(ctx, entry.source.rsplit(".", 1)[-1]), args)
