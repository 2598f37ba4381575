"""Which low-precision dtypes amp can use on a device, as `paddle.amp.is_float16_supported` answers."""
from __future__ import annotations

from .. import place as _place

__all__ = ["is_float16_supported", "is_bfloat16_supported"]


def _place_of(device: str | None) -> _place.Place:
    """The place `device` names ('cpu', 'gpu', 'gpu:N'; None: the current one); a ValueError for others."""
    return _place.to_place(device)


def is_float16_supported(device: str | None = None) -> bool:
    """float16 amp: on a GPU that is there, not on the CPU (as Paddle's CPU build answers)."""
    return _place_of(device).kind == "gpu" and _place.device_count() > 0


def is_bfloat16_supported(device: str | None = None) -> bool:
    """bfloat16 amp: never, runtime has no bfloat16 dtype (Paddle's CPU build answers True for the CPU)."""
    _place_of(device)
    return False
