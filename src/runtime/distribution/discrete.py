"""Counting distributions: Poisson, Binomial and Geometric (entropies and the Poisson/Binomial KL are sums
over the support, as Paddle computes them)."""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype, to_np_dtype
from ..ops.creation import arange
from ..ops.grad_mode import no_grad
from ..ops.random import binomial, poisson, uniform
from ..ops.shape import broadcast_tensors, broadcast_to, reshape
from ..ops.special import lgamma
from ..tensor import Tensor, to_tensor
from .distribution import Distribution, neginf_to, sample_shape_arg

__all__ = ["Poisson", "Binomial", "Geometric"]


def _eps(t: Tensor) -> float:
    return float(np.finfo(to_np_dtype(t.dtype)).eps)


class Poisson(Distribution):
    """P(k) = rate^k exp(-rate) / k!."""

    def __init__(self, rate: Any) -> None:
        if isinstance(rate, (float, int)) and not isinstance(rate, bool):
            rate = to_tensor(np.array([rate], dtype=get_default_dtype()))
        self.dtype = rate.dtype
        self.rate = rate
        super().__init__(self.rate.shape)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            return poisson(broadcast_to(self.rate, sample_shape_arg(shape) + list(self.batch_shape)))

    def _support(self, rate: Tensor) -> Tensor:
        """0, 1, ... up to rate + 30 sqrt(max rate): past it the probabilities are negligible."""
        top = float(rate.max())
        spread = np.sqrt(top) if top >= 1.0 else 1.0
        upper = int((rate + 30 * spread).astype("int32").max())
        return arange(0, upper, dtype=self.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        value = value.astype(self.dtype)
        return neginf_to(-self.rate + value * self.rate.log() - lgamma(value + 1), -_eps(self.rate))

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def entropy(self) -> Tensor:
        values = reshape(self._support(self.rate), [-1] + [1] * len(self.batch_shape))
        lp = self.log_prob(values)
        return -(lp.exp() * lp).sum(0) * (self.rate != 0.0).astype(self.dtype)

    def kl_divergence(self, other: Poisson) -> Tensor:
        if self.batch_shape != other.batch_shape:
            raise ValueError("KL divergence of two poisson distributions should share the same `batch_shape`.")
        a_max = self._support(self.rate.maximum(other.rate).max()).max()
        support = reshape(arange(0, int(a_max), dtype=self.dtype), [-1] + [1] * len(self.batch_shape))
        lp1, lp2 = self.log_prob(support), other.log_prob(support)
        return (lp1.exp() * (lp1 - lp2)).sum(0)


class Binomial(Distribution):
    """P(k) = C(n, k) p^k (1 - p)^(n - k), n = total_count."""

    def __init__(self, total_count: Any, probs: Any) -> None:
        dtype = get_default_dtype() if isinstance(probs, float) else probs.dtype
        probs = to_tensor(np.asarray(probs, dtype=dtype)) if isinstance(probs, float) else probs
        total_count = (to_tensor(np.asarray(total_count, dtype=to_np_dtype(dtype)))
                       if isinstance(total_count, int) else total_count.astype(dtype))
        self.dtype = dtype
        self.total_count, self.probs = broadcast_tensors([total_count, probs])
        super().__init__(self.total_count.shape)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """Counts in the distribution's float dtype, of shape `shape + batch_shape`."""
        out_shape = sample_shape_arg(shape) + list(self.batch_shape)
        with no_grad():
            n = broadcast_to(self.total_count, out_shape).astype("int32")
            return binomial(n, broadcast_to(self.probs, out_shape)).astype(self.dtype)

    def _support(self) -> Tensor:
        values = arange(1 + int(self.total_count.max()), dtype=self.dtype)
        return reshape(values, [-1] + [1] * len(self.batch_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        value = value.astype(self.dtype)
        n = self.total_count
        log_comb = lgamma(n + 1.0) - lgamma(n - value + 1.0) - lgamma(value + 1.0)
        eps = _eps(self.probs)
        p = self.probs.clip(min=eps, max=1 - eps)
        return neginf_to(log_comb + value * p.log() + (n - value) * (1 - p).log(), -eps)

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def entropy(self) -> Tensor:
        lp = self.log_prob(self._support())
        return -(lp.exp() * lp).sum(0)

    def kl_divergence(self, other: Binomial) -> Tensor:
        support = self._support()
        lp1, lp2 = self.log_prob(support), other.log_prob(support)
        return (lp1.exp() * (lp1 - lp2)).sum(0)


def _integral_or_tensor(k: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, Tensor)):
        raise TypeError(f"Expected type of k is number.Real|framework.Variable|Value, but got {type(k)}")


class Geometric(Distribution):
    """The number of failures before the first success: P(k) = (1 - p)^k p, k = 0, 1, ..."""

    def __init__(self, probs: Any) -> None:
        if isinstance(probs, numbers.Real) and not isinstance(probs, bool):
            probs = to_tensor(np.asarray(probs, dtype="float32"))
        elif not isinstance(probs, Tensor):
            raise TypeError(f"Expected type of probs is Number.Real|Tensor|framework.Variable|Value, but got "
                            f"{type(probs)}")
        self.probs = probs
        super().__init__(tuple(probs.shape))

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def pmf(self, k: Any) -> Tensor:
        _integral_or_tensor(k)
        return (1.0 - self.probs).pow(k) * self.probs

    def log_pmf(self, k: Any) -> Tensor:
        return self.pmf(k).log()

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        """floor(log u / log(1 - p)) for u uniform in (tiny, 1)."""
        u = uniform(list(self._extend_shape(shape)), min=float(np.finfo("float32").tiny), max=1.0,
                    dtype=self.probs.dtype)
        return (u.log() / (-self.probs).log1p()).floor()

    def entropy(self) -> Tensor:
        p = self.probs
        return -((1.0 - p) * (1.0 - p).log() + p * p.log()) / p

    def cdf(self, k: Any) -> Tensor:
        _integral_or_tensor(k)
        return 1.0 - (1.0 - self.probs).pow(k + 1)

    def kl_divergence(self, other: Geometric) -> Tensor:
        if not isinstance(other, Geometric):
            raise TypeError(f"Exacted type of other is geometric.Geometric, but got {type(other)}")
        p, q = self.probs, other.probs
        return p * (p / q).log() + (1.0 - p) * ((1.0 - p) / (1.0 - q)).log()
