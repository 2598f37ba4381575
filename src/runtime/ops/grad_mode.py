"""Whether eager ops record autograd nodes: `no_grad`, `enable_grad`, `set_grad_enabled`.

It lives with the ops because eager dispatch reads it on every call; `runtime.autograd` re-exports
the public names."""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


class _State(threading.local):
    enabled = True


state = _State()


def is_grad_enabled() -> bool:
    """True when eager ops record the autograd tape (per thread)."""
    return state.enabled


class _GradModeContext:
    """A context manager that is also a decorator, as Paddle's `no_grad` is."""

    _mode: bool

    def __enter__(self) -> None:
        self._prev = state.enabled
        state.enabled = self._mode

    def __exit__(self, *exc: Any) -> None:
        state.enabled = self._prev

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):  # noqa: N801 - Paddle's public name
    """Disable gradient recording: `with paddle.no_grad():` or `@paddle.no_grad()`."""

    _mode = False

    def __new__(cls, func: Callable | None = None):
        self = super().__new__(cls)
        if func is not None:  # used as a bare decorator: @paddle.no_grad
            return _GradModeContext.__call__(self, func)
        return self


class enable_grad(_GradModeContext):  # noqa: N801
    """Re-enable gradient recording inside a `no_grad` region."""

    _mode = True


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """Set gradient recording on or off (the call itself takes effect immediately)."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._prev = state.enabled
        state.enabled = self._mode

    def __enter__(self) -> None:
        pass

    def __call__(self, fn: Callable) -> Callable:
        mode = self._mode
        state.enabled = self._prev

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = state.enabled
            state.enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                state.enabled = prev
        return wrapper
