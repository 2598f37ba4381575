"""Eager dispatch: meta check, kernel, wrap, record on the tape — the hot path of every op.

The meta function always runs before the kernel (so a bad call raises before anything
changes), but its result is memoised per (input shapes, dtypes, attributes): a meta
function is a pure function of those, and the cache keeps tiny-op overhead low.
"""
from __future__ import annotations

import numpy as np

from .. import place as _place
from ..flags import _values as _flag_values
from ..tensor import Tensor
from . import registry
from .grad_mode import state as _grad_state
from .registry import OpDef, TensorSpec
from .tape import ModifiedArray, Node

__all__ = ["apply", "run_meta", "check_one_place", "set_kernel_observer"]

_ndarray = np.ndarray
_META_CACHE_LIMIT = 4096
_wrap = Tensor._wrap
_kernel_observer = None   # runtime.profiler's recorder while it records: it runs and times the kernel


def set_kernel_observer(observer) -> None:
    """Run every eager kernel through `observer(op, xp, arrays, attrs)` (None: directly again). The
    profiler installs one only while it records, so dispatch pays one global check otherwise."""
    global _kernel_observer
    _kernel_observer = observer


def run_meta(op: OpDef, specs: tuple, attrs: dict):
    """Run the op's meta function on specs (no cache); raises what eager code raises."""
    return op.meta(*specs, **attrs)


def _specs(arrays) -> tuple:
    return tuple(None if a is None else TensorSpec(a.shape, a.dtype) for a in arrays)


def apply(op: OpDef, inputs: tuple, attrs: dict):
    """Run `op` eagerly on Tensors (None allowed for optional inputs)."""
    # key: attributes, then (shape, dtype) of each input; the meta result is memoised on it
    key = [tuple(attrs.items())] if attrs else [None]
    arrays = []
    requires_grad = False
    xp = np
    for t in inputs:
        if t is None:
            arrays.append(None)
            key.append(None)
            continue
        a = t._data
        arrays.append(a)
        key.append(a.shape)
        key.append(a.dtype)
        if not t._stop_gradient:
            requires_grad = True
        if type(a) is not _ndarray:
            xp = _cupy_of(a)
    if xp is not np:
        check_one_place(op, inputs)
    elif not inputs and _place.current_place().kind == "gpu":
        xp = _place.array_module(_place.current_place())
    cache = op.meta_cache
    try:
        key = tuple(key)
        out_meta = cache.get(key)
    except TypeError:  # an unhashable attribute value: no caching
        key = None
        out_meta = None
    if out_meta is None:
        out_meta = op.meta(*_specs(arrays), **attrs)
        if key is not None and len(cache) < _META_CACHE_LIMIT:
            cache[key] = out_meta
    if _kernel_observer is None:
        out = op.kernel(xp, *arrays, **attrs)
    else:
        out = _kernel_observer(op, xp, arrays, attrs)
    if type(out_meta) is tuple:
        outs = tuple(o if type(o) is _ndarray else xp.asarray(o) for o in out)
    else:
        outs = (out if type(out) is _ndarray else xp.asarray(out),)
    if _flag_values["FLAGS_check_nan_inf"]:
        _check_nan_inf(op, outs, xp)

    if not (requires_grad and op.grad is not None and _grad_state.enabled):
        if len(outs) == 1 and type(out_meta) is not tuple:
            return _wrap(outs[0])
        return tuple(_wrap(o) for o in outs)
    edges, versions, specs = [], [], []
    for t in inputs:
        if t is None:
            edges.append(None)
            versions.append(0)
            specs.append(None)
            continue
        edges.append(None if t._stop_gradient else (t if t._node is None else (t._node, t._oidx)))
        versions.append(t._version)
        specs.append((t._data.shape, t._data.dtype))
    multi = type(out_meta) is tuple
    node = Node(op, inputs, attrs, outs, out_meta if multi else (out_meta,), tuple(edges),
                tuple(versions), tuple(specs))
    if not multi:
        o = outs[0]
        return Tensor._from_node(o, node, 0) if o.dtype.kind in "fc" and not op.nondiff_outputs else _wrap(o)
    nondiff = op.nondiff_outputs
    return tuple(_wrap(o) if i in nondiff or o.dtype.kind not in "fc"
                 else Tensor._from_node(o, node, i) for i, o in enumerate(outs))


def _cupy_of(a):
    if isinstance(a, ModifiedArray):
        raise RuntimeError(a.message)
    import cupy  # noqa: PLC0415 - only reached for CuPy arrays
    return cupy


def check_one_place(op: OpDef, inputs: tuple) -> None:
    """Every input on one place, else a ValueError naming both (before anything runs): an op
    never moves data between places behind the user's back, a 0-D tensor included."""
    first = None
    for i, t in enumerate(inputs):
        if t is None:
            continue
        place = t.place
        if first is None:
            first = (i, place)
        elif place != first[1]:
            raise ValueError(f"{op.name}: argument '{op.input_name(i)}' is on {place!r} but "
                             f"'{op.input_name(first[0])}' is on {first[1]!r}; move it with .cuda() or .cpu()")


def _check_nan_inf(op: OpDef, outs, xp) -> None:
    for i, o in enumerate(outs):
        if o.dtype.kind in "fc" and not bool(xp.isfinite(o).all()):
            raise RuntimeError(f"op '{op.name}' produced NaN or Inf in output {i} "
                               "(FLAGS_check_nan_inf is set)")


registry._apply = apply
