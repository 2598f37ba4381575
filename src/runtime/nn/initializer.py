"""Parameter initialisers with Paddle's names, defaults and fan rules.

An initialiser is called on a parameter and fills it in place (`init(param)`); layers use
`_generate(shape, dtype)` to build a new parameter's values. Values always come from public
creation/random ops (full, uniform, randn, assign), so a static program can record them as
startup ops and `paddle.seed` makes them reproducible.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..ops.creation import assign, diag, full
from ..ops.linalg import qr
from ..ops.math import cast, clip, logical_or, scale, sign, where
from ..ops.random import randn, uniform
from ..ops.shape import reshape, transpose
from ..tensor import Tensor

__all__ = ["Initializer", "Constant", "Uniform", "Normal", "TruncatedNormal", "XavierUniform",
           "XavierNormal", "KaimingUniform", "KaimingNormal", "Assign", "Orthogonal", "calculate_gain",
           "set_global_initializer"]

_TRUNCATED_MAX_ROUNDS = 100


def _compute_fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) as Paddle: [in, out] for a Linear weight, [out, in, *k] for a conv filter."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (Kaiming/Xavier scaling)."""
    if param is None:
        param = 0.01
    elif isinstance(param, bool) or not isinstance(param, (int, float)):
        raise TypeError(f"calculate_gain: argument 'param' must be a number, got {type(param).__name__}")
    gains = {"sigmoid": 1.0, "linear": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
             "conv1d_transpose": 1.0, "conv2d_transpose": 1.0, "conv3d_transpose": 1.0,
             "conv_transpose1d": 1.0, "conv_transpose2d": 1.0, "conv_transpose3d": 1.0,
             "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "leaky_relu": math.sqrt(2.0 / (1 + float(param) ** 2)),
             "selu": 3.0 / 4}
    if nonlinearity not in gains:
        raise ValueError(f"calculate_gain: nonlinearity {nonlinearity!r} is not supported; "
                         f"expected one of {', '.join(sorted(gains))}")
    return gains[nonlinearity]


def _uniform(shape: tuple, dtype: np.dtype, low: float, high: float) -> Tensor:
    return uniform(list(shape), dtype=dtype, min=low, max=high)


def _normal(shape: tuple, dtype: np.dtype, mean: float, std: float) -> Tensor:
    z = randn(list(shape), dtype=dtype)
    return z if (mean, std) == (0.0, 1.0) else scale(z, scale=std, bias=mean)


class Initializer:
    """Base class: `init(param)` fills `param` in place and returns it."""

    def __call__(self, param: Tensor, block: Any = None) -> Tensor:
        if not isinstance(param, Tensor):
            raise TypeError(f"{type(self).__name__}: expected a Parameter or Tensor to initialise, "
                            f"got {type(param).__name__}")
        param.set_value(self._generate(tuple(param.shape), param._data.dtype))
        return param

    def _generate(self, shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
        """A new tensor of `shape` and `dtype` holding this initialiser's values."""
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


class Constant(Initializer):
    """Every element = value."""

    def __init__(self, value: float = 0.0):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"Constant: argument 'value' must be a number, got {type(value).__name__}")
        self._value = value

    def _generate(self, shape, dtype):
        return full(list(shape), self._value, dtype=dtype)


class Uniform(Initializer):
    """U(low, high)."""

    def __init__(self, low: float = -1.0, high: float = 1.0, name: str | None = None):
        if low > high:
            raise ValueError(f"Uniform: argument 'low' ({low}) must not exceed argument 'high' ({high})")
        self._low = float(low)
        self._high = float(high)

    def _generate(self, shape, dtype):
        return _uniform(shape, dtype, self._low, self._high)


