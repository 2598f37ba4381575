"""Distance layers: PairwiseDistance (`F.pairwise_distance` with its settings held)."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .layers import Layer

__all__ = ["PairwiseDistance"]


class PairwiseDistance(Layer):
    """The p-norm of x - y + epsilon over the last axis."""

    def __init__(self, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False, name: str | None = None):
        super().__init__()
        self.p, self.epsilon, self.keepdim = p, epsilon, keepdim

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return F.pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self) -> str:
        return f"p={self.p}, epsilon={self.epsilon}, keepdim={self.keepdim}"
