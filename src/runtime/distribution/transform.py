"""Transforms y = f(x) with log|det J| for TransformedDistribution: the elementwise ones (Affine, Exp, Sigmoid,
Tanh, Power, Abs), those acting on a last axis (Softmax, StickBreaking) or on whole events (Reshape), and the
combinators Chain, Independent and Stack.

Each has Paddle's event ranks: `_domain_event_rank` axes of x (`_codomain_event_rank` of y) make one event, over
which a log-det-Jacobian is already summed."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..ops.activation import log_sigmoid, softplus
from ..ops.creation import arange, zeros
from ..ops.math import sigmoid, tanh
from ..ops.padding import pad
from ..ops.shape import reshape, stack, unstack
from ..tensor import Tensor
from .distribution import Distribution, sum_rightmost

__all__ = ["Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "IndependentTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform", "TanhTransform"]


class Transform:
    """Base of the transforms; the default is elementwise and injective (event rank 0, shapes unchanged)."""

    _domain_event_rank = 0
    _codomain_event_rank = 0
    _injective = True

    def __call__(self, input: Any) -> Any:  # noqa: A002 - Paddle's argument name
        """A distribution gives the transformed distribution, a transform the chain [self, input] (as Paddle's:
        self applies first), a tensor f(x)."""
        from .transformed_distribution import TransformedDistribution  # noqa: PLC0415 - it builds on this module
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
        if not self._injective:
            raise NotImplementedError("forward_log_det_jacobian can't be implemented for non-injective transforms.")
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
        self._injective = all(t._injective for t in self.transforms)
        if self.transforms:  # the event ranks the whole chain needs, as Paddle's domain/codomain compute them
            rank = self.transforms[-1]._codomain_event_rank
            for t in reversed(self.transforms):
                rank = max(rank - (t._codomain_event_rank - t._domain_event_rank), t._domain_event_rank)
            self._domain_event_rank = rank
            rank = self.transforms[0]._domain_event_rank
            for t in self.transforms:
                rank = max(rank + t._codomain_event_rank - t._domain_event_rank, t._codomain_event_rank)
            self._codomain_event_rank = rank

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
        rank = self._domain_event_rank
        for t in self.transforms:
            total = total + sum_rightmost(t.forward_log_det_jacobian(x), rank - t._domain_event_rank)
            x = t.forward(x)
            rank += t._codomain_event_rank - t._domain_event_rank
        return total

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        for t in self.transforms:
            shape = t.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        return tuple(shape)


class IndependentTransform(Transform):
    """`base` with its last `reinterpreted_batch_rank` batch axes made event axes (its log-det summed over them)."""

    def __init__(self, base: Transform, reinterpreted_batch_rank: int) -> None:
        if not isinstance(base, Transform):
            raise TypeError(f"Expected 'base' is Transform type, but get {type(base)}")
        if reinterpreted_batch_rank <= 0:
            raise ValueError("Expected 'reinterpreted_batch_rank' is grater than zero, but got "
                             f"{reinterpreted_batch_rank}")
        self._base, self._reinterpreted_batch_rank = base, reinterpreted_batch_rank
        self._injective = base._injective
        self._domain_event_rank = base._domain_event_rank + reinterpreted_batch_rank
        self._codomain_event_rank = base._codomain_event_rank + reinterpreted_batch_rank

    def _forward(self, x: Tensor) -> Tensor:
        return self._base.forward(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self._base.inverse(y)

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return sum_rightmost(self._base.forward_log_det_jacobian(x), self._reinterpreted_batch_rank)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._base.forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._base.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshape each event from `in_event_shape` to `out_event_shape` (log-det 0)."""

    def __init__(self, in_event_shape: Sequence[int], out_event_shape: Sequence[int]) -> None:
        if not isinstance(in_event_shape, Sequence) or not isinstance(out_event_shape, Sequence):
            raise TypeError("Expected type of 'in_event_shape' and 'out_event_shape' is Sequence[int], but got "
                            f"'in_event_shape': {in_event_shape}, 'out_event_shape': {out_event_shape}")
        if math.prod(in_event_shape) != math.prod(out_event_shape):
            raise ValueError(f"The numel of 'in_event_shape' should be 'out_event_shape', but got "
                             f"{math.prod(in_event_shape)}!={math.prod(out_event_shape)}")
        self.in_event_shape, self.out_event_shape = tuple(in_event_shape), tuple(out_event_shape)
        self._domain_event_rank, self._codomain_event_rank = len(self.in_event_shape), len(self.out_event_shape)

    def _forward(self, x: Tensor) -> Tensor:
        return reshape(x, list(x.shape[:x.ndim - len(self.in_event_shape)]) + list(self.out_event_shape))

    def _inverse(self, y: Tensor) -> Tensor:
        return reshape(y, list(y.shape[:y.ndim - len(self.out_event_shape)]) + list(self.in_event_shape))

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return zeros(x.shape[:x.ndim - len(self.in_event_shape)], dtype=x.dtype)

    @staticmethod
    def _swap(shape: Sequence[int], old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < len(old) or tuple(shape[len(shape) - len(old):]) != old:
            raise ValueError(f"Event shape mismatch, expected: {old}, but got {tuple(shape)}")
        return tuple(shape[:len(shape) - len(old)]) + new

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._swap(shape, self.in_event_shape, self.out_event_shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._swap(shape, self.out_event_shape, self.in_event_shape)


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last axis; not injective (no log-det-Jacobian), inverse log(y) as Paddle's."""

    _domain_event_rank = 1
    _codomain_event_rank = 1
    _injective = False

    def _forward(self, x: Tensor) -> Tensor:
        e = (x - x.max(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()


class StickBreakingTransform(Transform):
    """R^K onto the open simplex in R^(K+1) by stick breaking (as Paddle's, offsets log(K + 1 - k))."""

    _domain_event_rank = 1
    _codomain_event_rank = 1

    @staticmethod
    def _log_offset(k: int, dtype: Any) -> Tensor:
        return (float(k + 1) - arange(1, k + 1, dtype=dtype)).log()

    def _forward(self, x: Tensor) -> Tensor:
        z = sigmoid(x - self._log_offset(x.shape[-1], x.dtype))
        lead = [0] * 2 * (x.ndim - 1)
        return pad(z, lead + [0, 1], value=1.0) * pad((1 - z).cumprod(-1), lead + [1, 0], value=1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        crop = y[..., :-1]
        return crop.log() - (1 - crop.cumsum(-1)).log() + self._log_offset(crop.shape[-1], y.dtype)

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        y = self.forward(x)
        shifted = x - self._log_offset(x.shape[-1], x.dtype)
        return (-shifted + log_sigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return (*shape[:-1], shape[-1] + 1)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return (*shape[:-1], shape[-1] - 1)


class StackTransform(Transform):
    """`transforms[i]` applied to slice i along `axis`."""

    def __init__(self, transforms: Sequence[Transform], axis: int = 0) -> None:
        if not transforms or not isinstance(transforms, Sequence):
            raise TypeError(f"Expected 'transforms' is Sequence[Transform], but got {type(transforms)}.")
        if not all(isinstance(t, Transform) for t in transforms):
            raise TypeError("Expected all element in transforms is Transform Type.")
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"Expected 'axis' is int, but got{type(axis)}.")
        self.transforms, self.axis = list(transforms), axis
        self._injective = all(t._injective for t in self.transforms)
        self._domain_event_rank = max(t._domain_event_rank for t in self.transforms)
        self._codomain_event_rank = max(t._codomain_event_rank for t in self.transforms)

    def _each(self, v: Tensor, method: str) -> Tensor:
        if not -v.ndim <= self.axis < v.ndim:
            raise ValueError(f"Input dimensions {v.ndim} should be grater than stack transform axis {self.axis}.")
        if v.shape[self.axis] != len(self.transforms):
            raise ValueError(f"Input size along {self.axis} should be equal to the length of transforms.")
        return stack([getattr(t, method)(part) for part, t in zip(unstack(v, self.axis), self.transforms)], self.axis)

    def _forward(self, x: Tensor) -> Tensor:
        return self._each(x, "forward")

    def _inverse(self, y: Tensor) -> Tensor:
        return self._each(y, "inverse")

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return self._each(x, "forward_log_det_jacobian")