class Normal(Initializer):
    """N(mean, std^2)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, name: str | None = None):
        if std < 0:
            raise ValueError(f"Normal: argument 'std' must be non-negative, got {std}")
        self._mean = float(mean)
        self._std = float(std)

    def _generate(self, shape, dtype):
        return _normal(shape, dtype, self._mean, self._std)


class TruncatedNormal(Initializer):
    """N(mean, std^2) restricted to [a, b] (redrawn outside, as Paddle's truncated_gaussian_random)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                 name: str | None = None):
        if std <= 0:
            raise ValueError(f"TruncatedNormal: argument 'std' must be positive, got {std}")
        if a >= b:
            raise ValueError(f"TruncatedNormal: argument 'a' ({a}) must be less than argument 'b' ({b})")
        self._mean = float(mean)
        self._std = float(std)
        self._a = float(a)
        self._b = float(b)

    def _generate(self, shape, dtype):
        lo, hi = (self._a - self._mean) / self._std, (self._b - self._mean) / self._std
        z = randn(list(shape), dtype=dtype)
        # rejection sampling: redraw the elements outside [lo, hi] (exact in distribution)
        for _ in range(_TRUNCATED_MAX_ROUNDS):
            outside = logical_or(z < lo, z > hi)
            if not bool(outside._data.any()):
                break
            z = where(outside, randn(list(shape), dtype=dtype), z)
        return scale(clip(z, lo, hi), scale=self._std, bias=self._mean)


class _Xavier(Initializer):
    def __init__(self, fan_in: float | None = None, fan_out: float | None = None, gain: float = 1.0,
                 name: str | None = None):
        self._fan_in = fan_in
        self._fan_out = fan_out
        self._gain = float(gain)

    def _fans(self, shape) -> float:
        f_in, f_out = _compute_fans(shape)
        fan_in = f_in if self._fan_in is None else self._fan_in
        fan_out = f_out if self._fan_out is None else self._fan_out
        if fan_in + fan_out <= 0:
            raise ValueError(f"{type(self).__name__}: fan_in + fan_out must be positive, got shape {list(shape)}")
        return float(fan_in + fan_out)


class XavierUniform(_Xavier):
    """U(-limit, limit), limit = gain * sqrt(6 / (fan_in + fan_out)) (Paddle's default for weights)."""

    def _generate(self, shape, dtype):
        limit = self._gain * math.sqrt(6.0 / self._fans(shape))
        return _uniform(shape, dtype, -limit, limit)


class XavierNormal(_Xavier):
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""

    def _generate(self, shape, dtype):
        return _normal(shape, dtype, 0.0, self._gain * math.sqrt(2.0 / self._fans(shape)))


class _Kaiming(Initializer):
    def __init__(self, fan_in: float | None = None, negative_slope: float = 0.0, nonlinearity: str = "relu"):
        self._fan_in = fan_in
        self._negative_slope = negative_slope
        self._nonlinearity = nonlinearity
        calculate_gain(nonlinearity, negative_slope)  # validate now, not at first use

    def _fan_and_gain(self, shape) -> tuple[float, float]:
        fan_in = _compute_fans(shape)[0] if self._fan_in is None else self._fan_in
        if fan_in <= 0:
            raise ValueError(f"{type(self).__name__}: fan_in must be positive, got shape {list(shape)}")
        return float(fan_in), calculate_gain(self._nonlinearity, self._negative_slope)


class KaimingUniform(_Kaiming):
    """U(-limit, limit), limit = gain * sqrt(3 / fan_in) (He et al.)."""

    def _generate(self, shape, dtype):
        fan_in, gain = self._fan_and_gain(shape)
        limit = gain * math.sqrt(3.0 / fan_in)
        return _uniform(shape, dtype, -limit, limit)


class KaimingNormal(_Kaiming):
    """N(0, std^2), std = gain / sqrt(fan_in) (He et al.)."""

    def _generate(self, shape, dtype):
        fan_in, gain = self._fan_and_gain(shape)
        return _normal(shape, dtype, 0.0, gain / math.sqrt(fan_in))


class Assign(Initializer):
    """The given values (NumPy array, list/tuple or Tensor), which must match the parameter's shape."""

    def __init__(self, value: Any, name: str | None = None):
        if not isinstance(value, (Tensor, np.ndarray, list, tuple)):
            raise TypeError(f"Assign: argument 'value' must be a Tensor, NumPy array, list or tuple, "
                            f"got {type(value).__name__}")
        self._value = value

    def _generate(self, shape, dtype):
        out = assign(self._value)
        if tuple(out.shape) != tuple(shape):
            raise ValueError(f"Assign: the value has shape {out.shape} but the parameter has shape {list(shape)}")
        return out if out._data.dtype == dtype else cast(out, _dt.from_np_dtype(dtype))

    def __repr__(self) -> str:
        return f"Assign(shape={list(np.shape(self._value))})"


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times gain, from the QR of a Gaussian matrix; shape [rows, *rest]
    is treated as rows x prod(rest)."""

    def __init__(self, gain: float = 1.0, name: str | None = None):
        self._gain = float(gain)

    def _generate(self, shape, dtype):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: only a parameter with 2 or more dimensions can be initialised, "
                             f"got shape {list(shape)}")
        rows, cols = shape[0], int(np.prod(shape[1:]))
        q, r = qr(randn([max(rows, cols), min(rows, cols)], dtype=dtype))
        q = q * sign(diag(r))  # makes the factorisation unique, so q is uniformly distributed
        if rows < cols:
            q = transpose(q, [1, 0])
        return reshape(scale(q, scale=self._gain), list(shape))


_global_weight: Initializer | None = None
_global_bias: Initializer | None = None


def set_global_initializer(weight_init: Initializer | None, bias_init: Initializer | None = None) -> None:
    """Override the initialiser of every parameter created afterwards (None restores the defaults)."""
    global _global_weight, _global_bias
    for arg, init in (("weight_init", weight_init), ("bias_init", bias_init)):
        if init is not None and not isinstance(init, Initializer):
            raise TypeError(f"set_global_initializer: argument '{arg}' must be an Initializer or None, "
                            f"got {type(init).__name__}")
    _global_weight, _global_bias = weight_init, bias_init


def _global_initializer(is_bias: bool) -> Initializer | None:
    return _global_bias if is_bias else _global_weight
