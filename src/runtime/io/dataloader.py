"""DataLoader: batches of samples from a dataset, collated into Tensors.

Loading runs in the calling process: `num_workers > 0` is accepted and loads the same batches
in the same order, without subprocesses (`worker_init_fn(0)` is called once per pass over the
data and `get_worker_info()` returns None, as in a single-process loader). `places`,
`use_buffer_reader`, `prefetch_factor`, `use_shared_memory`, `timeout` and `persistent_workers`
have nothing to tune here and are validated and otherwise ignored. Loading each batch is a
`Dataloader` span of `paddle.profiler` (its events, and the reader cost of `step_info`).
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterator

import numpy as np

from ..place import array_module
from ..profiler.events import RecordEvent, TracerEventType
from ..tensor import Tensor
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler

__all__ = ["DataLoader", "default_collate_fn", "default_convert_fn", "get_worker_info"]


def default_collate_fn(batch: list) -> Any:
    """Stack a list of samples field by field: arrays and Tensors are stacked, numbers become an array,
    strings stay a list, dicts and sequences are collated per key / position."""
    sample = batch[0]
    if isinstance(sample, np.ndarray):
        return np.stack(batch, axis=0)
    if isinstance(sample, Tensor):
        xp = array_module(sample.place)
        return Tensor._wrap(xp.stack([t._data for t in batch], axis=0))
    if isinstance(sample, (numbers.Number, np.generic)) and not isinstance(sample, (str, bytes)):
        return np.array(batch)
    if isinstance(sample, (str, bytes)):
        return batch
    if isinstance(sample, Mapping):
        return {key: default_collate_fn([d[key] for d in batch]) for key in sample}
    if isinstance(sample, Sequence):
        n = len(sample)
        if any(len(s) != n for s in batch):
            raise RuntimeError(f"fields number not same among samples in a batch: the first sample has {n} "
                               f"fields, others have {sorted({len(s) for s in batch})}")
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    raise TypeError(f"batch data can only contain: Tensor, numpy.ndarray, dict, list, number, str, but got "
                    f"{type(sample).__name__}")


def default_convert_fn(sample: Any) -> Any:
    """A sample used as is (batch_size=None): arrays become Tensors where the loader returns it."""
    return sample


def get_worker_info() -> None:
    """Information about the current loader worker: None, as loading runs in the calling process."""
    return None


def _to_tensors(data: Any) -> Any:
    """NumPy arrays anywhere in a collated batch become Tensors (dtype kept), as Paddle's loader returns."""
    if isinstance(data, np.ndarray):
        return Tensor._wrap(np.ascontiguousarray(data))
    if isinstance(data, (list, tuple)):
        return [_to_tensors(d) for d in data]
    if isinstance(data, dict):
        return {k: _to_tensors(v) for k, v in data.items()}
    return data


class DataLoader:
    """Iterate over `dataset` in batches (Paddle 2.x `paddle.io.DataLoader`)."""

    def __init__(self, dataset: Dataset, feed_list: Any = None, places: Any = None, return_list: bool = True,
                 batch_sampler: Any = None, batch_size: int | None = 1, shuffle: bool = False,
                 drop_last: bool = False, collate_fn: Callable | None = None, num_workers: int = 0,
                 use_buffer_reader: bool = True, prefetch_factor: int = 2, use_shared_memory: bool = True,
                 timeout: float = 0, worker_init_fn: Callable | None = None, persistent_workers: bool = False):
        api = "DataLoader"
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"{api}: num_workers should be a non-negative integer, got {num_workers!r}")
        if not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"{api}: timeout should be a non-negative number, got {timeout!r}")
        for arg, fn in (("collate_fn", collate_fn), ("worker_init_fn", worker_init_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{api}: '{arg}' should be callable, got {type(fn).__name__}")
        self.dataset = dataset
        self.return_list = return_list
        self.collate_fn = collate_fn
        self.num_workers = num_workers
        self.worker_init_fn = worker_init_fn
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError(f"{api}: IterableDataset does not support shuffle (shuffle must be False)")
            if batch_sampler is not None:
                raise ValueError(f"{api}: IterableDataset does not support batch_sampler")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise ValueError(f"{api}: batch_size/shuffle/drop_last should not be set when batch_sampler is given")
            if not hasattr(batch_sampler, "__iter__"):
                raise TypeError(f"{api}: batch_sampler should be a paddle.io.BatchSampler or an iterable of index "
                                f"lists, got {type(batch_sampler).__name__}")
            self.batch_sampler = batch_sampler
            self.batch_size = getattr(batch_sampler, "batch_size", None)
            self.drop_last = getattr(batch_sampler, "drop_last", False)
        elif batch_size is None:
            self.batch_sampler = None
            self.batch_size = None
            self.drop_last = drop_last
        else:
            if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
                raise ValueError(f"{api}: batch_size should be None or a positive integer, but got {batch_size!r}")
            self.batch_size = batch_size
            self.drop_last = drop_last
            self.batch_sampler = None if self._iterable else BatchSampler(
                dataset=dataset, shuffle=shuffle, batch_size=batch_size, drop_last=drop_last)

    def __len__(self) -> int:
        if self._iterable:
            raise TypeError("DataLoader: length of an IterableDataset is not supported")
        if self.batch_sampler is None:
            return len(self.dataset)
        return len(self.batch_sampler)

    def _samples(self) -> Iterator[Any]:
        """Batches (lists of samples) or single samples (batch_size=None), before collation."""
        ds = self.dataset
        if self._iterable:
            if self.batch_size is None:
                yield from ds
                return
            batch: list = []
            for s in ds:
                batch.append(s)
                if len(batch) == self.batch_size:
                    yield batch
                    batch = []
            if batch and not self.drop_last:
                yield batch
        elif self.batch_sampler is None:
            for i in range(len(ds)):
                yield ds[i]
        else:
            for indices in self.batch_sampler:
                yield [ds[i] for i in indices]

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers > 0 and self.worker_init_fn is not None:
            self.worker_init_fn(0)
        unbatched = self.batch_size is None
        collate = self.collate_fn or (default_convert_fn if unbatched else default_collate_fn)
        samples = self._samples()
        while True:
            loading = RecordEvent("DataLoader", TracerEventType.Dataloader)   # a profiler's reader cost
            loading.begin()
            try:
                item = next(samples)
            except StopIteration:
                return   # (the span is dropped: looking for a batch past the last loads nothing)
            batch = _to_tensors(collate(item))
            loading.end()
            yield batch

    def __call__(self) -> Iterator[Any]:
        return self.__iter__()
