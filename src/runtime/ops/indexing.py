"""Tensor __getitem__ / __setitem__ and the gather/scatter family: gather, gather_nd, index_select, scatter, masked_fill, take_along_axis, put_along_axis."""
from __future__ import annotations

__all__: list[str] = []
