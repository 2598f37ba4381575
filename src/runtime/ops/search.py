"""Search and sort: nonzero, masked_select, topk, sort, argsort, unique (data-dependent shapes flagged)."""
from __future__ import annotations

__all__: list[str] = []
