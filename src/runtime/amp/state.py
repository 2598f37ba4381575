"""The amp state that outlives an auto_cast block, and where Paddle lets amp take effect.

Paddle records the dtype of the last auto_cast entered (float16 or bfloat16) in a process-wide state
that is not restored on exit; GradScaler.scale reads it. Paddle enables amp only on a GPU (or XPU or
custom device) place: on the CPU, auto_cast and GradScaler warn and change nothing.
"""
from __future__ import annotations

from .. import place as _place

__all__ = ["amp_state", "amp_place", "amp_place_ok"]


class _AmpState:
    """amp_dtype: 'float32' until an auto_cast is entered, then the dtype it asked for."""

    def __init__(self) -> None:
        self.amp_dtype = "float32"


amp_state = _AmpState()


def amp_place() -> _place.Place:
    """The place new tensors go to, which decides whether amp can take effect (as Paddle's expected place)."""
    return _place.current_place()


def amp_place_ok() -> bool:
    """Whether amp takes effect on the current place: a GPU place, as in Paddle (runtime has no XPU)."""
    return amp_place().kind == "gpu"
