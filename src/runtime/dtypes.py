"""Paddle-style dtype objects over NumPy dtypes.

`paddle.float32` prints as `paddle.float32` and compares equal to the string
'float32' and to `numpy.float32`, so model code that checks dtypes either way
works. Internally every tensor keeps a NumPy dtype; conversion happens at the API edge.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16",
    "float32", "float64", "complex64", "complex128", "set_default_dtype",
    "get_default_dtype", "is_floating_point", "is_integer", "is_complex",
]


class dtype:
    """A framework dtype; one singleton per NumPy dtype."""

    __slots__ = ("name", "np_dtype")

    def __init__(self, name: str):
        self.name = name
        self.np_dtype = np.dtype(name)

    def __repr__(self) -> str:
        return f"paddle.{self.name}"

    @property
    def is_floating(self) -> builtins.bool:
        """True for real and complex floating dtypes (those that carry gradients)."""
        return self.np_dtype.kind in "fc"

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, dtype):
            return other is self
        try:
            return to_np_dtype(other) == self.np_dtype
        except (TypeError, ValueError):
            return False

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (_by_name, (self.name,))


_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
          "float32", "float64", "complex64", "complex128"]
_BY_NAME = {n: dtype(n) for n in _NAMES}
_BY_NP = {d.np_dtype: d for d in _BY_NAME.values()}

bool = _BY_NAME["bool"]  # noqa: A001 - Paddle's public name
uint8 = _BY_NAME["uint8"]
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
float16 = _BY_NAME["float16"]
float32 = _BY_NAME["float32"]
float64 = _BY_NAME["float64"]
complex64 = _BY_NAME["complex64"]
complex128 = _BY_NAME["complex128"]

_default_float = np.dtype("float32")


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


def to_np_dtype(d: Any) -> np.dtype:
    """Normalise any dtype spelling (paddle dtype, str, NumPy dtype/type, Python type)."""
    if isinstance(d, dtype):
        return d.np_dtype
    if isinstance(d, np.dtype):
        return d
    if isinstance(d, str):
        key = d[len("paddle."):] if d.startswith("paddle.") else d
        if key not in _BY_NAME:
            raise TypeError(f"unsupported dtype {d!r}; expected one of {', '.join(_NAMES)}")
        return _BY_NAME[key].np_dtype
    if d is float:
        return np.dtype("float64")
    if d is int:
        return np.dtype("int64")
    try:
        return np.dtype(d)
    except TypeError:
        raise TypeError(f"unsupported dtype {d!r}; expected one of {', '.join(_NAMES)}") from None


def from_np_dtype(d: np.dtype) -> dtype:
    """The framework dtype object for a NumPy dtype."""
    try:
        return _BY_NP[d]
    except KeyError:
        raise TypeError(f"NumPy dtype {d} has no framework equivalent") from None


def set_default_dtype(d: Any) -> None:
    """Set the dtype that Python floats become (float16, float32 or float64)."""
    global _default_float
    npd = to_np_dtype(d)
    if npd.kind != "f":
        raise TypeError(f"set_default_dtype: expected a floating dtype, got {d!r}")
    _default_float = npd


def get_default_dtype() -> str:
    """The default floating dtype, as its name (Paddle returns a string)."""
    return _default_float.name


def default_float() -> np.dtype:
    return _default_float


def is_floating_point(x) -> builtins.bool:
    """By `x.dtype`, which a static Variable has too (it holds no array)."""
    return x.dtype.np_dtype.kind == "f"


def is_integer(x) -> builtins.bool:
    """By `x.dtype`, which a static Variable has too (it holds no array)."""
    return x.dtype.np_dtype.kind in "iu"


def is_complex(x) -> builtins.bool:
    """By `x.dtype`, which a static Variable has too (it holds no array)."""
    return x.dtype.np_dtype.kind == "c"


