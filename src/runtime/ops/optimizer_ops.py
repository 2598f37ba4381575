"""Optimizer update ops (in-place): sgd, momentum, adam, adamw, rmsprop. Eager optimizers and static minimize share them."""
from __future__ import annotations

__all__: list[str] = []
