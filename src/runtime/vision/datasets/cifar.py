"""Cifar10 and Cifar100 from the python-version tar.gz archives."""
from __future__ import annotations

import tarfile
from typing import Any, Callable

import numpy as np

from ...dtypes import get_default_dtype
from ...io.dataset import Dataset
from ...pickle_load import load_plain
from ._common import check_backend, check_mode, local_file, pil_image

__all__ = ["Cifar10", "Cifar100"]


def _entry(batch: Any, *keys: str) -> Any:
    """The first of `keys` in a batch dict; Python 2 pickles give str keys, Python 3 ones bytes."""
    if not isinstance(batch, dict):
        return None
    for key in keys:
        for k in (key, key.encode()):
            if k in batch:
                return batch[k]
    return None


class Cifar10(Dataset):
    """32x32 colour images in 10 classes: items are (image, label) with label an int64 scalar
    array. The batches inside `data_file` (members whose name contains 'data_batch' for
    training, 'test_batch' for testing) are pickles; they are read with paddle.load's restricted
    unpickler, which rebuilds only plain data and NumPy arrays. Images are HWC; backend as in `MNIST`."""

    URL = "https://dataset.bj.bcebos.com/cifar/cifar-10-python.tar.gz"
    FLAGS = {"train": "data_batch", "test": "test_batch"}

    def __init__(self, data_file: str | None = None, mode: str = "train",
                 transform: Callable[[Any], Any] | None = None, download: bool = True,
                 backend: str | None = None) -> None:
        self.mode = check_mode(mode)
        self.backend = check_backend(backend)
        self.data_file = local_file(data_file, "data_file", "cifar", self.URL, download)
        self.flag = self.FLAGS[self.mode]
        self.transform = transform
        self.data = self._load_data()
        self.dtype = get_default_dtype()

    def _load_data(self) -> list[tuple[np.ndarray, int]]:
        data = []
        with tarfile.open(self.data_file, mode="r") as f:
            names = sorted(m.name for m in f if m.isfile() and self.flag in m.name)
            for name in names:
                batch = load_plain(f.extractfile(name).read(), f"{self.data_file}:{name}")
                images, labels = _entry(batch, "data"), _entry(batch, "labels", "fine_labels")
                if images is None or labels is None:
                    raise ValueError(f"{self.data_file}: member {name} has no 'data' and 'labels' "
                                     "(or 'fine_labels') entries")
                data.extend(zip(np.asarray(images, dtype=np.uint8), labels))
        return data

    def __getitem__(self, idx: int) -> tuple[Any, np.ndarray]:
        image, label = self.data[idx]
        image = image.reshape(3, 32, 32).transpose(1, 2, 0)
        if self.backend == "pil":
            image = pil_image(np.ascontiguousarray(image))
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, np.array(label, dtype=np.int64)
        return image.astype(self.dtype), np.array(label, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.data)


class Cifar100(Cifar10):
    """32x32 colour images in 100 classes (the fine labels); members named 'train' / 'test'."""

    URL = "https://dataset.bj.bcebos.com/cifar/cifar-100-python.tar.gz"
    FLAGS = {"train": "train", "test": "test"}
