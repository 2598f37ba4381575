"""`paddle.device`: device selection, as Paddle spells it; `paddle.device.cuda` has the GPU's streams,
events, memory and properties."""
from typing import Any

from ..place import current_place, device_count, get_device, is_compiled_with_cuda, set_device, to_place
from . import cuda

__all__ = ["set_device", "get_device", "is_compiled_with_cuda", "device_count", "synchronize", "cuda"]


def synchronize(device: Any = None) -> None:
    """Wait until the work queued on `device` (default: the current device) is done; nothing to wait
    for on the CPU."""
    place = current_place() if device is None else to_place(device)
    if place.is_gpu_place():
        cuda.synchronize(place)
