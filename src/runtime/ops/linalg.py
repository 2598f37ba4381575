"""Linear algebra: matmul (transpose_x/transpose_y), bmm, dot, t, einsum, mm, norm."""
from __future__ import annotations

__all__: list[str] = []
