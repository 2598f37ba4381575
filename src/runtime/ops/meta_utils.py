"""Shared pieces of meta functions: broadcasting, dtype promotion, axes, argument checks.

Every error raised here names the op and the argument, and is the exception type Paddle
raises for that mistake (ValueError for shapes and values, TypeError for dtypes/types).
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from ..tensor import Tensor
from .registry import TensorSpec

__all__ = ["broadcast_shape", "promote", "normalize_axis", "normalize_axes", "reduce_shape",
           "require_float", "require_dtype_kind", "same", "binary_spec", "shape_str", "number_arg", "int_arg"]

_FLOAT_RANK = {np.dtype("float16"): 1, np.dtype("float32"): 2, np.dtype("float64"): 3}


def shape_str(shape: Iterable[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def broadcast_shape(op: str, a: Sequence[int], b: Sequence[int],
                    names: tuple[str, str] = ("x", "y")) -> tuple[int, ...]:
    """NumPy broadcasting of two shapes; -1 (unknown) dims broadcast with anything."""
    if a == b:
        return tuple(a)
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (da, db) in enumerate(zip(pa, pb)):
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        elif da == -1 or db == -1:
            out.append(max(da, db))
        else:
            raise ValueError(
                f"{op}: the shape of argument '{names[0]}' {shape_str(a)} and argument '{names[1]}' "
                f"{shape_str(b)} cannot be broadcast: dimension {i - n + len(a) if i >= n - len(a) else i} "
                f"is {da} vs {db} (expected equal sizes or one of them 1)")
    return tuple(out)


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """Result dtype of a binary op: equal -> same; float beats int beats bool; wider wins."""
    if a == b:
        return a
    ka, kb = a.kind, b.kind
    if ka == "c" or kb == "c":
        return np.result_type(a, b)
    if ka == "f" and kb == "f":
        return a if _FLOAT_RANK[a] >= _FLOAT_RANK[b] else b
    if ka == "f":
        return a
    if kb == "f":
        return b
    if ka == "b":
        return b
    if kb == "b":
        return a
    return np.promote_types(a, b)


def binary_spec(op: str, x: TensorSpec, y: TensorSpec) -> TensorSpec:
    """Broadcast shape and promoted dtype of a binary elementwise op."""
    return TensorSpec(broadcast_shape(op, x.shape, y.shape), promote(x.dtype, y.dtype))


def normalize_axis(op: str, axis: int, ndim: int, arg: str = "axis") -> int:
    """A single axis in [0, ndim), accepting negative axes; IndexError-free ValueError otherwise."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{op}: argument '{arg}' must be an int, got {type(axis).__name__}")
    lo = -max(ndim, 1)
    hi = max(ndim, 1) - 1
    if axis < lo or axis > hi:
        raise ValueError(f"{op}: argument '{arg}' = {axis} is out of range for a tensor with "
                         f"{ndim} dimension(s) (expected {lo} <= {arg} <= {hi})")
    return int(axis) % max(ndim, 1)


def normalize_axes(op: str, axis, ndim: int, arg: str = "axis") -> tuple[int, ...]:
    """None -> all axes; int or sequence -> sorted unique non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(sorted({normalize_axis(op, a, ndim, arg) for a in axis}))
        if len(axes) != len(axis):
            raise ValueError(f"{op}: argument '{arg}' has repeated axes {list(axis)}")
        return axes
    return (normalize_axis(op, axis, ndim, arg),)


def reduce_shape(shape: Sequence[int], axes: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def require_float(op: str, spec: TensorSpec, arg: str = "x") -> None:
    """Ops defined only on real floating tensors raise TypeError otherwise."""
    if spec.dtype.kind != "f":
        raise TypeError(f"{op}: argument '{arg}' must be a floating tensor (float16/float32/float64), "
                        f"got {spec.dtype.name}")


def require_dtype_kind(op: str, spec: TensorSpec, kinds: str, what: str, arg: str = "x") -> None:
    if spec.dtype.kind not in kinds:
        raise TypeError(f"{op}: argument '{arg}' must be {what}, got {spec.dtype.name}")


def same(x: TensorSpec, **_: object) -> TensorSpec:
    """Meta of an op whose output has its input's shape and dtype."""
    return x


def number_arg(op: str, arg: str, v: Any) -> float:
    """A Python/NumPy number (a one-element Tensor allowed) as a float, else TypeError naming the argument."""
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: argument '{arg}' must be a number, got {type(v).__name__}")
    return float(v)


def int_arg(op: str, arg: str, v: Any) -> int:
    """One int (a one-element int Tensor allowed), else TypeError naming the argument."""
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op}: argument '{arg}' must be an int, got {type(v).__name__}")
    return int(v)
