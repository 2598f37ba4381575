"""Bijective transforms y = f(x) with log|det J| for TransformedDistribution: the elementwise ones
(Affine, Exp, Sigmoid, Tanh, Power, Abs) and Chain, which composes them."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..ops.activation import softplus
from ..ops.math import sigmoid, tanh
from ..tensor import Tensor

__all__ = ["Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "PowerTransform",
           "SigmoidTransform", "TanhTransform"]


class Transform:
    """Base of the elementwise bijections (event rank 0: shapes pass through unchanged)."""

    _domain_event_rank = 0
    _codomain_event_rank = 0

    def __call__(self, input: Any) -> Any:  # noqa: A002 - Paddle's argument name
        """A distribution gives the transformed distribution, a transform the chain [self, input] (as Paddle's:
        self applies first), a tensor f(x)."""
        from .distribution import Distribution  # noqa: PLC0415 - both modules build on each other
        from .transformed_distribution import TransformedDistribution  # noqa: PLC0415
        if isinstance(input, Distribution):
            return TransformedDistribution(input, [self])
        if isinstance(input, Transform):
            return ChainTransform([self, input])
        return self.forward(input)

    def forward(self, x: Tensor) -> Tensor:
        return self._forward(x)

    def inverse(self, y: Tensor) -> Tensor:
        return self._inverse(y)

    def forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return self._forward_log_det_jacobian(x)

    def inverse_log_det_jacobian(self, y: Tensor) -> Tensor:
        return -self._forward_log_det_jacobian(self._inverse(y))

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(shape)

    def _forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        raise NotImplementedError


class AffineTransform(Transform):
    """y = loc + scale * x."""

    def __init__(self, loc: Tensor, scale: Tensor) -> None:
        if not isinstance(loc, Tensor) or not isinstance(scale, Tensor):
            raise TypeError("Expected 'loc' and 'scale' to be Tensors")
        self.loc, self.scale = loc, scale

    def _forward(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return self.scale.abs().log() + x * 0.0


class ExpTransform(Transform):
    """y = exp(x)."""

    def _forward(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return x


class SigmoidTransform(Transform):
    """y = sigmoid(x)."""

    def _forward(self, x: Tensor) -> Tensor:
        return sigmoid(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log() - (-y).log1p()

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x)."""

    def _forward(self, x: Tensor) -> Tensor:
        return tanh(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return 0.5 * (y.log1p() - (-y).log1p())

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class PowerTransform(Transform):
    """y = x ** power (x > 0)."""

    def __init__(self, power: Tensor) -> None:
        if not isinstance(power, Tensor):
            raise TypeError(f"Expected 'power' is a tensor, but got {type(power)}")
        self.power = power

    def _forward(self, x: Tensor) -> Tensor:
        return x.pow(self.power)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.power)

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return (self.power * x.pow(self.power - 1)).abs().log()


class AbsTransform(Transform):
    """y = |x|: not injective, so `inverse` gives (-y, y) as Paddle's does."""

    def _forward(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> tuple[Tensor, Tensor]:
        return -y, y

    def inverse_log_det_jacobian(self, y: Tensor) -> tuple[Tensor, Tensor]:
        zero = y * 0.0
        return zero, zero

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        raise NotImplementedError("AbsTransform is not injective: it has no forward log-det-Jacobian")


class ChainTransform(Transform):
    """The composition: forward applies `transforms` in order, inverse in reverse."""

    def __init__(self, transforms: Sequence[Transform]) -> None:
        if not isinstance(transforms, Sequence) or not all(isinstance(t, Transform) for t in transforms):
            raise TypeError("Type of transforms is invalid, expected Sequence[Transform]")
        self.transforms = list(transforms)

    def _forward(self, x: Tensor) -> Tensor:
        for t in self.transforms:
            x = t.forward(x)
        return x

    def _inverse(self, y: Tensor) -> Tensor:
        for t in reversed(self.transforms):
            y = t.inverse(y)
        return y

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        total = 0.0
        for t in self.transforms:
            total = total + t.forward_log_det_jacobian(x)
            x = t.forward(x)
        return total
