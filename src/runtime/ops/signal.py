"""Framing a signal and overlap-adding frames back: `paddle.signal.frame` / `overlap_add`, each
the other's gradient (stft and istft are built on them in runtime.signal).

Layouts as Paddle's: with axis=-1 a signal [..., seq_length] has frames [..., frame_length, num_frames];
with axis=0 a signal [seq_length, ...] has frames [num_frames, frame_length, ...].
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor
from . import meta_utils as mu
from .creation import zeros
from .registry import Sample, TensorSpec, defop
from .shape import concat

__all__ = ["frame", "overlap_add"]

_rng = np.random.default_rng(1618)


def _check_axis(op: str, axis: Any) -> None:
    if isinstance(axis, bool) or axis not in (0, -1):
        raise ValueError(f"{op}: Unexpected axis: {axis}. It should be 0 or -1.")


def _check_positive(op: str, arg: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
        raise ValueError(f"{op}: Unexpected {arg}: {v}. It should be an positive integer.")


# ---------------------------------------------------------------- frame
def _frame_meta(x: TensorSpec, *, frame_length: int, hop_length: int, axis: int) -> TensorSpec:
    _check_axis("frame", axis)
    _check_positive("frame", "frame_length", frame_length)
    _check_positive("frame", "hop_length", hop_length)
    if not x.shape:
        raise ValueError("frame: argument 'x' must have at least one dimension")
    seq = x.shape[axis]
    if seq != -1 and frame_length > seq:
        raise ValueError(f"frame: Attribute frame_length should be less equal than sequence length, "
                         f"but got ({frame_length}) > ({seq}).")
    frames = -1 if seq == -1 else 1 + (seq - frame_length) // hop_length
    if axis == 0:
        return TensorSpec((frames, frame_length, *x.shape[1:]), x.dtype)
    return TensorSpec((*x.shape[:-1], frame_length, frames), x.dtype)


def _frame_kernel(xp, x, *, frame_length, hop_length, axis):
    frames = 1 + (x.shape[axis] - frame_length) // hop_length
    index = xp.arange(frame_length)[:, None] + hop_length * xp.arange(frames)[None, :]
    return x[index.T] if axis == 0 else x[..., index]


def _g_frame(ctx, g):
    """Overlap-add the frame gradients; samples past the last whole frame get none."""
    (x,) = ctx.inputs
    a = ctx.attrs
    out = overlap_add(g, a["hop_length"], a["axis"])
    missing = x.shape[a["axis"]] - out.shape[a["axis"]]
    if missing:
        pad_shape = list(out.shape)
        pad_shape[a["axis"]] = missing
        out = concat([out, zeros(pad_shape, dtype=out.dtype)], axis=a["axis"])
    return (out,)


_FRAME = defop("frame", kernel=_frame_kernel, meta=_frame_meta, grad=_g_frame,
               attrs={"frame_length": 1, "hop_length": 1, "axis": -1},
               samples=lambda: [Sample((_rng.normal(size=(2, 11)),), {"frame_length": 4, "hop_length": 3, "axis": -1}),
                                Sample((_rng.normal(size=(9, 2)),), {"frame_length": 3, "hop_length": 2, "axis": 0})])


def frame(x: Tensor, frame_length: int, hop_length: int, axis: int = -1, name: str | None = None) -> Tensor:
    """Slice x into overlapping frames of frame_length samples, hop_length apart, along axis (0 or -1)."""
    return _FRAME(as_tensor(x, "x", "frame"), frame_length=frame_length, hop_length=hop_length, axis=axis)


# ---------------------------------------------------------------- overlap_add
def _overlap_add_meta(x: TensorSpec, *, hop_length: int, axis: int) -> TensorSpec:
    _check_axis("overlap_add", axis)
    _check_positive("overlap_add", "hop_length", hop_length)
    if len(x.shape) < 2:
        raise ValueError(f"overlap_add: argument 'x' must have at least 2 dimensions (frame_length, num_frames), "
                         f"got shape {mu.shape_str(x.shape)}")
    frames, length = (x.shape[0], x.shape[1]) if axis == 0 else (x.shape[-1], x.shape[-2])
    seq = -1 if -1 in (frames, length) else (frames - 1) * hop_length + length
    if axis == 0:
        return TensorSpec((seq, *x.shape[2:]), x.dtype)
    return TensorSpec((*x.shape[:-2], seq), x.dtype)


def _overlap_add_kernel(xp, x, *, hop_length, axis):
    """Frames cut into hop-long chunks: chunk j of every frame lands on one contiguous run of the output,
    so the sum takes ceil(frame_length / hop_length) whole-array adds, not one per frame."""
    if axis == 0:
        x = xp.moveaxis(x, (0, 1), (-1, -2))
    length, frames = x.shape[-2], x.shape[-1]
    chunks = -(-length // hop_length)
    padded = xp.zeros((*x.shape[:-2], chunks * hop_length, frames), dtype=x.dtype)
    padded[..., :length, :] = x
    out = xp.zeros((*x.shape[:-2], (frames + chunks - 1) * hop_length), dtype=x.dtype)
    for j in range(chunks):
        run = padded[..., j * hop_length:(j + 1) * hop_length, :]
        out[..., j * hop_length:(j + frames) * hop_length] += xp.swapaxes(run, -1, -2).reshape(*x.shape[:-2], -1)
    out = out[..., :(frames - 1) * hop_length + length]
    return xp.moveaxis(out, -1, 0) if axis == 0 else out


_OVERLAP_ADD = defop("overlap_add", kernel=_overlap_add_kernel, meta=_overlap_add_meta,
                     grad=lambda ctx, g: (frame(g, ctx.inputs[0].shape[1 if ctx.attrs["axis"] == 0 else -2],
                                                ctx.attrs["hop_length"], ctx.attrs["axis"]),),
                     attrs={"hop_length": 1, "axis": -1},
                     samples=lambda: [Sample((_rng.normal(size=(2, 5, 4)),), {"hop_length": 2, "axis": -1}),
                                      Sample((_rng.normal(size=(3, 4, 2)),), {"hop_length": 3, "axis": 0}),
                                      Sample((_rng.normal(size=(3, 4)),), {"hop_length": 5, "axis": -1})])


def overlap_add(x: Tensor, hop_length: int, axis: int = -1, name: str | None = None) -> Tensor:
    """Sum frames [..., frame_length, num_frames] placed hop_length apart into a signal (axis 0 or -1)."""
    return _OVERLAP_ADD(as_tensor(x, "x", "overlap_add"), hop_length=hop_length, axis=axis)
