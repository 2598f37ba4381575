"""The user API: `to_static` and `symbolic_translate`.

`to_static(layer)` translates the layer's `forward` in place and returns the same layer.

`to_static(fn)` returns a wrapper (a C `CallWithCallback` with functools.wraps' name, doc,
`__wrapped__`; it binds as a method) that installs a `Translator` as this thread's eval-frame
callback for the duration of the call, so the frame of `fn` itself is translated (or served from
its code cache) while everything it calls runs with the hook off. `SOT_DISABLE=1` in the
environment when `to_static` is applied returns `fn` untouched. The wrapper's `sot_translator`
holds the cache, the translation count and the recorded fallbacks; its `reset()` forgets them (and
those of the resume functions and callees the function's breaks made), `reset()` here forgets every
function's. A generator function's wrapper is a plain Python function counting its calls: the hook
never sees a generator's frames, so each call runs eagerly.

`with disable():` runs every `to_static` wrapper called inside it (on this thread) eagerly, with
the hook off. `@not_to_static` marks a function to be left untouched: its code is passed to
`skip_code` (the hook never sees its frames) and `to_static` of it returns it as is.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import types
from typing import Any, Callable, Iterator

from runtime.nn import Layer
from .hook.eval_frame import CallWithCallback, hook_disabled, skip_code

from . import config
from .opcode_executor.markers import NOT_TO_STATIC, TRANSLATOR, is_not_to_static, is_to_static_wrapper
from .translation.translator import Translator, reset_all

__all__ = ["to_static", "symbolic_translate", "disable", "not_to_static", "reset"]

_BACKENDS = ("interpreter",)
_CACHE_LIMIT_POLICIES = ("eager", "error")


class _State(threading.local):
    """Per-thread nesting depth of `disable()`."""

    disabled = 0


_state = _State()


@contextlib.contextmanager
def disable() -> Iterator[None]:
    """Run the block eagerly: `to_static` wrappers called inside it skip the JIT (debugging, comparisons)."""
    _state.disabled += 1
    try:
        with hook_disabled():
            yield
    finally:
        _state.disabled -= 1


def not_to_static(function: Callable) -> Callable:
    """Mark `function` as never translated, even when called from a translated frame."""
    function = function.__wrapped__ if hasattr(function, "sot_translator") else function
    code = getattr(function, "__code__", None)
    if isinstance(code, types.CodeType):
        skip_code(code)
    setattr(function, NOT_TO_STATIC, True)
    return function


def to_static(function: Callable | None = None, *, fallback: bool = True, backend: str = "interpreter",
              cache_size_limit: int | None = None, cache_limit_policy: str = "eager") -> Any:
    """Compile `function`'s tensor work into cached static programs; usable with or without arguments.
    Past `cache_size_limit` translations (default: SOT_CACHE_SIZE_LIMIT, else 8) the function runs
    eagerly with a warning (`cache_limit_policy="eager"`) or each further miss raises
    `sot.CacheLimitError` ("error")."""
    if cache_size_limit is None:
        cache_size_limit = config.cache_size_limit()
    if backend not in _BACKENDS:
        raise ValueError(f"to_static: unknown backend {backend!r}; known: {', '.join(_BACKENDS)}")
    if cache_limit_policy not in _CACHE_LIMIT_POLICIES:
        raise ValueError(f"to_static: argument 'cache_limit_policy' must be one of {_CACHE_LIMIT_POLICIES}, "
                         f"got {cache_limit_policy!r}")
    options = {"fallback": fallback, "cache_size_limit": cache_size_limit, "cache_limit_policy": cache_limit_policy}
    if function is None:
        return functools.partial(to_static, backend=backend, **options)
    if config.disabled() or is_not_to_static(function) or is_to_static_wrapper(function):
        return function  # (decorating twice is decorating once: a wrapper is already what to_static makes)
    if isinstance(function, Layer):
        return _layer_to_static(function, **options)
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_static: expected a Python function or an nn.Layer, got {type(function).__name__}")
    translator = Translator(function.__code__, fallback=fallback, cache_size_limit=cache_size_limit,
                            on_cache_limit=cache_limit_policy)
    if translator.resumable:
        wrapper = functools.update_wrapper(_counting_calls(function, translator), function)
    else:  # the translator is this thread's callback during each call (swapped in C: the hit path's budget is ~1 us)
        wrapper = functools.update_wrapper(CallWithCallback(function, translator), function)
    setattr(wrapper, TRANSLATOR, translator)  # the name nested translations and tools look for
    return wrapper


def _counting_calls(function: Callable, translator: Translator) -> Callable:
    """The wrapper of a generator (or coroutine) function: its frames never reach the hook, so each call,
    run eagerly, is counted here for reports."""
    def call(*args: Any, **kwargs: Any) -> Any:
        if not _state.disabled:
            translator.eager_calls += 1
        return function(*args, **kwargs)
    return call


def reset() -> None:
    """Forget every translation: all code caches (resume functions and callees made at breaks included),
    the limits reached, the dims and numbers made dynamic, the recorded breaks and fallbacks. Each
    decorated function translates again on its next call; `fn.sot_translator.reset()` does this for one
    function (and the resume functions and callees its breaks made)."""
    reset_all()


def _layer_to_static(layer: Layer, **options: Any) -> Layer:
    """The same layer, its `forward` translated (as Paddle's to_static of a Layer): parameters,
    state_dict, train()/eval() are the layer's own, since nothing else changes. A layer whose forward
    is already a to_static wrapper (its class's `@to_static def forward`, or a layer converted
    before) is returned as it is."""
    if is_to_static_wrapper(getattr(layer.forward, "__func__", None)):
        return layer
    forward = type(layer).forward
    if not isinstance(forward, types.FunctionType):
        raise TypeError(f"to_static: {type(layer).__name__}.forward is not a Python function")
    layer.forward = types.MethodType(to_static(forward, **options), layer)
    return layer


def symbolic_translate(function: Callable) -> Callable:
    """`to_static(function, fallback=True)`: for tests and tools."""
    return to_static(function, fallback=True)


config.cache_size_limit()  # a bad SOT_CACHE_SIZE_LIMIT fails `import sot`, not the first to_static
