"""Activations: relu, relu6, leaky_relu, gelu, silu, elu, softmax, log_softmax and friends."""
from __future__ import annotations

__all__: list[str] = []
