"""`paddle.tensor.math`: the runtime functions Paddle's module of that name holds (aliases), and
the private `_<op>_with_axis` elementwise ops that Paddle 1.x-style model code calls."""
from __future__ import annotations

from typing import Callable

from ..ops.indexing import take
from ..ops.linalg import addmm, baddbmm, inner, inverse, mm, outer
from ..ops.math import (abs, acos, add, add_n, asin, atan, cast, ceil, clip, cos, cosh, divide, erf, exp,
    expm1, floor, floor_divide, floor_mod, fmax, fmin, increment, isfinite, isinf, isnan, lerp, log, log10,
    log1p, log2, maximum, minimum, mod, multiply, neg, pow, reciprocal, remainder, round, rsqrt, scale,
    sigmoid, sign, sin, sinh, sqrt, square, subtract, tan, tanh, trunc)
from ..ops.reduction import (all, amax, amin, any, count_nonzero, cumprod, cumsum, logsumexp, max, min,
    nanmean, nansum, prod, sum)
from ..ops.shape import broadcast_shape, reshape
from ..tensor import Tensor

__all__ = ["abs", "acos", "add", "add_n", "addmm", "all", "amax", "amin", "any", "asin", "atan", "baddbmm",
           "broadcast_shape",
           "cast", "ceil", "clip", "cos", "cosh", "count_nonzero", "cumprod", "cumsum", "divide", "erf",
           "exp", "expm1", "floor", "floor_divide", "floor_mod", "fmax", "fmin", "increment", "inner",
           "inverse", "isfinite", "isinf", "isnan", "lerp", "log", "log10", "log1p", "log2", "logsumexp",
           "max", "maximum", "min", "minimum", "mm", "mod", "multiply", "nanmean", "nansum", "neg", "outer",
           "pow", "prod", "reciprocal", "remainder", "round", "rsqrt", "scale", "sigmoid", "sign", "sin",
           "sinh", "sqrt", "square", "subtract", "sum", "take", "tan", "tanh", "trunc"]


# this module's globals shadow builtins (abs, all, any, max, min, pow, round, sum): code below uses none of them
def _with_axis(op: Callable[[Tensor, Tensor], Tensor], x: Tensor, y: Tensor, axis: int) -> Tensor:
    """`op(x, y)` with Paddle 1.x's elementwise `axis`: the lower-rank operand's dimensions line up
    with the other's from dimension `axis` on (-1: plain NumPy broadcasting from the right)."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"argument 'axis' must be an int, got {type(axis).__name__}")
    if axis == -1 or x.ndim == y.ndim:
        return op(x, y)
    small, big = (y, x) if x.ndim > y.ndim else (x, y)
    if not 0 <= axis <= big.ndim - small.ndim:
        raise ValueError(f"argument 'axis' must be in [0, {big.ndim - small.ndim}] or -1 for shapes {x.shape} "
                         f"and {y.shape}, got {axis}")
    aligned = reshape(small, [1] * axis + small.shape + [1] * (big.ndim - small.ndim - axis))
    return op(x, aligned) if small is y else op(aligned, y)


def _add_with_axis(x: Tensor, y: Tensor, axis: int = -1, name: str | None = None) -> Tensor:
    """x + y, y aligned to x's dimensions from `axis` on (Paddle 1.x elementwise_add)."""
    return _with_axis(add, x, y, axis)


def _subtract_with_axis(x: Tensor, y: Tensor, axis: int = -1, name: str | None = None) -> Tensor:
    """x - y, y aligned to x's dimensions from `axis` on (Paddle 1.x elementwise_sub)."""
    return _with_axis(subtract, x, y, axis)


def _multiply_with_axis(x: Tensor, y: Tensor, axis: int = -1, name: str | None = None) -> Tensor:
    """x * y, y aligned to x's dimensions from `axis` on (Paddle 1.x elementwise_mul)."""
    return _with_axis(multiply, x, y, axis)


def _divide_with_axis(x: Tensor, y: Tensor, axis: int = -1, name: str | None = None) -> Tensor:
    """x / y, y aligned to x's dimensions from `axis` on (Paddle 1.x elementwise_div)."""
    return _with_axis(divide, x, y, axis)
