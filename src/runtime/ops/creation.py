"""Tensor creation: full/zeros/ones (and *_like), arange, linspace, eye, empty, assign/clone.

Creation ops have no tensor inputs (except *_like, which read only shape and dtype), so
the static graph can record them as ops (Paddle's fill_constant and friends); a shape holding a
size known only at run time (a static Variable) makes full/zeros/ones/empty record `full_sizes`,
whose input is those sizes (see `shape.sizes_input`), and an `end` of arange known only at run time
records `arange_sizes`, whose input is that end.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .registry import Sample, TensorSpec, defop, get_op
from .shape import expand, fill_sizes, flatten, reshape, run_time_size, run_time_sizes, sizes_input

__all__ = ["full", "zeros", "ones", "empty", "full_like", "zeros_like", "ones_like", "empty_like",
           "arange", "linspace", "eye", "assign", "clone", "numel", "shape", "diag", "tril", "triu",
           "meshgrid", "diagflat"]


def _shape_arg(op: str, shape: Any) -> tuple[int, ...]:
    """Accept an int, a list/tuple of ints (or 0-D int tensors) or a 1-D int tensor."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{op}: argument 'shape' must be a list/tuple of ints or a Tensor, "
                        f"got {type(shape).__name__}")
    out = []
    for i, d in enumerate(shape):
        d = int(d.item()) if isinstance(d, Tensor) else d
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
            raise ValueError(f"{op}: argument 'shape' must hold non-negative ints, got {d!r} at index {i}")
        out.append(int(d))
    return tuple(out)


def _dtype_arg(dtype: Any, default: np.dtype) -> np.dtype:
    return default if dtype is None else _dt.to_np_dtype(dtype)


def _full_meta(*, shape: tuple, fill_value: Any, dtype: np.dtype) -> TensorSpec:
    return TensorSpec(tuple(-1 if d is None else d for d in shape), dtype)


_FULL = defop("full", kernel=lambda xp, *, shape, fill_value, dtype: xp.full(shape, fill_value, dtype=dtype),
              meta=_full_meta, inputs=(), attrs={"shape": (), "fill_value": 0.0, "dtype": np.dtype("float32")},
              samples=lambda: [Sample((), {"shape": (2, 3), "fill_value": 1.5, "dtype": np.dtype("float32")})])


_FULL_SIZES = defop("full_sizes", kernel=lambda xp, sizes, *, shape, fill_value, dtype: xp.full(
                        fill_sizes(shape, sizes), fill_value, dtype=dtype),
                    meta=lambda sizes, *, shape, fill_value, dtype: _full_meta(shape=shape, fill_value=fill_value,
                                                                               dtype=dtype),
                    inputs=("sizes",), attrs={"shape": (), "fill_value": 0.0, "dtype": np.dtype("float32")},
                    samples=lambda: [Sample((np.zeros(0, np.int64),), {"shape": (2, 3), "fill_value": 1.5,
                                                                        "dtype": np.dtype("float32")})])


def _full(op: str, shape: Any, fill_value: Any, dtype: Any, default: np.dtype | None) -> Tensor:
    """full, zeros and ones (shape checked first, then dtype): `full_sizes` for sizes known at run time."""
    if not run_time_sizes(shape):
        return _FULL(shape=_shape_arg(op, shape), fill_value=fill_value, dtype=_dtype_arg(dtype, default))
    sizes, template = sizes_input(op, "shape", shape)
    for i, d in enumerate(template):
        if d is not None and d < 0:
            raise ValueError(f"{op}: argument 'shape' must hold non-negative ints, got {d!r} at index {i}")
    return _FULL_SIZES(sizes, shape=template, fill_value=fill_value, dtype=_dtype_arg(dtype, default))


