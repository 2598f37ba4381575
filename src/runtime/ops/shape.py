"""Shape ops: reshape, transpose, flatten, squeeze/unsqueeze, expand, broadcast_to, tile,
concat, stack, split, chunk, unbind, slice, flip, roll, pad (constant), cast lives in math."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .registry import Sample, TensorSpec, defop

__all__ = ["reshape", "expand"]

_rng = np.random.default_rng(11)


def _ints(op: str, arg: str, value: Any) -> tuple[int, ...]:
    """A list/tuple of ints (0-D tensors allowed) or a 1-D int tensor, as a tuple."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (int, np.integer)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{op}: argument '{arg}' must be a list or tuple of ints, got {type(value).__name__}")
    out = []
    for v in value:
        v = v.item() if isinstance(v, Tensor) else v
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{op}: argument '{arg}' must hold ints, got {v!r}")
        out.append(int(v))
    return tuple(out)


def _reshape_meta(x: TensorSpec, *, shape: tuple) -> TensorSpec:
    out = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    if out.count(-1) > 1:
        raise ValueError(f"reshape: argument 'shape' {list(shape)} may contain -1 at most once")
    known = int(np.prod([d for d in out if d != -1]))
    total = int(np.prod(x.shape))
    if -1 in out:
        if known == 0 or total % known:
            raise ValueError(f"reshape: cannot reshape a tensor of shape {mu.shape_str(x.shape)} "
                             f"({total} elements) into {list(shape)}")
        out[out.index(-1)] = total // known
    elif known != total:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {mu.shape_str(x.shape)} "
                         f"({total} elements) into {list(shape)} ({known} elements)")
    return TensorSpec(tuple(out), x.dtype)


def _reshape_kernel(xp, x, *, shape):
    return x.reshape(_reshape_meta(x, shape=shape).shape)


_RESHAPE = defop("reshape", kernel=_reshape_kernel, meta=_reshape_meta,
                 grad=lambda ctx, g: (reshape(g, ctx.inputs[0].shape),), attrs={"shape": ()},
                 samples=lambda: [Sample((_rng.normal(size=(2, 6)),), {"shape": (3, -1)}),
                                  Sample((_rng.normal(size=(2, 3, 4)),), {"shape": (0, -1)})])


@tensor_method
def reshape(x: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """New shape with the same elements; 0 copies the input dim, -1 is inferred."""
    return _RESHAPE(as_tensor(x, "x", "reshape"), shape=_ints("reshape", "shape", shape))


def _expand_meta(x: TensorSpec, *, shape: tuple) -> TensorSpec:
    if len(shape) < len(x.shape):
        raise ValueError(f"expand: argument 'shape' {list(shape)} has fewer dimensions than x "
                         f"{mu.shape_str(x.shape)}")
    lead = len(shape) - len(x.shape)
    out = []
    for i, d in enumerate(shape):
        src = x.shape[i - lead] if i >= lead else 1
        if d == -1:
            if i < lead:
                raise ValueError(f"expand: -1 is not allowed for the new leading dimension {i}")
            d = src
        if src != 1 and src != d:
            raise ValueError(f"expand: cannot expand dimension {i} of size {src} to {d} "
                             f"(x shape {mu.shape_str(x.shape)}, target {list(shape)})")
        out.append(d)
    return TensorSpec(tuple(out), x.dtype)


def _expand_kernel(xp, x, *, shape):
    return xp.broadcast_to(x, _expand_meta(x, shape=shape).shape).copy()


def _g_expand(ctx, g):
    from .grad_utils import unbroadcast  # noqa: PLC0415
    return (unbroadcast(g, ctx.inputs[0]),)


_EXPAND = defop("expand", kernel=_expand_kernel, meta=_expand_meta, grad=_g_expand, attrs={"shape": ()},
                samples=lambda: [Sample((_rng.normal(size=(3, 1)),), {"shape": (2, 3, 4)})])


@tensor_method
def expand(x: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """Broadcast x to `shape` (-1 keeps a dimension)."""
    return _EXPAND(as_tensor(x, "x", "expand"), shape=_ints("expand", "shape", shape))
