"""Shape ops: reshape, transpose, flatten, squeeze/unsqueeze, expand, broadcast_to, tile,
concat, stack, split, chunk, unbind, flip, roll (cast lives in math; slice, strided_slice and
repeat_interleave, which select, live in indexing).

Ops that only re-label the dimensions (reshape, squeeze, unsqueeze, flatten, transpose,
split, unbind, flip) return NumPy views, so, as in Paddle's dygraph mode, the output
shares data with the input.

A shape list may hold 0-D int tensors (Paddle's `x.reshape([n, -1])` with `n` a tensor). Eagerly
their values are read; in a static program a Variable's value exists only at run time, so
reshape, expand/broadcast_to, tile, split and full/zeros/ones record a `*_sizes` op instead: the Variables
stacked into one int64 input (`sizes_input`), the list kept as a template with None in their
places, the kernel filling them in (`fill_sizes`) and the meta function giving -1 there (so
their registry samples, checked against the kernel's shapes, have no None;
tests/test_static_backward.py runs them with sizes known at run time).
"""
from __future__ import annotations

import builtins
import itertools
import math as _pymath
from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .grad_utils import unbroadcast
from .inplace import inplace_view
from .registry import OpDef, Sample, TensorSpec, defop, normal_sampler

__all__ = ["reshape", "expand", "transpose", "moveaxis", "flatten", "squeeze", "unsqueeze", "expand_as",
           "broadcast_to", "broadcast_tensors", "broadcast_shape", "tile", "concat", "stack", "split",
           "chunk", "unbind", "unstack", "flip", "roll", "view",
           "reshape_", "squeeze_", "unsqueeze_", "flatten_", "transpose_", "view_as", "unflatten", "reverse",
           "rot90"]

_rng = np.random.default_rng(11)
_normal = normal_sampler(_rng)


