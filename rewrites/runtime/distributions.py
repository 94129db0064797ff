"""Run-time helpers: torch.distributions (tables/distributions.toml): classes keeping torch's
interface (``d.log_prob(x)``, ``d.mean``, ``d.sample((n,))``, ``d.batch_shape``) written
with MindSpore ops. The formulas are torch's (same order of operations), so values match to
float rounding; sampling draws from MindSpore's generator. ``_Distribution`` sorts before
the classes built on it: the converted file defines them in the order of their names.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops

# The constants torch's code computes, written as their values (math.log(math.sqrt(2 * math.pi)), ...):
# 0.9189385332046727 = log(sqrt(2 pi))
# 0.3633802276324186 = 1 - 2 / pi
# 0.7978845608028654 = sqrt(2 / pi)
# 1.282549830161864 = pi / sqrt(6)
# 1.8378770664093453 = log(2 pi)
# 2.5310242469692907 = log(4 pi)
# 1.1447298858494002 = log(pi)
# 0.6931471805599453 = log(2)
# 1.4142135623730951 = sqrt(2)
# 0.5772156649015329 = Euler's constant (torch.distributions.utils.euler_constant)
# 3.141592653589793 = pi
# 0.5723649429247004 = lgamma(0.5)

# _InverseTransform (t.inv) is part of _BaseTransform: one definition in the file
COPIED_WITH = {"_InverseTransform": "_BaseTransform"}


class _Distribution:
    """torch.distributions.Distribution's interface over MindSpore tensors (transpile MS201); its
    name sorts before the classes built on it, emitted in the order of their names."""

    has_rsample = False
    event_shape = ()

    @staticmethod
    def _broadcast_shape(a, b):
        a, b = tuple(a), tuple(b)
        n = max(len(a), len(b))
        a = (1,) * (n - len(a)) + a
        b = (1,) * (n - len(b)) + b
        return tuple(y if x == 1 else x for x, y in zip(a, b))

    @staticmethod
    def _broadcast_all(*values):
        """torch's broadcast_all: numbers take the first tensor's dtype (else float32)."""
        dtype = ms.float32
        for v in values:
            if isinstance(v, ms.Tensor):
                dtype = v.dtype
                break
        tensors = [v if isinstance(v, ms.Tensor) else ms.Tensor(v, dtype) for v in values]
        shape = ()
        for t in tensors:
            shape = _Distribution._broadcast_shape(shape, t.shape)
        return tuple(ops.broadcast_to(t, shape) for t in tensors)

    @staticmethod
    def _eps(dtype):
        """torch.finfo(dtype).eps"""
        if dtype == ms.float64:
            return 2.220446049250313e-16
        if dtype == ms.float16:
            return 0.0009765625
        if dtype == ms.bfloat16:
            return 0.0078125
        return 1.1920928955078125e-07

    @staticmethod
    def _min(dtype):
        """torch.finfo(dtype).min"""
        if dtype == ms.float64:
            return -1.7976931348623157e308
        if dtype == ms.float16:
            return -65504.0
        if dtype == ms.bfloat16:
            return -3.3895313892515355e38
        return -3.4028234663852886e38

    @staticmethod
    def _sum_rightmost(value, dim):
        if dim == 0:
            return value
        return ops.sum(ops.reshape(value, tuple(value.shape)[: len(value.shape) - dim] + (-1,)), -1)

    @staticmethod
    def _bce_with_logits(logits, target):
        """F.binary_cross_entropy_with_logits(logits, target, reduction='none')"""
        return (1 - target) * logits - ops.logsigmoid(logits)

    def _binary_params(self, probs, logits):
        """(probs, logits) of a binary event from either (torch's probs_to_logits and
        logits_to_probs with is_binary=True)."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (probs,) = self._broadcast_all(probs)
            p = ops.clamp(probs, self._eps(probs.dtype), 1 - self._eps(probs.dtype))
            return probs, ops.log(p) - ops.log1p(-p)
        (logits,) = self._broadcast_all(logits)
        return ops.sigmoid(logits), logits

    @staticmethod
    def _clamp_probs(probs):
        eps = _Distribution._eps(probs.dtype)
        return ops.clamp(probs, eps, 1 - eps)

    def _extended_shape(self, sample_shape=()):
        return tuple(sample_shape) + tuple(self.batch_shape) + tuple(self.event_shape)

    @property
    def stddev(self):
        return ops.sqrt(self.variance)

    def sample(self, sample_shape=()):
        return ops.stop_gradient(self.rsample(sample_shape))

    def perplexity(self):
        return ops.exp(self.entropy())

    def _kl(self, q):
        raise NotImplementedError(f"no KL divergence of {type(self).__name__} and {type(q).__name__}")


