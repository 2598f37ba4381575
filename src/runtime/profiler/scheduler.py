"""The profiler's states and schedulers: which steps record, as Paddle's `make_scheduler` decides.

A scheduler maps a step number to a ProfilerState. One period is `closed` steps off, `ready`
steps warming up (nothing kept), `record` steps recorded, the last of them RECORD_AND_RETURN
(the trace is handed to `on_trace_ready` when that step ends); periods repeat `repeat` times (0:
forever) after `skip_first` steps off. `Profiler(scheduler=(start, end))` records steps
[start, end) once.
"""
from __future__ import annotations

import enum
from typing import Callable

__all__ = ["ProfilerState", "make_scheduler", "range_scheduler", "always_record"]


class ProfilerState(enum.Enum):
    """What the profiler does during a step."""
    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


def make_scheduler(*, closed: int, ready: int, record: int, repeat: int = 0,
                   skip_first: int = 0) -> Callable[[int], ProfilerState]:
    """A step -> ProfilerState function: `skip_first` steps CLOSED, then periods of `closed` CLOSED,
    `ready` READY and `record` recorded steps (the last RECORD_AND_RETURN), `repeat` times (0: forever)."""
    if not all(isinstance(v, int) for v in (closed, ready, record, repeat, skip_first)) or \
            not (closed >= 0 and ready >= 0 and record > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError("Invalid profiler scheduler arguments: closed, ready, repeat and skip_first must be "
                             f"ints >= 0 and record an int > 0, got closed={closed!r}, ready={ready!r}, "
                             f"record={record!r}, repeat={repeat!r}, skip_first={skip_first!r}")
    period = closed + ready + record

    def state_of(step: int) -> ProfilerState:
        if step < skip_first:
            return ProfilerState.CLOSED
        step -= skip_first
        if repeat > 0 and step // period >= repeat:
            return ProfilerState.CLOSED
        phase = step % period
        if phase < closed:
            return ProfilerState.CLOSED
        if phase < closed + ready:
            return ProfilerState.READY
        return ProfilerState.RECORD if phase < period - 1 else ProfilerState.RECORD_AND_RETURN

    return state_of


def range_scheduler(start: int, end: int) -> Callable[[int], ProfilerState]:
    """Record steps [start, end) once (the step before `start` is READY), as Paddle's tuple scheduler."""
    if not (isinstance(start, int) and isinstance(end, int) and end > start):
        raise AssertionError(f"Profiler: scheduler (start, end) must be two ints with end > start, got {(start, end)!r}")
    start = max(start, 0)
    if start >= 1:
        return make_scheduler(closed=start - 1, ready=1, record=end - start, repeat=1)
    return make_scheduler(closed=0, ready=0, record=end - start, repeat=1)


def always_record(step: int) -> ProfilerState:
    """The default scheduler: every step is recorded, the trace handed over when the profiler stops."""
    return ProfilerState.RECORD
