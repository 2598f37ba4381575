"""The Bernoulli distribution over {0, 1}, and the continuous Bernoulli on [0, 1]."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype, to_np_dtype
from ..ops.activation import softplus
from ..ops.creation import full_like, ones_like, zeros_like
from ..ops.grad_mode import no_grad
from ..ops.loss import binary_cross_entropy_with_logits
from ..ops.math import sigmoid, where
from ..ops.random import bernoulli, rand, uniform
from ..ops.shape import broadcast_tensors
from ..tensor import Tensor, to_tensor
from .distribution import Distribution, ExponentialFamily, neginf_to

__all__ = ["Bernoulli", "ContinuousBernoulli"]


class Bernoulli(ExponentialFamily):
    """1 with probability `probs` (clipped to [eps, 1 - eps] of its dtype), else 0."""

    def __init__(self, probs: Any, name: str | None = None) -> None:
        self.name = name or "Bernoulli"
        if self._validate_args(probs):
            self.dtype = probs.dtype
        else:
            [probs] = self._to_tensor(probs)
            self.dtype = get_default_dtype()
            probs = probs.astype(self.dtype)
        eps = float(np.finfo(to_np_dtype(self.dtype)).eps)
        self.probs = probs.clip(min=eps, max=1 - eps).astype(self.dtype)
        self.logits = self._probs_to_logits(self.probs, is_binary=True)
        super().__init__(batch_shape=self.probs.shape, event_shape=())

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """0/1 draws (probs' dtype) of shape `shape + batch_shape`, not differentiable."""
        with no_grad():
            return bernoulli(self.probs.expand(list(self._extend_shape(shape))))

    def rsample(self, shape: Sequence[int] = (), temperature: float = 1.0) -> Tensor:
        """Relaxed (Gumbel-softmax) draws, returned as logits (log u - log(1 - u) + logits) / temperature,
        as Paddle's; sigmoid of them lies in (0, 1)."""
        shape = list(self._extend_shape(shape))
        probs = self.probs.expand(shape)
        u = rand(shape, dtype=self.dtype)
        return ((u.log() - (-u).log1p()) + (probs.log() - (-probs).log1p())) / float(temperature)

    def cdf(self, value: Tensor) -> Tensor:
        value = self._check_values_dtype_in_probs(self.probs, value)
        probs, value = broadcast_tensors([self.probs, value])
        return where(value < 0, zeros_like(probs), where(value < 1, ones_like(probs) - probs, ones_like(probs)))

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._check_values_dtype_in_probs(self.probs, value)
        logits, value = broadcast_tensors([self.logits, value])
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def kl_divergence(self, other: Bernoulli) -> Tensor:
        a, b = self.logits, other.logits
        pa, one_minus_pa = sigmoid(a), sigmoid(-a)
        return (-softplus(-a) * pa - (-softplus(-b)) * pa) + (-softplus(a) * one_minus_pa
                                                            - (-softplus(b)) * one_minus_pa)


class ContinuousBernoulli(Distribution):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1]; for p within `lims` of 1/2, where C(p) and the moments
    lose precision, Paddle's Taylor expansions around 1/2 are used."""

    def __init__(self, probs: Any, lims: tuple[float, float] = (0.499, 0.501)) -> None:
        self.dtype = get_default_dtype()
        if isinstance(probs, (float, int)) and not isinstance(probs, bool):
            probs = to_tensor(np.array([probs], dtype=self.dtype))
        else:
            self.dtype = probs.dtype
        self.lims = to_tensor(np.asarray(lims, dtype=to_np_dtype(self.dtype)))
        eps = float(np.finfo(to_np_dtype(probs.dtype)).eps)
        self.probs = probs.clip(min=eps, max=1 - eps)
        super().__init__(self.probs.shape)

    def _outside_lims(self) -> Tensor:
        return (self.probs <= self.lims[0]).logical_or(self.probs > self.lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._outside_lims(), self.probs, self.lims[0] * ones_like(self.probs))

    @staticmethod
    def _atanh(value: Tensor) -> Tensor:
        return 0.5 * (value.log1p() - (-value).log1p())

    def _log_constant(self) -> Tensor:
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, zeros_like(cut))
        above = where(cut >= 0.5, cut, ones_like(cut))
        propose = (2.0 * self._atanh(1.0 - 2.0 * cut).abs()).log() - where(cut <= 0.5, (-2.0 * below).log1p(),
                                                                           (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).square()
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_lims(), propose, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        propose = cut / (2.0 * cut - 1.0) + 1.0 / (2.0 * self._atanh(1.0 - 2.0 * cut))
        x = self.probs - 0.5
        return where(self._outside_lims(), propose, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.square()) * x)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        propose = cut * (cut - 1.0) / (1.0 - 2.0 * cut).square() + 1.0 / ((-cut).log1p() - cut.log()).square()
        x = (self.probs - 0.5).square()
        return where(self._outside_lims(), propose, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        """icdf(u) for u uniform in [0, 1)."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        return self.icdf(uniform(list(shape) + list(self.batch_shape), dtype=self.dtype, min=0.0, max=1.0))

    def log_prob(self, value: Tensor) -> Tensor:
        value = value.astype(self.dtype)
        eps = float(np.finfo(to_np_dtype(self.probs.dtype)).eps)
        cross = neginf_to(value * self.probs.log() + (1.0 - value) * (1 - self.probs).log(), -eps)
        return self._log_constant() + cross

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def entropy(self) -> Tensor:
        log_p, log_q = self.probs.log(), (-self.probs).log1p()
        return where(self.probs == 0.5, full_like(self.probs, 0.0),
                     -self._log_constant() + self.mean * (log_q - log_p) - log_q)

    def cdf(self, value: Tensor) -> Tensor:
        value = value.astype(self.dtype)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = where(self._outside_lims(), cdfs, value)
        return where(value <= 0.0, zeros_like(value), where(value >= 1.0, ones_like(value), inside))

    def icdf(self, value: Tensor) -> Tensor:
        value = value.astype(self.dtype)
        cut = self._cut_probs()
        return where(self._outside_lims(),
                     ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p()),
                     value)

    def kl_divergence(self, other: ContinuousBernoulli) -> Tensor:
        if self.batch_shape != other.batch_shape:
            raise ValueError("KL divergence of two Continuous Bernoulli distributions should share the same "
                             "`batch_shape`.")
        log_q, log_1mq = other.probs.log(), (-other.probs).log1p()
        return -self.entropy() - (other._log_constant() + self.mean * (log_q - log_1mq) + log_1mq)
