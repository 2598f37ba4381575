"""The user API: `to_static` and `symbolic_translate`.

`to_static(fn)` returns a wrapper (functools.wraps: same name, doc, `__wrapped__`) that installs a
`Translator` as this thread's eval-frame callback for the duration of the call, so the frame of
`fn` itself is translated (or served from its code cache) while everything it calls runs with the
hook off. `SOT_DISABLE=1` in the environment when `to_static` is applied returns `fn` untouched.
The wrapper's `sot_translator` holds the cache, the translation count and the recorded fallbacks.
"""
from __future__ import annotations

import functools
import os
import types
from typing import Any, Callable

from sot.eval_frame import set_eval_frame

from .translate import Translator

__all__ = ["to_static", "symbolic_translate"]

_BACKENDS = ("interpreter",)


def to_static(function: Callable | None = None, *, fallback: bool = True, backend: str = "interpreter",
              cache_size_limit: int = 8) -> Any:
    """Compile `function`'s tensor work into cached static programs; usable with or without arguments."""
    if backend not in _BACKENDS:
        raise ValueError(f"to_static: unknown backend {backend!r}; known: {', '.join(_BACKENDS)}")
    if function is None:
        return functools.partial(to_static, fallback=fallback, backend=backend, cache_size_limit=cache_size_limit)
    if os.environ.get("SOT_DISABLE", "") not in ("", "0"):
        return function
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_static: expected a Python function, got {type(function).__name__}")
    translator = Translator(function.__code__, fallback=fallback, cache_size_limit=cache_size_limit)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        previous = set_eval_frame(translator)
        try:
            return function(*args, **kwargs)
        finally:
            set_eval_frame(previous)

    wrapper.sot_translator = translator  # type: ignore[attr-defined]
    return wrapper


def symbolic_translate(function: Callable) -> Callable:
    """`to_static(function, fallback=True)`: for tests and tools."""
    return to_static(function, fallback=True)
