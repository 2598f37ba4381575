"""`paddle.device.cuda`: the GPU's streams, events, memory and properties, as Paddle spells them, over CuPy.

Kernels run on CuPy's current stream: `stream_guard(s)` makes `s` current, so the ops of its block (and a
static run started in it) queue there. Memory figures are those of CuPy's default pool, which holds
every array `runtime` makes on a GPU: `memory_allocated` the bytes in use, `memory_reserved` the bytes
the pool holds, `empty_cache` gives the unused ones back to the driver. CuPy's pool keeps no peak, so
there is no `max_memory_allocated`.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, NamedTuple

from ..place import CUDAPlace, _cupy, current_place, to_place
from ..place import device_count as _device_count

__all__ = ["device_count", "synchronize", "empty_cache", "memory_allocated", "memory_reserved",
           "get_device_properties", "get_device_name", "get_device_capability", "Stream", "Event",
           "current_stream", "stream_guard"]


def device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy or a GPU)."""
    return _device_count()


def _cupy_for(api: str) -> Any:
    cp = _cupy()
    if cp is None:
        raise ValueError(f"paddle.device.cuda.{api}: CuPy with a usable GPU is not available; install the "
                         "'gpu' extra on a machine with CUDA")
    return cp


def _device_id(api: str, device: Any) -> int:
    """The GPU `device` names: None (the current one, else 0), an int, a CUDAPlace or 'gpu:N'."""
    _cupy_for(api)
    if device is None:
        place = current_place()
        index = place.device_id if place.is_gpu_place() else 0
    elif isinstance(device, int) and not isinstance(device, bool):
        index = device
    elif isinstance(device, (str, CUDAPlace)):
        place = to_place(device)
        if not place.is_gpu_place():
            raise ValueError(f"paddle.device.cuda.{api}: argument 'device' must name a GPU, got {device!r}")
        index = place.device_id
    else:
        raise TypeError(f"paddle.device.cuda.{api}: argument 'device' must be None, an int, a CUDAPlace or "
                        f"'gpu:N', got {type(device).__name__}")
    if not 0 <= index < device_count():
        raise ValueError(f"paddle.device.cuda.{api}: device {device!r} is not available "
                         f"({device_count()} GPU(s) visible)")
    return index


def synchronize(device: Any = None) -> None:
    """Wait until every kernel queued on the GPU is done."""
    _cupy_for("synchronize").cuda.Device(_device_id("synchronize", device)).synchronize()


def empty_cache() -> None:
    """Give the memory CuPy's pool holds unused back to the driver (nothing to do without a GPU)."""
    cp = _cupy()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()


def memory_allocated(device: Any = None) -> int:
    """Bytes of GPU memory in use by arrays (CuPy's default pool)."""
    cp = _cupy_for("memory_allocated")
    with cp.cuda.Device(_device_id("memory_allocated", device)):
        return int(cp.get_default_memory_pool().used_bytes())


def memory_reserved(device: Any = None) -> int:
    """Bytes of GPU memory CuPy's default pool holds, in use or kept for reuse."""
    cp = _cupy_for("memory_reserved")
    with cp.cuda.Device(_device_id("memory_reserved", device)):
        return int(cp.get_default_memory_pool().total_bytes())


class DeviceProperties(NamedTuple):
    """What `get_device_properties` reports, named as Paddle's."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int


def get_device_properties(device: Any = None) -> DeviceProperties:
    """The GPU's name, compute capability, memory and multiprocessor count."""
    props = _cupy_for("get_device_properties").cuda.runtime.getDeviceProperties(
        _device_id("get_device_properties", device))
    name = props["name"]
    return DeviceProperties(name.decode() if isinstance(name, bytes) else str(name), int(props["major"]),
                            int(props["minor"]), int(props["totalGlobalMem"]), int(props["multiProcessorCount"]))


def get_device_name(device: Any = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    props = get_device_properties(device)
    return props.major, props.minor


class Event:
    """A CUDA event: `record` it on a stream, then `query`, `synchronize` or time it (`elapsed_time`)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        cp = _cupy_for("Event")
        self._event = cp.cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)

    def record(self, stream: "Stream | None" = None) -> None:
        """Mark the point `stream` (default: the current stream) has reached."""
        self._event.record(None if stream is None else stream._stream)

    def query(self) -> bool:
        """True when the work before the recorded point is done."""
        return bool(self._event.done)

    def synchronize(self) -> None:
        """Wait until the work before the recorded point is done."""
        self._event.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and `end_event` (both recorded, with timing enabled)."""
        return float(_cupy_for("Event.elapsed_time").cuda.get_elapsed_time(self._event, end_event._event))


class Stream:
    """A CUDA stream of GPU `device`; Paddle's priority 1 (high) or 2 (normal)."""

    def __init__(self, device: Any = None, priority: int = 2):
        cp = _cupy_for("Stream")
        if priority not in (1, 2):
            raise ValueError(f"paddle.device.cuda.Stream: argument 'priority' must be 1 (high) or 2 (normal), "
                             f"got {priority!r}")
        self.device = CUDAPlace(_device_id("Stream", device))
        with cp.cuda.Device(self.device.device_id):
            self._stream = cp.cuda.Stream(non_blocking=True, priority=-1 if priority == 1 else 0)

    @classmethod
    def _of(cls, cupy_stream: Any, device: Any) -> "Stream":
        """A Stream standing for an existing CuPy stream."""
        stream = object.__new__(cls)
        stream.device = CUDAPlace(_device_id("current_stream", device))
        stream._stream = cupy_stream
        return stream

    @property
    def cuda_stream(self) -> int:
        """The stream's handle (cudaStream_t) as an int."""
        return int(self._stream.ptr)

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream after this call waits for `event`."""
        self._stream.wait_event(event._event)

    def wait_stream(self, stream: "Stream") -> None:
        """Work queued on this stream after this call waits for what `stream` has queued so far."""
        self.wait_event(stream.record_event())

    def query(self) -> bool:
        return bool(self._stream.done)

    def synchronize(self) -> None:
        self._stream.synchronize()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)


def current_stream(device: Any = None) -> Stream:
    """The stream GPU ops queue on now (CuPy's current stream)."""
    cp = _cupy_for("current_stream")
    return Stream._of(cp.cuda.get_current_stream(), device)


@contextlib.contextmanager
def stream_guard(stream: Stream | None) -> Iterator[None]:
    """Make `stream` current in the block: the GPU ops it runs queue there (None: no change)."""
    if stream is None:
        yield
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"paddle.device.cuda.stream_guard: argument 'stream' must be a Stream, "
                        f"got {type(stream).__name__}")
    with stream._stream:
        yield
