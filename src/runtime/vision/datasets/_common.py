"""What the datasets share: where files live, the image backends, and a pickle reader that
rebuilds only plain data.

Nothing is downloaded: a dataset reads local files. A missing default file raises
`FileNotFoundError` naming the file, the address to fetch it from and where to put it.
"""
from __future__ import annotations

import os
import pickle
from typing import IO, Any

import numpy as np

DATA_HOME = os.path.expanduser(os.path.join("~", ".cache", "paddle", "dataset"))

try:  # Pillow is optional: the 'pil' backend returns uint8 arrays without it
    from PIL import Image as PILImage
except ImportError:
    PILImage = None

BACKENDS = ("pil", "cv2")


def check_backend(backend: str | None) -> str:
    """The image backend: None means 'pil', Paddle's default."""
    backend = "pil" if backend is None else backend
    if backend not in BACKENDS:
        raise ValueError(f"Expected backend are one of ['pil', 'cv2'], but got {backend!r} (argument 'backend')")
    return backend


def check_mode(mode: Any) -> str:
    if not isinstance(mode, str) or mode.lower() not in ("train", "test"):
        raise ValueError(f"argument 'mode' should be 'train' or 'test', but got {mode!r}")
    return mode.lower()


def local_file(path: str | None, arg: str, name: str, url: str, download: bool) -> str:
    """The file to read: `path` if given, else the file of `url` under DATA_HOME/`name`."""
    if path is not None:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"argument '{arg}': no such file: {path!r}")
        return path
    if not download:
        raise ValueError(f"argument '{arg}' is not set and downloading automatically is disabled")
    default = os.path.join(DATA_HOME, name, url.split("/")[-1])
    if not os.path.isfile(default):
        raise FileNotFoundError(
            f"{default} not found, and this runtime does not download datasets: fetch {url} and place it at "
            f"{default}, or pass its path as '{arg}'")
    return default


def pil_image(arr: np.ndarray) -> Any:
    """A PIL image of a uint8 array when Pillow is installed, else the array itself."""
    return arr if PILImage is None else PILImage.fromarray(arr)


def _array_rebuilders() -> dict[tuple[str, str], Any]:
    """The functions NumPy names when it pickles an array, under every module path it uses."""
    sample = np.zeros(1)
    rebuild = sample.__reduce__()[0]
    frombuffer = sample.__reduce_ex__(5)[0]
    allowed = {("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype}
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(module, "_reconstruct")] = rebuild
    for module in ("numpy.core.numeric", "numpy._core.numeric"):
        allowed[(module, "_frombuffer")] = frombuffer
    return allowed


class _PlainDataUnpickler(pickle.Unpickler):
    """Rebuilds builtin containers, strings, bytes, numbers and NumPy arrays; any other global
    (a class or a function a file could use to run code) is refused."""

    _ALLOWED = _array_rebuilders()

    def find_class(self, module: str, name: str) -> Any:
        found = self._ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}: only plain data and numpy arrays "
                                         "are read from dataset files")
        return found


def load_plain_pickle(f: IO[bytes]) -> Any:
    """Unpickle a Python 2 style batch file (byte-string keys) allowing only plain data."""
    return _PlainDataUnpickler(f, encoding="bytes").load()
