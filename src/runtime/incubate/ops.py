"""The `paddle.incubate` ops runtime computes: masked softmaxes and segment reductions."""
from __future__ import annotations

import numpy as np

from ..ops import activation, creation, gather, math, reduction, shape
from ..tensor import Tensor

__all__ = ["softmax_mask_fuse", "softmax_mask_fuse_upper_triangle", "segment_sum", "segment_mean",
           "segment_max", "segment_min"]


def _require_float_tensor(api: str, arg: str, x: object, ndim: int | None = None) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{api}: argument '{arg}' must be a Tensor, got {type(x).__name__}")
    if x.dtype.name not in ("float16", "float32", "float64"):
        raise TypeError(f"{api}: argument '{arg}' must be float16, float32 or float64, got {x.dtype.name}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{api}: argument '{arg}' must be {ndim}-D, got shape {x.shape}")
    return x


def softmax_mask_fuse(x: Tensor, mask: Tensor, name: str | None = None) -> Tensor:
    """softmax(x + mask) over the last axis; x is [batch, heads, seq_q, seq_k] and the additive
    mask [batch, 1, seq_q, seq_k], shared by the heads (Paddle refuses another second dimension)."""
    _require_float_tensor("softmax_mask_fuse", "x", x, 4)
    _require_float_tensor("softmax_mask_fuse", "mask", mask, 4)
    if mask.shape[1] != 1 or [mask.shape[0], *mask.shape[2:]] != [x.shape[0], *x.shape[2:]]:
        raise ValueError(f"softmax_mask_fuse: argument 'mask' must have shape "
                         f"[{x.shape[0]}, 1, {x.shape[2]}, {x.shape[3]}], got {mask.shape}")
    return activation.softmax(math.add(x, mask), axis=-1)


def softmax_mask_fuse_upper_triangle(x: Tensor) -> Tensor:
    """Causal softmax over the last axis of x ([batch, heads, seq, seq]): position j of row i is
    left out (probability exactly 0) when j > i. Paddle has only a GPU kernel; this is its
    definition, computed from public ops on any device."""
    _require_float_tensor("softmax_mask_fuse_upper_triangle", "x", x, 4)
    rows, cols = x.shape[-2:]
    keep = Tensor(np.tril(np.ones((rows, cols), dtype=bool)))
    # the row maximum over kept entries only: exp never sees an entry above the diagonal's scale,
    # and multiplying by `keep` makes the left-out probabilities exact zeros
    masked = math.where(keep, x, creation.full_like(x, -np.inf))
    e = math.multiply(math.exp(math.subtract(x, reduction.max(masked, axis=-1, keepdim=True))),
                      math.cast(keep, x.dtype))
    return math.divide(e, reduction.sum(e, axis=-1, keepdim=True))


def _segments(api: str, data: Tensor, segment_ids: Tensor) -> tuple[np.ndarray, int]:
    """The ids as NumPy and the number of segments (the last id + 1): the output's first
    dimension depends on the ids' values, so in static mode this raises static mode's TypeError for
    reading a Variable's value (the JIT breaks the graph there and runs the op for real)."""
    _require_float_tensor(api, "data", data)
    if not isinstance(segment_ids, Tensor):
        raise TypeError(f"{api}: argument 'segment_ids' must be a Tensor, got {type(segment_ids).__name__}")
    if segment_ids.dtype.name not in ("int32", "int64"):
        raise TypeError(f"{api}: argument 'segment_ids' must be int32 or int64, got {segment_ids.dtype.name}")
    if segment_ids.ndim != 1 or data.ndim < 1 or segment_ids.shape[0] != data.shape[0]:
        raise ValueError(f"{api}: argument 'segment_ids' must be 1-D with one id per row of 'data' "
                         f"{data.shape}, got shape {segment_ids.shape}")
    try:
        ids = segment_ids.numpy()
    except TypeError as e:  # a static Variable: no value until the program runs
        e.add_note(f"{api}: the number of segments comes from the values of 'segment_ids'; static programs "
                   "cannot compute it")
        raise
    if ids.size and (ids.min() < 0 or (np.diff(ids) < 0).any()):
        raise ValueError(f"{api}: argument 'segment_ids' must be non-negative and sorted ascending")
    return ids, int(ids[-1]) + 1 if ids.size else 0


def segment_sum(data: Tensor, segment_ids: Tensor, name: str | None = None) -> Tensor:
    """Row k of the result is the sum of the rows of `data` whose id is k (zeros for an unused id)."""
    _, n = _segments("segment_sum", data, segment_ids)
    return gather.index_add(creation.zeros([n, *data.shape[1:]], data.dtype), segment_ids, 0, data)


def segment_mean(data: Tensor, segment_ids: Tensor, name: str | None = None) -> Tensor:
    """Row k of the result is the mean of the rows of `data` whose id is k (zeros for an unused id)."""
    ids, n = _segments("segment_mean", data, segment_ids)
    counts = np.maximum(np.bincount(ids, minlength=n), 1).astype(data.dtype.name)
    total = gather.index_add(creation.zeros([n, *data.shape[1:]], data.dtype), segment_ids, 0, data)
    return math.divide(total, Tensor(counts.reshape([n] + [1] * (data.ndim - 1))))


def _segment_extreme(api: str, reduce, data: Tensor, segment_ids: Tensor) -> Tensor:
    ids, n = _segments(api, data, segment_ids)
    rows = []
    for k in range(n):
        members = np.flatnonzero(ids == k)
        rows.append(reduce(gather.index_select(data, Tensor(members), 0), axis=0) if members.size
                    else creation.zeros(data.shape[1:], data.dtype))
    return shape.stack(rows) if rows else creation.zeros([0, *data.shape[1:]], data.dtype)


def segment_max(data: Tensor, segment_ids: Tensor, name: str | None = None) -> Tensor:
    """Row k of the result is the elementwise max of the rows of `data` whose id is k (zeros for an
    unused id); the gradient goes to the maxima."""
    return _segment_extreme("segment_max", reduction.max, data, segment_ids)


def segment_min(data: Tensor, segment_ids: Tensor, name: str | None = None) -> Tensor:
    """Row k of the result is the elementwise min of the rows of `data` whose id is k (zeros for an
    unused id); the gradient goes to the minima."""
    return _segment_extreme("segment_min", reduction.min, data, segment_ids)
