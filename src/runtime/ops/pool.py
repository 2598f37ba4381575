"""Pooling: max_pool2d, avg_pool2d, adaptive_avg_pool2d and 1-D variants (strided views, no pixel loops)."""
from __future__ import annotations

__all__: list[str] = []
