"""`Profiler.step_info()`: the average batch cost, reader cost and throughput of the steps since the
last call, as Paddle's benchmark timer reports them. Runs also with `timer_only=True` and in any
scheduler state. Reader cost is the time spent in spans marked as data loading
(`RecordEvent(name, TracerEventType.Dataloader)`: `paddle.io.DataLoader` marks each batch it loads)
during those steps.
"""
from __future__ import annotations

import time

__all__ = ["StepTimer"]


class StepTimer:
    """Step times of one Profiler (perf_counter_ns)."""

    def __init__(self):
        self._last: int | None = None
        self.reset()

    def reset(self) -> None:
        self._steps = 0
        self._batch_ns = 0
        self._reader_ns = 0
        self._samples = 0
        self._counts_samples = True

    def begin(self) -> None:
        self.reset()
        self._last = time.perf_counter_ns()

    def end(self) -> None:
        self._last = None

    def record_reader(self, ns: int) -> None:
        if self._last is not None:
            self._reader_ns += ns

    def step(self, num_samples: int | None = None) -> None:
        """A step ended now (`num_samples`: its batch size, for ips in samples/s; None: ips in steps/s)."""
        if self._last is None:
            return
        now = time.perf_counter_ns()
        self._steps += 1
        self._batch_ns += now - self._last
        self._last = now
        if num_samples:
            self._samples += num_samples
        else:
            self._counts_samples = num_samples is not None and self._counts_samples

    def info(self, unit: str | None = None) -> str:
        """" reader_cost: x s batch_cost: x s ips: x unit/s" over the steps since the last call (then reset)."""
        message = ""
        if self._steps and self._batch_ns:
            reader, batch = self._reader_ns / self._steps / 1e9, self._batch_ns / self._steps / 1e9
            if reader:
                message += f" reader_cost: {reader:.5f} s"
            message += f" batch_cost: {batch:.5f} s"
            if self._counts_samples and self._samples:
                message += f" ips: {self._samples / (self._batch_ns / 1e9):.3f} {unit or 'samples'}/s"
            else:
                message += f" ips: {self._steps / (self._batch_ns / 1e9):.3f} steps/s"
        self.reset()
        return message
