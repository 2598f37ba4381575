"""`paddle.device`: device selection, as Paddle spells it."""
from .place import device_count, get_device, is_compiled_with_cuda, set_device

__all__ = ["set_device", "get_device", "is_compiled_with_cuda", "device_count"]
