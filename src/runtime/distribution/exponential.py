"""The Exponential and Laplace distributions (inverse-CDF sampling, so `rsample` is differentiable)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype, to_np_dtype
from ..ops.random import uniform
from ..ops.shape import broadcast_tensors
from ..tensor import Tensor
from .distribution import Distribution, ExponentialFamily, as_float_tensor, real_param

__all__ = ["Exponential", "Laplace"]


class Exponential(ExponentialFamily):
    """Density rate * exp(-rate * x) on x >= 0."""

    def __init__(self, rate: Any) -> None:
        if self._validate_args(rate):
            self.rate = rate
            self.dtype = rate.dtype
        else:
            [rate] = self._to_tensor(rate)
            self.dtype = get_default_dtype()
            self.rate = rate.astype(self.dtype)
        super().__init__(self.rate.shape)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        """-log(u) / rate for u uniform in (tiny, 1)."""
        u = uniform(list(self._extend_shape(shape)), min=float(np.finfo("float32").tiny), max=1.0,
                    dtype=self.rate.dtype)
        return -u.log() / self.rate

    def prob(self, value: Any) -> Tensor:
        value = as_float_tensor(value, self.rate)
        return self.rate * (-self.rate * value).exp()

    def log_prob(self, value: Any) -> Tensor:
        return self.rate.log() - self.rate * as_float_tensor(value, self.rate)

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    def cdf(self, value: Any) -> Tensor:
        return 1.0 - (-self.rate * as_float_tensor(value, self.rate)).exp()

    def icdf(self, value: Any) -> Tensor:
        return -(-as_float_tensor(value, self.rate)).log1p() / self.rate

    def kl_divergence(self, other: Exponential) -> Tensor:
        if not isinstance(other, Exponential):
            raise TypeError(f"Expected type of other is Exponential, but got {type(other)}")
        ratio = other.rate / self.rate
        return -ratio.log() + ratio - 1


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale)."""

    def __init__(self, loc: Any, scale: Any) -> None:
        loc = real_param("loc", loc)
        scale = real_param("scale", scale)
        if (scale.ndim > 0 or loc.ndim > 0) and loc.dtype == scale.dtype:
            loc, scale = broadcast_tensors([loc, scale])
        self.loc, self.scale = loc, scale
        super().__init__(self.loc.shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return 2 ** 0.5 * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def _validate_value(self, value: Any) -> tuple[Tensor, Tensor, Tensor]:
        value = as_float_tensor(value, self.scale)
        if self.scale.ndim > 0 or self.loc.ndim > 0 or value.ndim > 0:
            return tuple(broadcast_tensors([self.loc, self.scale, value]))
        return self.loc, self.scale, value

    def log_prob(self, value: Any) -> Tensor:
        loc, scale, value = self._validate_value(value)
        return -(2 * scale).log() - (value - loc).abs() / scale

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()

    def cdf(self, value: Any) -> Tensor:
        loc, scale, value = self._validate_value(value)
        return 0.5 - 0.5 * (value - loc).sign() * (-(value - loc).abs() / scale).expm1()

    def icdf(self, value: Any) -> Tensor:
        loc, scale, value = self._validate_value(value)
        term = value - 0.5
        return loc - scale * term.sign() * (-2 * term.abs()).log1p()

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        """loc - scale * sign(u) * log(1 - |u|) for u uniform in (-1, 1)."""
        eps = float(np.finfo(to_np_dtype(self.loc.dtype)).eps)
        u = uniform(list(self._extend_shape(shape)), min=float(np.nextafter(-1, 1)) + eps / 2, max=1.0 - eps / 2,
                    dtype=self.loc.dtype)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def kl_divergence(self, other: Laplace) -> Tensor:
        ratio = other.scale / self.scale
        t = (self.loc - other.loc).abs()
        return (self.scale * (-t / self.scale).exp() + t) / other.scale + ratio.log() - 1
