"""Samplers: orders of sample indices (sequential, random, weighted) and batches of them.

Random samplers draw from the generator `paddle.seed` seeds, so shuffling is reproducible.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from .dataset import IterableDataset, _rng

__all__ = ["Sampler", "SequenceSampler", "RandomSampler", "WeightedRandomSampler", "SubsetRandomSampler",
           "BatchSampler", "DistributedBatchSampler"]


def _positive_int(api: str, arg: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{api}: '{arg}' should be a positive integer, but got {value!r}")
    return int(value)


def _flag(api: str, arg: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{api}: '{arg}' should be a boolean value, but got {type(value).__name__}")
    return value


class Sampler:
    """Base of the samplers: iterating yields dataset indices."""

    def __init__(self, data_source: Any = None):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError


class SequenceSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or, with replacement, `num_samples` random draws) of the indices.

    `generator` may be an iterator of indices (Paddle's meaning), a paddle/NumPy Generator, or None
    for the generator `paddle.seed` seeds.
    """

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None):
        super().__init__(data_source)
        self.replacement = _flag("RandomSampler", "replacement", replacement)
        if num_samples is not None and not replacement:
            raise ValueError("RandomSampler: num_samples should not be specified while replacement is False")
        self._num_samples = num_samples
        self.generator = generator
        _positive_int("RandomSampler", "num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, k = len(self.data_source), self.num_samples
        if self.generator is not None and hasattr(self.generator, "__next__"):
            for _ in range(k):
                yield next(self.generator)
            return
        rng = _rng(self.generator)
        idx = rng.integers(0, n, size=k) if self.replacement else rng.permutation(n)[:k]
        yield from idx.tolist()

    def __len__(self) -> int:
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True):
        w = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights, dtype=np.float64)
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"WeightedRandomSampler: 'weights' should be a non-empty 1-D sequence, got shape "
                             f"{list(w.shape)}")
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: 'weights' should be finite, non-negative and not all zero")
        self.weights = w
        self.num_samples = _positive_int("WeightedRandomSampler", "num_samples", num_samples)
        self.replacement = _flag("WeightedRandomSampler", "replacement", replacement)
        if not replacement and num_samples > int((w > 0).sum()):
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples without replacement from "
                             f"{int((w > 0).sum())} non-zero weights")

    def __iter__(self) -> Iterator[int]:
        p = self.weights / self.weights.sum()
        yield from _rng().choice(p.size, self.num_samples, replace=self.replacement, p=p).tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int]):
        if len(indices) == 0:
            raise ValueError("SubsetRandomSampler: the length of 'indices' should be greater than 0")
        self.indices = indices

    def __iter__(self) -> Iterator[int]:
        for i in _rng().permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


def _batches(indices: Iterable[int], batch_size: int, drop_last: bool) -> Iterator[list[int]]:
    batch: list[int] = []
    for i in indices:
        batch.append(i)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from a sampler (or from a dataset, shuffled or in order)."""

    def __init__(self, dataset: Any = None, sampler: Any = None, shuffle: bool = False, batch_size: int = 1,
                 drop_last: bool = False):
        api = "BatchSampler"
        if dataset is None:
            if sampler is None:
                raise ValueError(f"{api}: either dataset or sampler should be set")
            if not hasattr(sampler, "__iter__"):
                raise TypeError(f"{api}: sampler should be a paddle.io.Sampler or an iterable of indices, got "
                                f"{type(sampler).__name__}")
            if shuffle:
                raise ValueError(f"{api}: shuffle should be False when sampler is set")
            self.sampler = sampler
        else:
            if isinstance(dataset, IterableDataset):
                raise TypeError(f"{api}: dataset should not be a paddle.io.IterableDataset")
            if sampler is not None:
                raise ValueError(f"{api}: should not set both dataset and sampler")
            self.sampler = RandomSampler(dataset) if _flag(api, "shuffle", shuffle) else SequenceSampler(dataset)
        self.shuffle = shuffle
        self.batch_size = _positive_int(api, "batch_size", batch_size)
        self.drop_last = _flag(api, "drop_last", drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        return _batches(self.sampler, self.batch_size, self.drop_last)

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """This rank's share of the batches (one process: all of them); shuffling is seeded by the epoch.

    Indices are padded to a multiple of `num_replicas` and rank r takes every num_replicas-th one
    starting at r; call `set_epoch(epoch)` to reshuffle across epochs.
    """

    def __init__(self, dataset: Any, batch_size: int, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = False, drop_last: bool = False):
        api = "DistributedBatchSampler"
        self.dataset = dataset
        self.batch_size = _positive_int(api, "batch_size", batch_size)
        self.shuffle = _flag(api, "shuffle", shuffle)
        self.drop_last = _flag(api, "drop_last", drop_last)
        self.nranks = 1 if num_replicas is None else _positive_int(api, "num_replicas", num_replicas)
        self.local_rank = 0 if rank is None else int(rank)
        if not 0 <= self.local_rank < self.nranks:
            raise ValueError(f"{api}: rank should be in [0, {self.nranks}), got {rank}")
        self.epoch = 0
        self.num_samples = math.ceil(len(dataset) / self.nranks)
        self.total_size = self.num_samples * self.nranks

    def __iter__(self) -> Iterator[list[int]]:
        n = len(self.dataset)
        indices = np.arange(n)
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(indices)
            self.epoch += 1
        indices = indices.tolist()
        indices += indices[:self.total_size - n]
        return _batches(indices[self.local_rank:self.total_size:self.nranks], self.batch_size, self.drop_last)

    def __len__(self) -> int:
        return (self.num_samples // self.batch_size if self.drop_last
                else math.ceil(self.num_samples / self.batch_size))

    def set_epoch(self, epoch: int) -> None:
        """Seed the next shuffle with `epoch` (call once per epoch, as Paddle)."""
        self.epoch = epoch
