"""Datasets: map-style (`__getitem__`/`__len__`) and iterable ones, and ways to combine and split them."""
from __future__ import annotations

import bisect
import math
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from .. import generator as _generator
from ..tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ComposeDataset", "ChainDataset",
           "ConcatDataset", "Subset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define `__getitem__(idx)` and `__len__()`."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError(f"'__getitem__' not implement in class {type(self).__name__}")

    def __len__(self) -> int:
        raise NotImplementedError(f"'__len__' not implement in class {type(self).__name__}")


class IterableDataset(Dataset):
    """A stream of samples: subclasses define `__iter__()`; there is no indexing and no length."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"'__iter__' not implement in class {type(self).__name__}")

    def __getitem__(self, idx: int) -> Any:
        raise RuntimeError(f"'__getitem__' should not be called for IterableDataset {type(self).__name__}")

    def __len__(self) -> int:
        # TypeError (Paddle raises RuntimeError) so that list(dataset) and len-hints work
        raise TypeError(f"'__len__' should not be called for IterableDataset {type(self).__name__}")


def _rng(generator: Any = None) -> np.random.Generator:
    """The NumPy generator to draw from: `generator`'s, else the one `paddle.seed` seeds."""
    if generator is None:
        return _generator.default_generator().rng
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(getattr(generator, "rng", None), np.random.Generator):
        return generator.rng
    raise TypeError(f"'generator' must be a paddle Generator, a numpy Generator or None, got "
                    f"{type(generator).__name__}")


def _rows(t: Any, idx: Any) -> Any:
    """Row `idx` of a Tensor (a Tensor over a view, no autograd) or of an array."""
    return Tensor._wrap(t._data[idx, ...]) if isinstance(t, Tensor) else t[idx]


class TensorDataset(Dataset):
    """Samples are the rows of several tensors sharing their first dimension."""

    def __init__(self, tensors: Sequence[Tensor]):
        if not isinstance(tensors, (list, tuple)) or not tensors:
            raise TypeError("TensorDataset: 'tensors' must be a non-empty list or tuple of Tensors")
        for i, t in enumerate(tensors):
            if not isinstance(t, (Tensor, np.ndarray)):
                raise TypeError(f"TensorDataset: tensors[{i}] must be a Tensor, got {type(t).__name__}")
            if len(t.shape) == 0:
                raise ValueError(f"TensorDataset: tensors[{i}] is 0-D; every tensor needs a first dimension")
        n = tensors[0].shape[0]
        bad = [i for i, t in enumerate(tensors) if t.shape[0] != n]
        if bad:
            raise ValueError(f"TensorDataset: tensors not have same shape of the 1st dimension: tensors[0] has "
                             f"{n} rows, tensors[{bad[0]}] has {tensors[bad[0]].shape[0]}")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple:
        return tuple(_rows(t, index) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class ComposeDataset(Dataset):
    """Sample i is the fields of sample i of every dataset, concatenated into one tuple."""

    def __init__(self, datasets: Sequence[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ComposeDataset: 'datasets' should not be empty")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset) or not isinstance(d, Dataset):
                raise TypeError(f"ComposeDataset: datasets[{i}] must be a map-style paddle.io.Dataset")
        sizes = {len(d) for d in self.datasets}
        if len(sizes) != 1:
            raise ValueError(f"ComposeDataset: lengths of datasets should be same, got {sorted(sizes)}")

    def __len__(self) -> int:
        return len(self.datasets[0])

    def __getitem__(self, idx: int) -> tuple:
        sample: list = []
        for d in self.datasets:
            s = d[idx]
            sample.extend(s if isinstance(s, (list, tuple)) else (s,))
        return tuple(sample)


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets, one after another."""

    def __init__(self, datasets: Iterable[IterableDataset]):
        self.datasets = list(datasets)
        for i, d in enumerate(self.datasets):
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: datasets[{i}] must be a paddle.io.IterableDataset, got "
                                f"{type(d).__name__}")

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            yield from d


class ConcatDataset(Dataset):
    """Map-style datasets joined end to end."""

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: 'datasets' should not be empty")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise TypeError(f"ConcatDataset: datasets[{i}] is an IterableDataset, which has no length")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        n = len(self)
        if idx < 0:
            idx += n
        if not 0 <= idx < n:
            raise IndexError(f"ConcatDataset: index {idx} is out of range for a dataset of length {n}")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[d - 1] if d else 0
        return self.datasets[d][idx - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: int) -> Any:
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(lengths: Sequence[float], n: int) -> list[int]:
    """Integer lengths; fractions summing to 1 are turned into counts (remainder spread round robin)."""
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in lengths):
        if any(x < 0 for x in lengths):
            raise ValueError(f"random_split: lengths must be non-negative, got {list(lengths)}")
        return [int(x) for x in lengths]
    if math.isclose(sum(lengths), 1.0) and all(0.0 <= x <= 1.0 for x in lengths):
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        return counts
    raise ValueError(f"random_split: lengths must be ints summing to the dataset length or fractions summing "
                     f"to 1, got {list(lengths)}")


def random_split(dataset: Dataset, lengths: Sequence[float], generator: Any = None) -> list[Subset]:
    """Split `dataset` into non-overlapping random Subsets of the given lengths (paddle.seed reproducible)."""
    if not isinstance(lengths, (list, tuple)):
        raise TypeError(f"random_split: 'lengths' must be a list or tuple, got {type(lengths).__name__}")
    n = len(dataset)
    counts = _split_lengths(lengths, n)
    if sum(counts) != n:
        raise ValueError(f"random_split: sum of input lengths ({sum(counts)}) does not equal the length of the "
                         f"input dataset ({n})")
    perm = _rng(generator).permutation(n).tolist()
    out, offset = [], 0
    for c in counts:
        out.append(Subset(dataset, perm[offset:offset + c]))
        offset += c
    return out
