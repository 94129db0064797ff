"""Run-time helpers: torch.special functions (tables/special.toml) MindSpore has no kernel for,
or whose kernel differs from torch's outside the function's domain: exact compositions that
follow torch's documented values at the edges (NaN outside the domain, the limits at 0 and
infinity) and compute in float64 where float32 would lose digits.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


def _special_float(x, like=None):
    """torch computes special functions in floating point: an integer or bool tensor as
    float32; a Python number (xlogy(x, 2.0)) as a tensor of the other operand's dtype."""
    if isinstance(x, ms.Tensor):
        return x if ops.is_floating_point(x) else x.astype(ms.float32)
    if isinstance(like, ms.Tensor) and ops.is_floating_point(like):
        return ms.Tensor(x, like.dtype)
    return ms.Tensor(x, ms.float32)


# Bessel functions of the second kind: torch gives NaN below 0 (MindSpore: -inf or inf)
# and Y1(0) = -inf (MindSpore: NaN).
def _special_bessel_y0(x):
    """torch.special.bessel_y0: NaN below 0."""
    x = _special_float(x)
    return ops.where(x < 0, float("nan"), ops.bessel_y0(x))


def _special_modified_bessel_k0(x):
    """torch.special.modified_bessel_k0: NaN below 0."""
    x = _special_float(x)
    return ops.where(x < 0, float("nan"), ops.bessel_k0(x))


def _special_modified_bessel_k1(x):
    """torch.special.modified_bessel_k1: NaN below 0."""
    x = _special_float(x)
    return ops.where(x < 0, float("nan"), ops.bessel_k1(x))


def _special_scaled_modified_bessel_k0(x):
    """torch.special.scaled_modified_bessel_k0: NaN below 0."""
    x = _special_float(x)
    return ops.where(x < 0, float("nan"), ops.bessel_k0e(x))


def _special_scaled_modified_bessel_k1(x):
    """torch.special.scaled_modified_bessel_k1: NaN below 0."""
    x = _special_float(x)
    return ops.where(x < 0, float("nan"), ops.bessel_k1e(x))


def _special_bessel_y1(x):
    """torch.special.bessel_y1: NaN below 0, -inf at 0."""
    x = _special_float(x)
    return ops.where(x < 0, float("nan"), ops.where(x == 0, -float("inf"), ops.bessel_y1(x)))


def _special_xlogy(input, other):
    """torch.special.xlogy: x * log(y), 0 where x == 0 unless y is NaN."""
    input, other = _special_float(input, other), _special_float(other, input)
    return ops.where(ops.isnan(other), float("nan"), ops.where(input == 0, 0.0, input * ops.log(other)))


def _special_xlog1py(input, other):
    """torch.special.xlog1py: x * log1p(y), 0 where x == 0 unless y is NaN."""
    input, other = _special_float(input, other), _special_float(other, input)
    return ops.where(ops.isnan(other), float("nan"), ops.where(input == 0, 0.0, input * _special_log1p(other)))


def _special_entr(input):
    """torch.special.entr: -x * log(x), 0 at 0, -inf below 0."""
    input = _special_float(input)
    return ops.where(input < 0, -float("inf"), ops.where(input == 0, 0.0, -input * ops.log(input)))


def _special_spherical_bessel_j0(input):
    """torch.special.spherical_bessel_j0: sin(x) / x, 1 at 0, 0 at +-inf."""
    input = _special_float(input)
    safe = ops.where(input == 0, 1.0, input)
    return ops.where(input == 0, 1.0, ops.where(ops.isinf(input), 0.0, ops.sin(safe) / safe))


def _special_polygamma(n, input):
    """torch.special.polygamma: ops.polygamma with the order as a tensor; torch's trigamma
    (n = 1) is 0 at +inf and NaN at -inf (MindSpore's: NaN and inf)."""
    input = _special_float(input)
    n = n if isinstance(n, ms.Tensor) else ms.Tensor(n, ms.int64)
    value = ops.polygamma(n, input)
    return ops.where((n == 1) & (input == float("inf")), 0.0, ops.where((n == 1) & (input == -float("inf")), float("nan"), value))


