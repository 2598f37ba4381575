"""The Cauchy distribution (no mean or variance: those raise ValueError, as Paddle's)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..ops.grad_mode import no_grad
from ..ops.math import atan, tan
from ..ops.random import rand
from ..ops.shape import broadcast_tensors
from ..tensor import Tensor
from .distribution import Distribution, real_param

__all__ = ["Cauchy"]


def _require_tensor(value: Any) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"Expected type of value is Variable or Value, but got {type(value)}")


class Cauchy(Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2))."""

    def __init__(self, loc: Any, scale: Any, name: str | None = None) -> None:
        self.name = name if name is not None else "Cauchy"
        loc = real_param("loc", loc)
        scale = real_param("scale", scale)
        self.loc, self.scale = broadcast_tensors([loc, scale]) if loc.shape != scale.shape else (loc, scale)
        self.dtype = self.loc.dtype
        super().__init__(batch_shape=self.loc.shape, event_shape=())

    @property
    def mean(self) -> Tensor:
        raise ValueError("Cauchy distribution has no mean.")

    @property
    def variance(self) -> Tensor:
        raise ValueError("Cauchy distribution has no variance.")

    @property
    def stddev(self) -> Tensor:
        raise ValueError("Cauchy distribution has no stddev.")

    def sample(self, shape: Sequence[int] = (), name: str | None = None) -> Tensor:
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = (), name: str | None = None) -> Tensor:
        """loc + scale * tan(pi (u - 1/2)) for u uniform in [0, 1)."""
        shape = list(self._extend_shape(shape))
        u = rand(shape, dtype=self.dtype)
        return self.loc.expand(shape) + self.scale.expand(shape) * tan(math.pi * (u - 0.5))

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        _require_tensor(value)
        loc, scale, value = broadcast_tensors([self.loc, self.scale, self._check_values_dtype_in_probs(self.loc, value)])
        return -((value - loc) / scale).square().log1p() - (scale.log() + math.log(math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        _require_tensor(value)
        loc, scale, value = broadcast_tensors([self.loc, self.scale, self._check_values_dtype_in_probs(self.loc, value)])
        return atan((value - loc) / scale) / math.pi + 0.5

    def entropy(self) -> Tensor:
        return self.scale.log() + math.log(4 * math.pi)

    def kl_divergence(self, other: Cauchy) -> Tensor:
        if not isinstance(other, Cauchy):
            raise TypeError(f"Expected type of other is Cauchy, but got {type(other)}")
        t1 = ((self.scale + other.scale).pow(2) + (self.loc - other.loc).pow(2)).log()
        return t1 - (4 * self.scale * other.scale).log()
