"""MNIST and FashionMNIST from their idx-ubyte .gz files."""
from __future__ import annotations

import gzip
from typing import Any, Callable

import numpy as np

from ...dtypes import get_default_dtype
from ...io.dataset import Dataset
from ._common import check_backend, check_mode, local_file, pil_image

__all__ = ["MNIST", "FashionMNIST"]

_IMAGE_MAGIC, _LABEL_MAGIC = 2051, 2049


def _read_idx(path: str, magic: int, ndim: int) -> np.ndarray:
    """The uint8 array of a gzip'd idx file (big-endian header: magic, then one count per dim)."""
    with gzip.open(path, "rb") as f:
        buf = f.read()
    header = np.frombuffer(buf, ">u4", count=1 + ndim) if len(buf) >= 4 * (1 + ndim) else None
    if header is None or header[0] != magic:
        raise ValueError(f"{path} is not an idx file with magic number {magic}")
    shape = tuple(int(n) for n in header[1:])
    data = np.frombuffer(buf, np.uint8, offset=4 * (1 + ndim))
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: the header says {shape} but the file holds {data.size} values")
    return data.reshape(shape)


class MNIST(Dataset):
    """Handwritten digits: items are (image, label) with label an int64 array of shape [1].

    `image_path`/`label_path` name the .gz idx files; left None, the files are looked up
    under ~/.cache/paddle/dataset/mnist (nothing is downloaded). With backend 'cv2' the image
    is a float array of shape [rows, cols] in the default dtype (values 0..255, as Paddle);
    with 'pil' it is a PIL image, or a uint8 array when Pillow is not installed. `transform`
    is applied to the image."""

    NAME = "mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/mnist/"

    def __init__(self, image_path: str | None = None, label_path: str | None = None, mode: str = "train",
                 transform: Callable[[Any], Any] | None = None, download: bool = True,
                 backend: str | None = None) -> None:
        self.mode = check_mode(mode)
        self.backend = check_backend(backend)
        prefix = "train" if self.mode == "train" else "t10k"
        self.image_path = local_file(image_path, "image_path", self.NAME,
                                     f"{self.URL_PREFIX}{prefix}-images-idx3-ubyte.gz", download)
        self.label_path = local_file(label_path, "label_path", self.NAME,
                                     f"{self.URL_PREFIX}{prefix}-labels-idx1-ubyte.gz", download)
        self.transform = transform
        self.images = _read_idx(self.image_path, _IMAGE_MAGIC, 3)
        self.labels = _read_idx(self.label_path, _LABEL_MAGIC, 1).astype(np.int64)
        if len(self.images) != len(self.labels):
            raise ValueError(f"{self.image_path} holds {len(self.images)} images but {self.label_path} holds "
                             f"{len(self.labels)} labels")
        self.dtype = get_default_dtype()

    def __getitem__(self, idx: int) -> tuple[Any, np.ndarray]:
        image, label = self.images[idx], np.array([self.labels[idx]], dtype=np.int64)
        image = pil_image(image) if self.backend == "pil" else image.astype(np.float32)
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return image.astype(self.dtype), label

    def __len__(self) -> int:
        return len(self.labels)


class FashionMNIST(MNIST):
    """Zalando's clothing images in MNIST's format (files under .../fashion-mnist)."""

    NAME = "fashion-mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/fashion_mnist/"
