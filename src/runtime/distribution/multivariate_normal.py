"""The multivariate normal N(loc, Sigma), given by exactly one of a covariance matrix, a precision matrix
or the lower Cholesky factor `scale_tril` of the covariance."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype
from ..ops.creation import eye
from ..ops.linalg import cholesky, inverse, matmul, solve
from ..ops.random import normal
from ..tensor import Tensor, to_tensor
from .distribution import Distribution

__all__ = ["MultivariateNormal"]


def _diagonal(m: Tensor) -> Tensor:
    return (m * eye(m.shape[-1], dtype=m.dtype)).sum(-1)


def _mahalanobis(scale_tril: Tensor, x: Tensor) -> Tensor:
    """|L^-1 x|^2 over the last axis, L broadcast over x's batch axes."""
    lower = scale_tril.expand(list(x.shape[:-1]) + list(scale_tril.shape[-2:]))
    return solve(lower, x.unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """Draws loc + L eps for standard normal eps (L the Cholesky factor), so `rsample` is differentiable."""

    def __init__(self, loc: Any, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None) -> None:
        self.dtype = get_default_dtype()
        if isinstance(loc, (float, int)) and not isinstance(loc, bool):
            loc = to_tensor(np.array([loc], dtype=self.dtype))
        else:
            self.dtype = loc.dtype
        if loc.ndim < 1:
            loc = loc.reshape([1])
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = given[0].astype(self.dtype)
        if matrix.ndim < 2:
            raise ValueError("the matrix argument must be at least two-dimensional, with optional leading batch "
                             "dimensions")
        batch_shape = list(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        full = matrix.expand(batch_shape + list(matrix.shape[-2:]))
        self.covariance_matrix = full if covariance_matrix is not None else None
        self.precision_matrix = full if precision_matrix is not None else None
        self.scale_tril = full if scale_tril is not None else None
        self.loc = loc.expand(batch_shape + [loc.shape[-1]])
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = matrix
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = cholesky(inverse(matrix))
        super().__init__(batch_shape, self.loc.shape[-1:])

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.square().sum(-1).expand(list(self.batch_shape + self.event_shape))

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        eps = normal(0.0, 1.0, list(self._extend_shape(shape))).astype(self.dtype)
        return self.loc + matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return _diagonal(self._unbroadcasted_scale_tril).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        diff = value.astype(self.dtype) - self.loc
        m = _mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def entropy(self) -> Tensor:
        h = 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if not self.batch_shape else h.expand(list(self.batch_shape))

    def kl_divergence(self, other: MultivariateNormal) -> Tensor:
        if self.batch_shape != other.batch_shape and self.event_shape != other.event_shape:
            raise ValueError("KL divergence of two Multivariate Normal distributions should share the same "
                             "`batch_shape` and `event_shape`.")
        l1, l2 = self._unbroadcasted_scale_tril, other._unbroadcasted_scale_tril
        cov1 = matmul(l1, l1, transpose_y=True)
        cov2 = matmul(l2, l2, transpose_y=True)
        expectation = _diagonal(solve(cov2, cov1)).sum(-1) + _mahalanobis(l2, self.loc - other.loc)
        return other._half_log_det() - self._half_log_det() + 0.5 * (expectation - self.event_shape[0])
