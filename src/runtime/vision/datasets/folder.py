"""DatasetFolder and ImageFolder: samples are files under a directory tree.

The default loader opens images with Pillow when it is installed. Without Pillow it reads
only `.npy` files (NumPy arrays, loaded with allow_pickle=False) and raises ImportError for
image files; pass `loader=` to read other formats. `.npy` is among the default extensions.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import numpy as np

from ...io.dataset import Dataset
from ._common import PILImage

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "has_valid_extension", "default_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp", ".npy")


def has_valid_extension(filename: str, extensions: Sequence[str]) -> bool:
    """Whether `filename` ends with one of `extensions` (case-insensitive)."""
    if not isinstance(extensions, (list, tuple)):
        raise TypeError(f"argument 'extensions' must be a list or tuple, got {type(extensions).__name__}")
    return filename.lower().endswith(tuple(x.lower() for x in extensions))


def default_loader(path: str) -> Any:
    """A .npy file as its array; an image as an RGB PIL image (needs Pillow)."""
    if path.lower().endswith(".npy"):
        return np.load(path, allow_pickle=False)
    if PILImage is None:
        raise ImportError(f"cannot load {path!r}: reading images needs Pillow (pip install pillow); without it the "
                          "default loader reads .npy files only; pass loader= to read other files")
    with open(path, "rb") as f:
        return PILImage.open(f).convert("RGB")


def _validity(extensions: Sequence[str] | None, is_valid_file: Callable[[str], bool] | None
              ) -> tuple[Sequence[str], Callable[[str], bool]]:
    """The extensions to report and the file filter: `extensions` if given, else
    `is_valid_file` if given, else the default extensions."""
    if extensions is None and is_valid_file is not None:
        return (), is_valid_file
    exts = IMG_EXTENSIONS if extensions is None else extensions
    return exts, lambda path: has_valid_extension(path, exts)


def _walk_files(top: str, is_valid: Callable[[str], bool]) -> list[str]:
    """The valid files under `top`, directories and names in sorted order."""
    found = []
    for root, _, names in sorted(os.walk(top, followlinks=True)):
        found.extend(os.path.join(root, n) for n in sorted(names) if is_valid(os.path.join(root, n)))
    return found


def _check_root(root: Any) -> str:
    if not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"argument 'root' must be a path, got {type(root).__name__}")
    root = os.path.expanduser(os.fspath(root))
    if not os.path.isdir(root):
        raise FileNotFoundError(f"argument 'root': no such directory: {root!r}")
    return root


class DatasetFolder(Dataset):
    """Samples laid out as root/<class>/.../<file>: items are (loader(path), class index),
    classes being the sorted subdirectory names of `root`."""

    def __init__(self, root: str, loader: Callable[[str], Any] | None = None, extensions: Sequence[str] | None = None,
                 transform: Callable[[Any], Any] | None = None,
                 is_valid_file: Callable[[str], bool] | None = None) -> None:
        self.root = _check_root(root)
        self.transform = transform
        exts, is_valid = _validity(extensions, is_valid_file)
        self.classes, self.class_to_idx = self._find_classes(self.root)
        self.samples = [(path, self.class_to_idx[c]) for c in self.classes
                        for path in _walk_files(os.path.join(self.root, c), is_valid)]
        if not self.samples:
            raise RuntimeError(f"Found 0 directories in subfolders of: {self.root}\n"
                               f"Supported extensions are: {','.join(exts)}")
        self.loader = default_loader if loader is None else loader
        self.extensions = exts
        self.targets = [s[1] for s in self.samples]

    @staticmethod
    def _find_classes(root: str) -> tuple[list[str], dict[str, int]]:
        classes = sorted(d.name for d in os.scandir(root) if d.is_dir())
        return classes, {c: i for i, c in enumerate(classes)}

    def __getitem__(self, index: int) -> tuple[Any, int]:
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, target

    def __len__(self) -> int:
        return len(self.samples)


class ImageFolder(Dataset):
    """Every valid file under `root` (any depth), unlabelled: items are [loader(path)]."""

    def __init__(self, root: str, loader: Callable[[str], Any] | None = None, extensions: Sequence[str] | None = None,
                 transform: Callable[[Any], Any] | None = None,
                 is_valid_file: Callable[[str], bool] | None = None) -> None:
        self.root = _check_root(root)
        exts, is_valid = _validity(extensions, is_valid_file)
        self.samples = _walk_files(self.root, is_valid)
        if not self.samples:
            raise RuntimeError(f"Found 0 files in subfolders of: {self.root}\n"
                               f"Supported extensions are: {','.join(exts)}")
        self.loader = default_loader if loader is None else loader
        self.extensions = exts
        self.transform = transform

    def __getitem__(self, index: int) -> list[Any]:
        sample = self.loader(self.samples[index])
        if self.transform is not None:
            sample = self.transform(sample)
        return [sample]

    def __len__(self) -> int:
        return len(self.samples)
