"""Padding: pad (constant, reflect, replicate, circular)."""
from __future__ import annotations

__all__: list[str] = []
