"""What the profiler records: events with host times (`time.perf_counter_ns`), from eager ops,
executor runs (a compiled graph is one event, its ops nested in it) and `RecordEvent` blocks.

Nothing is recorded, and nothing is slowed, unless a Profiler is in a recording step: then the
eager dispatcher's kernel observer (`runtime.ops.dispatch.set_kernel_observer`) and the
executor's run observer (`runtime.executor.interpreter.set_run_observer`) are installed, and they
are removed when the recording ends. Events from every thread go to one list (appending is
atomic), each tagged with its thread's native id.
"""
from __future__ import annotations

import contextlib
import enum
import threading
import time
from typing import Any, NamedTuple

from ..executor import interpreter as _interpreter
from ..executor.plan import FEED_OP, FETCH_OP
from ..ops import dispatch as _dispatch

__all__ = ["TracerEventType", "Event", "RecordEvent", "start_recording", "stop_recording", "is_recording",
           "set_step_timer", "release_step_timer", "add"]

BACKWARD_SUFFIX = "(backward)"   # a core named so runs a gradient program: its event is a Backward one
_now = time.perf_counter_ns
_tid = threading.get_native_id


class TracerEventType(enum.Enum):
    """The kind of a recorded event (Paddle's values)."""
    Operator = 0
    Dataloader = 1
    ProfileStep = 2
    CudaRuntime = 3
    Kernel = 4
    Memcpy = 5
    Memset = 6
    UserDefined = 7
    OperatorInner = 8
    Forward = 9
    Backward = 10
    Optimization = 11
    Communication = 12
    PythonOp = 13
    PythonUserDefined = 14
    DygraphKernelLaunch = 15
    StaticKernelLaunch = 16


_DATALOADER = TracerEventType.Dataloader


class Event(NamedTuple):
    """One recorded interval: `start`/`end` in ns of `time.perf_counter_ns`, `tid` the native thread id;
    `graph` the name of the compiled graph (executor program) an op ran in, "" for an eager op."""
    name: str
    type: TracerEventType
    start: int
    end: int
    tid: int
    graph: str = ""


class _Recording:
    active = False
    events: list[Event] = []
    lock = threading.Lock()
    step_timer: Any = None   # the running Profiler's StepTimer: Dataloader spans are its reader cost


def set_step_timer(timer: Any) -> None:
    """The StepTimer that Dataloader spans report to, recording or not (timer_only)."""
    _Recording.step_timer = timer


def release_step_timer(timer: Any) -> None:
    """Dataloader spans stop reporting to `timer` (if it is still the one they report to)."""
    if _Recording.step_timer is timer:
        _Recording.step_timer = None


def is_recording() -> bool:
    return _Recording.active


def start_recording() -> None:
    """Begin a recording (a fresh event list) and install the observers."""
    with _Recording.lock:
        if _Recording.active:
            raise RuntimeError("paddle.profiler: another Profiler is already recording; stop it first")
        _Recording.events = []
        _Recording.active = True
        _dispatch.set_kernel_observer(_timed_kernel)
        _interpreter.set_run_observer(_observed_run)


def stop_recording() -> list[Event]:
    """End the recording: remove the observers; the events recorded, in order of their ends."""
    with _Recording.lock:
        _dispatch.set_kernel_observer(None)
        _interpreter.set_run_observer(None)
        _Recording.active = False
        events, _Recording.events = _Recording.events, []
    return events


def add(event: Event) -> None:
    if _Recording.active:
        _Recording.events.append(event)


def _timed_kernel(op: Any, xp: Any, arrays: list, attrs: dict) -> Any:
    """An eager op's kernel, recorded as an Operator event named after the op."""
    start = _now()
    try:
        return op.kernel(xp, *arrays, **attrs)
    finally:
        _Recording.events.append(Event(op.name, TracerEventType.Operator, start, _now(), _tid()))


def _observed_run(core: Any, feeds: Any, scheduler: bool, parallel: bool | None) -> list:
    """One executor run as a Forward (Backward for a core named "... (backward)") event named after its
    program (a compiled graph: the graph's name), with an Operator event for each of its ops (the
    executor's per-op hook)."""
    graph = core.name or "program"
    core.prepare()   # built now, so its op types are known
    kinds = core.op_types
    started: dict[int, int] = {}
    events = _Recording.events

    def hook(what: str, i: int, slots: Any) -> None:
        if what == "start":
            started[i] = _now()
        elif what == "end" and kinds[i] not in (FEED_OP, FETCH_OP):
            events.append(Event(kinds[i], TracerEventType.Operator, started.pop(i), _now(), _tid(), graph))

    start = _now()
    try:
        return core.run(feeds, scheduler=scheduler, parallel=parallel, hook=hook)
    finally:
        kind = TracerEventType.Backward if graph.endswith(BACKWARD_SUFFIX) else TracerEventType.Forward
        events.append(Event(graph, kind, start, _now(), _tid()))


class RecordEvent(contextlib.ContextDecorator):
    """A named span of user code: `with RecordEvent("load"):`, `@RecordEvent("step")` or `begin()`/`end()`.
    Recorded only while a Profiler records; otherwise begin/end cost a flag check."""

    def __init__(self, name: str, event_type: TracerEventType = TracerEventType.PythonUserDefined):
        if not isinstance(name, str):
            raise TypeError(f"RecordEvent: argument 'name' must be a str, got {type(name).__name__}")
        self.name = name
        self.event_type = TracerEventType(event_type)
        self._starts: list[int | None] = []   # a stack: the same object may span nested calls (a decorator)

    def begin(self) -> None:
        """Start the span (nothing is kept unless a Profiler records now, or it is a Dataloader span of a
        running Profiler's step timer)."""
        timed = _Recording.active or (_Recording.step_timer is not None and self.event_type is _DATALOADER)
        self._starts.append(_now() if timed else None)

    def end(self) -> None:
        """End the span begun last; an end without a begin does nothing (as Paddle's)."""
        if not self._starts:
            return
        start = self._starts.pop()
        if start is None:
            return
        end = _now()
        timer = _Recording.step_timer
        if timer is not None and self.event_type is _DATALOADER:
            timer.record_reader(end - start)
        add(Event(self.name, self.event_type, start, end, _tid()))

    def __enter__(self) -> "RecordEvent":
        self.begin()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.end()

