"""The Gamma family: Gamma, Dirichlet (normalised Gamma draws) and Beta (a two-category Dirichlet)."""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype
from ..ops.grad_mode import no_grad
from ..ops.random import standard_gamma
from ..ops.shape import broadcast_tensors, squeeze, stack
from ..ops.special import digamma, lgamma
from ..tensor import Tensor
from .distribution import ExponentialFamily, as_float_tensor, number_param

__all__ = ["Gamma", "Dirichlet", "Beta"]


class Gamma(ExponentialFamily):
    """Density rate^c x^(c-1) exp(-rate x) / Gamma(c) on x > 0 (c = concentration). Draws are not
    differentiable (Paddle's standard_gamma has no gradient)."""

    def __init__(self, concentration: Any, rate: Any) -> None:
        if self._validate_args(concentration, rate):
            self.concentration, self.rate = concentration, rate
            self.dtype = concentration.dtype
        else:
            self.dtype = get_default_dtype()
            self.concentration, self.rate = (t.astype(self.dtype) for t in self._to_tensor(concentration, rate))
        super().__init__(self.concentration.shape)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def prob(self, value: Any) -> Tensor:
        return self.log_prob(value).exp()

    def log_prob(self, value: Any) -> Tensor:
        value = as_float_tensor(value, self.rate)
        return (self.concentration * self.rate.log() + (self.concentration - 1) * value.log() - self.rate * value
                - lgamma(self.concentration))

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        shape = list(self._extend_shape(shape))
        return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def kl_divergence(self, other: Gamma) -> Tensor:
        if not isinstance(other, Gamma):
            raise TypeError(f"Expected type of other is Gamma, but got {type(other)}")
        c, r, oc, orate = self.concentration, self.rate, other.concentration, other.rate
        return (oc * (r / orate).log() + lgamma(oc) - lgamma(c) + (c - oc) * digamma(c)
                + (orate - r) * (c / r))


class Dirichlet(ExponentialFamily):
    """A point of the probability simplex over the last axis of `concentration`."""

    def __init__(self, concentration: Tensor) -> None:
        if concentration.ndim < 1 or int(np.prod(concentration.shape)) == 0:
            raise ValueError("`concentration` parameter must be at least one dimensional")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:])

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """Gamma(concentration) draws normalised over the last axis (not differentiable)."""
        with no_grad():
            g = standard_gamma(self.concentration.expand(list(self._extend_shape(shape))))
            return g / g.sum(-1, keepdim=True)

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        c = self.concentration
        return (value.log() * (c - 1.0)).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1)
        k = c.shape[-1]
        return lgamma(c).sum(-1) - lgamma(c0) - (k - c0) * digamma(c0) - ((c - 1.0) * digamma(c)).sum(-1)


class Beta(ExponentialFamily):
    """Density x^(alpha-1) (1-x)^(beta-1) / B(alpha, beta) on (0, 1)."""

    def __init__(self, alpha: Any, beta: Any) -> None:
        alpha = number_param(alpha) if isinstance(alpha, numbers.Real) else alpha
        beta = number_param(beta) if isinstance(beta, numbers.Real) else beta
        self.alpha, self.beta = broadcast_tensors([alpha, beta])
        self._dirichlet = Dirichlet(stack([self.alpha, self.beta], -1))
        super().__init__(self._dirichlet.batch_shape)

    @property
    def mean(self) -> Tensor:
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self) -> Tensor:
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total.pow(2) * (total + 1))

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        value = as_float_tensor(value, self.alpha)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """Draws of shape `shape + batch_shape`, a trailing axis of size 1 squeezed away as Paddle does."""
        x = self._dirichlet.sample(shape)[..., 0]
        return squeeze(x, axis=-1) if x.ndim else x

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()
