"""The progress line `paddle.Model` prints, in Paddle's format.

verbose=1 redraws one bar per epoch (`step 2/3 [====>...] - loss: ... - ETA: 0s - 5ms/step`), going
back over the previous draw with backspaces and a carriage return as Paddle does on POSIX; verbose=2
(and 3) prints one line per update (`step 2/3 - loss: ... - 5ms/step`). Values print with 4 decimals,
or in exponent form when their magnitude is at most 1e-3."""
from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Sequence

import numpy as np

__all__ = ["ProgressBar"]


def _format_value(value: Any) -> str:
    """One logged value as Paddle prints it."""
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype in (np.float32, np.float64):
        value = value.item()
    if isinstance(value, (float, np.float32, np.float64)):
        return f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"
    return f"{value}"


def _format_values(values: Sequence[tuple[str, Any]]) -> str:
    """` - name: v1 v2` for each (name, value or list of values)."""
    info = ""
    for name, value in values:
        info += f" - {name}:"
        for v in value if isinstance(value, list) else [value]:
            info += " " + _format_value(v)
    return info


def _format_eta(seconds: int) -> str:
    if seconds > 3600:
        return f"{seconds // 3600}:{(seconds % 3600) // 60:02}:{seconds % 60:02}"
    if seconds > 60:
        return f"{seconds // 60}:{seconds % 60:02}"
    return f"{seconds}s"


class ProgressBar:
    """Progress of `num` steps (None: unknown), printed to stdout at each `update`."""

    def __init__(self, num: int | None = None, width: int = 30, verbose: int = 1, start: bool = True,
                 file: Any = None, name: str = "step"):
        if isinstance(num, int) and num <= 0:
            raise TypeError("num should be None or integer (> 0)")
        self._num = num
        self._width = min(width, self._max_width())
        self._total_width = 0
        self._verbose = verbose
        self.file = file if file is not None else sys.stdout
        self._start = time.time() if start else 0.0
        self.name = name

    @staticmethod
    def _max_width() -> int:
        """The bar fits the terminal, leaving room for the values (Paddle's rule)."""
        columns = shutil.get_terminal_size().columns or 80
        return min(int(columns * 0.6), columns - 50)

    def start(self) -> None:
        """Restart the clock that the per-step time is measured from."""
        self.file.flush()
        self._start = time.time()

    def _speed(self, per_step: float) -> str:
        if per_step >= 1 or per_step == 0:
            return f" - {per_step:.0f}s/{self.name}"
        if per_step >= 1e-3:
            return f" - {per_step * 1e3:.0f}ms/{self.name}"
        return f" - {per_step * 1e6:.0f}us/{self.name}"

    def update(self, current_num: int, values: Sequence[tuple[str, Any]] = ()) -> None:
        """Show step `current_num` with the named `values`."""
        per_step = (time.time() - self._start) / current_num if current_num else 0
        speed = self._speed(per_step)
        if self._verbose == 1:
            self._draw_bar(current_num, values, per_step, speed)
        elif self._verbose in (2, 3):
            if self._num:
                digits = int(np.log10(self._num)) + 1
                count = f"{self.name} {current_num:{digits}d}/{self._num}"
            else:
                count = f"{self.name} {current_num:3}"
            sys.stdout.write(count + _format_values(values) + speed + "\n")
            sys.stdout.flush()

    def _draw_bar(self, current: int, values: Sequence[tuple[str, Any]], per_step: float, speed: str) -> None:
        previous_width = self._total_width
        sys.stdout.write("\b" * previous_width + "\r")
        if self._num is not None:
            digits = int(np.log10(self._num)) + 1
            bar = f"{self.name} {current:{digits}d}/{self._num} ["
            filled = int(self._width * float(current) / self._num)
            if filled > 0:
                bar += "=" * (filled - 1) + (">" if current < self._num else "=")
            bar += "." * (self._width - filled) + "]"
        else:
            bar = f"{self.name} {current:3}"
        self._total_width = len(bar)
        sys.stdout.write(bar)
        info = _format_values(values)
        if self._num is not None and current < self._num:
            info += f" - ETA: {_format_eta(int(per_step * (self._num - current)))}"
        info += speed
        self._total_width += len(info)
        if previous_width > self._total_width:
            info += " " * (previous_width - self._total_width)
        if self._num is None or current >= self._num:
            info += "\n"
        sys.stdout.write(info)
        sys.stdout.flush()