def _special_zeta(input, other):
    """torch.special.zeta (Hurwitz): +inf at the poles q = 0, -1, -2, ... for x > 1;
    torch's NaN at q = inf and at x = inf for q > 1 (MindSpore: 0)."""
    input, other = _special_float(input, other), _special_float(other, input)
    pole = (input > 1) & (other <= 0) & (other == ops.floor(other))
    nan = (other == float("inf")) | ((input == float("inf")) & (other > 1))
    return ops.where(pole, float("inf"), ops.where(nan, float("nan"), ops.zeta(input, other)))


def _special_gammainc(input, other):
    """torch.special.gammainc (regularized lower incomplete gamma P(a, x)): 1 at a = 0
    for x > 0, 0 for an infinite a and a finite x (MindSpore: NaN at both)."""
    input, other = _special_float(input), _special_float(other)
    edge = (input >= 0) & (other >= 0)
    a0 = edge & (input == 0)
    ainf = edge & ops.isinf(input) & ~ops.isinf(other)
    value = ops.igamma(input, other)
    return ops.where(a0, ops.where(other > 0, 1.0, float("nan")), ops.where(ainf, 0.0, value))


def _special_gammaincc(input, other):
    """torch.special.gammaincc (regularized upper incomplete gamma Q(a, x)): 0 at a = 0
    for x > 0, 1 for an infinite a and a finite x, 0 at x = inf (MindSpore: NaN)."""
    input, other = _special_float(input), _special_float(other)
    edge = (input >= 0) & (other >= 0)
    a0 = edge & (input == 0)
    ainf = edge & ops.isinf(input) & ~ops.isinf(other)
    xinf = edge & ~ops.isinf(input) & (input > 0) & ops.isinf(other)
    value = ops.igammac(input, other)
    return ops.where(a0, ops.where(other > 0, 0.0, float("nan")), ops.where(ainf, 1.0, ops.where(xinf, 0.0, value)))


# The float64 compositions below write their inexact constants as float64 tensors:
# MindSpore rounds a Python float to float32 before it meets a float64 tensor.
def _special_log1p(y):
    """log(1 + y) to the last digit of y's dtype: MindSpore's Log1p is log(1 + y) to
    about float32 precision (0 at y = 1e-8 in float32), so log(u) * y / (u - 1) with
    u = 1 + y in float64 (the rounding of u cancels), y where u == 1."""
    x = y.astype(ms.float64)
    u = 1 + x
    exact = ops.where((u == 1) | ops.isinf(u), 1.0, u - 1)
    value = ops.where(u == 1, x, ops.where(ops.isinf(u), u, ops.log(u) * (x / exact)))
    return value.astype(y.dtype)


def _special_erfcx(input):
    """torch.special.erfcx, exp(x^2) * erfc(x), in float64: as it reads up to x = 25,
    beyond by its asymptotic series 1/(x sqrt(pi)) * sum (-1)^k (2k-1)!! / (2x^2)^k
    (exp(x^2) overflows; 9 terms leave an error below 1e-20)."""
    input = _special_float(input)
    x = input.astype(ms.float64)
    far = x > 25
    near = ops.where(far, 0.0, x)
    z = 1 / (2 * x * x)
    series = 1.0
    for odd in (15, 13, 11, 9, 7, 5, 3, 1):
        series = 1 - odd * z * series
    sqrt_pi = ms.Tensor(1.7724538509055160, ms.float64)
    value = ops.where(far, series / (x * sqrt_pi), ops.exp(near * near) * ops.erfc(near))
    return value.astype(input.dtype)


def _special_log_ndtr(input):
    """torch.special.log_ndtr, log of the standard normal CDF, in float64: below -1 as
    log(erfcx(-x / sqrt(2)) / 2) - x^2 / 2 (the CDF itself underflows), else as
    log1p(-erfc(x / sqrt(2)) / 2)."""
    input = _special_float(input)
    x = input.astype(ms.float64)
    t = x * ms.Tensor(0.7071067811865476, ms.float64)
    low = x < -1
    tl = ops.where(low, t, -1.0)
    lower = ops.log(_special_erfcx(-tl) / 2) - tl * tl
    upper = _special_log1p(-ops.erfc(t) / 2)
    return ops.where(low, lower, upper).astype(input.dtype)


