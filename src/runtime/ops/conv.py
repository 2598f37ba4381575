"""Convolutions: conv1d, conv2d, conv2d_transpose (im2col + one matmul, no loops over pixels)."""
from __future__ import annotations

__all__: list[str] = []
