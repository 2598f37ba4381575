"""AsyncValue: a one-shot value or error with waiters (TFRT's AsyncValue).

One small class serves three roles of the parallel run: an emulated stream event (a completion
flag with a recorded generation), the completion of a whole run, and the futures that
`Executor.run(..., return_futures=True)` hands back. Check-then-append of a callback is not
atomic even under the GIL (and there is no GIL on 3.13t), so the state lives behind a lock;
callbacks run exactly once, outside the lock, in the thread that completes the value (or at once
in the caller when the value is already complete).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["AsyncValue"]

_PENDING, _CONCRETE, _ERROR = 0, 1, 2


class AsyncValue:
    """A value that becomes available (or fails) once; `result()` waits, callbacks fire once."""

    __slots__ = ("_lock", "_state", "_payload", "_callbacks", "_ready")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = _PENDING
        self._payload: Any = None
        self._callbacks: list[Callable[["AsyncValue"], None]] = []
        self._ready = threading.Event()

    def set_value(self, value: Any = None) -> None:
        """Make the value available and run the waiters; a second completion raises."""
        self._complete(_CONCRETE, value)

    def set_error(self, error: BaseException) -> None:
        """Complete with an error: `result()` raises it in every waiter."""
        self._complete(_ERROR, error)

    def _complete(self, state: int, payload: Any) -> None:
        with self._lock:
            if self._state != _PENDING:
                raise RuntimeError("AsyncValue: already completed")
            self._state, self._payload = state, payload
            callbacks, self._callbacks = self._callbacks, []
        self._ready.set()
        for cb in callbacks:
            cb(self)

    def done(self) -> bool:
        """True once a value or an error is set (never blocks: cudaEventQuery)."""
        return self._state != _PENDING

    query = done

    def wait(self, timeout: float | None = None) -> bool:
        """Block until completed (cudaEventSynchronize); False on timeout."""
        return self._ready.wait(timeout)

    def result(self, timeout: float | None = None) -> Any:
        """The value, waiting for it; raises the error it completed with, or TimeoutError."""
        if not self._ready.wait(timeout):
            raise TimeoutError(f"AsyncValue.result: not completed within {timeout} s")
        if self._state == _ERROR:
            raise self._payload
        return self._payload

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The error it completed with, or None."""
        if not self._ready.wait(timeout):
            raise TimeoutError(f"AsyncValue.exception: not completed within {timeout} s")
        return self._payload if self._state == _ERROR else None

    def add_done_callback(self, fn: Callable[["AsyncValue"], None]) -> None:
        """Call `fn(self)` once completed: now if it already is (TFRT's AndThen)."""
        if not callable(fn):
            raise TypeError(f"AsyncValue.add_done_callback: argument 'fn' must be callable, got {type(fn).__name__}")
        with self._lock:
            if self._state == _PENDING:
                self._callbacks.append(fn)
                return
        fn(self)

    def __repr__(self) -> str:
        state = ("pending", "concrete", "error")[self._state]
        return f"AsyncValue({state})"
