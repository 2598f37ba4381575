"""`paddle.regularizer`: L1Decay and L2Decay, added to a parameter's gradient before its update."""
from __future__ import annotations

from typing import Any

__all__ = ["L1Decay", "L2Decay", "WeightDecayRegularizer"]


class WeightDecayRegularizer:
    """Base of the regularizers: `grad + coeff * d(penalty)/d(param)`, computed out of place."""

    def __init__(self, coeff: float = 0.0):
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)):
            try:
                coeff = float(coeff)  # a one-element Tensor or NumPy scalar
            except (TypeError, ValueError):
                raise TypeError(f"{type(self).__name__}: coeff must be a number, got "
                                f"{type(coeff).__name__}") from None
        self._coeff = float(coeff)

    @property
    def coeff(self) -> float:
        return self._coeff

    def _regularized(self, xp: Any, param, grad):
        """The regularised gradient array for parameter array `param` (neither is modified)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}, coeff={self._coeff:f}"

    __str__ = __repr__


class L2Decay(WeightDecayRegularizer):
    """L2 weight decay: grad + coeff * param."""

    def _regularized(self, xp, param, grad):
        out = xp.multiply(param, self._coeff, dtype=grad.dtype)
        out += grad
        return out


class L1Decay(WeightDecayRegularizer):
    """L1 weight decay: grad + coeff * sign(param)."""

    def _regularized(self, xp, param, grad):
        out = xp.sign(param).astype(grad.dtype, copy=False)
        out *= self._coeff
        out += grad
        return out
