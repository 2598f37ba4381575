"""The Gamma family: Gamma, Chi2, Dirichlet (normalised Gamma draws), Beta (a two-category Dirichlet), and
StudentT (a normal over the square root of a Chi2)."""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype
from ..ops.creation import full_like
from ..ops.grad_mode import no_grad
from ..ops.math import where
from ..ops.random import normal, standard_gamma
from ..ops.shape import broadcast_tensors, squeeze, stack
from ..ops.special import digamma, lgamma
from ..tensor import Tensor, to_tensor
from .distribution import Distribution, ExponentialFamily, as_float_tensor, number_param

__all__ = ["Gamma", "Chi2", "Dirichlet", "Beta", "StudentT"]


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


class Chi2(Gamma):
    """Chi-squared with `df` degrees of freedom: Gamma(df / 2, 1 / 2)."""

    def __init__(self, df: Any) -> None:
        if self._validate_args(df):
            self.df = df
        else:
            [df] = self._to_tensor(df)
            self.df = df.astype(get_default_dtype())
        if not bool((self.df > 0).all()):
            raise ValueError("The arg of `df` must be positive.")
        super().__init__(self.df * 0.5, full_like(self.df, 0.5))


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`."""

    def __init__(self, df: Any, loc: Any, scale: Any, name: str | None = None) -> None:
        self.name = name if name is not None else "StudentT"
        self.df, self.loc, self.scale = _broadcast_all(df, loc, scale)
        if not bool((self.df >= 0.0).all()):
            raise ValueError("Every element of input parameter `df` should be nonnegative.")
        if not bool((self.scale >= 0.0).all()):
            raise ValueError("Every element of input parameter `scale` should be nonnegative.")
        super().__init__(self.df.shape)
        self._chi2 = Gamma(0.5 * self.df, full_like(self.df, 0.5))

    @property
    def mean(self) -> Tensor:
        return where(self.df > 1.0, self.loc, full_like(self.loc, math.nan))

    @property
    def variance(self) -> Tensor:
        df = self.df.detach()
        var = where(df > 2.0, self.scale.pow(2) * df / (df - 2), full_like(df, math.nan))
        return where((df <= 2.0).logical_and(df > 1.0), full_like(var, math.inf), var)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """loc + scale * z / sqrt(chi2 / df), z standard normal, chi2 ~ Chi2(df)."""
        z = normal(0.0, 1.0, list(self._extend_shape(shape)))
        x = z * (self._chi2.sample(shape) / self.df).rsqrt()
        return self.loc + self.scale * x

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._check_values_dtype_in_probs(self.df, value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df)
             - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()


def _broadcast_all(*args: Any) -> list[Tensor]:
    """Numbers as tensors of the first tensor argument's dtype (else the default), all broadcast together."""
    for a in args:
        if not isinstance(a, (float, list, tuple, np.ndarray, Tensor)):
            raise TypeError(f"Type of input args must be float, list, tuple, numpy.ndarray or Tensor, but received "
                            f"type {type(a)}")
    dtype = next((a.dtype for a in args if isinstance(a, Tensor)), get_default_dtype())
    return broadcast_tensors([a if isinstance(a, Tensor) else to_tensor(np.asarray(a), dtype=dtype) for a in args])
