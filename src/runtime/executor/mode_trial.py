"""The check of the cost estimate's choice of threads, on the machine as it is.

The estimate (cost.py) uses constants measured on an idle machine. When other jobs keep the cores
busy, handing an op to a pool thread waits for a core (up to a scheduler time slice, milliseconds),
and a program the estimate threads runs slower than on one thread. So a core whose plan the
estimate threads ("auto") times its first runs after the build run, alternately threaded and on
one thread, RUNS_EACH of each, and then keeps the faster mode: threads only when the fastest
threaded run beat the fastest single-threaded one. Both modes give bit-identical results, so the
choice changes only the time. A run with a hook, FLAGS_check_nan_inf or an explicit `parallel=`
is not a trial run.
"""
from __future__ import annotations

import time

__all__ = ["ModeTrial", "RUNS_EACH"]

RUNS_EACH = 3   # timed runs per mode: the fastest of three is what the machine gives, not a hiccup


def _clock() -> float:
    return time.perf_counter()


class ModeTrial:
    """Timed runs of both modes in turn (threaded first); `verdict` once each had RUNS_EACH."""

    def __init__(self) -> None:
        self._best = {True: float("inf"), False: float("inf")}
        self._count = {True: 0, False: 0}

    def next_parallel(self) -> bool:
        """Whether the next trial run goes threaded."""
        return self._count[True] <= self._count[False]

    @staticmethod
    def clock() -> float:
        return _clock()

    def record(self, parallel: bool, seconds: float) -> bool | None:
        """Note one run's time; the mode to keep (True: threads) after the last trial run, else None."""
        self._best[parallel] = min(self._best[parallel], seconds)
        self._count[parallel] += 1
        if min(self._count.values()) < RUNS_EACH:
            return None
        return self._best[True] < self._best[False]
