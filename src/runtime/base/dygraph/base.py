"""`paddle.base.dygraph.base`: `guard`, `to_variable`, `enabled` and the dygraph switches."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from ...autograd import grad, no_grad
from ...dtypes import to_np_dtype
from ...mode import in_dynamic_mode
from ...static.builder import disable_static, enable_static
from ...tensor import Tensor

__all__ = ["disable_dygraph", "enable_dygraph", "enabled", "grad", "guard", "no_grad", "to_variable"]


def enabled() -> bool:
    """Whether dygraph (eager) mode is on in this thread."""
    return in_dynamic_mode()


def enable_dygraph(place: Any = None) -> None:
    """Switch to dygraph mode (`paddle.disable_static`); `place` is accepted for Paddle's signature."""
    disable_static()


def disable_dygraph() -> None:
    """Switch to static mode (`paddle.enable_static`)."""
    enable_static()


@contextlib.contextmanager
def guard(place: Any = None) -> Iterator[None]:
    """Run the block in dygraph mode, then restore the mode it found. `place` is accepted for
    Paddle's signature; the device is the one `paddle.set_device` chose."""
    was_static = not in_dynamic_mode()
    if was_static:
        disable_static()
    try:
        yield
    finally:
        if was_static:
            enable_static()


_SUPPORTED = (list, tuple, np.ndarray, Tensor)


def to_variable(value: Any, name: str | None = None, zero_copy: bool | None = None, dtype: Any = None) -> Tensor:
    """A tensor from a NumPy array, list or tuple (Paddle 2.x's to_tensor of dygraph code). A Tensor
    is returned as it is; other data keeps NumPy's dtype (a list of floats gives float64) unless
    `dtype` is given. The result has stop_gradient=True."""
    if not isinstance(value, _SUPPORTED):
        raise TypeError(f"to_variable: argument 'value' must be a list, tuple, numpy.ndarray or Tensor, "
                        f"got {type(value).__name__}")
    if isinstance(value, Tensor):
        return value
    arr = np.asarray(value)
    if dtype is not None:
        arr = arr.astype(to_np_dtype(dtype), copy=False)
    return Tensor(arr, name=name)
