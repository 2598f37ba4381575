"""Execution contexts of the parallel run: the host thread pool, the device-launch queue and
EMULATED device streams.

A `WorkQueue` is a FIFO served by a fixed number of daemon threads. The host pool runs CPU
kernels and blocking (sync) ops; the device-launch queue (one thread) launches device ops; a
`Stream` is a WorkQueue of exactly one thread, so the tasks enqueued on it run in order, as
kernels on a CUDA stream do. An event is an `AsyncValue`: `Stream.record(e)` enqueues the
moment that completes it, `Stream.wait_event(e)` enqueues a wait that holds the stream back
until it completes, and a host waiter calls `e.wait()`. These emulate the device for a CPU place
whose stream policy puts kernels on device streams: the scheduler, the stream analysis and the GC
run the same code a CUDA stream would need. On a GPU place with CuPy the plan runs on real CUDA
streams and events instead (`cuda_streams.py`).

The queues are shared by every core of the process and created on first use (a program run only
once in sequential mode, such as a startup program, starts no thread); their threads live until
the process exits, so repeated runs never add threads. Tasks never raise: the runner catches
every error into its run.
"""
from __future__ import annotations

import os
import queue
import sys
import threading
import traceback
from typing import Any, Callable

from .. import flags as _flags
from .asyncvalue import AsyncValue

__all__ = ["WorkQueue", "Stream", "host_pool", "launch_queue", "run_queue", "stream", "quiesce", "host_threads"]


class WorkQueue:
    """A FIFO of `(fn, arg)` tasks served by `n_threads` daemon threads, started on first use."""

    def __init__(self, name: str, n_threads: int):
        if n_threads < 1:
            raise ValueError(f"WorkQueue: argument 'n_threads' must be >= 1, got {n_threads}")
        self.name = name
        self.n_threads = n_threads
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self._threads: list[threading.Thread] = []
        self.thread_ids: frozenset[int] = frozenset()

    def submit(self, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Enqueue `fn(arg)`; it runs on one of this queue's threads."""
        with self._lock:
            self._pending += 1
            if not self._threads:
                self._start()
        self._q.put((fn, arg))

    def _start(self) -> None:
        for k in range(self.n_threads):
            t = threading.Thread(target=self._serve, name=f"{self.name}-{k}", daemon=True)
            t.start()
            self._threads.append(t)
        self.thread_ids = frozenset(t.ident for t in self._threads)

    def _serve(self) -> None:
        get = self._q.get
        while True:
            fn, arg = get()
            try:
                fn(arg)
            except BaseException:  # noqa: BLE001 - a task must not kill its worker; runners catch their own errors
                print(f"runtime.executor: uncaught error in a task of work queue '{self.name}':", file=sys.stderr)
                traceback.print_exc()
            with self._lock:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.notify_all()

    def pending(self) -> int:
        """Tasks enqueued and not finished yet."""
        return self._pending

    def quiesce(self, timeout: float | None = None) -> bool:
        """Wait until no task is queued or running (TFRT's Quiesce); False on timeout."""
        with self._lock:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)


class Stream(WorkQueue):
    """An emulated device stream: one thread, so its tasks run in enqueue order."""

    def __init__(self, name: str):
        super().__init__(f"stream-{name}", 1)
        self.stream_name = name

    def record(self, event: AsyncValue) -> None:
        """Complete `event` once everything enqueued so far has run (cudaEventRecord)."""
        self.submit(_complete, event)

    def wait_event(self, event: AsyncValue) -> None:
        """Hold the tasks enqueued after this one until `event` completes (cudaStreamWaitEvent)."""
        self.submit(_wait, event)


def _complete(event: AsyncValue) -> None:
    event.set_value()


def _wait(event: AsyncValue) -> None:
    event.wait()


_registry_lock = threading.Lock()
_queues: dict[str, WorkQueue] = {}


def _get(name: str, make: Callable[[], WorkQueue]) -> WorkQueue:
    q = _queues.get(name)
    if q is None:
        with _registry_lock:
            q = _queues.get(name)
            if q is None:
                q = _queues[name] = make()
    return q


def host_threads() -> int:
    """Size of the host pool: FLAGS_executor_host_threads, or one per core up to 4 (Paddle's default)."""
    n = int(_flags.flag("FLAGS_executor_host_threads"))
    return n if n > 0 else max(2, min(4, os.cpu_count() or 1))


def host_pool() -> WorkQueue:
    """The shared pool that runs CPU kernels and blocking ops."""
    return _get("host", lambda: WorkQueue("host", host_threads()))


def launch_queue() -> WorkQueue:
    """The shared device-launch thread (Paddle's DeviceKernelLaunch queue)."""
    return _get("launch", lambda: WorkQueue("device-launch", 1))


def run_queue() -> WorkQueue:
    """The thread that runs `Executor.run(..., return_futures=True)` calls, in the order queued."""
    return _get("runs", lambda: WorkQueue("executor-run", 1))


def stream(name: str) -> Stream:
    """The emulated device stream called `name` (created on first use)."""
    return _get(f"stream:{name}", lambda: Stream(name))


def quiesce(timeout: float | None = None) -> bool:
    """Wait until every queue of the process is idle; False if one is still busy after `timeout`."""
    return all(q.quiesce(timeout) for q in list(_queues.values()))
