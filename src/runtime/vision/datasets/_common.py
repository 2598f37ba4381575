"""What the datasets share: where files live and the image backends.

Nothing is downloaded: a dataset reads local files. A missing default file raises
`FileNotFoundError` naming the file, the address to fetch it from and where to put it.
"""
from __future__ import annotations

import os
from typing import Any

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