class _LocScale(_Distribution):
    """A distribution of a location and a scale (Normal, Laplace, Cauchy, Gumbel): torch
    broadcasts both; the mode is the location (transpile MS201)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = self._broadcast_all(loc, scale)
        self.batch_shape = tuple(self.loc.shape)

    @property
    def mode(self):
        return self.loc


class _TorchNormal(_LocScale):
    """torch.distributions.Normal (transpile MS201)."""

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return ops.pow(self.scale, 2)

    def rsample(self, sample_shape=()):
        eps = ops.standard_normal(self._extended_shape(sample_shape)).astype(self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - ops.log(self.scale) - 0.9189385332046727

    def cdf(self, value):
        return 0.5 * (1 + ops.erf((value - self.loc) * ops.reciprocal(self.scale) / 1.4142135623730951))

    def icdf(self, value):
        return self.loc + self.scale * ops.erfinv(2 * value - 1) * 1.4142135623730951

    def entropy(self):
        return 0.5 + 0.5 * 1.8378770664093453 + ops.log(self.scale)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        var_ratio = ops.pow(self.scale / q.scale, 2)
        t1 = ops.pow((self.loc - q.loc) / q.scale, 2)
        return 0.5 * (var_ratio + t1 - 1 - ops.log(var_ratio))


class _TorchUniform(_Distribution):
    """torch.distributions.Uniform (transpile MS201)."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = self._broadcast_all(low, high)
        self.batch_shape = tuple(self.low.shape)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return ops.pow(self.high - self.low, 2) / 12

    def rsample(self, sample_shape=()):
        rand = ops.rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        lb = ops.le(self.low, value).astype(self.low.dtype)
        ub = ops.gt(self.high, value).astype(self.low.dtype)
        return ops.log(lb * ub) - ops.log(self.high - self.low)

    def cdf(self, value):
        return ops.clamp((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return ops.log(self.high - self.low)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        result = ops.log((q.high - q.low) / (self.high - self.low))
        return ops.where((q.low > self.low) | (q.high < self.high), float("inf"), result)


class _TorchBernoulli(_Distribution):
    """torch.distributions.Bernoulli (transpile MS201)."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = self._binary_params(probs, logits)
        self.batch_shape = tuple(self.probs.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).astype(self.probs.dtype)
        return ops.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ops.rand(shape, dtype=self.probs.dtype)
        return (u < ops.broadcast_to(self.probs, shape)).astype(self.probs.dtype)

    def log_prob(self, value):
        logits, value = self._broadcast_all(self.logits, value)
        return -self._bce_with_logits(logits, value)

    def entropy(self):
        return self._bce_with_logits(self.logits, self.probs)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        t1 = self.probs * (ops.softplus(-q.logits) - ops.softplus(-self.logits))
        t1 = ops.where(self.probs == 0, 0.0, ops.where(q.probs == 0, float("inf"), t1))
        t2 = (1 - self.probs) * (ops.softplus(q.logits) - ops.softplus(self.logits))
        t2 = ops.where(self.probs == 1, 0.0, ops.where(q.probs == 1, float("inf"), t2))
        return t1 + t2


class _TorchCategorical(_Distribution):
    """torch.distributions.Categorical (transpile MS201)."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = probs / ops.sum(probs, -1, keepdim=True)
            eps = self._eps(self.probs.dtype)
            self.logits = ops.log(ops.clamp(self.probs, eps, 1 - eps))
        else:
            self.logits = logits - ops.logsumexp(logits, -1, True)
            self.probs = ops.softmax(self.logits, -1)
        self._num_events = self.probs.shape[-1]
        self.batch_shape = tuple(self.probs.shape)[:-1]

    @property
    def mean(self):
        return ops.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def variance(self):
        return ops.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return ops.argmax(self.probs, -1)

    def sample(self, sample_shape=()):
        n = 1
        for s in tuple(sample_shape):
            n *= s
        probs_2d = ops.reshape(self.probs, (-1, self._num_events))
        samples_2d = ops.multinomial(probs_2d, n, True).T
        return ops.reshape(samples_2d, self._extended_shape(sample_shape)).astype(ms.int64)

    def log_prob(self, value):
        value = ops.expand_dims(value.astype(ms.int64), -1)
        shape = self._broadcast_shape(value.shape, self.logits.shape)
        value = ops.broadcast_to(value, shape)[..., :1]
        log_pmf = ops.broadcast_to(self.logits, shape)
        return ops.squeeze(ops.gather_elements(log_pmf, -1, value), -1)

    def entropy(self):
        logits = ops.clamp(self.logits, min=self._min(self.logits.dtype))
        return -ops.sum(logits * self.probs, -1)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        t = self.probs * (self.logits - q.logits)
        t = ops.where(ops.broadcast_to(q.probs == 0, t.shape), float("inf"), t)
        t = ops.where(ops.broadcast_to(self.probs == 0, t.shape), 0.0, t)
        return ops.sum(t, -1)


class _DistributionOf(_Distribution):
    """A distribution computed by another one, ``self._inner`` (transpile MS201): torch's
    Chi2 is a Gamma, RelaxedBernoulli a TransformedDistribution. Composition, not
    subclassing: the emitted classes are defined in the order of their names."""

    def _wrap(self, inner):
        self._inner = inner
        self.batch_shape = tuple(inner.batch_shape)
        self.event_shape = tuple(inner.event_shape)
        self.has_rsample = inner.has_rsample

    @property
    def mean(self):
        return self._inner.mean

    @property
    def mode(self):
        return self._inner.mode

    @property
    def variance(self):
        return self._inner.variance

    def rsample(self, sample_shape=()):
        return self._inner.rsample(sample_shape)

    def sample(self, sample_shape=()):
        return self._inner.sample(sample_shape)

    def log_prob(self, value):
        return self._inner.log_prob(value)

    def cdf(self, value):
        return self._inner.cdf(value)

    def icdf(self, value):
        return self._inner.icdf(value)

    def entropy(self):
        return self._inner.entropy()

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        return self._inner._kl(q._inner)


class _TorchIndependent(_DistributionOf):
    """torch.distributions.Independent (transpile MS201)."""

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        self._wrap(base_distribution)
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.batch_shape = shape[: len(shape) - event_dim]
        self.event_shape = shape[len(shape) - event_dim :]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def _kl(self, q):
        if type(q) is not type(self) or self.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
            return _Distribution._kl(self, q)
        return self._sum_rightmost(self.base_dist._kl(q.base_dist), self.reinterpreted_batch_ndims)


class _TorchMultivariateNormal(_Distribution):
    """torch.distributions.MultivariateNormal (transpile MS201)."""

    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        if scale_tril is not None:
            L = scale_tril
        elif covariance_matrix is not None:
            L = ops.cholesky(covariance_matrix)
        else:
            # torch's _precision_to_scale_tril
            Lf = ops.cholesky(ops.flip(precision_matrix, (-2, -1)))
            L_inv = ops.swapaxes(ops.flip(Lf, (-2, -1)), -2, -1)
            eye = ops.eye(precision_matrix.shape[-1], dtype=precision_matrix.dtype)
            L = ops.matrix_solve(L_inv, ops.broadcast_to(eye, L_inv.shape))
        self.batch_shape = self._broadcast_shape(L.shape[:-2], loc.shape[:-1])
        self.event_shape = tuple(loc.shape[-1:])
        self.loc = ops.broadcast_to(loc, self.batch_shape + self.event_shape)
        self._unbroadcasted_scale_tril = L

    @staticmethod
    def _mahalanobis(L, x):
        """x^T (L L^T)^-1 x over the last axis of x, batches broadcast."""
        shape = _Distribution._broadcast_shape(L.shape[:-2], x.shape[:-1])
        L = ops.broadcast_to(L, shape + tuple(L.shape[-2:]))
        x = ops.broadcast_to(x, shape + tuple(x.shape[-1:]))
        y = ops.squeeze(ops.matrix_solve(L, ops.expand_dims(x, -1)), -1)
        return ops.sum(y * y, -1)

    def _half_log_det(self):
        return ops.sum(ops.log(ops.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1)), -1)

    @property
    def scale_tril(self):
        return ops.broadcast_to(self._unbroadcasted_scale_tril, self.batch_shape + self.event_shape + self.event_shape)

    @property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        cov = ops.matmul(L, ops.swapaxes(L, -2, -1))
        return ops.broadcast_to(cov, self.batch_shape + self.event_shape + self.event_shape)

    @property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = ops.broadcast_to(ops.eye(L.shape[-1], dtype=L.dtype), L.shape)
        L_inv = ops.matrix_solve(L, eye)
        precision = ops.matmul(ops.swapaxes(L_inv, -2, -1), L_inv)
        return ops.broadcast_to(precision, self.batch_shape + self.event_shape + self.event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        v = ops.sum(ops.pow(self._unbroadcasted_scale_tril, 2), -1)
        return ops.broadcast_to(v, self.batch_shape + self.event_shape)

    def rsample(self, sample_shape=()):
        eps = ops.standard_normal(self._extended_shape(sample_shape)).astype(self.loc.dtype)
        mv = ops.squeeze(ops.matmul(self._unbroadcasted_scale_tril, ops.expand_dims(eps, -1)), -1)
        return self.loc + mv

    def log_prob(self, value):
        M = self._mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self.event_shape[0] * 1.8378770664093453 + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self.event_shape[0] * (1.0 + 1.8378770664093453) + self._half_log_det()
        return ops.broadcast_to(H, self.batch_shape)

    def _kl(self, q):
        if type(q) is not type(self) or self.event_shape != q.event_shape:
            return super()._kl(q)
        n = self.event_shape[0]
        half_term1 = q._half_log_det() - self._half_log_det()
        qL, pL = q._unbroadcasted_scale_tril, self._unbroadcasted_scale_tril
        shape = self._broadcast_shape(qL.shape[:-2], pL.shape[:-2]) + (n, n)
        solved = ops.matrix_solve(ops.broadcast_to(qL, shape), ops.broadcast_to(pL, shape))
        term2 = ops.sum(ops.reshape(solved * solved, shape[:-2] + (-1,)), -1)
        term3 = self._mahalanobis(qL, q.loc - self.loc)
        return half_term1 + 0.5 * (term2 + term3 - n)


class _TorchLaplace(_LocScale):
    """torch.distributions.Laplace (transpile MS201)."""

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return 2 * ops.pow(self.scale, 2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()):
        # uniform on [eps - 1, 1), as torch draws it
        low = self._eps(self.loc.dtype) - 1
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype) * (1 - low) + low
        return self.loc - self.scale * ops.sign(u) * ops.log1p(-ops.abs(u))

    def log_prob(self, value):
        return -ops.log(2 * self.scale) - ops.abs(value - self.loc) / self.scale

    def cdf(self, value):
        return 0.5 - 0.5 * ops.sign(value - self.loc) * ops.expm1(-ops.abs(value - self.loc) / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * ops.sign(term) * ops.log1p(-2 * ops.abs(term))

    def entropy(self):
        return 1 + ops.log(2 * self.scale)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        scale_ratio = self.scale / q.scale
        loc_abs_diff = ops.abs(self.loc - q.loc)
        t1 = -ops.log(scale_ratio)
        t2 = loc_abs_diff / q.scale
        t3 = scale_ratio * ops.exp(-loc_abs_diff / self.scale)
        return t1 + t2 + t3 - 1


class _TorchExponential(_Distribution):
    """torch.distributions.Exponential (transpile MS201)."""

    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = self._broadcast_all(rate)
        self.batch_shape = tuple(self.rate.shape)

    @property
    def mean(self):
        return ops.reciprocal(self.rate)

    @property
    def mode(self):
        return ops.zeros_like(self.rate)

    @property
    def stddev(self):
        return ops.reciprocal(self.rate)

    @property
    def variance(self):
        return ops.pow(self.rate, -2)

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.rate.dtype)
        return -ops.log1p(-u) / self.rate

    def log_prob(self, value):
        return ops.log(self.rate) - self.rate * value

    def cdf(self, value):
        return 1 - ops.exp(-self.rate * value)

    def icdf(self, value):
        return -ops.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - ops.log(self.rate)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        rate_ratio = q.rate / self.rate
        return -ops.log(rate_ratio) + rate_ratio - 1


class _TorchCauchy(_LocScale):
    """torch.distributions.Cauchy (transpile MS201)."""

    @property
    def mean(self):
        return ops.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype)

    @property
    def variance(self):
        return ops.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + ops.tan(3.141592653589793 * (u - 0.5)) * self.scale

    def log_prob(self, value):
        return -1.1447298858494002 - ops.log(self.scale) - ops.log1p(((value - self.loc) / self.scale) ** 2)

    def cdf(self, value):
        return ops.atan((value - self.loc) / self.scale) / 3.141592653589793 + 0.5

    def icdf(self, value):
        return ops.tan(3.141592653589793 * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return 2.5310242469692907 + ops.log(self.scale)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        t1 = ops.log(ops.pow(self.scale + q.scale, 2) + ops.pow(self.loc - q.loc, 2))
        t2 = ops.log(4 * self.scale * q.scale)
        return t1 - t2


class _TorchHalfNormal(_Distribution):
    """torch.distributions.HalfNormal: |X| for X ~ Normal(0, scale) (transpile MS201)."""

    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self.base_dist = _TorchNormal(0, scale)
        self.batch_shape = self.base_dist.batch_shape

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale * 0.7978845608028654

    @property
    def mode(self):
        return ops.zeros_like(self.scale)

    @property
    def variance(self):
        return ops.pow(self.scale, 2) * 0.3633802276324186

    def rsample(self, sample_shape=()):
        return ops.abs(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        log_prob = self.base_dist.log_prob(value) + 0.6931471805599453
        return ops.where(value >= 0, log_prob, float("-inf"))

    def cdf(self, value):
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - 0.6931471805599453

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        return self.base_dist._kl(q.base_dist)


class _TorchLogNormal(_Distribution):
    """torch.distributions.LogNormal: exp(X) for X ~ Normal(loc, scale) (transpile MS201)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = _TorchNormal(loc, scale)
        self.batch_shape = self.base_dist.batch_shape

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return ops.exp(self.loc + ops.pow(self.scale, 2) / 2)

    @property
    def mode(self):
        return ops.exp(self.loc - ops.square(self.scale))

    @property
    def variance(self):
        scale_sq = ops.pow(self.scale, 2)
        return ops.expm1(scale_sq) * ops.exp(2 * self.loc + scale_sq)

    def rsample(self, sample_shape=()):
        return ops.exp(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        x = ops.log(value)
        return (0.0 - x) + self.base_dist.log_prob(x)

    def cdf(self, value):
        return self.base_dist.cdf(ops.log(value))

    def icdf(self, value):
        return ops.exp(self.base_dist.icdf(value))

    def entropy(self):
        return self.base_dist.entropy() + self.loc

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        return self.base_dist._kl(q.base_dist)


class _TorchGumbel(_LocScale):
    """torch.distributions.Gumbel (transpile MS201): loc - scale * log(-log(u)) for u
    uniform on [tiny, 1 - eps), with torch's transforms in cdf and icdf."""

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale)
        tiny = 2.2250738585072014e-308 if self.loc.dtype == ms.float64 else 1.1754943508222875e-38
        self._low = ops.full_like(self.loc, tiny)
        self._high = ops.full_like(self.loc, 1 - self._eps(self.loc.dtype))

    def _from_uniform(self, u):
        return self.loc + (-self.scale) * ops.log(0 + (-1.0) * ops.log(u))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ops.rand(shape, dtype=self.loc.dtype)
        return self._from_uniform(self._low + u * (self._high - self._low))

    def log_prob(self, value):
        y = (self.loc - value) / self.scale
        return (y - ops.exp(y)) - ops.log(self.scale)

    def cdf(self, value):
        v = ops.exp((value - self.loc) / (-self.scale))
        v = ops.exp((v - 0) / (-1.0))
        return ops.clamp((v - self._low) / (self._high - self._low), 0, 1)

    def icdf(self, value):
        return self._from_uniform(value * (self._high - self._low) + self._low)

    @property
    def mean(self):
        return self.loc + self.scale * 0.5772156649015329

    @property
    def stddev(self):
        return 1.282549830161864 * self.scale

    @property
    def variance(self):
        return ops.pow(self.stddev, 2)

    def entropy(self):
        return ops.log(self.scale) + (1 + 0.5772156649015329)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        ct1 = self.scale / q.scale
        ct2 = q.loc / q.scale
        ct3 = self.loc / q.scale
        t1 = -ops.log(ct1) - ct2 + ct3
        t2 = ct1 * 0.5772156649015329
        t3 = ops.exp(ct2 + ops.lgamma(1 + ct1) - ct3)
        return t1 + t2 + t3 - (1 + 0.5772156649015329)


class _TorchOneHotCategorical(_Distribution):
    """torch.distributions.OneHotCategorical (transpile MS201)."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = _TorchCategorical(probs, logits)
        self.batch_shape = self._categorical.batch_shape
        self.event_shape = (self._categorical._num_events,)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return self._one_hot(ops.argmax(probs, -1))

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def _one_hot(self, indices):
        probs = self._categorical.probs
        on, off = ms.Tensor(1, probs.dtype), ms.Tensor(0, probs.dtype)
        return ops.one_hot(indices, self._categorical._num_events, on, off)

    def sample(self, sample_shape=()):
        return self._one_hot(self._categorical.sample(sample_shape))

    def log_prob(self, value):
        return self._categorical.log_prob(ops.argmax(value, -1))

    def entropy(self):
        return self._categorical.entropy()

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        return self._categorical._kl(q._categorical)


class _TorchMixtureSameFamily(_Distribution):
    """torch.distributions.MixtureSameFamily (transpile MS201): a Categorical over the
    last batch axis of the component distribution."""

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self.mixture_distribution = mixture_distribution
        self.component_distribution = component_distribution
        self._num_component = mixture_distribution.logits.shape[-1]
        self.batch_shape = tuple(component_distribution.batch_shape)[:-1]
        self.event_shape = tuple(component_distribution.event_shape)
        self._event_ndims = len(self.event_shape)

    def _pad(self, x):
        return ops.expand_dims(x, -1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return ops.reshape(x, xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return ops.sum(probs * self.component_distribution.mean, -1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = ops.sum(probs * self.component_distribution.variance, -1 - self._event_ndims)
        var_cond_mean = ops.sum(
            probs * ops.pow(self.component_distribution.mean - self._pad(self.mean), 2.0), -1 - self._event_ndims
        )
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return ops.sum(cdf_x * self.mixture_distribution.probs, -1)

    def log_prob(self, x):
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = ops.log_softmax(self.mixture_distribution.logits, -1)
        return ops.logsumexp(log_prob_x + log_mix_prob, -1)

    def sample(self, sample_shape=()):
        gather_dim = len(tuple(sample_shape)) + len(self.batch_shape)
        es = self.event_shape
        mix_sample = self.mixture_distribution.sample(sample_shape)
        mix_shape = tuple(mix_sample.shape)
        comp_samples = self.component_distribution.sample(sample_shape)
        index = ops.reshape(mix_sample, mix_shape + (1,) * (len(es) + 1))
        index = ops.tile(index, (1,) * len(mix_shape) + (1,) + es)
        samples = ops.gather_elements(comp_samples, gather_dim, index)
        return ops.stop_gradient(ops.squeeze(samples, gather_dim))


class _TorchTransformedDistribution(_Distribution):
    """torch.distributions.TransformedDistribution over element-wise transforms
    (transpile MS201): samples pass through the transforms, log_prob inverts them."""

    def __init__(self, base_distribution, transforms, validate_args=None):
        self.base_dist = base_distribution
        self.transforms = list(transforms) if isinstance(transforms, (list, tuple)) else [transforms]
        self.batch_shape = tuple(base_distribution.batch_shape)
        self.event_shape = tuple(base_distribution.event_shape)
        self.has_rsample = base_distribution.has_rsample

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return ops.stop_gradient(x)

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            log_prob = log_prob - self._sum_rightmost(transform.log_abs_det_jacobian(x, y), event_dim)
            y = x
        return log_prob + self._sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value

    def _kl(self, q):
        if type(q) is not type(self) or self.event_shape != q.event_shape or len(self.transforms) != len(q.transforms):
            return super()._kl(q)
        if not all(a._same(b) for a, b in zip(self.transforms, q.transforms)):
            return super()._kl(q)
        return self.base_dist._kl(q.base_dist)


class _BaseTransform:
    """torch.distributions.transforms.Transform's interface (transpile MS201): t(x),
    t.inv(y), t.log_abs_det_jacobian(x, y), t.sign; cache_size=1 keeps the last pair,
    so t.inv(t(x)) is x itself (torch's cache); the name sorts before the transforms."""

    sign = 1
    event_dim = 0

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    @property
    def inv(self):
        return _InverseTransform(self)

    def _same(self, other):
        return type(other) is type(self)


class _InverseTransform:
    """t.inv: the transform run backwards."""

    def __init__(self, transform):
        self._inv = transform
        self.sign = transform.sign

    def __call__(self, x):
        return self._inv._inv_call(x)

    @property
    def inv(self):
        return self._inv

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)


class _TorchExpTransform(_BaseTransform):
    """torch.distributions.transforms.ExpTransform (transpile MS201)."""

    def _call(self, x):
        return ops.exp(x)

    def _inverse(self, y):
        return ops.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class _TorchTanhTransform(_BaseTransform):
    """torch.distributions.transforms.TanhTransform (transpile MS201)."""

    def _call(self, x):
        return ops.tanh(x)

    def _inverse(self, y):
        return ops.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (0.6931471805599453 - x - ops.softplus(-2.0 * x))


class _TorchSigmoidTransform(_BaseTransform):
    """torch.distributions.transforms.SigmoidTransform (transpile MS201): clamped to
    [tiny, 1 - eps] as torch does."""

    @staticmethod
    def _tiny(dtype):
        return 2.2250738585072014e-308 if dtype == ms.float64 else 1.1754943508222875e-38

    def _call(self, x):
        return ops.clamp(ops.sigmoid(x), self._tiny(x.dtype), 1.0 - _Distribution._eps(x.dtype))

    def _inverse(self, y):
        y = ops.clamp(y, self._tiny(y.dtype), 1.0 - _Distribution._eps(y.dtype))
        return ops.log(y) - ops.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -ops.softplus(-x) - ops.softplus(x)


class _TorchAffineTransform(_BaseTransform):
    """torch.distributions.transforms.AffineTransform, element-wise (transpile MS201)."""

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        if event_dim != 0:
            raise NotImplementedError("AffineTransform over event dimensions is not converted")
        super().__init__(cache_size)
        self.loc, self.scale = loc, scale

    @property
    def sign(self):
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return ops.sign(self.scale)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, (int, float)):
            result = ops.log(ops.full_like(x, abs(self.scale)))
        else:
            result = ops.log(ops.abs(self.scale))
        return ops.broadcast_to(result, x.shape)

    def _same(self, other):
        if type(other) is not type(self):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if a != b:
                    return False
            elif not bool(ops.all(a == b)):
                return False
        return True


