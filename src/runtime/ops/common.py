"""Common nn functions: linear, dropout, embedding, one_hot, cosine_similarity."""
from __future__ import annotations

__all__: list[str] = []