def _ints(op: str, arg: str, value: Any) -> tuple[int, ...]:
    """A list/tuple of ints (0-D tensors allowed) or a 1-D int tensor, as a tuple."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
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


def run_time_size(v: Any) -> bool:
    """Whether `v` is a static Variable whose value the program knows only when it runs. One known at
    build time (`paddle.shape(x)[0]` of an x whose dims are all known) is its int, as eagerly: the
    result keeps a known size (PaddleClas's `cls_token.expand((paddle.shape(x)[0], -1, -1))`)."""
    return isinstance(v, Tensor) and v._data is None and getattr(v, "const", None) is None


def run_time_sizes(value: Any) -> bool:
    """Whether a list/tuple of sizes holds a size the program knows only when it runs."""
    return isinstance(value, (list, tuple)) and any(run_time_size(v) for v in value)


def sizes_input(op: str, arg: str, value: Any) -> tuple[Tensor, tuple]:
    """The static Variables of the sizes `value` as one 1-D int64 tensor, and `value` as a template:
    its ints, None where the tensor gives the size (in order). Each Variable holds one integer."""
    from .math import cast  # noqa: PLC0415 - math imports this module
    template, run_time = [], []
    for i, v in enumerate(value):
        if run_time_size(v):
            spec = v.spec()
            if spec.dtype.kind not in "iu" or spec.shape not in ((), (1,)):
                raise TypeError(f"{op}: argument '{arg}' must hold ints or 1-element int tensors, got a "
                                f"{spec.dtype} tensor of shape {mu.shape_str(spec.shape)} at index {i}")
            run_time.append(cast(reshape(v, []), "int64"))
            template.append(None)
        else:
            template.append(_ints(op, arg, [v])[0])
    return stack(run_time), tuple(template)


def fill_sizes(template: tuple, sizes: Any) -> tuple[int, ...]:
    """The template of a `*_sizes` op with its None entries taken, in order, from the array `sizes`."""
    run_time = iter(sizes.tolist())
    return tuple(next(run_time) if d is None else d for d in template)


def _numel(shape) -> int:
    """Element count, -1 when any dimension is unknown."""
    return -1 if -1 in shape else _pymath.prod(shape)


def reshape_like(g: Tensor, like: Tensor) -> Tensor:
    """g reshaped to the shape of `like`. Where that shape holds a 0 (which `reshape` reads as "keep
    this dim"), or, in a static program, more than one unknown (-1) dimension, it is taken from `like`
    when the kernel runs (reshape_as)."""
    shape = like.shape
    return reshape(g, shape) if 0 not in shape and shape.count(-1) <= 1 else _RESHAPE_AS(g, like)


def _g_reshape_back(ctx, g):
    """Gradient of every op that only re-labels dimensions: reshape back to the input."""
    return (reshape_like(g, ctx.inputs[0]),)


# ---------------------------------------------------------------- reshape family (views)
def _reshape_meta(x: TensorSpec, *, shape: tuple) -> TensorSpec:
    out = [-1 if d is None else x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    if list(shape).count(-1) > 1:
        raise ValueError(f"reshape: argument 'shape' {list(shape)} may contain -1 at most once")
    if -1 in x.shape or None in shape:  # a size unknown until run time: the inferred dimension is unknown too
        return TensorSpec(tuple(out), x.dtype)
    known = _pymath.prod(d for d in out if d != -1)
    total = _pymath.prod(x.shape)
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
    if 0 in shape:  # 0 copies the input dimension; -1 NumPy infers itself
        shape = tuple(x.shape[i] if d == 0 else d for i, d in enumerate(shape))
    return x.reshape(shape)


_RESHAPE = defop("reshape", kernel=_reshape_kernel, meta=_reshape_meta, grad=_g_reshape_back, attrs={"shape": ()},
                 samples=lambda: [Sample((_normal(2, 6),), {"shape": (3, -1)}),
                                  Sample((_normal(2, 3, 4),), {"shape": (0, -1)})])


_RESHAPE_SIZES = defop("reshape_sizes", kernel=lambda xp, x, sizes, *, shape: _reshape_kernel(
                           xp, x, shape=fill_sizes(shape, sizes)),
                       meta=lambda x, sizes, *, shape: _reshape_meta(x, shape=shape),
                       grad=lambda ctx, g: (*_g_reshape_back(ctx, g), None), inputs=("x", "sizes"),
                       attrs={"shape": ()},
                       samples=lambda: [Sample((_normal(2, 6), np.zeros(0, np.int64)), {"shape": (-1, 3)})])


def _sized(op: OpDef, name: str, x: Tensor, arg: str, value: Any, **attrs: Any) -> Any:
    """`op` (reshape, expand, tile, split) of x with the sizes `value` as its attribute `arg`, through its
    `*_sizes` twin when sizes are known only at run time."""
    if run_time_sizes(value):
        sizes, template = sizes_input(name, arg, value)
        return _SIZED[op](x, sizes, **{arg: template}, **attrs)
    return op(x, **{arg: _ints(name, arg, value)}, **attrs)


@tensor_method
def reshape(x: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """New shape with the same elements; 0 copies the input dim, -1 is inferred."""
    return _sized(_RESHAPE, "reshape", as_tensor(x, "x", "reshape"), "shape", shape)


def _squeeze_meta(x: TensorSpec, *, axis: tuple | None) -> TensorSpec:
    if axis is None:
        return TensorSpec(tuple(d for d in x.shape if d != 1), x.dtype)
    axes = {mu.normalize_axis("squeeze", a, len(x.shape)) for a in axis}
    return TensorSpec(tuple(d for i, d in enumerate(x.shape) if not (i in axes and d == 1)), x.dtype)


def _unsqueeze_meta(x: TensorSpec, *, axis: tuple) -> TensorSpec:
    shape = list(x.shape)
    for a in axis:  # one at a time, each relative to the shape grown so far (as Paddle)
        n = len(shape)
        if not -(n + 1) <= a <= n:
            raise ValueError(f"unsqueeze: argument 'axis' = {a} is out of range for a tensor with {n} "
                             f"dimension(s) (expected {-(n + 1)} <= axis <= {n})")
        shape.insert(a + n + 1 if a < 0 else a, 1)
    return TensorSpec(tuple(shape), x.dtype)


def _flatten_meta(x: TensorSpec, *, start_axis: int, stop_axis: int) -> TensorSpec:
    if not x.shape:
        return TensorSpec((1,), x.dtype)
    n = len(x.shape)
    start = mu.normalize_axis("flatten", start_axis, n, "start_axis")
    stop = mu.normalize_axis("flatten", stop_axis, n, "stop_axis")
    if start > stop:
        raise ValueError(f"flatten: argument 'start_axis' ({start_axis}) must not come after "
                         f"argument 'stop_axis' ({stop_axis}) for a tensor with {n} dimension(s)")
    return TensorSpec(x.shape[:start] + (_numel(x.shape[start:stop + 1]),) + x.shape[stop + 1:], x.dtype)


_SQUEEZE = defop("squeeze", kernel=lambda xp, x, *, axis: x.reshape(_squeeze_meta(x, axis=axis).shape),
                 meta=_squeeze_meta, grad=_g_reshape_back, attrs={"axis": None},
                 samples=lambda: [Sample((_normal(1, 3, 1, 2),), {"axis": None}),
                                  Sample((_normal(1, 3, 1, 2),), {"axis": (0, 1, -2)})])
_UNSQUEEZE = defop("unsqueeze", kernel=lambda xp, x, *, axis: x.reshape(_unsqueeze_meta(x, axis=axis).shape),
                   meta=_unsqueeze_meta, grad=_g_reshape_back, attrs={"axis": ()},
                   samples=lambda: [Sample((_normal(3, 2),), {"axis": (0, 2, -1)})])
_FLATTEN = defop("flatten", kernel=lambda xp, x, *, start_axis, stop_axis: x.reshape(
                     _flatten_meta(x, start_axis=start_axis, stop_axis=stop_axis).shape),
                 meta=_flatten_meta, grad=_g_reshape_back, attrs={"start_axis": 0, "stop_axis": -1},
                 samples=lambda: [Sample((_normal(2, 3, 4, 2),), {"start_axis": 1, "stop_axis": 2}),
                                  Sample((_normal(2, 3),), {"start_axis": 0, "stop_axis": -1})])


def _axes_attr(op: str, axis: Any) -> tuple[int, ...] | None:
    return None if axis is None else _ints(op, "axis", axis)


@tensor_method
def squeeze(x: Tensor, axis: Any = None, name: str | None = None) -> Tensor:
    """Drop dimensions of size 1 (only those in `axis` when given; others in `axis` stay)."""
    return _SQUEEZE(as_tensor(x, "x", "squeeze"), axis=_axes_attr("squeeze", axis))


@tensor_method
def unsqueeze(x: Tensor, axis: Any, name: str | None = None) -> Tensor:
    """Insert dimensions of size 1 at `axis` (an int or a list, applied in order)."""
    return _UNSQUEEZE(as_tensor(x, "x", "unsqueeze"), axis=_ints("unsqueeze", "axis", axis))


@tensor_method
def flatten(x: Tensor, start_axis: int = 0, stop_axis: int = -1, name: str | None = None) -> Tensor:
    """Merge dimensions start_axis..stop_axis (inclusive) into one."""
    return _FLATTEN(as_tensor(x, "x", "flatten"), start_axis=mu.int_arg("flatten", "start_axis", start_axis),
                    stop_axis=mu.int_arg("flatten", "stop_axis", stop_axis))


@tensor_method
def view(x: Tensor, shape_or_dtype: Any, name: str | None = None) -> Tensor:
    """A reshaped view sharing x's data (Paddle's `view` with a shape)."""
    if not isinstance(shape_or_dtype, (list, tuple, Tensor)):
        raise TypeError(f"view: argument 'shape_or_dtype' must be a list or tuple of ints "
                        f"(viewing as another dtype is not supported), got {type(shape_or_dtype).__name__}")
    return reshape(x, shape_or_dtype)


@tensor_method
def view_as(x: Tensor, other: Tensor, name: str | None = None) -> Tensor:
    """x reshaped to the shape of `other` (sharing x's data)."""
    return reshape(x, as_tensor(other, "other", "view_as").shape)


@tensor_method
def unflatten(x: Tensor, axis: int, shape: Any, name: str | None = None) -> Tensor:
    """Split dimension `axis` of x into the dimensions `shape` (one may be -1)."""
    x = as_tensor(x, "x", "unflatten")
    a = mu.normalize_axis("unflatten", mu.int_arg("unflatten", "axis", axis), x.ndim)
    sizes = _ints("unflatten", "shape", shape)
    if 0 in sizes or not sizes:
        raise ValueError(f"unflatten: argument 'shape' {list(sizes)} must be non-empty without zeros")
    return reshape(x, x.shape[:a] + list(sizes) + x.shape[a + 1:])


@tensor_method
def reshape_(x: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """In-place `reshape`: x itself takes the new shape."""
    return inplace_view(x, reshape, "reshape_", shape)


@tensor_method
def squeeze_(x: Tensor, axis: Any = None, name: str | None = None) -> Tensor:
    """In-place `squeeze`: x itself takes the new shape."""
    return inplace_view(x, squeeze, "squeeze_", axis)


@tensor_method
def unsqueeze_(x: Tensor, axis: Any, name: str | None = None) -> Tensor:
    """In-place `unsqueeze`: x itself takes the new shape."""
    return inplace_view(x, unsqueeze, "unsqueeze_", axis)


@tensor_method
def flatten_(x: Tensor, start_axis: int = 0, stop_axis: int = -1, name: str | None = None) -> Tensor:
    """In-place `flatten`: x itself takes the new shape."""
    return inplace_view(x, flatten, "flatten_", start_axis, stop_axis)


@tensor_method
def transpose_(x: Tensor, perm: Any, name: str | None = None) -> Tensor:
    """In-place `transpose`: x itself takes the new shape."""
    return inplace_view(x, transpose, "transpose_", perm)


# ---------------------------------------------------------------- transpose
def _transpose_meta(x: TensorSpec, *, perm: tuple) -> TensorSpec:
    n = len(x.shape)
    if sorted(a % n if n and -n <= a < n else a for a in perm) != list(range(n)):
        raise ValueError(f"transpose: argument 'perm' {list(perm)} must be a permutation of the "
                         f"{n} dimensions of x {mu.shape_str(x.shape)}")
    return TensorSpec(tuple(x.shape[a] for a in perm), x.dtype)


def _g_transpose(ctx, g):
    perm = [a % len(ctx.attrs["perm"]) for a in ctx.attrs["perm"]]
    return (transpose(g, [perm.index(i) for i in range(len(perm))]),)


_TRANSPOSE = defop("transpose", kernel=lambda xp, x, *, perm: xp.transpose(x, perm), meta=_transpose_meta,
                   grad=_g_transpose, attrs={"perm": ()},
                   samples=lambda: [Sample((_normal(2, 3, 4),), {"perm": (2, 0, 1)}),
                                    Sample((_normal(3, 4),), {"perm": (-1, 0)})])


@tensor_method
def transpose(x: Tensor, perm: Any, name: str | None = None) -> Tensor:
    """Permute the dimensions: output dim i is input dim perm[i]."""
    return _TRANSPOSE(as_tensor(x, "x", "transpose"), perm=_ints("transpose", "perm", perm))


@tensor_method
def moveaxis(x: Tensor, source: Any, destination: Any, name: str | None = None) -> Tensor:
    """Move the dimensions `source` to the positions `destination` (others keep their order)."""
    x = as_tensor(x, "x", "moveaxis")
    n = x.ndim
    src = [mu.normalize_axis("moveaxis", a, n, "source") for a in _ints("moveaxis", "source", source)]
    dst = [mu.normalize_axis("moveaxis", a, n, "destination") for a in _ints("moveaxis", "destination", destination)]
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: arguments 'source' {src} and 'destination' {dst} must have the same length")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: 'source' {src} and 'destination' {dst} must not repeat an axis")
    perm = [a for a in range(n) if a not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(x, perm)


Tensor.T = property(lambda self: transpose(self, list(range(self.ndim - 1, -1, -1))),
                    doc="The tensor with all dimensions reversed.")


# ---------------------------------------------------------------- expand, broadcast, tile
def _expand_meta(x: TensorSpec, *, shape: tuple) -> TensorSpec:
    if len(shape) < len(x.shape):
        raise ValueError(f"expand: argument 'shape' {list(shape)} has fewer dimensions than x "
                         f"{mu.shape_str(x.shape)}")
    lead = len(shape) - len(x.shape)
    out = []
    for i, d in enumerate(shape):
        src = x.shape[i - lead] if i >= lead else 1
        if d is None:  # a size known at run time: x's own unless x broadcasts there
            out.append(-1 if src in (1, -1) else src)
            continue
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


_EXPAND = defop("expand", kernel=_expand_kernel, meta=_expand_meta,
                grad=lambda ctx, g: (unbroadcast(g, ctx.inputs[0]),), attrs={"shape": ()},
                samples=lambda: [Sample((_normal(3, 1),), {"shape": (2, 3, 4)})])


_EXPAND_SIZES = defop("expand_sizes", kernel=lambda xp, x, sizes, *, shape: _expand_kernel(
                          xp, x, shape=fill_sizes(shape, sizes)),
                      meta=lambda x, sizes, *, shape: _expand_meta(x, shape=shape),
                      grad=lambda ctx, g: (unbroadcast(g, ctx.inputs[0]), None), inputs=("x", "sizes"),
                      attrs={"shape": ()},
                      samples=lambda: [Sample((_normal(3, 1), np.zeros(0, np.int64)), {"shape": (2, 3, 4)})])


@tensor_method
def expand(x: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """Broadcast x to `shape` (-1 keeps a dimension)."""
    return _sized(_EXPAND, "expand", as_tensor(x, "x", "expand"), "shape", shape)


@tensor_method
def broadcast_to(x: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """Broadcast x to `shape` (same as expand)."""
    return _sized(_EXPAND, "broadcast_to", as_tensor(x, "x", "broadcast_to"), "shape", shape)


def _expand_as_meta(x: TensorSpec, y: TensorSpec) -> TensorSpec:
    lead = len(y.shape) - len(x.shape)
    if lead < 0:
        raise ValueError(f"expand_as: argument 'y' {mu.shape_str(y.shape)} has fewer dimensions than 'x' "
                         f"{mu.shape_str(x.shape)}")
    for i, d in enumerate(y.shape[lead:]):
        src = x.shape[i]
        if src not in (1, -1) and d not in (-1, src):
            raise ValueError(f"expand_as: cannot expand dimension {i} of 'x' {mu.shape_str(x.shape)} to "
                             f"the shape of 'y' {mu.shape_str(y.shape)}")
    return TensorSpec(tuple(y.shape), x.dtype)


# The target shape comes from y at run time (y's values are never read), so it also works in a
# static program where y has unknown (-1) dimensions; gradient rules use it for that case.
_EXPAND_AS = defop("expand_as", kernel=lambda xp, x, y: xp.broadcast_to(x, y.shape).copy(), meta=_expand_as_meta,
                   grad=lambda ctx, g: (unbroadcast(g, ctx.inputs[0]), None), inputs=("x", "y"),
                   samples=lambda: [Sample((_normal(3, 1), _normal(2, 3, 4)), grad_inputs=(0,)),
                                    Sample((_normal(4), _normal(3, 4)), grad_inputs=(0,))])


def _reshape_as_meta(x: TensorSpec, like: TensorSpec) -> TensorSpec:
    if -1 not in x.shape and -1 not in like.shape and _numel(x.shape) != _numel(like.shape):
        raise ValueError(f"reshape_as: cannot reshape 'x' {mu.shape_str(x.shape)} to the shape of 'like' "
                         f"{mu.shape_str(like.shape)}")
    return TensorSpec(tuple(like.shape), x.dtype)


# x reshaped to the run-time shape of `like` (its values are never read): the gradient of the
# reshape family in static programs whose shapes have several unknown (-1) dimensions.
_RESHAPE_AS = defop("reshape_as", kernel=lambda xp, x, like: x.reshape(like.shape), meta=_reshape_as_meta,
                    grad=lambda ctx, g: (_RESHAPE_AS(g, ctx.inputs[0]), None), inputs=("x", "like"),
                    samples=lambda: [Sample((_normal(2, 6), _normal(3, 4)), grad_inputs=(0,))])


@tensor_method
def expand_as(x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """Broadcast x to the shape of y."""
    return _EXPAND_AS(as_tensor(x, "x", "expand_as"), as_tensor(y, "y", "expand_as"))


def broadcast_shape(x_shape: Any, y_shape: Any) -> list[int]:
    """The shape two tensors of these shapes broadcast to."""
    return list(mu.broadcast_shape("broadcast_shape", _ints("broadcast_shape", "x_shape", x_shape),
                                   _ints("broadcast_shape", "y_shape", y_shape), ("x_shape", "y_shape")))


def broadcast_tensors(input: Any, name: str | None = None) -> list[Tensor]:  # noqa: A002 - Paddle's name
    """Broadcast every tensor of the list to their common shape."""
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("broadcast_tensors: argument 'input' must be a non-empty list of Tensors")
    tensors = [as_tensor(t, f"input[{i}]", "broadcast_tensors") for i, t in enumerate(input)]
    shape: tuple = ()
    for i, t in enumerate(tensors):
        shape = mu.broadcast_shape("broadcast_tensors", shape, t._data.shape, ("the inputs before it", f"input[{i}]"))
    return [t if t._data.shape == shape else _EXPAND(t, shape=shape) for t in tensors]


def _tile_meta(x: TensorSpec, *, repeat_times: tuple) -> TensorSpec:
    if any(r is not None and r < 0 for r in repeat_times):
        raise ValueError(f"tile: argument 'repeat_times' {list(repeat_times)} must hold non-negative ints")
    n = max(len(x.shape), len(repeat_times))
    shape = (1,) * (n - len(x.shape)) + tuple(x.shape)
    reps = (1,) * (n - len(repeat_times)) + tuple(repeat_times)
    return TensorSpec(tuple(-1 if d == -1 or r is None else d * r for d, r in zip(shape, reps)), x.dtype)


def _g_tile(ctx, g):
    from .reduction import sum as _sum  # noqa: PLC0415 - reduction imports shape (its gradients expand back)
    x = ctx.inputs[0]
    reps = ctx.attrs["repeat_times"]
    n = max(x.ndim, len(reps))
    shape = [1] * (n - x.ndim) + x.shape
    reps = [1] * (n - len(reps)) + list(reps)
    inter = [v for r, d in zip(reps, shape) for v in (r, d)]  # (r0, d0, r1, d1, ...)
    if None in inter:  # tile_sizes: its run-time repeats, in the same order, fill the None entries
        folded = _RESHAPE_SIZES(g, ctx.inputs[1], shape=tuple(inter))
    else:
        folded = reshape(g, inter)
    return (reshape_like(_sum(folded, axis=list(range(0, 2 * n, 2))), x),) + (None,) * (len(ctx.inputs) - 1)


_TILE = defop("tile", kernel=lambda xp, x, *, repeat_times: xp.tile(x, repeat_times), meta=_tile_meta,
              grad=_g_tile, attrs={"repeat_times": ()},
              samples=lambda: [Sample((_normal(2, 3),), {"repeat_times": (2, 1, 3)}),
                               Sample((_normal(2, 3, 2),), {"repeat_times": (2,)})])


_TILE_SIZES = defop("tile_sizes", kernel=lambda xp, x, sizes, *, repeat_times: xp.tile(
                        x, fill_sizes(repeat_times, sizes)),
                    meta=lambda x, sizes, *, repeat_times: _tile_meta(x, repeat_times=repeat_times),
                    grad=_g_tile, inputs=("x", "sizes"), attrs={"repeat_times": ()},
                    samples=lambda: [Sample((_normal(2, 3), np.zeros(0, np.int64)), {"repeat_times": (2, 1, 3)})])


@tensor_method
def tile(x: Tensor, repeat_times: Any, name: str | None = None) -> Tensor:
    """Repeat x `repeat_times[i]` times along dimension i (shorter lists pad with 1 on the left)."""
    return _sized(_TILE, "tile", as_tensor(x, "x", "tile"), "repeat_times", repeat_times)


# ---------------------------------------------------------------- concat / stack / split / unbind
def _same_dtypes(op: str, arg: str, xs: tuple) -> None:
    for i, s in enumerate(xs[1:], 1):
        if s.dtype != xs[0].dtype:
            raise TypeError(f"{op}: all tensors in argument '{arg}' must have the same dtype, but {arg}[0] "
                            f"is {xs[0].dtype.name} and {arg}[{i}] is {s.dtype.name}")


def _concat_meta(*x: TensorSpec, axis: int) -> TensorSpec:
    if not x:
        raise ValueError("concat: argument 'x' must hold at least one tensor")
    _same_dtypes("concat", "x", x)
    first = x[0].shape
    if not first:
        raise ValueError("concat: cannot concatenate 0-D tensors; use stack")
    a = mu.normalize_axis("concat", axis, len(first))
    total = 0
    for i, s in enumerate(x):
        if len(s.shape) != len(first) or any(d != e and -1 not in (d, e)
                                             for j, (d, e) in enumerate(zip(s.shape, first)) if j != a):
            raise ValueError(f"concat: x[{i}] has shape {mu.shape_str(s.shape)}, which does not match x[0] "
                             f"{mu.shape_str(first)} outside dimension {a}")
        total = -1 if -1 in (total, s.shape[a]) else total + s.shape[a]
    return TensorSpec(first[:a] + (total,) + first[a + 1:], x[0].dtype)


def _g_concat(ctx, g):
    sizes = tuple(t.shape[ctx.attrs["axis"]] for t in ctx.inputs)
    return _SPLIT(g, num_or_sections=sizes, axis=ctx.attrs["axis"])


_CONCAT = defop("concat", kernel=lambda xp, *x, axis: xp.concatenate(x, axis=axis), meta=_concat_meta,
                grad=_g_concat, inputs=("*x",), attrs={"axis": 0},
                samples=lambda: [Sample((_normal(2, 3), _normal(2, 1), _normal(2, 2)), {"axis": 1}),
                                 Sample((_normal(2, 3), _normal(1, 3)), {"axis": -2})])


def _tensor_list(op: str, arg: str, x: Any) -> list[Tensor]:
    if isinstance(x, Tensor) or not isinstance(x, (list, tuple)):
        raise TypeError(f"{op}: argument '{arg}' must be a list or tuple of Tensors, got {type(x).__name__}")
    return [as_tensor(t, f"{arg}[{i}]", op) for i, t in enumerate(x)]


def concat(x: Any, axis: Any = 0, name: str | None = None) -> Tensor:
    """Join tensors along an existing dimension."""
    return _CONCAT(*_tensor_list("concat", "x", x), axis=mu.int_arg("concat", "axis", axis))


def _stack_meta(*x: TensorSpec, axis: int) -> TensorSpec:
    if not x:
        raise ValueError("stack: argument 'x' must hold at least one tensor")
    _same_dtypes("stack", "x", x)
    for i, s in enumerate(x):
        if s.shape != x[0].shape:
            raise ValueError(f"stack: all tensors must have the same shape, but x[0] is "
                             f"{mu.shape_str(x[0].shape)} and x[{i}] is {mu.shape_str(s.shape)}")
    a = mu.normalize_axis("stack", axis, len(x[0].shape) + 1)
    return TensorSpec(x[0].shape[:a] + (len(x),) + x[0].shape[a:], x[0].dtype)


_STACK = defop("stack", kernel=lambda xp, *x, axis: xp.stack(x, axis=axis), meta=_stack_meta,
               grad=lambda ctx, g: _UNBIND(g, axis=ctx.attrs["axis"]), inputs=("*x",), attrs={"axis": 0},
               samples=lambda: [Sample((_normal(2, 3), _normal(2, 3), _normal(2, 3)), {"axis": 1}),
                                Sample((_normal(3), _normal(3)), {"axis": -1})])


def stack(x: Any, axis: int = 0, name: str | None = None) -> Tensor:
    """Join same-shaped tensors along a new dimension."""
    return _STACK(*_tensor_list("stack", "x", x), axis=mu.int_arg("stack", "axis", axis))


def _split_sizes(x: TensorSpec, num_or_sections: Any, axis: int) -> tuple[int, ...]:
    a = mu.normalize_axis("split", axis, len(x.shape))
    dim = x.shape[a]
    if isinstance(num_or_sections, int):
        n = num_or_sections
        if n <= 0:
            raise ValueError(f"split: argument 'num_or_sections' must be positive, got {n}")
        if dim == -1:
            return (-1,) * n
        if dim % n:
            raise ValueError(f"split: dimension {a} of x {mu.shape_str(x.shape)} ({dim}) is not divisible "
                             f"into {n} equal sections")
        return (dim // n,) * n
    sections = list(num_or_sections)
    if sections.count(-1) > 1:
        raise ValueError(f"split: argument 'num_or_sections' {sections} may contain -1 at most once")
    if any(s is not None and s < -1 for s in sections):
        raise ValueError(f"split: argument 'num_or_sections' {sections} must hold sizes >= 0 (or one -1)")
    if None in sections:  # split_sizes: sizes known at run time, and the -1 inferred from them
        return tuple(-1 if s is None else s for s in sections)
    if dim != -1:
        known = sum(s for s in sections if s != -1)
        if -1 in sections and known <= dim:
            sections[sections.index(-1)] = dim - known
        elif known != dim:
            raise ValueError(f"split: the sections {list(num_or_sections)} do not add up to dimension {a} "
                             f"of x {mu.shape_str(x.shape)} ({dim})")
    return tuple(sections)


def _split_meta(x: TensorSpec, *, num_or_sections: Any, axis: int) -> tuple:
    a = mu.normalize_axis("split", axis, len(x.shape))
    return tuple(TensorSpec(x.shape[:a] + (s,) + x.shape[a + 1:], x.dtype)
                 for s in _split_sizes(x, num_or_sections, axis))


def _split_kernel(xp, x, *, num_or_sections, axis):
    lead = (builtins.slice(None),) * (axis % x.ndim)
    bounds = [0, *itertools.accumulate(_split_sizes(x, num_or_sections, axis))]
    return tuple(x[lead + (builtins.slice(s, e),)] for s, e in zip(bounds, bounds[1:]))


_SPLIT = defop("split", kernel=_split_kernel, meta=_split_meta,
               grad=lambda ctx, *gs: (_CONCAT(*gs, axis=ctx.attrs["axis"]),),
               attrs={"num_or_sections": 1, "axis": 0},
               samples=lambda: [Sample((_normal(4, 3),), {"num_or_sections": 2, "axis": 0}),
                                Sample((_normal(2, 6),), {"num_or_sections": (1, -1, 2), "axis": -1})])


_SPLIT_SIZES = defop("split_sizes", kernel=lambda xp, x, sizes, *, num_or_sections, axis: _split_kernel(
                         xp, x, num_or_sections=fill_sizes(num_or_sections, sizes), axis=axis),
                     meta=lambda x, sizes, *, num_or_sections, axis: _split_meta(x, num_or_sections=num_or_sections,
                                                                                 axis=axis),
                     grad=lambda ctx, *gs: (_CONCAT(*gs, axis=ctx.attrs["axis"]), None),
                     inputs=("x", "sizes"), attrs={"num_or_sections": (), "axis": 0},
                     samples=lambda: [Sample((_normal(2, 6), np.zeros(0, np.int64)),
                                             {"num_or_sections": (1, -1, 2), "axis": -1})])
_SIZED = {_RESHAPE: _RESHAPE_SIZES, _EXPAND: _EXPAND_SIZES, _TILE: _TILE_SIZES, _SPLIT: _SPLIT_SIZES}


@tensor_method
def split(x: Tensor, num_or_sections: Any, axis: Any = 0, name: str | None = None) -> list[Tensor]:
    """Cut x along `axis` into `num_or_sections` equal parts, or parts of the listed sizes (one may be -1)."""
    x = as_tensor(x, "x", "split")
    axis = mu.int_arg("split", "axis", axis)
    if isinstance(num_or_sections, (list, tuple)):
        return list(_sized(_SPLIT, "split", x, "num_or_sections", num_or_sections, axis=axis))
    return list(_SPLIT(x, num_or_sections=mu.int_arg("split", "num_or_sections", num_or_sections), axis=axis))


@tensor_method
def chunk(x: Tensor, chunks: int, axis: Any = 0, name: str | None = None) -> list[Tensor]:
    """Split x into `chunks` equal parts along `axis`."""
    return split(x, mu.int_arg("chunk", "chunks", chunks), axis)


def _unbind_meta(x: TensorSpec, *, axis: int) -> tuple:
    a = mu.normalize_axis("unbind", axis, len(x.shape))
    if x.shape[a] == -1:
        raise ValueError(f"unbind: dimension {a} of x {mu.shape_str(x.shape)} must be known")
    return (TensorSpec(x.shape[:a] + x.shape[a + 1:], x.dtype),) * x.shape[a]


_UNBIND = defop("unbind", kernel=lambda xp, x, *, axis: tuple(xp.moveaxis(x, axis, 0)), meta=_unbind_meta,
                grad=lambda ctx, *gs: (_STACK(*gs, axis=ctx.attrs["axis"]),), attrs={"axis": 0},
                samples=lambda: [Sample((_normal(3, 2),), {"axis": 0}), Sample((_normal(2, 3, 2),), {"axis": -2})])


@tensor_method
def unbind(input: Tensor, axis: int = 0) -> list[Tensor]:  # noqa: A002 - Paddle's name
    """The slices of `input` along `axis`, each without that dimension."""
    return list(_UNBIND(as_tensor(input, "input", "unbind"), axis=mu.int_arg("unbind", "axis", axis)))


@tensor_method
def unstack(x: Tensor, axis: int = 0, num: int | None = None) -> list[Tensor]:
    """Same as unbind; `num`, when given, must equal the size of dimension `axis`."""
    x = as_tensor(x, "x", "unstack")
    out = list(_UNBIND(x, axis=mu.int_arg("unstack", "axis", axis)))
    if num is not None and num != len(out):
        raise ValueError(f"unstack: argument 'num' ({num}) must equal the size of dimension {axis} of x "
                         f"{x.shape} ({len(out)})")
    return out


# ---------------------------------------------------------------- flip / roll
def _flip_meta(x: TensorSpec, *, axis: tuple) -> TensorSpec:
    mu.normalize_axes("flip", axis, len(x.shape))
    return x


_FLIP = defop("flip", kernel=lambda xp, x, *, axis: xp.flip(x, axis), meta=_flip_meta,
              grad=lambda ctx, g: (flip(g, ctx.attrs["axis"]),), attrs={"axis": ()},
              samples=lambda: [Sample((_normal(3, 4),), {"axis": (0, -1)}),
                               Sample((_normal(2, 3, 2),), {"axis": (1,)})])


@tensor_method(names=("reverse",))
def flip(x: Tensor, axis: Any, name: str | None = None) -> Tensor:
    """Reverse the order of elements along the given axes."""
    return _FLIP(as_tensor(x, "x", "flip"), axis=_ints("flip", "axis", axis))


reverse = flip


@tensor_method
def rot90(x: Tensor, k: int = 1, axes: Any = (0, 1), name: str | None = None) -> Tensor:
    """Rotate by 90 degrees k times in the plane of `axes`, from the first axis towards the second."""
    x = as_tensor(x, "x", "rot90")
    axes = [mu.normalize_axis("rot90", a, x.ndim, "axes") for a in _ints("rot90", "axes", axes)]
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"rot90: argument 'axes' must name two different dimensions, got {axes}")
    k = mu.int_arg("rot90", "k", k) % 4
    perm = list(range(x.ndim))
    perm[axes[0]], perm[axes[1]] = axes[1], axes[0]
    if k == 1:
        return transpose(flip(x, [axes[1]]), perm)
    if k == 2:
        return flip(x, axes)
    if k == 3:
        return flip(transpose(x, perm), [axes[1]])
    return reshape(x, x.shape)


def _roll_meta(x: TensorSpec, *, shifts: tuple, axis: tuple | None) -> TensorSpec:
    if axis is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: argument 'shifts' {list(shifts)} must be a single int when 'axis' is None")
    else:
        if len(shifts) != len(axis):
            raise ValueError(f"roll: arguments 'shifts' {list(shifts)} and 'axis' {list(axis)} must have "
                             "the same length")
        for a in axis:
            mu.normalize_axis("roll", a, len(x.shape))
    return x


def _roll_kernel(xp, x, *, shifts, axis):
    return xp.roll(x, shifts[0]) if axis is None else xp.roll(x, shifts, axis)


_ROLL = defop("roll", kernel=_roll_kernel, meta=_roll_meta,
              grad=lambda ctx, g: (roll(g, [-s for s in ctx.attrs["shifts"]], ctx.attrs["axis"]),),
              attrs={"shifts": (), "axis": None},
              samples=lambda: [Sample((_normal(3, 4),), {"shifts": (1, -2), "axis": (0, 1)}),
                               Sample((_normal(3, 4),), {"shifts": (5,), "axis": None})])


@tensor_method
def roll(x: Tensor, shifts: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """Shift elements cyclically along `axis` (None: over the flattened tensor, shape kept)."""
    return _ROLL(as_tensor(x, "x", "roll"), shifts=_ints("roll", "shifts", shifts), axis=_axes_attr("roll", axis))
