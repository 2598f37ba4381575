"""The continuous uniform distribution on [low, high)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..dtypes import to_np_dtype
from ..ops.math import cast, where
from ..ops.random import _UNIFORM
from ..tensor import Tensor
from .distribution import Distribution, sample_shape_arg, pair_params

__all__ = ["Uniform"]


class Uniform(Distribution):
    """U(low, high); `sample` is differentiable in low and high (as Paddle's)."""

    def __init__(self, low: Any, high: Any, name: str | None = None) -> None:
        self.name = name if name is not None else "Uniform"
        self.low, self.high, self.all_arg_is_float = pair_params(self, low, high)
        self.dtype = self.low.dtype
        super().__init__(self.low.shape)

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) / 2.0

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12.0

    def sample(self, shape: Sequence[int] = (), seed: int = 0) -> Tensor:
        """low + (high - low) * u for u uniform in [0, 1) of shape `shape + batch_shape`."""
        out_shape = sample_shape_arg(shape) + list((self.low + self.high).shape)
        u = _UNIFORM(shape=tuple(out_shape), dtype=to_np_dtype(self.dtype), min=0.0, max=1.0, seed=int(seed))
        return u * (self.high - self.low) + self.low

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        return self.sample(shape)

    def _inside(self, value: Tensor) -> Tensor:
        return cast(self.low < value, value.dtype) * cast(value < self.high, value.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        """-log(high - low) inside the open interval (low, high), -inf outside."""
        value = self._check_values_dtype_in_probs(self.low, value)
        return self._inside(value).log() - (self.high - self.low).log()

    def probs(self, value: Tensor) -> Tensor:
        value = self._check_values_dtype_in_probs(self.low, value)
        return self._inside(value) / (self.high - self.low)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    def kl_divergence(self, other: Uniform) -> Tensor:
        """log((q.high - q.low) / (high - low)) where [low, high] lies inside q's support, else inf."""
        inside = (other.low <= self.low).logical_and(self.high <= other.high)
        kl = ((other.high - other.low) / (self.high - self.low)).log()
        return where(inside, kl, kl * 0.0 + math.inf)
