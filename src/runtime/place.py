"""Places (devices) and the array module behind each: NumPy on CPU, CuPy on GPU."""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

import numpy as np

__all__ = ["CPUPlace", "CUDAPlace", "CUDAPinnedPlace", "set_device", "get_device",
           "is_compiled_with_cuda", "device_count"]


class Place:
    """Base of all places; equal places compare equal and hash alike."""

    kind = "undefined"

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self):
        return (self.kind,)

    def is_cpu_place(self) -> bool:
        return self.kind == "cpu"

    def is_gpu_place(self) -> bool:
        return self.kind == "gpu"


class CPUPlace(Place):
    """The host; arrays are NumPy arrays."""

    kind = "cpu"

    def __repr__(self) -> str:
        return "Place(cpu)"


class CUDAPlace(Place):
    """GPU `device_id`; arrays are CuPy arrays on that device."""

    kind = "gpu"

    def __init__(self, device_id: int = 0):
        if not isinstance(device_id, int) or device_id < 0:
            raise ValueError(f"CUDAPlace: device_id must be a non-negative int, got {device_id!r}")
        self.device_id = device_id

    def _key(self):
        return (self.kind, self.device_id)

    def get_device_id(self) -> int:
        return self.device_id

    def __repr__(self) -> str:
        return f"Place(gpu:{self.device_id})"


class CUDAPinnedPlace(Place):
    """Page-locked host memory; treated as host memory here."""

    kind = "gpu_pinned"

    def __repr__(self) -> str:
        return "Place(gpu_pinned)"


_CPU = CPUPlace()
_current: Place = _CPU


def _cupy():
    try:
        import cupy  # noqa: PLC0415 - optional dependency
    except ImportError:
        return None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
    except Exception:  # no driver / no device
        return None
    return cupy


def is_compiled_with_cuda() -> bool:
    """True when CuPy and at least one GPU are usable."""
    return _cupy() is not None


def device_count() -> int:
    cp = _cupy()
    return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def set_device(device: str) -> Place:
    """Select the default place: 'cpu', 'gpu' or 'gpu:N'."""
    global _current
    if not isinstance(device, str):
        raise TypeError(f"set_device: device must be a str like 'cpu' or 'gpu:0', got {device!r}")
    name = device.lower()
    if name == "cpu":
        _current = _CPU
    elif name == "gpu" or name.startswith("gpu:"):
        idx = int(name[4:]) if ":" in name else 0
        if idx >= device_count():
            raise ValueError(f"set_device: device {device!r} is not available "
                             f"({device_count()} GPU(s) visible; CuPy installed: {_cupy() is not None})")
        _current = CUDAPlace(idx)
    else:
        raise ValueError(f"set_device: expected 'cpu', 'gpu' or 'gpu:N', got {device!r}")
    return _current


def get_device() -> str:
    """The default place as Paddle spells it: 'cpu' or 'gpu:N'."""
    if isinstance(_current, CUDAPlace):
        return f"gpu:{_current.device_id}"
    return "cpu"


def current_place() -> Place:
    return _current


@contextlib.contextmanager
def default_place(place: Place) -> Iterator[None]:
    """Make `place` the default for creation ops inside the block (e.g. a gradient rule's
    constants land where its gradients live, whatever the user's default device is)."""
    global _current
    saved = _current
    _current = place
    try:
        yield
    finally:
        _current = saved


def to_place(place: Any) -> Place:
    """Accept a Place, 'cpu'/'gpu:N' string or None (the current default)."""
    if place is None:
        return _current
    if isinstance(place, Place):
        if isinstance(place, CUDAPinnedPlace):
            return _CPU
        return place
    if isinstance(place, str):
        name = place.lower()
        if name == "cpu":
            return _CPU
        if name == "gpu" or name.startswith("gpu:"):
            return CUDAPlace(int(name[4:]) if ":" in name else 0)
    raise ValueError(f"expected a place such as paddle.CPUPlace() or 'gpu:0', got {place!r}")


def array_module(place: Place):
    """NumPy for the host, CuPy for a GPU place (raising ValueError, as Paddle's CPU build does for a
    CUDAPlace, if CuPy is unusable)."""
    if place.kind == "gpu":
        cp = _cupy()
        if cp is None:
            raise ValueError(f"{place!r} requested but CuPy with a usable GPU is not available; "
                               "install the 'gpu' extra on a machine with CUDA")
        return cp
    return np


def errstate(xp, **kwargs) -> contextlib.AbstractContextManager:
    """`np.errstate(**kwargs)` for NumPy work; nothing for CuPy, which never warns on
    floating-point errors (and has no errstate)."""
    return np.errstate(**kwargs) if xp is np else contextlib.nullcontext()


def is_device_array(a: Any) -> bool:
    """True for a CuPy array. No import is tried: where CuPy was never imported nothing can be one, and a
    failed import costs a search of sys.path on every call."""
    if isinstance(a, np.ndarray):
        return False
    cp = sys.modules.get("cupy")
    return cp is not None and isinstance(a, cp.ndarray)


def module_of(a: Any):
    """The array module of array `a`: NumPy for host arrays, CuPy for device ones."""
    if isinstance(a, np.ndarray):
        return np
    import cupy  # noqa: PLC0415 - only reached for CuPy arrays
    return cupy


def move(arr, place: Place):
    """`arr` (a NumPy or CuPy array) on `place`: itself when already there, else a copy there."""
    if place.kind != "gpu":
        return arr if isinstance(arr, np.ndarray) else arr.get()
    if place_of_array(arr) == place:
        return arr
    cp = array_module(place)
    with cp.cuda.Device(place.device_id):
        return cp.array(arr) if isinstance(arr, cp.ndarray) else cp.asarray(arr)


def place_of_array(a) -> Place:
    """The place that holds array `a`."""
    if isinstance(a, np.ndarray) or np.isscalar(a):
        return _CPU
    dev = getattr(a, "device", None)
    return CUDAPlace(int(getattr(dev, "id", 0)))