class _TorchGamma(_Distribution):
    """torch.distributions.Gamma (transpile MS201)."""

    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = self._broadcast_all(concentration, rate)
        self.batch_shape = tuple(self.concentration.shape)

    @staticmethod
    def _standard_gamma(alpha, rounds=24):
        """Gamma(alpha, 1) draws, one per element of alpha: Marsaglia and Tsang's method
        (acceptance > 0.95 per proposal) with ``rounds`` proposals at once, the first
        accepted kept (all rejected: probability < 1e-31); alpha < 1 is drawn as
        Gamma(alpha + 1) * U ** (1 / alpha). MindSpore's gamma kernels do not run on CPU."""
        shape, dtype = tuple(alpha.shape), alpha.dtype
        boost = alpha < 1
        a = ops.where(boost, alpha + 1, alpha)
        d = a - 1.0 / 3
        c = 1.0 / ops.sqrt(9 * d)
        z = ops.standard_normal((rounds,) + shape).astype(dtype)
        u = ops.rand((rounds,) + shape, dtype=dtype)
        v = ops.pow(1 + c * z, 3)
        safe_v = ops.where(v > 0, v, ops.ones_like(v))
        accept = (v > 0) & (ops.log(u) < 0.5 * z * z + d - d * safe_v + d * ops.log(safe_v))
        first = ops.expand_dims(ops.argmax(accept.astype(ms.float32), 0), 0)
        value = ops.squeeze(ops.gather_elements(d * safe_v, 0, first), 0)
        u_boost = ops.rand(shape, dtype=dtype)
        return ops.where(boost, value * ops.pow(u_boost, 1 / alpha), value)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ops.clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self):
        return self.concentration / ops.pow(self.rate, 2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = self._standard_gamma(ops.broadcast_to(self.concentration, shape)) / ops.broadcast_to(self.rate, shape)
        tiny = 2.2250738585072014e-308 if value.dtype == ms.float64 else 1.1754943508222875e-38
        return ops.clamp(value, min=tiny)

    def log_prob(self, value):
        return (
            ops.xlogy(self.concentration, self.rate)
            + ops.xlogy(self.concentration - 1, value)
            - self.rate * value
            - ops.lgamma(self.concentration)
        )

    def entropy(self):
        return (
            self.concentration
            - ops.log(self.rate)
            + ops.lgamma(self.concentration)
            + (1.0 - self.concentration) * ops.digamma(self.concentration)
        )

    def cdf(self, value):
        return ops.igamma(self.concentration, self.rate * value)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        t1 = q.concentration * ops.log(self.rate / q.rate)
        t2 = ops.lgamma(q.concentration) - ops.lgamma(self.concentration)
        t3 = (self.concentration - q.concentration) * ops.digamma(self.concentration)
        t4 = (q.rate - self.rate) * (self.concentration / self.rate)
        return t1 + t2 + t3 + t4


class _TorchDirichlet(_Distribution):
    """torch.distributions.Dirichlet (transpile MS201): normalised Gamma draws."""

    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        self.batch_shape = tuple(concentration.shape)[:-1]
        self.event_shape = tuple(concentration.shape)[-1:]

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = _TorchGamma._standard_gamma(ops.broadcast_to(self.concentration, shape))
        return gammas / ops.sum(gammas, -1, keepdim=True)

    def log_prob(self, value):
        return (
            ops.sum(ops.xlogy(self.concentration - 1.0, value), -1)
            + ops.lgamma(ops.sum(self.concentration, -1))
            - ops.sum(ops.lgamma(self.concentration), -1)
        )

    @property
    def mean(self):
        return self.concentration / ops.sum(self.concentration, -1, keepdim=True)

    @property
    def mode(self):
        concentrationm1 = ops.clamp(self.concentration - 1, min=0.0)
        mode = concentrationm1 / ops.sum(concentrationm1, -1, keepdim=True)
        mask = ops.expand_dims(ops.all(self.concentration < 1, -1), -1)
        k = concentrationm1.shape[-1]
        on, off = ms.Tensor(1, mode.dtype), ms.Tensor(0, mode.dtype)
        one_hot = ops.one_hot(ops.argmax(mode, -1), k, on, off)
        return ops.where(mask, one_hot, mode)

    @property
    def variance(self):
        con0 = ops.sum(self.concentration, -1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (ops.pow(con0, 2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = ops.sum(self.concentration, -1)
        return (
            ops.sum(ops.lgamma(self.concentration), -1)
            - ops.lgamma(a0)
            - (k - a0) * ops.digamma(a0)
            - ops.sum((self.concentration - 1.0) * ops.digamma(self.concentration), -1)
        )

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        sum_p = ops.sum(self.concentration, -1)
        sum_q = ops.sum(q.concentration, -1)
        t1 = ops.lgamma(sum_p) - ops.lgamma(sum_q)
        t2 = ops.sum(ops.lgamma(self.concentration) - ops.lgamma(q.concentration), -1)
        t3 = self.concentration - q.concentration
        t4 = ops.digamma(self.concentration) - ops.expand_dims(ops.digamma(sum_p), -1)
        return t1 - t2 + ops.sum(t3 * t4, -1)


class _TorchBeta(_Distribution):
    """torch.distributions.Beta (transpile MS201): a Dirichlet over (heads, tails)."""

    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        c1, c0 = self._broadcast_all(concentration1, concentration0)
        self._dirichlet = _TorchDirichlet(ops.stack([c1, c0], -1))
        self.batch_shape = self._dirichlet.batch_shape

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (ops.pow(total, 2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        heads_tails = ops.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        sum_params_p = self.concentration1 + self.concentration0
        sum_params_q = q.concentration1 + q.concentration0
        t1 = ops.lgamma(q.concentration1) + ops.lgamma(q.concentration0) + ops.lgamma(sum_params_p)
        t2 = ops.lgamma(self.concentration1) + ops.lgamma(self.concentration0) + ops.lgamma(sum_params_q)
        t3 = (self.concentration1 - q.concentration1) * ops.digamma(self.concentration1)
        t4 = (self.concentration0 - q.concentration0) * ops.digamma(self.concentration0)
        t5 = (sum_params_q - sum_params_p) * ops.digamma(sum_params_p)
        return t1 - t2 + t3 + t4 + t5


class _TorchChi2(_DistributionOf):
    """torch.distributions.Chi2: Gamma(df / 2, 1 / 2) (transpile MS201)."""

    def __init__(self, df, validate_args=None):
        self._wrap(_TorchGamma(0.5 * df, 0.5))

    @property
    def df(self):
        return self._inner.concentration * 2

    @property
    def concentration(self):
        return self._inner.concentration

    @property
    def rate(self):
        return self._inner.rate


class _TorchStudentT(_Distribution):
    """torch.distributions.StudentT (transpile MS201)."""

    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = self._broadcast_all(df, loc, scale)
        self._chi2 = _TorchChi2(self.df)
        self.batch_shape = tuple(self.df.shape)

    @property
    def mean(self):
        return ops.where(self.df <= 1, float("nan"), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        finite = ops.pow(self.scale, 2) * self.df / (self.df - 2)
        return ops.where(self.df > 2, finite, ops.where(self.df > 1, float("inf"), float("nan")))

    def rsample(self, sample_shape=()):
        X = ops.standard_normal(self._extended_shape(sample_shape)).astype(self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        Y = X * ops.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        y = (value - self.loc) / self.scale
        Z = (
            ops.log(self.scale)
            + 0.5 * ops.log(self.df)
            + 0.5 * 1.1447298858494002
            + ops.lgamma(0.5 * self.df)
            - ops.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * ops.log1p(y**2.0 / self.df) - Z

    def entropy(self):
        lbeta = ops.lgamma(0.5 * self.df) + 0.5723649429247004 - ops.lgamma(0.5 * (self.df + 1))
        return (
            ops.log(self.scale)
            + 0.5 * (self.df + 1) * (ops.digamma(0.5 * (self.df + 1)) - ops.digamma(0.5 * self.df))
            + 0.5 * ops.log(self.df)
            + lbeta
        )


class _TorchGeometric(_Distribution):
    """torch.distributions.Geometric: failures before the first success (transpile MS201)."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = self._binary_params(probs, logits)
        self.batch_shape = tuple(self.probs.shape)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ops.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = 2.2250738585072014e-308 if self.probs.dtype == ms.float64 else 1.1754943508222875e-38
        u = ops.rand(shape, dtype=self.probs.dtype) * (1 - tiny) + tiny
        return ops.stop_gradient(ops.floor(ops.log(u) / ops.log1p(-self.probs)))

    def log_prob(self, value):
        value, probs = self._broadcast_all(value, self.probs)
        probs = ops.where((probs == 1) & (value == 0), 0.0, probs)
        return value * ops.log1p(-probs) + ops.log(self.probs)

    def entropy(self):
        return self._bce_with_logits(self.logits, self.probs) / self.probs

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        return -self.entropy() - ops.log1p(-q.probs) / self.probs - q.logits


class _TorchLogitRelaxedBernoulli(_Distribution):
    """torch.distributions.relaxed_bernoulli.LogitRelaxedBernoulli (transpile MS201)."""

    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self.probs, self.logits = self._binary_params(probs, logits)
        self.batch_shape = tuple(self.probs.shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = self._clamp_probs(ops.broadcast_to(self.probs, shape))
        uniforms = self._clamp_probs(ops.rand(shape, dtype=probs.dtype))
        return (ops.log(uniforms) - ops.log1p(-uniforms) + ops.log(probs) - ops.log1p(-probs)) / self.temperature

    def log_prob(self, value):
        logits, value = self._broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return ops.log(self.temperature) + diff - 2 * ops.log1p(ops.exp(diff))


class _TorchExpRelaxedCategorical(_Distribution):
    """torch.distributions.relaxed_categorical.ExpRelaxedCategorical: the log of a
    Gumbel-softmax draw (transpile MS201)."""

    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = _TorchCategorical(probs, logits)
        self.temperature = temperature
        self.batch_shape = self._categorical.batch_shape
        self.event_shape = (self._categorical._num_events,)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        uniforms = self._clamp_probs(ops.rand(shape, dtype=self.logits.dtype))
        gumbels = -ops.log(-ops.log(uniforms))
        scores = (self.logits + gumbels) / self.temperature
        return scores - ops.logsumexp(scores, -1, True)

    def log_prob(self, value):
        K = self._categorical._num_events
        logits, value = self._broadcast_all(self.logits, value)
        log_scale = ops.lgamma(ops.full_like(self.temperature, float(K))) - ops.log(self.temperature) * (-(K - 1))
        score = logits - value * self.temperature
        score = ops.sum(score - ops.logsumexp(score, -1, True), -1)
        return score + log_scale


class _TorchRelaxedBernoulli(_DistributionOf):
    """torch.distributions.RelaxedBernoulli: SigmoidTransform of a LogitRelaxedBernoulli (transpile MS201)."""

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = _TorchLogitRelaxedBernoulli(temperature, probs, logits)
        self._wrap(_TorchTransformedDistribution(base, [_TorchSigmoidTransform()]))
        self.base_dist = base

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class _TorchRelaxedOneHotCategorical(_DistributionOf):
    """torch.distributions.RelaxedOneHotCategorical: ExpTransform of a ExpRelaxedCategorical (transpile MS201)."""

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = _TorchExpRelaxedCategorical(temperature, probs, logits)
        self._wrap(_TorchTransformedDistribution(base, [_TorchExpTransform()]))
        self.base_dist = base

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class _TorchPowerTransform(_BaseTransform):
    """torch.distributions.transforms.PowerTransform (transpile MS201)."""

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size)
        (self.exponent,) = _Distribution._broadcast_all(exponent)

    @property
    def sign(self):
        return ops.sign(self.exponent)

    def _call(self, x):
        return ops.pow(x, self.exponent)

    def _inverse(self, y):
        return ops.pow(y, 1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return ops.log(ops.abs(self.exponent * y / x))

    def _same(self, other):
        return type(other) is type(self) and bool(ops.all(self.exponent == other.exponent))


class _TorchSoftplusTransform(_BaseTransform):
    """torch.distributions.transforms.SoftplusTransform (transpile MS201)."""

    def _call(self, x):
        return ops.softplus(x)

    def _inverse(self, y):
        return ops.log(-ops.expm1(-y)) + y

    def log_abs_det_jacobian(self, x, y):
        return -ops.softplus(-x)


class _TorchComposeTransform(_BaseTransform):
    """torch.distributions.transforms.ComposeTransform of element-wise parts (transpile MS201)."""

    def __init__(self, parts, cache_size=0):
        if cache_size != 0:
            raise NotImplementedError("ComposeTransform with cache_size=1 is not converted")
        super().__init__(0)
        self.parts = list(parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ops.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        result = 0
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            result = result + part.log_abs_det_jacobian(a, b)
        return result

    def _same(self, other):
        return (type(other) is type(self) and len(self.parts) == len(other.parts)
                and all(a._same(b) for a, b in zip(self.parts, other.parts)))


def _torch_logits_to_probs(logits, is_binary=False):
    """torch.distributions.utils.logits_to_probs (transpile MS201)."""
    if is_binary:
        return ops.sigmoid(logits)
    return ops.softmax(logits, -1)


def _torch_probs_to_logits(probs, is_binary=False):
    """torch.distributions.utils.probs_to_logits (transpile MS201)."""
    ps_clamped = _Distribution._clamp_probs(probs)
    if is_binary:
        return ops.log(ps_clamped) - ops.log1p(-ps_clamped)
    return ops.log(ps_clamped)


def _torch_clamp_probs(probs):
    """torch.distributions.utils.clamp_probs: into [eps, 1 - eps] of the dtype (transpile MS201)."""
    return _Distribution._clamp_probs(probs)


class _TorchBinomial(_Distribution):
    """torch.distributions.Binomial (transpile MS201): draws count Bernoulli trials up to
    the largest total_count."""

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        total_count, param = self._broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = total_count.astype(param.dtype)
        if probs is not None:
            self.probs, self.logits = self._binary_params(param, None)
        else:
            self.probs, self.logits = self._binary_params(None, param)
        self.batch_shape = tuple(param.shape)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ops.minimum(ops.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n_max = int(self.total_count.max())
        u = ops.rand(shape + (n_max,), dtype=self.probs.dtype)
        success = u < ops.expand_dims(ops.broadcast_to(self.probs, shape), -1)
        trial = ops.arange(n_max).astype(self.probs.dtype) < ops.expand_dims(ops.broadcast_to(self.total_count, shape), -1)
        return ops.sum((success & trial).astype(self.probs.dtype), -1)

    def log_prob(self, value):
        log_factorial_n = ops.lgamma(self.total_count + 1)
        log_factorial_k = ops.lgamma(value + 1)
        log_factorial_nmk = ops.lgamma(self.total_count - value + 1)
        clamped = (ops.clamp(self.logits, min=0) + self.logits - ops.clamp(self.logits, max=0)) / 2
        normalize_term = (
            self.total_count * clamped
            + self.total_count * ops.log1p(ops.exp(-ops.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not int(self.total_count.min()) == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = ops.reshape(ops.arange(1 + total_count).astype(self.probs.dtype), (-1,) + (1,) * len(self.batch_shape))
        if expand:
            values = ops.broadcast_to(values, (-1,) + self.batch_shape)
        return values

    def entropy(self):
        log_prob = self.log_prob(self.enumerate_support(False))
        return -ops.sum(ops.exp(log_prob) * log_prob, 0)

    def _kl(self, q):
        if type(q) is not type(self):
            return super()._kl(q)
        if bool(ops.any(self.total_count < q.total_count)):
            raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
        kl = self.total_count * (
            self.probs * (self.logits - q.logits) + ops.log1p(-self.probs) - ops.log1p(-q.probs)
        )
        return ops.where(self.total_count > q.total_count, float("inf"), kl)


def _torch_kl_divergence(p, q):
    """torch.distributions.kl_divergence (transpile MS201): the pairs of one family."""
    return p._kl(q)
