"""Gradient clipping: ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue.

A clip object maps a list of (param, grad) pairs to new pairs (the input gradients are never
modified); parameters with `need_clip=False` pass through unchanged. Optimizers apply it
through `grad_clip=`. The math is written with public ops, so it also records in static mode.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd import no_grad
from ..ops import math as _m
from ..ops.creation import full_like
from ..ops import reduction as _r
from ..tensor import Tensor

__all__ = ["ClipGradBase", "ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue"]


def _require_number(api: str, arg: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{api}: '{arg}' must be a number, got {type(value).__name__}")


def _positive(api: str, arg: str, value: Any) -> float:
    _require_number(api, arg, value)
    if not value > 0:
        raise ValueError(f"{api}: '{arg}' must be greater than 0, got {value}")
    return float(value)


def _check_pairs(api: str, params_grads: Any) -> list:
    if not isinstance(params_grads, (list, tuple)):
        raise TypeError(f"{api}: expected a list of (param, grad) pairs, got {type(params_grads).__name__}")
    for i, pair in enumerate(params_grads):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise TypeError(f"{api}: params_grads[{i}] must be a (param, grad) pair, got {type(pair).__name__}")
        if pair[1] is not None and not isinstance(pair[1], Tensor):
            raise TypeError(f"{api}: the gradient in params_grads[{i}] must be a Tensor or None, got "
                            f"{type(pair[1]).__name__}")
    return list(params_grads)


def _rescaled(params_grads: list, scale_of: Callable[[Tensor], Tensor]) -> list:
    """The pairs with a gradient, each g of a clipped parameter replaced by g * scale_of(g)."""
    out = []
    for p, g in params_grads:
        if g is None:
            continue
        if not getattr(p, "need_clip", True):
            out.append((p, g))
            continue
        out.append((p, _m.multiply(g, scale_of(g))))
    return out


def _sum_square(g: Tensor) -> Tensor:
    """sum(g * g) as a 0-D tensor, float16 gradients summed in float32 (as Paddle)."""
    if g.dtype.name == "float16":
        g = _m.cast(g, "float32")
    return _r.sum(_m.square(g))


class ClipGradBase:
    """Base of the gradient clippers: `clip(params_grads) -> new params_grads`."""

    def __call__(self, params_grads: list) -> list:
        with no_grad():
            return self._dygraph_clip(_check_pairs(type(self).__name__, params_grads))

    def _dygraph_clip(self, params_grads: list) -> list:
        raise NotImplementedError


class ClipGradByValue(ClipGradBase):
    """Clip every gradient element into [min, max] (min defaults to -max)."""

    def __init__(self, max: float, min: float | None = None):  # noqa: A002 - Paddle's names
        api = "ClipGradByValue"
        for arg, v in (("max", max), ("min", min)):
            if v is not None:
                _require_number(api, arg, v)
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if self.min > self.max:
            raise ValueError(f"{api}: 'min' ({self.min}) must not be greater than 'max' ({self.max})")

    def _dygraph_clip(self, params_grads):
        return [(p, g) if g is None or not getattr(p, "need_clip", True) else (p, _m.clip(g, self.min, self.max))
                for p, g in params_grads]

    def __str__(self) -> str:
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"


class ClipGradByNorm(ClipGradBase):
    """Rescale each gradient whose L2 norm exceeds clip_norm to norm clip_norm."""

    def __init__(self, clip_norm: float):
        self.clip_norm = _positive("ClipGradByNorm", "clip_norm", clip_norm)

    def _dygraph_clip(self, params_grads):
        def scale_of(g: Tensor) -> Tensor:
            norm = _m.sqrt(_sum_square(g))
            limit = full_like(norm, self.clip_norm)
            return _m.cast(_m.divide(limit, _m.maximum(norm, limit)), g.dtype)

        return _rescaled(params_grads, scale_of)

    def __str__(self) -> str:
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"


class ClipGradByGlobalNorm(ClipGradBase):
    """Rescale all gradients by clip_norm / max(global_norm, clip_norm), global_norm over all of them."""

    def __init__(self, clip_norm: float, group_name: str = "default_group", auto_skip_clip: bool = False):
        if not isinstance(group_name, str):
            raise TypeError(f"ClipGradByGlobalNorm: 'group_name' must be a str, got {type(group_name).__name__}")
        self.clip_norm = _positive("ClipGradByGlobalNorm", "clip_norm", clip_norm)
        self.group_name = group_name
        self.auto_skip_clip = bool(auto_skip_clip)

    def _dygraph_clip(self, params_grads):
        squares = [_sum_square(g) for p, g in params_grads
                   if g is not None and getattr(p, "need_clip", True)]
        if not squares:
            return params_grads
        total = squares[0]
        for s in squares[1:]:
            total = _m.add(total, s)
        global_norm = _m.sqrt(total)
        if self.auto_skip_clip and not float(global_norm) > self.clip_norm:
            return params_grads
        limit = full_like(global_norm, self.clip_norm)
        scale = _m.divide(limit, _m.maximum(global_norm, limit))
        return _rescaled(params_grads, lambda g: scale if scale.dtype == g.dtype else _m.cast(scale, g.dtype))

    def __str__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"
