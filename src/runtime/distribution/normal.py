"""The normal (Gaussian) distribution N(loc, scale^2)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..dtypes import to_np_dtype
from ..ops.random import _GAUSSIAN
from ..ops.random import normal as _normal
from ..tensor import Tensor
from .distribution import Distribution, sample_shape_arg, pair_params

__all__ = ["Normal"]


class Normal(Distribution):
    """N(loc, scale^2); `sample` and `rsample` are both differentiable in loc and scale (as Paddle's)."""

    def __init__(self, loc: Any, scale: Any, name: str | None = None) -> None:
        self.name = name if name is not None else "Normal"
        self.loc, self.scale, self.all_arg_is_float = pair_params(self, loc, scale)
        self.dtype = self.loc.dtype
        super().__init__(self.loc.shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return self.scale

    def sample(self, shape: Sequence[int] = (), seed: int = 0) -> Tensor:
        """loc + scale * eps for standard normal eps of shape `shape + batch_shape`."""
        shape = sample_shape_arg(shape)
        out_shape = shape + list((self.loc + self.scale).shape)
        eps = _GAUSSIAN(shape=tuple(out_shape), mean=0.0, std=1.0, seed=int(seed), dtype=to_np_dtype(self.dtype))
        return eps * self.scale + self.loc

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        """The reparameterised sample loc + eps * scale (eps drawn in the default dtype, as Paddle)."""
        eps = _normal(0.0, 1.0, list(self._extend_shape(shape)))
        return self.loc + eps * self.scale

    def entropy(self) -> Tensor:
        zero = (self.loc + self.scale) * 0.0
        return 0.5 + zero + (0.5 * math.log(2 * math.pi) + (self.scale + zero).log())

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._check_values_dtype_in_probs(self.loc, value)
        var = self.scale * self.scale
        return -1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var) - (
            self.scale.log() + math.log(math.sqrt(2.0 * math.pi)))

    def probs(self, value: Tensor) -> Tensor:
        value = self._check_values_dtype_in_probs(self.loc, value)
        var = self.scale * self.scale
        return (-1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var)).exp() / (
            math.sqrt(2 * math.pi) * self.scale)

    def kl_divergence(self, other: Normal) -> Tensor:
        """KL(self || other) in closed form."""
        var_ratio = self.scale / other.scale
        var_ratio = var_ratio * var_ratio
        t1 = (self.loc - other.loc) / other.scale
        t1 = t1 * t1
        return 0.5 * var_ratio + 0.5 * (t1 - 1.0 - var_ratio.log())

