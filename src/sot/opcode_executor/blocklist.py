"""The user's block list (CDBL): calls a translated frame must not capture.

    sot.graph_break_on(paddle.nonzero)        # the call runs for real between two subgraphs
    sot.graph_break_on(paddle.nonzero, False) # capture it after all (a data-dependent-shape op)
    sot.skip_function(helper)                 # never inlined nor translated: runs eagerly
    with sot.skip_function(helper): ...       # the same, undone when the block ends

Ops whose output shape depends on tensor values (the op registry's `dynamic_shape` flag:
nonzero, masked_select, unique, ...) break by default (SOT-B005), since everything after them
would have sizes known only at run time. The lists apply to translations made while they hold;
a translation already cached keeps what it captured (its results are the same either way).
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

__all__ = ["graph_break_on", "skip_function", "breaks_on", "is_skipped", "allows_dynamic_shape"]

_break_on: dict[Any, bool] = {}  # callable -> True (break) / False (capture, for a dynamic-shape op)
_skipped: "weakref.WeakSet[Any]" = weakref.WeakSet()


class _Entry:
    """What graph_break_on / skip_function return: already in force; as a context manager, undone at exit."""

    def __init__(self, undo: Callable[[], None]):
        self._undo = undo

    def __enter__(self) -> "_Entry":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._undo()


def graph_break_on(api: Callable, enable: bool = True) -> _Entry:
    """Break the graph at every call of `api` in translated code (enable=False: capture it, also a
    data-dependent-shape op that breaks by default)."""
    if not callable(api):
        raise TypeError(f"graph_break_on: argument 'api' must be callable, got {type(api).__name__}")
    had, before = api in _break_on, _break_on.get(api)
    _break_on[api] = bool(enable)

    def undo() -> None:
        if had:
            _break_on[api] = before
        else:
            _break_on.pop(api, None)
    return _Entry(undo)


def skip_function(function: Callable) -> _Entry:
    """Run `function` eagerly whenever translated code calls it: it is neither inlined nor translated."""
    if not callable(function):
        raise TypeError(f"skip_function: argument 'function' must be callable, got {type(function).__name__}")
    target = getattr(function, "__func__", function)
    was = target in _skipped
    _skipped.add(target)
    return _Entry(lambda: None if was else _skipped.discard(target))


def breaks_on(fn: Any) -> bool:
    """Whether the user asked for a break at calls of `fn`."""
    try:
        return _break_on.get(fn, False)
    except TypeError:  # unhashable
        return False


def is_skipped(fn: Any) -> bool:
    """Whether `fn` is on the skip list."""
    try:
        return fn in _skipped
    except TypeError:
        return False


def allows_dynamic_shape(fn: Any) -> bool:
    """Whether a data-dependent-shape op called through `fn` may be captured (graph_break_on(fn, False))."""
    try:
        return _break_on.get(fn) is False
    except TypeError:
        return False
