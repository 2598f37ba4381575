"""The Bernoulli distribution over {0, 1}."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype, to_np_dtype
from ..ops.activation import softplus
from ..ops.creation import ones_like, zeros_like
from ..ops.grad_mode import no_grad
from ..ops.loss import binary_cross_entropy_with_logits
from ..ops.math import sigmoid, where
from ..ops.random import bernoulli, rand
from ..ops.shape import broadcast_tensors
from ..tensor import Tensor
from .distribution import ExponentialFamily

__all__ = ["Bernoulli"]


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
