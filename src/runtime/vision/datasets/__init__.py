"""`paddle.vision.datasets`: MNIST, FashionMNIST, Cifar10/100, DatasetFolder, ImageFolder.

Every dataset reads local files; nothing is downloaded. Flowers and VOC2012 are not
available (constructing them raises NotImplementedError).
"""
from typing import Any

from ...io.dataset import Dataset
from .cifar import Cifar10, Cifar100
from .folder import DatasetFolder, ImageFolder
from .mnist import MNIST, FashionMNIST

__all__ = ["DatasetFolder", "ImageFolder", "MNIST", "FashionMNIST", "Flowers", "Cifar10", "Cifar100", "VOC2012"]


class _Unavailable(Dataset):
    """A Paddle dataset this runtime does not read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"paddle.vision.datasets.{type(self).__name__} is not available in this runtime; "
                                  "use DatasetFolder or a paddle.io.Dataset over the extracted files")


class Flowers(_Unavailable):
    """Oxford 102 Flowers: not available (raises NotImplementedError)."""


class VOC2012(_Unavailable):
    """Pascal VOC 2012 segmentation: not available (raises NotImplementedError)."""
