"""Distributions of transformed draws: TransformedDistribution, and the two Paddle builds on it,
LogNormal (exp of a Normal) and Gumbel (loc - scale * log(-log u) of a Uniform u)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ops.creation import full_like
from ..ops.grad_mode import no_grad
from ..ops.shape import broadcast_tensors
from ..tensor import Tensor
from .distribution import Distribution, real_param, sum_rightmost
from .normal import Normal
from .transform import ChainTransform, ExpTransform, Transform
from .uniform import Uniform

__all__ = ["TransformedDistribution", "LogNormal", "Gumbel"]


class TransformedDistribution(Distribution):
    """Draws of `base` passed through `transforms` in order; log_prob adds the inverse log-det-Jacobians."""

    def __init__(self, base: Distribution, transforms: Sequence[Transform]) -> None:
        if not isinstance(base, Distribution):
            raise TypeError(f"Expected type of 'base' is Distribution, but got {type(base)}.")
        if not isinstance(transforms, Sequence):
            raise TypeError("Expected type of 'transforms' is Sequence[Transform] or Chain, but got "
                            f"{type(transforms)}.")
        if not all(isinstance(t, Transform) for t in transforms):
            raise TypeError("All element of transforms must be Transform type.")
        self._base = base
        self._transforms = list(transforms)
        if not transforms:
            super().__init__(base.batch_shape, base.event_shape)
            return
        chain = ChainTransform(transforms)
        shape = tuple(base.batch_shape) + tuple(base.event_shape)
        if len(shape) < chain._domain_event_rank:
            raise ValueError(f"'base' needs to have shape with size at least {chain._domain_event_rank}, bug got "
                             f"{len(shape)}.")
        out_shape = chain.forward_shape(shape)
        event_rank = chain._codomain_event_rank + max(len(base.event_shape) - chain._domain_event_rank, 0)
        super().__init__(out_shape[:len(out_shape) - event_rank], out_shape[len(out_shape) - event_rank:])

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        x = self._base.sample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        x = self._base.rsample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        """The base's log_prob at the inverse image, minus each transform's log-det-Jacobian, each summed over
        the event axes it does not cover itself."""
        log_prob = 0.0
        y = value
        event_rank = len(self.event_shape)
        for t in reversed(self._transforms):
            x = t.inverse(y)
            event_rank += t._domain_event_rank - t._codomain_event_rank
            log_prob = log_prob - sum_rightmost(t.forward_log_det_jacobian(x), event_rank - t._domain_event_rank)
            y = x
        return log_prob + sum_rightmost(self._base.log_prob(y), event_rank - len(self._base.event_shape))


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(loc, scale)."""

    def __init__(self, loc: Any, scale: Any) -> None:
        self._base = Normal(loc=loc, scale=scale)
        self.loc, self.scale = self._base.loc, self._base.scale
        super().__init__(self._base, [ExpTransform()])

    @property
    def mean(self) -> Tensor:
        return (self._base.mean + self._base.variance / 2).exp()

    @property
    def variance(self) -> Tensor:
        return self._base.variance.expm1() * (2 * self._base.mean + self._base.variance).exp()

    def entropy(self) -> Tensor:
        return self._base.entropy() + self._base.mean

    def probs(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def kl_divergence(self, other: LogNormal) -> Tensor:
        return self._base.kl_divergence(other._base)


class Gumbel(TransformedDistribution):
    """Density exp(-(z + exp(-z))) / scale, z = (x - loc) / scale."""

    def __init__(self, loc: Any, scale: Any) -> None:
        loc = real_param("loc", loc)
        scale = real_param("scale", scale)
        self.loc, self.scale = broadcast_tensors([loc, scale]) if loc.shape != scale.shape else (loc, scale)
        finfo = np.finfo("float32")
        self.base_dist = Uniform(full_like(self.loc, float(finfo.tiny)), full_like(self.loc, float(1 - finfo.eps)))
        self.transforms = ()
        super().__init__(self.base_dist, self.transforms)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * float(np.euler_gamma)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (math.pi * math.pi) / 6

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def prob(self, value: Tensor) -> Tensor:
        y = (self.loc - value.astype(self.loc.dtype)) / self.scale.astype(self.loc.dtype)
        return (y - y.exp()).exp() / self.scale.astype(y.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        return self.prob(value).log()

    def cdf(self, value: Tensor) -> Tensor:
        return (-(-(value - self.loc.astype(value.dtype)) / self.scale.astype(value.dtype)).exp()).exp()

    def entropy(self) -> Tensor:
        return self.scale.log() + 1 + float(np.euler_gamma)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        """loc - scale * log(-log u) for u ~ Uniform(tiny, 1 - eps)."""
        return self.loc - self.scale * (-self._base.sample(shape).log()).log()
