"""Categorical and Multinomial distributions over K categories.

As in Paddle, `Categorical(logits)` reads its argument two ways: `probs`/`log_prob` normalise it as
unnormalised probabilities (logits / sum), while `sample`, `entropy` and `kl_divergence` treat it as logits
(softmax). Pass non-negative weights if you use both.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ops.common import one_hot
from ..ops.creation import arange, full
from ..ops.gather import gather, take_along_axis
from ..ops.random import multinomial
from ..ops.shape import broadcast_tensors, reshape
from ..ops.special import lgamma
from ..tensor import Tensor
from .distribution import Distribution, sample_shape_arg

__all__ = ["Categorical", "Multinomial"]


class Categorical(Distribution):
    """A draw of one of K categories (the last axis of `logits`)."""

    def __init__(self, logits: Any, name: str | None = None) -> None:
        self.name = name if name is not None else "Categorical"
        if self._validate_args(logits):
            self.logits = logits
        else:
            dtype = logits.dtype if isinstance(logits, np.ndarray) and logits.dtype == np.float64 else "float32"
            self.logits = self._to_tensor(logits)[0].astype(dtype)
        self.dtype = self.logits.dtype
        self._prob = self.logits / self.logits.sum(axis=-1, keepdim=True)
        super().__init__(self.logits.shape[:-1])

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """Category indices (int64) of shape `shape + batch_shape`, drawn from softmax(logits)."""
        shape = sample_shape_arg(shape)
        num = int(np.prod(shape))
        lead = list(self.logits.shape[:-1])
        logits = reshape(self.logits, [int(np.prod(lead)), self.logits.shape[-1]]) if lead else self.logits
        idx = multinomial(self._logits_to_probs(logits), num, True)
        perm = list(range(idx.ndim))
        perm.insert(0, perm.pop(-1))
        return reshape(idx.transpose(perm), shape + lead)

    def _log_softmax(self) -> tuple[Tensor, Tensor]:
        logits = self.logits - self.logits.max(axis=-1, keepdim=True)
        z = logits.exp().sum(axis=-1, keepdim=True)
        return logits, z

    def kl_divergence(self, other: Categorical) -> Tensor:
        """KL between the softmax distributions of the two logits (keeps the class axis, size 1)."""
        logits, z = self._log_softmax()
        other_logits, other_z = other._log_softmax()
        prob = logits.exp() / z
        return (prob * (logits - z.log() - other_logits + other_z.log())).sum(axis=-1, keepdim=True)

    def entropy(self) -> Tensor:
        """Entropy of softmax(logits) in nats."""
        logits, z = self._log_softmax()
        prob = logits.exp() / z
        return -(prob * (logits - z.log())).sum(axis=-1)

    def probs(self, value: Tensor) -> Tensor:
        """Probability of the categories in `value` (logits / sum(logits))."""
        if self._prob.ndim == 1:
            return reshape(gather(self._prob, reshape(value, [-1])), value.shape)
        if value.ndim == 1:
            return take_along_axis(self._prob, reshape(value, [1] * (self._prob.ndim - 1) + [-1]), axis=-1)
        return take_along_axis(self._prob, value, axis=-1)

    def log_prob(self, value: Tensor) -> Tensor:
        return self.probs(value).log()


class Multinomial(Distribution):
    """Counts of `total_count` draws over the categories of `probs` (normalised over its last axis)."""

    def __init__(self, total_count: int, probs: Tensor) -> None:
        if not isinstance(total_count, int) or isinstance(total_count, bool) or total_count < 1:
            raise ValueError("input parameter total_count must be int type and grater than zero.")
        if probs.ndim < 1:
            raise ValueError("probs parameter should not be none and over one dimension")
        self.probs = probs / probs.sum(-1, keepdim=True)
        self.total_count = total_count
        self._categorical = Categorical(logits=self._probs_to_logits(probs))
        super().__init__(probs.shape[:-1], probs.shape[-1:])

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        logits, value = broadcast_tensors([self.probs.log(), value.astype(self.probs.dtype)])
        logits = logits.masked_fill((value == 0).logical_and(logits.isinf()), 0.0)  # 0 * log 0 counts as 0
        return lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1) + (value * logits).sum(-1)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """Counts of shape `shape + batch_shape + [K]` in probs' dtype."""
        samples = self._categorical.sample([self.total_count, *sample_shape_arg(shape)])
        return one_hot(samples, self.probs.shape[-1]).astype(self.probs.dtype).sum(0)

    def entropy(self) -> Tensor:
        """Entropy from the binomial marginals, as Paddle computes it."""
        n = full([], float(self.total_count), self.probs.dtype)
        support = reshape(arange(self.total_count + 1, dtype=self.probs.dtype),
                          [-1] + [1] * self.probs.ndim)[1:]
        binomial_pmf = self._binomial_logpmf(n, support).exp()
        return n * self._categorical.entropy() - lgamma(n + 1) + (binomial_pmf * lgamma(support + 1)).sum([0, -1])

    def _binomial_logpmf(self, count: Tensor, value: Tensor) -> Tensor:
        logits = self._probs_to_logits(self.probs, is_binary=True)
        clipped = (logits.clip(min=0) + logits - logits.clip(max=0)) / 2
        norm = count * clipped + count * (-logits.abs()).exp().log1p() - lgamma(count + 1)
        return value * logits - lgamma(value + 1) - lgamma(count - value + 1) - norm