def _special_ndtri(input):
    """torch.special.ndtri, the inverse of the standard normal CDF, in float64, by the
    lower tail r = min(p, 1 - p) (ndtri(p) = -ndtri(1 - p); 1 - p is exact for p > 0.5):
    a rational approximation in sqrt(-2 log r) (error below 5e-4) refined by Newton steps
    on 0.5 * erfc(-x / sqrt(2)) - r; -inf at 0, inf at 1, NaN outside [0, 1]."""
    input = _special_float(input)
    p = input.astype(ms.float64)
    inside = (p > 0) & (p < 1)
    upper = p > 0.5
    r = ops.where(inside, ops.where(upper, 1 - p, p), 0.5)
    t = ops.sqrt(-2 * ops.log(r))
    x = (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t) - t
    half_sqrt2 = ms.Tensor(0.7071067811865476, ms.float64)
    density = ms.Tensor(0.3989422804014327, ms.float64)
    for _ in range(5):
        x = x - (0.5 * ops.erfc(-x * half_sqrt2) - r) / (density * ops.exp(-0.5 * x * x))
    x = ops.where(upper, -x, ops.where(p == 0.5, 0.0, x))
    x = ops.where(p == 0, -float("inf"), ops.where(p == 1, float("inf"), ops.where(inside, x, float("nan"))))
    return x.astype(input.dtype)


# Orthogonal polynomials by their three-term recurrence over k = 1 .. max(n) - 1: p is
# P_k, q is P_(k-1); n is truncated to an integer (torch casts it to int64) and may be a
# tensor (one degree per element); 0 for n < 0.
def _special_chebyshev_polynomial_t(x, n):
    """torch.special.chebyshev_polynomial_t: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_shifted_chebyshev_polynomial_t(x, n):
    """torch.special.shifted_chebyshev_polynomial_t: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    x = x + x - 1  # T*_n(x) = T_n(2x - 1)
    q, p = ops.ones_like(x), x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_chebyshev_polynomial_u(x, n):
    """torch.special.chebyshev_polynomial_u: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), 2 * x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_shifted_chebyshev_polynomial_u(x, n):
    """torch.special.shifted_chebyshev_polynomial_u: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    x = x + x - 1  # T*_n(x) = T_n(2x - 1)
    q, p = ops.ones_like(x), 2 * x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_chebyshev_polynomial_v(x, n):
    """torch.special.chebyshev_polynomial_v: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), 2 * x - 1
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_shifted_chebyshev_polynomial_v(x, n):
    """torch.special.shifted_chebyshev_polynomial_v: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    x = x + x - 1  # T*_n(x) = T_n(2x - 1)
    q, p = ops.ones_like(x), 2 * x - 1
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_chebyshev_polynomial_w(x, n):
    """torch.special.chebyshev_polynomial_w: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), 2 * x + 1
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_shifted_chebyshev_polynomial_w(x, n):
    """torch.special.shifted_chebyshev_polynomial_w: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    x = x + x - 1  # T*_n(x) = T_n(2x - 1)
    q, p = ops.ones_like(x), 2 * x + 1
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_hermite_polynomial_h(x, n):
    """torch.special.hermite_polynomial_h: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), 2 * x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, 2 * x * p - 2 * k * q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_hermite_polynomial_he(x, n):
    """torch.special.hermite_polynomial_he: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, x * p - k * q
        out = ops.where(n == k + 1, p, out)
    return out


def _special_laguerre_polynomial_l(x, n):
    """torch.special.laguerre_polynomial_l: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), 1 - x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, ((2 * k + 1 - x) * p - k * q) / (k + 1)
        out = ops.where(n == k + 1, p, out)
    return out


def _special_legendre_polynomial_p(x, n):
    """torch.special.legendre_polynomial_p: by its recurrence, one degree per element of n (0 for n < 0)."""
    x = _special_float(x)
    n = (n if isinstance(n, ms.Tensor) else ms.Tensor(n)).astype(ms.int64)
    q, p = ops.ones_like(x), x
    out = ops.where(n == 0, q, ops.where(n == 1, p, ops.zeros_like(p)))
    for k in range(1, int(n.max())):
        q, p = p, ((2 * k + 1) * x * p - k * q) / (k + 1)
        out = ops.where(n == k + 1, p, out)
    return out
