"""Symbols: the names a StatementIR computes with, each with the meta of the tensor it stands for.

A Symbol has no value; two symbols are the same or not (by name, within one SIR). Its `Meta`
(shape with -1 for a size known only at run time, NumPy dtype, stop_gradient) is what the op
registry's meta functions computed for it; guards and codegen read it, lowering declares it.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["Meta", "Symbol"]


class Meta(NamedTuple):
    """Shape (-1: unknown size), dtype and stop_gradient of the tensor a Symbol stands for."""

    shape: tuple[int, ...]
    dtype: np.dtype
    stop_gradient: bool = True

    @classmethod
    def make(cls, shape: Any, dtype: Any, stop_gradient: bool = True) -> "Meta":
        """A Meta from any int sequence (None or -1 for unknown sizes) and anything np.dtype takes."""
        return cls(tuple(-1 if d is None else int(d) for d in shape), np.dtype(dtype), bool(stop_gradient))

    @classmethod
    def from_tensor(cls, tensor: Any) -> "Meta":
        """The meta of an eager Tensor (or a static Variable)."""
        return cls.make(tensor.shape, _np_dtype(tensor), tensor.stop_gradient)

    def __str__(self) -> str:
        text = f"{self.dtype.name}[{', '.join(map(str, self.shape))}]"
        return text if self.stop_gradient else text + " requires_grad"


def _np_dtype(tensor: Any) -> np.dtype:
    dtype = tensor.dtype
    return np.dtype(getattr(dtype, "np_dtype", dtype))


class Symbol:
    """One value of a StatementIR: a name and the meta of the tensor it stands for."""

    __slots__ = ("name", "meta")

    def __init__(self, name: str, meta: Meta):
        self.name = name
        self.meta = meta

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Symbol) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name
