"""`paddle.profiler.Profiler`: records the steps its scheduler picks and hands each finished recording
to `on_trace_ready`, following Paddle's state machine.

`start()` enters step 0 in the scheduler's state for it; `step()` ends a step and enters the next,
and a step leaving RECORD_AND_RETURN ends the recording: its result becomes `profiler_result` and
`on_trace_ready(profiler)` runs (as `stop()` does in a recording state). Leaving RECORD for
CLOSED or READY drops the recording (Paddle warns the same). Each recorded step is a
`ProfileStep#<n>` event. `timer_only=True` records nothing and keeps only `step_info()`.
"""
from __future__ import annotations

import datetime
import enum
import os
import socket
import threading
import warnings
from typing import Any, Callable, Iterable

from .. import place as _place
from . import events as _events
from .events import RecordEvent, TracerEventType
from .result import ProfilerResult
from .scheduler import ProfilerState, always_record, range_scheduler
from .summary import SortedKeys, summary_text
from .timer import StepTimer

__all__ = ["Profiler", "ProfilerTarget", "export_chrome_tracing"]

_RECORDING = (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)


class ProfilerTarget(enum.Enum):
    """The devices a Profiler traces (Paddle's values); host times are recorded for every one."""
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM_DEVICE = 3


def _supported_targets() -> set[ProfilerTarget]:
    return {ProfilerTarget.CPU, ProfilerTarget.GPU} if _place.is_compiled_with_cuda() else {ProfilerTarget.CPU}


def export_chrome_tracing(dir_name: str, worker_name: str | None = None) -> Callable[["Profiler"], None]:
    """An `on_trace_ready` that writes each recording to
    `dir_name/<worker>_time_<date>.paddle_trace.json` (a Chrome trace)."""
    try:
        os.makedirs(dir_name, exist_ok=True)
    except OSError as e:
        raise RuntimeError(f"Can not create directory '{dir_name}' for saving profiling results.") from e

    def handle(prof: "Profiler") -> None:
        worker = worker_name or f"host_{socket.gethostname()}pid_{os.getpid()}"
        stamp = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S_%f")
        prof.export(os.path.join(dir_name, f"{worker}_time_{stamp}.paddle_trace.json"), format="json")

    return handle


class Profiler:
    """Paddle's Profiler: `start()`, `step()` once per iteration, `stop()` (or `with Profiler(...) as p:`).
    `record_shapes`, `profile_memory`, `with_flops`, `emit_nvtx` and `custom_device_types` are accepted
    for Paddle's signature and add nothing to the recording."""

    def __init__(self, *, targets: Iterable[ProfilerTarget] | None = None,
                 scheduler: Callable[[int], ProfilerState] | tuple[int, int] | None = None,
                 on_trace_ready: Callable[["Profiler"], None] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, timer_only: bool = False, emit_nvtx: bool = False,
                 custom_device_types: list[str] | None = None, with_flops: bool = False):
        supported = _supported_targets()
        self.targets = set(targets) if targets else set(supported)
        for target in list(self.targets):
            if target not in supported:
                self.targets.discard(target)
                warnings.warn(f"Profiling {target} is not supported in current context.", UserWarning, stacklevel=2)
        if isinstance(scheduler, (tuple, list)):
            if len(scheduler) != 2:
                raise AssertionError(f"Profiler: scheduler (start, end) must have two items, got {scheduler!r}")
            self.scheduler = range_scheduler(*scheduler)
        elif scheduler is None:
            self.scheduler = always_record
        elif callable(scheduler):
            self.scheduler = scheduler
        else:
            raise TypeError(f"Profiler: argument 'scheduler' must be a callable, a (start, end) tuple or None, "
                            f"got {type(scheduler).__name__}")
        # Paddle's default: every recording is written under ./profiler_log/
        self.on_trace_ready = export_chrome_tracing("./profiler_log/") if on_trace_ready is None else on_trace_ready
        self.timer_only = timer_only
        self.step_num = 0
        self.previous_state = ProfilerState.CLOSED
        self.current_state = self.scheduler(self.step_num)
        self.profiler_result: ProfilerResult | None = None
        self._timer = StepTimer()
        self._step_event: RecordEvent | None = None
        self._recording = False

    # ------------------------------------------------------------ control
    def start(self) -> None:
        """Enter step 0 (recording it if the scheduler says so)."""
        self._timer.begin()
        _events.set_step_timer(self._timer)
        if self.timer_only:
            return
        if self.current_state in _RECORDING:
            self._begin_recording()
        self._begin_step()

    def step(self, num_samples: int | None = None) -> None:
        """End the current step and enter the next (`num_samples`: the step's batch size, for ips)."""
        self._timer.step(num_samples)
        if self.timer_only:
            return
        self._end_step()
        self.previous_state = self.current_state
        self.step_num += 1
        self.current_state = self.scheduler(self.step_num)
        self._transition(self.previous_state, self.current_state)
        self._begin_step()

    def stop(self) -> None:
        """End the current step and the profiling; a recording in progress is handed to on_trace_ready."""
        self._timer.end()
        _events.release_step_timer(self._timer)
        if self.timer_only:
            return
        self._end_step()
        if self._recording:
            self._finish_recording(handed=True)

    def __enter__(self) -> "Profiler":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _transition(self, before: ProfilerState, after: ProfilerState) -> None:
        if before is ProfilerState.RECORD_AND_RETURN:
            self._finish_recording(handed=True)
        elif before is ProfilerState.RECORD and after not in _RECORDING:
            warnings.warn(f"Improper schedule: RECORD->{after.name}, profiler will not save data", UserWarning,
                          stacklevel=3)
            self._finish_recording(handed=False)
        if after in _RECORDING and not self._recording:
            self._begin_recording()

    def _begin_recording(self) -> None:
        _events.start_recording()
        self._recording = True

    def _finish_recording(self, handed: bool) -> None:
        events = _events.stop_recording()
        self._recording = False
        if handed:
            names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
            self.profiler_result = ProfilerResult(events, os.getpid(), {tid: names.get(tid, "thread")
                                                                        for tid in {e.tid for e in events}})
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def _begin_step(self) -> None:
        self._step_event = RecordEvent(f"ProfileStep#{self.step_num}", TracerEventType.ProfileStep)
        self._step_event.begin()

    def _end_step(self) -> None:
        if self._step_event is not None:
            self._step_event.end()
            self._step_event = None

    # ------------------------------------------------------------ results
    def step_info(self, unit: str | None = None) -> str:
        """Average reader cost, batch cost and ips of the steps since the last call."""
        return self._timer.info(unit)

    def export(self, path: str = "", format: str = "json") -> None:
        """Write the last recording as a Chrome trace (`chrome://tracing`, Perfetto)."""
        self._result("export").save(path, format)

    def summary(self, sorted_by: SortedKeys = SortedKeys.CPUTotal, op_detail: bool = True, thread_sep: bool = False,
                time_unit: str = "ms", views: Any = None) -> None:
        """Print the last recording's tables (nothing with timer_only, as Paddle)."""
        if self.timer_only:
            return
        print(summary_text(self._result("summary"), sorted_by, op_detail, thread_sep, time_unit, views))

    def _result(self, what: str) -> ProfilerResult:
        if self.profiler_result is None:
            raise RuntimeError(f"Profiler.{what}: no recording has finished yet (a recording ends at stop() or "
                               "after a RECORD_AND_RETURN step)")
        return self.profiler_result