def full(shape: Any, fill_value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A tensor of `shape` filled with `fill_value` (default dtype: float32 for floats)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        if isinstance(fill_value, bool):
            default = np.dtype(bool)
        elif isinstance(fill_value, (int, np.integer)):
            default = np.dtype("int64")
        else:
            default = _dt.default_float()
    return _full("full", shape, fill_value, dtype, default if dtype is None else None)


def zeros(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    return _full("zeros", shape, 0, dtype, _dt.default_float())


def ones(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    return _full("ones", shape, 1, dtype, _dt.default_float())


def empty(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Uninitialised memory is a footgun; we return zeros (Paddle's values are unspecified)."""
    return zeros(shape, dtype)


def _full_like_meta(x: TensorSpec, *, fill_value: Any, dtype: np.dtype | None) -> TensorSpec:
    return TensorSpec(x.shape, x.dtype if dtype is None else dtype)


def _full_like_kernel(xp, x, *, fill_value, dtype):
    return xp.full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype)


_FULL_LIKE = defop("full_like", kernel=_full_like_kernel, meta=_full_like_meta,
                   attrs={"fill_value": 0.0, "dtype": None},
                   samples=lambda: [Sample((np.ones((2, 3)),), {"fill_value": 2.0, "dtype": None})])


@tensor_method
def full_like(x: Tensor, fill_value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    x = as_tensor(x, "x", "full_like")
    return _FULL_LIKE(x, fill_value=fill_value, dtype=None if dtype is None else _dt.to_np_dtype(dtype))


def zeros_like(x: Tensor, dtype: Any = None, name: str | None = None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x: Tensor, dtype: Any = None, name: str | None = None) -> Tensor:
    return full_like(x, 1, dtype)


def empty_like(x: Tensor, dtype: Any = None, name: str | None = None) -> Tensor:
    return full_like(x, 0, dtype)


def _arange_meta(*, start: Any, end: Any, step: Any, dtype: np.dtype) -> TensorSpec:
    if step == 0:
        raise ValueError("arange: argument 'step' must not be 0")
    n = max(int(np.ceil((end - start) / step)), 0)
    return TensorSpec((n,), dtype)


_ARANGE = defop("arange", kernel=lambda xp, *, start, end, step, dtype: xp.arange(start, end, step, dtype=dtype),
                meta=_arange_meta, inputs=(), attrs={"start": 0, "end": 1, "step": 1, "dtype": np.dtype("int64")},
                samples=lambda: [Sample((), {"start": 0, "end": 5, "step": 1, "dtype": np.dtype("int64")}),
                                 Sample((), {"start": 0.5, "end": 2.0, "step": 0.25, "dtype": np.dtype("float32")})])


def _arange_sizes_meta(sizes: TensorSpec, *, start: Any, end: Any, step: Any, dtype: np.dtype) -> TensorSpec:
    if end is None:  # the end is the run-time size in `sizes`
        if step == 0:
            raise ValueError("arange: argument 'step' must not be 0")
        return TensorSpec((-1,), dtype)
    return _arange_meta(start=start, end=end, step=step, dtype=dtype)


# arange whose end (None in the template) a static program knows only when it runs: the `*_sizes`
# convention (`shape.sizes_input`), `sizes` holding that end
_ARANGE_SIZES = defop("arange_sizes", kernel=lambda xp, sizes, *, start, end, step, dtype: xp.arange(
                          start, fill_sizes((end,), sizes)[0], step, dtype=dtype),
                      meta=_arange_sizes_meta, inputs=("sizes",),
                      attrs={"start": 0, "end": None, "step": 1, "dtype": np.dtype("int64")},
                      samples=lambda: [Sample((np.zeros(0, np.int64),), {"start": 1, "end": 6, "step": 2,
                                                                          "dtype": np.dtype("int64")})])


def arange(start: Any = 0, end: Any = None, step: Any = 1, dtype: Any = None, name: str | None = None) -> Tensor:
    """Values in [start, end) spaced by step; int64 for int arguments, else float32."""
    if end is None and run_time_size(start):
        start, end = 0, start
    if run_time_size(end) and not isinstance(start, Tensor) and not isinstance(step, Tensor):
        sizes, _ = sizes_input("arange", "end", [end])
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, step))
        default = np.dtype("int64") if is_int else _dt.default_float()
        return _ARANGE_SIZES(sizes, start=start, end=None, step=step, dtype=_dtype_arg(dtype, default))
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = np.dtype("int64") if is_int else _dt.default_float()
    return _ARANGE(start=start, end=end, step=step, dtype=_dt.to_np_dtype(dtype))


def _linspace_meta(*, start: float, stop: float, num: int, dtype: np.dtype) -> TensorSpec:
    if num < 0:
        raise ValueError(f"linspace: argument 'num' must be non-negative, got {num}")
    return TensorSpec((num,), dtype)


_LINSPACE = defop("linspace",
                  kernel=lambda xp, *, start, stop, num, dtype: xp.linspace(start, stop, num).astype(dtype),
                  meta=_linspace_meta, inputs=(),
                  attrs={"start": 0.0, "stop": 1.0, "num": 2, "dtype": np.dtype("float32")},
                  samples=lambda: [Sample((), {"start": 0.0, "stop": 1.0, "num": 5, "dtype": np.dtype("float32")})])


def linspace(start: Any, stop: Any, num: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """`num` evenly spaced values from start to stop inclusive."""
    start, stop, num = (v.item() if isinstance(v, Tensor) else v for v in (start, stop, num))
    if not isinstance(num, (int, np.integer)):
        raise TypeError(f"linspace: argument 'num' must be an int, got {type(num).__name__}")
    return _LINSPACE(start=float(start), stop=float(stop), num=int(num),
                     dtype=_dtype_arg(dtype, _dt.default_float()))


def _eye_meta(*, num_rows: int, num_columns: int, dtype: np.dtype) -> TensorSpec:
    return TensorSpec((num_rows, num_columns), dtype)


_EYE = defop("eye", kernel=lambda xp, *, num_rows, num_columns, dtype: xp.eye(num_rows, num_columns, dtype=dtype),
             meta=_eye_meta, inputs=(), attrs={"num_rows": 1, "num_columns": 1, "dtype": np.dtype("float32")},
             samples=lambda: [Sample((), {"num_rows": 3, "num_columns": 4, "dtype": np.dtype("float32")})])


def eye(num_rows: int, num_columns: int | None = None, dtype: Any = None, name: str | None = None) -> Tensor:
    """The identity matrix (num_rows x num_columns)."""
    for arg, v in (("num_rows", num_rows), ("num_columns", num_columns)):
        if v is not None and (not isinstance(v, (int, np.integer)) or v < 0):
            raise ValueError(f"eye: argument '{arg}' must be a non-negative int, got {v!r}")
    return _EYE(num_rows=int(num_rows), num_columns=int(num_rows if num_columns is None else num_columns),
                dtype=_dtype_arg(dtype, _dt.default_float()))


def _create_on_meta(like: TensorSpec, *, op: str, attrs: tuple) -> TensorSpec:
    return get_op(op).meta(**dict(attrs))


_CREATE_ON = defop("create_on", kernel=lambda xp, like, *, op, attrs: get_op(op).kernel(xp, **dict(attrs)),
                   meta=_create_on_meta, inputs=("like",), attrs={"op": "full", "attrs": ()},
                   samples=lambda: [Sample((np.ones(2),), {"op": "full", "attrs": (
                                        ("shape", (2, 3)), ("fill_value", 1.5), ("dtype", np.dtype("float32")))}),
                                    Sample((np.ones(2),), {"op": "eye", "attrs": (
                                        ("num_rows", 2), ("num_columns", 3), ("dtype", np.dtype("float64")))})])


def create_on(like: Tensor, op: str, dtype: Any = None, **attrs: Any) -> Tensor:
    """Creation op `op` ('full', 'arange', 'eye'...) with its other attributes, of `dtype` (default: like's),
    on the place of `like`, whose values are not read: how a function built from ops makes a constant next
    to its inputs whatever the default device is, as one op the JIT records (a `with` on the default place
    would break its graph)."""
    like = as_tensor(like, "like", "create_on")
    np_dtype = _dt.to_np_dtype(like.dtype if dtype is None else dtype)
    return _CREATE_ON(like, op=op, attrs=(*attrs.items(), ("dtype", np_dtype)))


def _assign_value_meta(*, shape: tuple, dtype: np.dtype, values: tuple) -> TensorSpec:
    if int(np.prod(shape)) != len(values):
        raise ValueError(f"assign_value: {len(values)} values cannot fill shape {list(shape)}")
    return TensorSpec(tuple(shape), dtype)


# A constant recorded in a static program (Paddle's assign_value): the values are an attribute.
_ASSIGN_VALUE = defop("assign_value", inputs=(), meta=_assign_value_meta,
                      kernel=lambda xp, *, shape, dtype, values: xp.asarray(values, dtype=dtype).reshape(shape),
                      attrs={"shape": (), "dtype": np.dtype("float32"), "values": ()},
                      samples=lambda: [Sample((), {"shape": (2, 2), "dtype": np.dtype("float32"),
                                                   "values": (1.0, 2.0, 3.0, 4.0)})])


def assign_value(values: np.ndarray) -> Tensor:
    """A constant op holding `values` (static programs record eager constants this way)."""
    arr = np.asarray(values)
    return _ASSIGN_VALUE(shape=tuple(arr.shape), dtype=arr.dtype, values=tuple(arr.ravel().tolist()))


_ASSIGN = defop("assign", kernel=lambda xp, x: x.copy(), meta=mu.same, grad=lambda ctx, g: (g,),
                samples=lambda: [Sample((np.arange(6.0).reshape(2, 3),))])


def assign(x: Any, output: Tensor | None = None) -> Tensor:
    """Copy `x` (a tensor, array or Python data) into a new tensor, or into `output` in place."""
    src = x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x) if not isinstance(x, (list, tuple, float, int))
                                                        else Tensor(x)._data)
    out = _ASSIGN(src)
    if output is None:
        return out
    output.set_value(out)
    return output


@tensor_method
def clone(x: Tensor) -> Tensor:
    """A differentiable copy."""
    return _ASSIGN(as_tensor(x, "x", "clone"))


# numel and shape read only the input's shape, so in a static program they give the run-time
# size of a var with unknown (-1) dimensions (gradient rules use numel for that).
_NUMEL = defop("numel", kernel=lambda xp, x: xp.asarray(x.size, dtype=np.int64),
               meta=lambda x: TensorSpec((), np.dtype("int64")),
               samples=lambda: [Sample((np.ones((2, 3)),))])
_SHAPE = defop("shape", kernel=lambda xp, x: xp.asarray(x.shape, dtype=np.int32),
               meta=lambda x: TensorSpec((len(x.shape),), np.dtype("int32")), inputs=("input",),
               samples=lambda: [Sample((np.ones((2, 3)),))])


@tensor_method
def numel(x: Tensor, name: str | None = None) -> Tensor:
    """The number of elements, as a 0-D int64 tensor."""
    return _NUMEL(as_tensor(x, "x", "numel"))


def shape(input: Tensor) -> Tensor:  # noqa: A002 - Paddle's argument name
    """The shape as a 1-D int32 tensor (Paddle's `paddle.shape`)."""
    return _SHAPE(as_tensor(input, "input", "shape"))


def _tri_meta(name: str):
    def meta(x: TensorSpec, *, diagonal: int) -> TensorSpec:
        if len(x.shape) < 2:
            raise ValueError(f"{name}: argument 'x' must have at least 2 dimensions, got shape {mu.shape_str(x.shape)}")
        return x
    return meta


_TRIL = defop("tril", kernel=lambda xp, x, *, diagonal: xp.tril(x, diagonal), meta=_tri_meta("tril"),
              grad=lambda ctx, g: (tril(g, ctx.attrs["diagonal"]),), attrs={"diagonal": 0},
              samples=lambda: [Sample((np.random.default_rng(0).normal(size=(3, 4)),), {"diagonal": 0})])
_TRIU = defop("triu", kernel=lambda xp, x, *, diagonal: xp.triu(x, diagonal), meta=_tri_meta("triu"),
              grad=lambda ctx, g: (triu(g, ctx.attrs["diagonal"]),), attrs={"diagonal": 0},
              samples=lambda: [Sample((np.random.default_rng(0).normal(size=(4, 3)),), {"diagonal": 1})])


@tensor_method
def tril(x: Tensor, diagonal: int = 0, name: str | None = None) -> Tensor:
    """Lower triangle (elements above `diagonal` set to 0)."""
    return _TRIL(as_tensor(x, "x", "tril"), diagonal=int(diagonal))


@tensor_method
def triu(x: Tensor, diagonal: int = 0, name: str | None = None) -> Tensor:
    """Upper triangle (elements below `diagonal` set to 0)."""
    return _TRIU(as_tensor(x, "x", "triu"), diagonal=int(diagonal))


def _diag_meta(x: TensorSpec, *, offset: int, padding_value: float) -> TensorSpec:
    if len(x.shape) == 1:
        n = x.shape[0] + abs(offset)
        return TensorSpec((n, n), x.dtype)
    if len(x.shape) == 2:
        r, c = x.shape
        n = max(0, min(r, c - offset) if offset >= 0 else min(r + offset, c))
        return TensorSpec((n,), x.dtype)
    raise ValueError(f"diag: argument 'x' must be 1-D or 2-D, got shape {mu.shape_str(x.shape)}")


def _diag_kernel(xp, x, *, offset, padding_value):
    if x.ndim == 1:
        out = xp.diag(x, offset)
        if padding_value != 0:
            mask = xp.diag(xp.ones_like(x, dtype=bool), offset)
            out = xp.where(mask, out, xp.asarray(padding_value, dtype=x.dtype))
        return out
    return xp.diagonal(x, offset).copy()


def _g_diag(ctx, g):
    (x,) = ctx.inputs
    off = ctx.attrs["offset"]
    if len(x.shape) == 1:
        return (diag(g, off),)
    return (_DIAG_EMBED(g, offset=off, rows=x.shape[0], cols=x.shape[1]),)


def _diag_embed_meta(x: TensorSpec, *, offset: int, rows: int, cols: int) -> TensorSpec:
    return TensorSpec((rows, cols), x.dtype)


def _diag_embed_kernel(xp, x, *, offset, rows, cols):
    out = xp.zeros((rows, cols), dtype=x.dtype)
    idx = xp.arange(x.shape[0])
    r, c = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[r, c] = x
    return out


_DIAG_EMBED = defop("diag_embed_2d", kernel=_diag_embed_kernel, meta=_diag_embed_meta,
                    grad=lambda ctx, g: (diag(g, ctx.attrs["offset"]),),
                    attrs={"offset": 0, "rows": 1, "cols": 1},
                    samples=lambda: [Sample((np.arange(3.0),), {"offset": 1, "rows": 3, "cols": 4})])
_DIAG = defop("diag", kernel=_diag_kernel, meta=_diag_meta, grad=_g_diag,
              attrs={"offset": 0, "padding_value": 0.0},
              samples=lambda: [Sample((np.arange(3.0),), {"offset": 1, "padding_value": 0.0}),
                               Sample((np.arange(12.0).reshape(3, 4),), {"offset": -1, "padding_value": 0.0})])


def diag(x: Tensor, offset: int = 0, padding_value: float = 0, name: str | None = None) -> Tensor:
    """1-D -> a diagonal matrix; 2-D -> its `offset` diagonal."""
    return _DIAG(as_tensor(x, "x", "diag"), offset=int(offset), padding_value=float(padding_value))


def diagflat(x: Tensor, offset: int = 0, name: str | None = None) -> Tensor:
    return diag(flatten(as_tensor(x, "x", "diagflat")), offset)


def meshgrid(*args: Tensor, name: str | None = None) -> list[Tensor]:
    """Coordinate grids from 1-D tensors ('ij' indexing, as Paddle)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    shape = [t.shape[0] for t in args]
    outs = []
    for i, t in enumerate(args):
        view = [1] * len(args)
        view[i] = shape[i]
        outs.append(expand(reshape(t, view), shape))
    return outs
