"""The PEP 523 frame-evaluation hook: how sot gets to see, and replace, the Python frames a thread runs.

This is the Python face of the C extension `sot._eval_frame` (CPython 3.11, 3.12, 3.13).

Interface
---------
``set_eval_frame(callback) -> previous``
    Sets THIS THREAD's callback (``None`` removes it) and returns the previous one (or ``None``).
    While a callback is set, every Python frame the thread evaluates is first handed to
    ``callback(frame)`` -- except frames of generators, coroutines and async generators, frames
    whose code object was passed to ``skip_code``, and frames run while the hook is disabled.
    The callback itself (and everything it calls) runs with the hook disabled.

``frame`` (an ``InterpreterFrame``)
    The frame about to run, before its first instruction: ``f_code``, ``f_globals``,
    ``f_builtins`` and ``f_locals``. ``f_locals`` is a dict of the bound arguments and of the
    free variables' values (what ``frame.f_locals`` shows on the function's first line); for
    module and class bodies it is their namespace. A view kept after the callback returns keeps
    that snapshot. ``frame[name]`` reads one of those values without building the dict.

What the callback (or a cache lookup) returns
    ``None`` runs the original code normally. ``CustomCode(code, disable_eval_frame=False)`` runs
    ``code`` in place of the original, in the same frame, with the same bound arguments and
    closure; ``code`` must have the original's argument layout (``co_argcount``,
    ``co_posonlyargcount``, ``co_kwonlyargcount``, ``*args``/``**kwargs``) and the same free
    variables, in the same order (a ``TypeError`` otherwise); other locals and its stack size
    may differ. ``CustomCode(None, ...)`` runs the original code. ``disable_eval_frame=True``
    runs every frame called from that code with the hook off. A bare code object means
    ``CustomCode(code, False)``.

``set_code_cache(code, cache)`` / ``get_code_cache(code)``
    A per-code-object cache stored with the code object (``co_extra``; ``None`` removes it). When
    a frame's code has a cache, the hook calls ``cache.lookup(frame)`` first, in C: ``None`` is a
    miss (the callback is then asked), anything else is a hit and is run as above without calling
    the callback.

``CacheBase``
    The C base of a cache the hook asks without a ``lookup`` method (sot's ``CodeCache``): its
    ``_check(f_locals, f_globals, f_builtins)`` (a generated guard function) returns the id of the
    matching entry or -1; when that is the front entry's id (``_set_front(id, entry, code)``: the
    entry hit last) the hook adds one to ``entry.hits`` and runs ``code``, with no Python frame but
    ``_check``'s. From the hook, ``f_locals`` is the frame itself: ``frame[name]`` reads an argument
    or free variable from the frame (``KeyError`` for another name or an empty cell; a view kept
    past the lookup reads its snapshot), so a hit builds no dict. Any other id, and every lookup
    while ``_check`` is None, is answered by the subclass's ``_lookup_slow(id)`` (what to run, or
    None: a miss).
    ``_lookup_namespaces(f_locals, f_globals, f_builtins)`` is the same lookup for Python callers.
    A graph break pays a lookup twice a call (its frame and the resume function), so this hit
    path is where its per-call cost is decided.

``skip_code(code)``
    Frames of ``code`` are never handed to the hook (replaces any cache of that code).

``CallWithCallback(fn, callback)``
    A callable (C, vectorcall) that calls ``fn(*args, **kwargs)`` with ``callback`` as this
    thread's callback and restores the previous one after the call, also when it raises: what a
    ``with eval_frame_callback(callback): return fn(...)`` wrapper does, at a fraction of its
    cost (``to_static``'s wrapper is one). While the hook is off on this thread it calls ``fn``
    plainly. It binds as a method when set on a class, and takes attributes (``functools.wraps``).

``hook_disabled()``
    A context manager: this thread's hook is off for the block (nests; ``add_disable_depth(+1/-1)``
    is its C face): no frame reaches a callback or a cache and ``CallWithCallback`` calls its
    function plainly. The callback and lookups run in the same state, as does code returned with
    ``disable_eval_frame=True``.

Exceptions raised by the callback, a lookup, or the code run propagate to the caller of the
frame with the frame released. ``counters()`` returns process-wide counts of callback calls,
cache lookups and hits, relocated runs (code run in a new frame because the thread's frame
stack had no room to grow the original one in place) and suspended runs: code run with
``disable_eval_frame=True`` while its thread was the only one with a callback runs with the hook
uninstalled (CPython inlines Python calls only without one); a thread that sets a callback
meanwhile installs it again; and foreign runs: calls of a ``CallWithCallback`` made while another
PEP 523 evaluator was installed, which run their function plainly (eager is always right; the
first one warns).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Optional, Protocol, Union

from sot._eval_frame import (
    CacheBase,
    CallWithCallback,
    CustomCode,
    InterpreterFrame,
    add_disable_depth,
    counters,
    get_code_cache,
    set_code_cache,
    set_eval_frame,
    skip_code,
)

__all__ = [
    "CacheBase",
    "CallWithCallback",
    "CodeCache",
    "CustomCode",
    "InterpreterFrame",
    "add_disable_depth",
    "counters",
    "eval_frame_callback",
    "get_code_cache",
    "hook_disabled",
    "set_code_cache",
    "set_eval_frame",
    "skip_code",
]

Choice = Optional[Union[CustomCode, CodeType]]
Callback = Callable[[InterpreterFrame], Choice]


class CodeCache(Protocol):
    """What set_code_cache stores: asked before the callback, so a hit never reaches Python's translator."""

    def lookup(self, frame: InterpreterFrame) -> Choice:
        """The code to run for this frame, or None on a miss."""


@contextlib.contextmanager
def eval_frame_callback(callback: Optional[Callback]) -> Iterator[None]:
    """Sets this thread's callback for a block and restores the previous one after it, even on error."""
    previous = set_eval_frame(callback)
    try:
        yield
    finally:
        set_eval_frame(previous)


@contextlib.contextmanager
def hook_disabled() -> Iterator[None]:
    """This thread's hook is off for a block (nests), whatever callback is set: `sot.disable()` is built on it."""
    add_disable_depth(1)
    try:
        yield
    finally:
        add_disable_depth(-1)
