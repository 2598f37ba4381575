"""Tensor __getitem__ / __setitem__, slice / strided_slice, and the gather/scatter family: gather,
gather_nd, index_select, repeat_interleave, scatter, scatter_nd(_add), index_add, index_sample,
masked_fill, masked_select, nonzero, take_along_axis, put_along_axis.

Indexing follows NumPy (as Paddle does). An index is turned into a hashable *template*:
ints, None and Ellipsis stand for themselves, a slice is ("slice", start, stop, step) and an
index tensor is ("tensor", k), the k-th tensor input of the op. So one op, "getitem"
(inputs: x and the index tensors), covers every index form, its meta computes the result
shape without values, and the meta cache keys on the template. Boolean masks have a
data-dependent size, so they are first turned into int index tensors by `nonzero` (the
only dynamic op involved); "setitem" takes masks directly, as its output shape is x's.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor, tensor_method
from . import creation, math, shape
from . import meta_utils as mu
from .grad_mode import is_grad_enabled
from .grad_utils import unbroadcast
from .inplace import alias, inplace
from .registry import Sample, TensorSpec, defop, normal_sampler

__all__ = ["gather", "gather_nd", "index_select", "scatter", "scatter_", "scatter_nd", "scatter_nd_add",
           "index_add", "index_add_", "index_sample", "masked_fill", "masked_fill_", "take_along_axis",
           "put_along_axis", "put_along_axis_", "take", "index_put", "index_put_", "nonzero", "masked_select", "slice",
           "strided_slice",
           "repeat_interleave"]

_rng = np.random.default_rng(5)
_normal = normal_sampler(_rng)
_I64 = np.dtype("int64")
_ndarray = np.ndarray
_FULL_SLICE = ("slice", None, None, None)
_META_CACHE_LIMIT = 4096


def _ints(*values):
    return np.asarray(values, dtype=np.int64)


def _scatter_add(xp, out, key, values) -> None:
    """out[key] += values, accumulating over repeated indices."""
    if xp is np:
        np.add.at(out, key, values)
    else:
        import cupyx  # noqa: PLC0415 - only reached for CuPy arrays
        cupyx.scatter_add(out, key, values)


# ---------------------------------------------------------------- index templates
_BASIC_KEYS: dict = {}  # template without tensors -> its NumPy index (slices are not hashable before 3.12)


def _key(template: tuple, arrays: tuple) -> tuple:
    """The NumPy index a template stands for, with `arrays` in the tensor places."""
    if not arrays:
        key = _BASIC_KEYS.get(template)
        if key is not None:
            return key
    key = tuple([it if type(it) is not tuple else builtins.slice(it[1], it[2], it[3]) if it[0] == "slice"
                 else arrays[it[1]] for it in template])
    if not arrays and len(_BASIC_KEYS) < _META_CACHE_LIMIT:
        _BASIC_KEYS[template] = key
    return key


def _slice_bound(v: Any, api: str):
    if v is None or type(v) is int:
        return v
    if isinstance(v, (int, np.integer, Tensor)) and not isinstance(v, (bool, np.bool_)):
        return operator.index(v)  # an integer Tensor with one element, not a float one
    raise TypeError(f"{api}: slice indices must be ints, 0-D int Tensors or None, got {type(v).__name__}")


def _on_device_of(arr: np.ndarray, like):
    """`arr` moved to the device of array `like` (NumPy stays NumPy)."""
    if type(like) is _ndarray:
        return arr
    import cupy  # noqa: PLC0415 - only reached for CuPy arrays
    return cupy.asarray(arr)


def _index_tensor(item: Any, like, api: str) -> Tensor:
    """A list / array / tuple used as an index, as an int64 or bool tensor on x's device."""
    arr = np.asarray(item)
    if arr.dtype.kind == "f" and arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "biu":
        raise TypeError(f"{api}: an index list or array must hold ints or bools, got dtype {arr.dtype}")
    if arr.dtype.kind != "b":
        arr = arr.astype(np.int64, copy=False)
    return Tensor._wrap(_on_device_of(arr, like))


def _parse(key: Any, like, api: str) -> tuple[tuple, list]:
    """Split an index into (template, index tensors)."""
    if type(key) is int:
        return (key,), []
    if type(key) is not tuple:
        key = (key,)
    template: list = []
    tensors: list = []
    for item in key:
        t = type(item)
        if t is int or item is None or item is Ellipsis:
            template.append(item)
        elif t is builtins.slice:
            template.append(("slice", _slice_bound(item.start, api), _slice_bound(item.stop, api),
                             _slice_bound(item.step, api)))
        elif isinstance(item, (bool, np.bool_)):
            raise TypeError(f"{api}: a Python bool is not a valid index; use None to add a dimension "
                            "or a bool tensor as a mask")
        elif isinstance(item, np.integer):
            template.append(int(item))
        else:
            if not isinstance(item, Tensor):
                if not isinstance(item, (list, tuple, _ndarray)):
                    raise TypeError(f"{api}: unsupported index of type {t.__name__} (expected int, slice, "
                                    "None, Ellipsis, a list, an array or a Tensor)")
                item = _index_tensor(item, like, api)
            elif item._data.dtype.kind not in "biu":
                raise TypeError(f"{api}: index tensors must have an integer or bool dtype, got {item.dtype.name}")
            if item._data.dtype.kind == "b" and item._data.ndim == 0:
                raise TypeError(f"{api}: a 0-D bool tensor is not a valid index; use a mask with dimensions")
            template.append(("tensor", len(tensors)))
            tensors.append(item)
    return tuple(template), tensors


def _slice_len(op: str, size: int, item: tuple, dim: int) -> int:
    if item[3] == 0:
        raise ValueError(f"{op}: slice step cannot be zero (dimension {dim})")
    if size == -1:
        return -1
    return len(range(*builtins.slice(item[1], item[2], item[3]).indices(size)))


def _index_shape(op: str, shape: tuple, template: tuple, specs: tuple, allow_bool: bool) -> tuple:
    """Shape of x[index] by NumPy's rules, without values (-1 where a bool mask decides)."""
    ndim = len(shape)
    consumed = ellipses = 0
    has_array = False
    for item in template:
        if type(item) is tuple and item[0] == "tensor":
            s = specs[item[1]]
            if s.dtype.kind == "b":
                if not allow_bool:
                    raise TypeError(f"{op}: bool index tensors must be converted with nonzero first")
                consumed += len(s.shape)
            elif s.dtype.kind in "iu":
                consumed += 1
            else:
                raise TypeError(f"{op}: index tensors must have an integer or bool dtype, got {s.dtype.name}")
            has_array = True
        elif item is Ellipsis:
            ellipses += 1
        elif item is not None:
            consumed += 1
    if ellipses > 1:
        raise IndexError(f"{op}: an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"{op}: too many indices for a tensor of shape {mu.shape_str(shape)}: {consumed} "
                         f"dimensions indexed but the tensor has {ndim}")
    out: list = []
    adv_shapes: list = []
    adv_at = last_adv = None
    separated = False
    dim = 0
    for pos, item in enumerate(template):
        if item is None:
            out.append(1)
            continue
        if item is Ellipsis:
            n = ndim - consumed
            out.extend(shape[dim:dim + n])
            dim += n
            continue
        if type(item) is tuple and item[0] == "slice":
            out.append(_slice_len(op, shape[dim], item, dim))
            dim += 1
            continue
        if type(item) is int:
            size = shape[dim]
            if size != -1 and not -size <= item < size:
                raise IndexError(f"{op}: index {item} is out of range for dimension {dim} with size {size}")
            dim += 1
            if not has_array:  # plain ints are basic indices: they only drop the dimension
                continue
            ashape: tuple = ()
        else:
            s = specs[item[1]]
            if s.dtype.kind == "b":
                k = len(s.shape)
                for j, (m, d) in enumerate(zip(s.shape, shape[dim:dim + k])):
                    if m != d and -1 not in (m, d):
                        raise IndexError(f"{op}: the bool mask of shape {mu.shape_str(s.shape)} does not match "
                                         f"dimension {dim + j} of the tensor (size {d}, mask size {m})")
                ashape = (-1,)
                dim += k
            else:
                ashape = tuple(s.shape)
                dim += 1
        if adv_at is None:
            adv_at = len(out)
        elif last_adv != pos - 1:
            separated = True
        last_adv = pos
        adv_shapes.append(ashape)
    out.extend(shape[dim:])
    if adv_at is None:
        return tuple(out)
    block: tuple = ()
    try:
        for s in adv_shapes:
            block = mu.broadcast_shape(op, block, s)
    except ValueError:
        raise IndexError(f"{op}: the index arrays of shapes {', '.join(mu.shape_str(s) for s in adv_shapes)} "
                         "cannot be broadcast together") from None
    if separated:  # advanced indices split by a slice/None/...: their dimensions go first (NumPy)
        return block + tuple(out)
    return tuple(out[:adv_at]) + block + tuple(out[adv_at:])


def _int_indices(x: Tensor, template: tuple, tensors: list, api: str) -> tuple[tuple, list]:
    """The same index with every bool mask replaced by its nonzero coordinates (NumPy's definition)."""
    if not any(t.dtype.np_dtype.kind == "b" for t in tensors):
        return template, tensors
    _index_shape(api, tuple(x.shape), template,  # masks must fit before nonzero drops their shape
                 tuple(TensorSpec(tuple(t.shape), t.dtype.np_dtype) for t in tensors), True)
    items: list = []
    ints: list = []
    for it in template:
        if type(it) is tuple and it[0] == "tensor":
            t = tensors[it[1]]
            for c in (shape.unbind(nonzero(t), axis=1) if t.dtype.np_dtype.kind == "b" else [t]):
                items.append(("tensor", len(ints)))
                ints.append(c)
        else:
            items.append(it)
    return tuple(items), ints


def _index(x: Tensor, template: tuple, tensors: list) -> Tensor:
    """x[index] through the getitem op (a mask as big as x through masked_select)."""
    if len(template) == 1 and tensors and tensors[0].dtype.np_dtype.kind == "b" \
            and tensors[0].shape == x.shape:
        return masked_select(x, tensors[0])
    template, tensors = _int_indices(x, template, tensors, "getitem")
    return _GETITEM(x, *tensors, index=template)


# ---------------------------------------------------------------- getitem / getitem_grad / setitem
def _getitem_meta(x: TensorSpec, *indices: TensorSpec, index: tuple) -> TensorSpec:
    return TensorSpec(_index_shape("getitem", x.shape, index, indices, False), x.dtype)


def _getitem_kernel(xp, x, *indices, index):
    out = x[_key(index, indices)]
    return out if indices else out.copy()  # basic indexing gives a view: copy, as Paddle's slicing does


def _getitem_grad_meta(g: TensorSpec, *indices: TensorSpec, index: tuple, shape: tuple) -> TensorSpec:
    if any(d < 0 for d in shape):  # the kernel allocates `shape`: unknown sizes cannot be built
        raise ValueError(f"getitem_grad: argument 'shape' {mu.shape_str(shape)} has unknown sizes")
    expected = _index_shape("getitem_grad", shape, index, indices, False)
    if len(expected) != len(g.shape) or any(a != b and -1 not in (a, b) for a, b in zip(expected, g.shape)):
        raise ValueError(f"getitem_grad: argument 'g' has shape {mu.shape_str(g.shape)}, expected the indexed "
                         f"shape {mu.shape_str(expected)}")
    return TensorSpec(tuple(shape), g.dtype)


def _getitem_grad_kernel(xp, g, *indices, index, shape):
    out = xp.zeros(shape, g.dtype)
    key = _key(index, indices)
    if indices:
        _scatter_add(xp, out, key, g)
    else:
        out[key] = g
    return out


def _g_getitem(ctx, g):
    x, *indices = ctx.inputs
    return (_GETITEM_GRAD(g, *indices, index=ctx.attrs["index"], shape=tuple(x.shape)),) + (None,) * len(indices)


def _g_getitem_grad(ctx, g):
    _, *indices = ctx.inputs
    return (_GETITEM(g, *indices, index=ctx.attrs["index"]),) + (None,) * len(indices)


def _getitem_samples():
    return [Sample((_normal(3, 4, 5),), {"index": (1, ("slice", None, None, -2))}),
            Sample((_normal(3, 4, 5),), {"index": (Ellipsis, None, ("slice", 1, 3, None))}),
            Sample((_normal(4, 3), _ints(0, 2, 2, -1)), {"index": (("tensor", 0),)}),
            Sample((_normal(3, 4, 5), _ints([0], [2]), _ints(1, 3)),
                   {"index": (("tensor", 0), ("slice", None, None, None), ("tensor", 1))}),
            Sample((_normal(3, 4, 5), _ints(1, 0)), {"index": (("slice", 1, None, None), 2, ("tensor", 0))})]


_GETITEM = defop("getitem", kernel=_getitem_kernel, meta=_getitem_meta, grad=_g_getitem, inputs=("x", "*indices"),
                 attrs={"index": ()}, samples=_getitem_samples)
_GETITEM_GRAD = defop(
    "getitem_grad", kernel=_getitem_grad_kernel, meta=_getitem_grad_meta, grad=_g_getitem_grad,
    inputs=("g", "*indices"), attrs={"index": (), "shape": ()},
    samples=lambda: [Sample((_normal(4, 2),), {"index": (("slice", None, None, 2), 1), "shape": (7, 3, 2)}),
                     Sample((_normal(4, 3), _ints(0, 2, 2, 0)), {"index": (("tensor", 0),), "shape": (3, 3)})])


def _value_fits(op: str, value: tuple, target: tuple) -> None:
    """NumPy assignment broadcasting: value's shape must broadcast to the indexed shape."""
    v = list(value)
    while len(v) > len(target) and v[0] == 1:
        v.pop(0)
    if len(v) > len(target) or any(a != b and a != 1 and -1 not in (a, b)
                                   for a, b in zip(reversed(v), reversed(target))):
        raise ValueError(f"{op}: a value of shape {mu.shape_str(value)} cannot be assigned to the indexed "
                         f"shape {mu.shape_str(target)}")


def _setitem_meta(x: TensorSpec, value: TensorSpec, *indices: TensorSpec, index: tuple) -> TensorSpec:
    _value_fits("setitem", value.shape, _index_shape("setitem", x.shape, index, indices, True))
    return x


def _setitem_kernel(xp, x, value, *indices, index):
    out = x.copy()
    out[_key(index, indices)] = value.astype(x.dtype, copy=False)
    return out


def _reduce_to(g: Tensor, like: Tensor) -> Tensor:
    """Sum a gradient of the indexed shape back to the shape of the value broadcast into it."""
    extra = like.ndim - g.ndim
    if extra > 0:
        g = shape.reshape(g, [1] * extra + g.shape)
    return unbroadcast(g, like)


def _g_setitem(ctx, g):
    _, value, *indices = ctx.inputs
    need = ctx.needs_input_grad
    template = ctx.attrs["index"]
    gx = _SETITEM(g, creation.zeros([], dtype=g.dtype), *indices, index=template) if need[0] else None
    gv = _reduce_to(_index(g, template, indices), value) if need[1] else None
    return (gx, gv) + (None,) * len(indices)


_SETITEM = defop(
    "setitem", kernel=_setitem_kernel, meta=_setitem_meta, grad=_g_setitem, inputs=("x", "value", "*indices"),
    attrs={"index": ()},
    samples=lambda: [Sample((_normal(3, 4), _normal(4)), {"index": (("slice", 0, 2, None),)}),
                     Sample((_normal(3, 4), _normal(1, 1, 2)), {"index": (Ellipsis, ("slice", None, None, -2))}),
                     Sample((_normal(4, 3), _normal(2, 3), _ints(3, 0)), {"index": (("tensor", 0),)}, (0, 1)),
                     Sample((_normal(3, 4), np.asarray(1.5), _rng.random((3, 4)) > 0.5),
                            {"index": (("tensor", 0),)}, (0, 1)),
                     Sample((_normal(3, 4), _normal(2), np.array([True, False, True])),
                            {"index": (("tensor", 0), 1)}, (0,))])


def _getitem(self: Tensor, key: Any) -> Tensor:
    """x[key] with NumPy semantics: ints, slices, None, ..., int/bool lists, arrays and tensors."""
    template, tensors = _parse(key, self._data, "__getitem__")
    if self._node is not None:
        # the gradient needs only x's shape: record an alias, so `x[i] += ...` (a later in-place
        # write to x) does not invalidate this node (leaves keep their own edge)
        self = alias(self)
    if tensors:
        return _index(self, template, tensors)
    return _GETITEM(self, index=template)


def _setitem(self: Tensor, key: Any, value: Any) -> None:
    """x[key] = value in place; autograd sees a new version of x (Paddle's set_value)."""
    template, tensors = _parse(key, self._data, "__setitem__")
    a = self._data
    if not isinstance(value, Tensor):
        try:
            arr = np.asarray(value, dtype=a.dtype)
        except (TypeError, ValueError):
            raise TypeError(f"__setitem__: the value must be a Tensor, a number or an array, got "
                            f"{type(value).__name__}") from None
        value = Tensor._wrap(_on_device_of(arr, a))
    if is_grad_enabled() and not (self.stop_gradient and value.stop_gradient):
        inplace(self, _SETITEM, "__setitem__", value, *tensors, index=template)
        return
    # nothing to record: check as the op would (memoised as eager dispatch does), then write in place
    arrays = (a, value._data, *(t._data for t in tensors))
    key = ((("index", template),),) + tuple(v for arr in arrays for v in (arr.shape, arr.dtype))
    cache = _SETITEM.meta_cache
    if key not in cache:
        spec = _setitem_meta(*(TensorSpec(arr.shape, arr.dtype) for arr in arrays), index=template)
        if len(cache) < _META_CACHE_LIMIT:
            cache[key] = spec
    if self._node is not None:  # a node may hold this array as a saved output: write into a copy
        a = self._data = a.copy()
    a[_key(template, arrays[2:])] = value._data
    self._version += 1


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem


def setitem(x: Tensor, index: Any, value: Any) -> Tensor:
    """`x` with `x[index] = value`, as a new tensor (x is unchanged): `paddle.static.setitem`, how a
    static program (and the JIT) records the in-place `x[index] = value` of eager code."""
    x = as_tensor(x, "x", "setitem")
    template, tensors = _parse(index, x._data, "setitem")
    if not isinstance(value, Tensor):
        value = math._scalar_tensor("setitem", value, x, "value")
    return _SETITEM(x, value, *tensors, index=template)


def slice_axes(x: Tensor, axes: tuple, starts: tuple, ends: tuple, strides: tuple, api: str) -> Tensor:
    """x sliced as starts[i]:ends[i]:strides[i] along each axes[i] (paddle.slice / strided_slice)."""
    items = [_FULL_SLICE] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, strides):
        if st == 0:
            raise ValueError(f"{api}: argument 'strides' must not contain 0")
        items[mu.normalize_axis(api, a, x.ndim, "axes")] = ("slice", s, e, st)
    return _GETITEM(x, index=tuple(items))


# ---------------------------------------------------------------- slice / strided_slice (getitem)
def _slice_args(op: str, input: Tensor, axes: Any, pieces: dict) -> tuple:  # noqa: A002
    axes = shape._ints(op, "axes", axes)
    lists = {k: shape._ints(op, k, v) for k, v in pieces.items()}
    for k, v in lists.items():
        if len(v) != len(axes):
            raise ValueError(f"{op}: argument '{k}' {list(v)} must have one entry per axis in 'axes' {list(axes)}")
    return axes, lists


@tensor_method
def slice(input: Tensor, axes: Any, starts: Any, ends: Any) -> Tensor:  # noqa: A001,A002 - Paddle's names
    """input[starts[i]:ends[i]] along each axes[i] (bounds clamp to the dimension, as Python slices)."""
    input = as_tensor(input, "input", "slice")
    axes, v = _slice_args("slice", input, axes, {"starts": starts, "ends": ends})
    return slice_axes(input, axes, v["starts"], v["ends"], (1,) * len(axes), "slice")


@tensor_method
def strided_slice(x: Tensor, axes: Any, starts: Any, ends: Any, strides: Any, name: str | None = None) -> Tensor:
    """x[starts[i]:ends[i]:strides[i]] along each axes[i] (negative strides walk backwards)."""
    x = as_tensor(x, "x", "strided_slice")
    axes, v = _slice_args("strided_slice", x, axes, {"starts": starts, "ends": ends, "strides": strides})
    return slice_axes(x, axes, v["starts"], v["ends"], v["strides"], "strided_slice")


@tensor_method
def take(x: Tensor, index: Tensor, mode: str = "raise", name: str | None = None) -> Tensor:
    """Elements of the flattened x at `index` (any shape); mode 'wrap' / 'clip' folds out-of-range indices."""
    x = as_tensor(x, "x", "take")
    index = as_tensor(index, "index", "take")
    if index._data.dtype.kind not in "iu":
        raise TypeError(f"take: argument 'index' must be an integer tensor, got {index.dtype.name}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: argument 'mode' must be 'raise', 'wrap' or 'clip', got {mode!r}")
    flat = shape.flatten(x)
    n = flat.shape[0]
    if mode == "wrap":
        index = math.remainder(index, n)
    elif mode == "clip":
        index = math.clip(index, 0, n - 1)
    return _GETITEM(flat, index, index=(("tensor", 0),))


@tensor_method
def index_put(x: Tensor, indices: Any, value: Any, accumulate: bool = False, name: str | None = None) -> Tensor:
    """x with x[indices] = value (accumulate=True: value added, repeated positions summing)."""
    x = as_tensor(x, "x", "index_put")
    if isinstance(indices, Tensor) or not isinstance(indices, (list, tuple)):
        raise TypeError(f"index_put: argument 'indices' must be a tuple of Tensors, got {type(indices).__name__}")
    tensors = [as_tensor(t, f"indices[{i}]", "index_put") for i, t in enumerate(indices)]
    if not isinstance(value, Tensor):
        value = math._scalar_tensor("index_put", value, x, "value")
    template = tuple(("tensor", i) for i in range(len(tensors)))
    if not accumulate:
        return _SETITEM(x, value, *tensors, index=template)
    template, tensors = _int_indices(x, template, tensors, "index_put")
    target = _index_shape("index_put", tuple(x.shape), template,
                          tuple(TensorSpec(t._data.shape, t._data.dtype) for t in tensors), False)
    _value_fits("index_put", tuple(value.shape), target)
    if value._data.dtype != x._data.dtype:
        value = math.cast(value, x.dtype)
    if tuple(value.shape) != target:
        value = shape.expand(shape.reshape(value, value.shape[max(value.ndim - len(target), 0):]), list(target))
    return math.add(x, _GETITEM_GRAD(value, *tensors, index=template, shape=tuple(x.shape)))


# ---------------------------------------------------------------- nonzero / masked_select
_NONZERO = defop("nonzero", kernel=lambda xp, x: xp.argwhere(x).astype(_I64, copy=False),
                 meta=lambda x: TensorSpec((-1, len(x.shape)), _I64), dynamic_shape=True,
                 samples=lambda: [Sample((np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]),)),
                                  Sample((_rng.random((2, 3, 2)) > 0.5,))])


@tensor_method
def nonzero(x: Tensor, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """Coordinates of the non-zero elements: [z, ndim] int64, or (as_tuple) ndim tensors of shape [z, 1]."""
    x = as_tensor(x, "x", "nonzero")
    if x.ndim == 0:
        x = shape.reshape(x, [1])
    out = _NONZERO(x)
    return tuple(shape.split(out, x.ndim, axis=1)) if as_tuple else out


def _masked_select_meta(x: TensorSpec, mask: TensorSpec) -> TensorSpec:
    if mask.dtype.kind != "b":
        raise TypeError(f"masked_select: argument 'mask' must be a bool tensor, got {mask.dtype.name}")
    mu.broadcast_shape("masked_select", x.shape, mask.shape, ("x", "mask"))
    return TensorSpec((-1,), x.dtype)


def _masked_select_kernel(xp, x, mask):
    if x.shape != mask.shape:
        x, mask = xp.broadcast_arrays(x, mask)
    return x[mask]


def _g_masked_select(ctx, g):
    x, mask = ctx.inputs
    full = mu.broadcast_shape("masked_select", tuple(x.shape), tuple(mask.shape))
    if tuple(mask.shape) != full:
        mask = shape.expand(mask, list(full))
    zeros = creation.zeros(list(full), dtype=g.dtype)
    return unbroadcast(_SETITEM(zeros, g, mask, index=(("tensor", 0),)), x), None


_MASKED_SELECT = defop("masked_select", kernel=_masked_select_kernel, meta=_masked_select_meta,
                       grad=_g_masked_select, inputs=("x", "mask"), dynamic_shape=True,
                       samples=lambda: [Sample((_normal(3, 4), _rng.random((3, 4)) > 0.4)),
                                        Sample((_normal(3, 1), _rng.random((3, 4)) > 0.4))])


@tensor_method
def masked_select(x: Tensor, mask: Tensor, name: str | None = None) -> Tensor:
    """The elements of x where the bool `mask` (broadcast with x) is True, as a 1-D tensor."""
    return _MASKED_SELECT(as_tensor(x, "x", "masked_select"), as_tensor(mask, "mask", "masked_select"))


# ---------------------------------------------------------------- gather / index_select
def _require_int(op: str, spec: TensorSpec, arg: str = "index") -> None:
    mu.require_dtype_kind(op, spec, "iu", "an integer tensor (int32/int64)", arg)


def _require_shape(op: str, arg: str, spec: TensorSpec, expected: tuple, how: str = "{}") -> None:
    """ValueError unless spec's shape is `expected`; `how` frames the expected shape in the message."""
    if tuple(spec.shape) != expected:
        raise ValueError(f"{op}: argument '{arg}' has shape {mu.shape_str(spec.shape)}, expected "
                         + how.format(mu.shape_str(expected)))


def _gather_meta(x: TensorSpec, index: TensorSpec, *, axis: int) -> TensorSpec:
    _require_int("gather", index)
    if len(index.shape) > 1:
        raise ValueError(f"gather: argument 'index' must be 0-D or 1-D, got shape {mu.shape_str(index.shape)}")
    a = mu.normalize_axis("gather", axis, len(x.shape))
    return TensorSpec(x.shape[:a] + tuple(index.shape) + x.shape[a + 1:], x.dtype)


def _axis_template(axis: int, ndim: int) -> tuple:
    """The getitem template of x[:, ..., :, index] with the index at dimension `axis`."""
    return (_FULL_SLICE,) * (axis % ndim) + (("tensor", 0),)


def _g_gather(ctx, g):
    x, index = ctx.inputs
    template = _axis_template(ctx.attrs["axis"], x.ndim)
    return _GETITEM_GRAD(g, index, index=template, shape=tuple(x.shape)), None


_GATHER = defop("gather", kernel=lambda xp, x, index, *, axis: xp.take(x, index, axis=axis), meta=_gather_meta,
                grad=_g_gather, inputs=("x", "index"), attrs={"axis": 0},
                samples=lambda: [Sample((_normal(4, 3), _ints(3, 0, 3)), {"axis": 0}),
                                 Sample((_normal(2, 4, 3), _ints(1, 2)), {"axis": -2})])


@tensor_method
def gather(x: Tensor, index: Tensor, axis: Any = None, name: str | None = None) -> Tensor:
    """The slices x[..., index[i], ...] along `axis` (default 0), stacked in index order."""
    return _GATHER(as_tensor(x, "x", "gather"), as_tensor(index, "index", "gather"),
                   axis=0 if axis is None else mu.int_arg("gather", "axis", axis))


@tensor_method
def index_select(x: Tensor, index: Tensor, axis: int = 0, name: str | None = None) -> Tensor:
    """The slices of x along `axis` at the positions in the 1-D tensor `index`."""
    return _GATHER(as_tensor(x, "x", "index_select"), as_tensor(index, "index", "index_select"),
                   axis=mu.int_arg("index_select", "axis", axis))


@tensor_method
def repeat_interleave(x: Tensor, repeats: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """Repeat each element (each slice along `axis`; None: of the flattened x) `repeats` times."""
    x = as_tensor(x, "x", "repeat_interleave")
    if axis is None:
        x, axis = shape.flatten(x), 0
    a = mu.normalize_axis("repeat_interleave", mu.int_arg("repeat_interleave", "axis", axis), x.ndim)
    n = x.shape[a]
    reps = repeats.numpy().reshape(-1) if isinstance(repeats, Tensor) else np.asarray(repeats).reshape(-1)
    if reps.dtype.kind not in "iu" or reps.size not in (1, n) or (reps < 0).any():
        raise ValueError(f"repeat_interleave: argument 'repeats' must be a non-negative int or {n} ints "
                         f"(the size of dimension {a}), got {reps.tolist()}")
    index = np.repeat(np.arange(n, dtype=np.int64), reps)
    return index_select(x, Tensor._wrap(_on_device_of(index, x._data)), a)


# ---------------------------------------------------------------- gather_nd / scatter_nd_add
def _nd_depth(op: str, x: TensorSpec, index: TensorSpec) -> int:
    _require_int(op, index)
    if not index.shape:
        raise ValueError(f"{op}: argument 'index' must have at least 1 dimension")
    k = index.shape[-1]
    if k > len(x.shape) or k == -1:
        raise ValueError(f"{op}: the last dimension of argument 'index' {mu.shape_str(index.shape)} must be a "
                         f"known size <= the rank of x {mu.shape_str(x.shape)}")
    return k


def _gather_nd_meta(x: TensorSpec, index: TensorSpec) -> TensorSpec:
    k = _nd_depth("gather_nd", x, index)
    return TensorSpec(tuple(index.shape[:-1]) + tuple(x.shape[k:]), x.dtype)


def _nd_key(index) -> tuple:
    return tuple(index[..., i] for i in range(index.shape[-1]))


def _gather_nd_kernel(xp, x, index):
    if index.shape[-1] == 0:
        return xp.broadcast_to(x, index.shape[:-1] + x.shape).copy()
    return x[_nd_key(index)]


def _nd_columns(index: Tensor) -> tuple[tuple, list]:
    """The getitem template and index tensors that x[index[..., 0], index[..., 1], ...] stands for."""
    cols = shape.unbind(index, axis=-1)
    return tuple(("tensor", i) for i in range(len(cols))), cols


def _g_gather_nd(ctx, g):
    x, index = ctx.inputs
    if index.shape[-1] == 0:
        return unbroadcast(g, x), None
    template, cols = _nd_columns(index)
    return _GETITEM_GRAD(g, *cols, index=template, shape=tuple(x.shape)), None


_GATHER_ND = defop("gather_nd", kernel=_gather_nd_kernel, meta=_gather_nd_meta, grad=_g_gather_nd,
                   inputs=("x", "index"),
                   samples=lambda: [Sample((_normal(3, 4, 2), _ints([0, 1], [2, 3], [0, 1]))),
                                    Sample((_normal(3, 4), _ints([[2], [0]], [[1], [1]])))])


@tensor_method
def gather_nd(x: Tensor, index: Tensor, name: str | None = None) -> Tensor:
    """x at the coordinates in the last dimension of `index` (a partial index keeps the remaining dims)."""
    return _GATHER_ND(as_tensor(x, "x", "gather_nd"), as_tensor(index, "index", "gather_nd"))


def _scatter_nd_add_meta(x: TensorSpec, index: TensorSpec, updates: TensorSpec) -> TensorSpec:
    k = _nd_depth("scatter_nd_add", x, index)
    _require_shape("scatter_nd_add", "updates", updates, tuple(index.shape[:-1]) + tuple(x.shape[k:]),
                   "index.shape[:-1] + x.shape[index.shape[-1]:] = {}")
    return x


def _scatter_nd_add_kernel(xp, x, index, updates):
    out = x.copy()
    _scatter_add(xp, out, _nd_key(index), updates.astype(x.dtype, copy=False))
    return out


_SCATTER_ND_ADD = defop("scatter_nd_add", kernel=_scatter_nd_add_kernel, meta=_scatter_nd_add_meta,
                        grad=lambda ctx, g: (g, None, gather_nd(g, ctx.inputs[1])),
                        inputs=("x", "index", "updates"),
                        samples=lambda: [Sample((_normal(3, 4), _ints([1], [0], [1]), _normal(3, 4))),
                                         Sample((_normal(3, 4), _ints([1, 2], [1, 2]), _normal(2)))])


@tensor_method
def scatter_nd_add(x: Tensor, index: Tensor, updates: Tensor, name: str | None = None) -> Tensor:
    """x with `updates` added at the coordinates in `index` (repeats accumulate)."""
    return _SCATTER_ND_ADD(as_tensor(x, "x", "scatter_nd_add"), as_tensor(index, "index", "scatter_nd_add"),
                           as_tensor(updates, "updates", "scatter_nd_add"))


def scatter_nd(index: Tensor, updates: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of `shape` with `updates` added at the coordinates in `index`."""
    updates = as_tensor(updates, "updates", "scatter_nd")
    return scatter_nd_add(creation.zeros(shape, dtype=updates.dtype), index, updates)


# ---------------------------------------------------------------- scatter / index_add
def _scatter_meta(x: TensorSpec, index: TensorSpec, updates: TensorSpec, *, overwrite: bool) -> TensorSpec:
    _require_int("scatter", index)
    if len(index.shape) > 1 or not x.shape:
        raise ValueError(f"scatter: argument 'index' must be 0-D or 1-D and x at least 1-D, got index "
                         f"{mu.shape_str(index.shape)} and x {mu.shape_str(x.shape)}")
    _require_shape("scatter", "updates", updates, tuple(index.shape) + tuple(x.shape[1:]),
                   "{} (index length + x.shape[1:])")
    return x


def _scatter_kernel(xp, x, index, updates, *, overwrite):
    out = x.copy()
    updates = updates.astype(x.dtype, copy=False)
    if overwrite:
        out[index] = updates
    else:  # rows named by index are reset, then every update is added (Paddle's overwrite=False)
        out[index] = 0
        _scatter_add(xp, out, index, updates)
    return out


_ROW = (("tensor", 0),)


def _g_scatter(ctx, g):
    _, index, _ = ctx.inputs
    gx = _SETITEM(g, creation.zeros([], dtype=g.dtype), index, index=_ROW) if ctx.needs_input_grad[0] else None
    return gx, None, _GATHER(g, index, axis=0) if ctx.needs_input_grad[2] else None


_SCATTER = defop("scatter", kernel=_scatter_kernel, meta=_scatter_meta, grad=_g_scatter,
                 inputs=("x", "index", "updates"), attrs={"overwrite": True},
                 samples=lambda: [Sample((_normal(4, 3), _ints(2, 0), _normal(2, 3)), {"overwrite": True}),
                                  Sample((_normal(4, 3), _ints(2, 0, 2), _normal(3, 3)), {"overwrite": False})])


@tensor_method
def scatter(x: Tensor, index: Tensor, updates: Tensor, overwrite: bool = True, name: str | None = None) -> Tensor:
    """x with rows index[i] replaced by updates[i] (overwrite=False: rows reset, then updates summed)."""
    return _SCATTER(as_tensor(x, "x", "scatter"), as_tensor(index, "index", "scatter"),
                    as_tensor(updates, "updates", "scatter"), overwrite=bool(overwrite))


def _index_add_meta(x: TensorSpec, index: TensorSpec, value: TensorSpec, *, axis: int) -> TensorSpec:
    _require_int("index_add", index)
    if len(index.shape) != 1:
        raise ValueError(f"index_add: argument 'index' must be 1-D, got shape {mu.shape_str(index.shape)}")
    a = mu.normalize_axis("index_add", axis, len(x.shape))
    _require_shape("index_add", "value", value, x.shape[:a] + tuple(index.shape) + x.shape[a + 1:])
    return x


def _index_add_kernel(xp, x, index, value, *, axis):
    out = x.copy()
    _scatter_add(xp, out, (builtins.slice(None),) * (axis % x.ndim) + (index,), value.astype(x.dtype, copy=False))
    return out


_INDEX_ADD = defop("index_add", kernel=_index_add_kernel, meta=_index_add_meta,
                   grad=lambda ctx, g: (g, None, _GATHER(g, ctx.inputs[1], axis=ctx.attrs["axis"])),
                   inputs=("x", "index", "value"), attrs={"axis": 0},
                   samples=lambda: [Sample((_normal(3, 4), _ints(1, 1, 3), _normal(3, 3)), {"axis": 1})])


@tensor_method
def index_add(x: Tensor, index: Tensor, axis: int, value: Tensor, name: str | None = None) -> Tensor:
    """x with the slices of `value` added at positions `index` along `axis` (repeats accumulate)."""
    return _INDEX_ADD(as_tensor(x, "x", "index_add"), as_tensor(index, "index", "index_add"),
                      as_tensor(value, "value", "index_add"), axis=mu.int_arg("index_add", "axis", axis))


# ---------------------------------------------------------------- take_along_axis / put_along_axis
def _along_meta(op: str, arr: TensorSpec, indices: TensorSpec, axis: int) -> int:
    _require_int(op, indices, "indices")
    if len(indices.shape) != len(arr.shape):
        raise ValueError(f"{op}: argument 'indices' {mu.shape_str(indices.shape)} must have as many dimensions "
                         f"as 'arr' {mu.shape_str(arr.shape)}")
    a = mu.normalize_axis(op, axis, len(arr.shape))
    for d, (i, s) in enumerate(zip(indices.shape, arr.shape)):
        if d != a and i != s and -1 not in (i, s):
            raise ValueError(f"{op}: 'indices' {mu.shape_str(indices.shape)} and 'arr' {mu.shape_str(arr.shape)} "
                             f"must agree outside dimension {a} (or pass broadcast=True)")
    return a


def _take_along_meta(arr: TensorSpec, indices: TensorSpec, *, axis: int) -> TensorSpec:
    _along_meta("take_along_axis", arr, indices, axis)
    return TensorSpec(tuple(indices.shape), arr.dtype)


def _g_take_along(ctx, g):
    arr, indices = ctx.inputs
    return _PUT_ALONG(creation.zeros_like(arr), indices, g, axis=ctx.attrs["axis"], reduce="add",
                      include_self=True), None


_TAKE_ALONG = defop("take_along_axis",
                    kernel=lambda xp, arr, indices, *, axis: xp.take_along_axis(arr, indices, axis),
                    meta=_take_along_meta, grad=_g_take_along, inputs=("arr", "indices"), attrs={"axis": 0},
                    samples=lambda: [Sample((_normal(3, 4), _ints([0, 3, 3], [1, 1, 2], [2, 0, 0])), {"axis": 1})])


def _put_along_meta(arr: TensorSpec, indices: TensorSpec, values: TensorSpec, *, axis: int, reduce: str,
                    include_self: bool) -> TensorSpec:
    _along_meta("put_along_axis", arr, indices, axis)
    if reduce not in ("assign", "add"):
        raise ValueError(f"put_along_axis: argument 'reduce' must be 'assign' or 'add', got {reduce!r}")
    mu.broadcast_shape("put_along_axis", values.shape, indices.shape, ("values", "indices"))
    return arr


def _along_key(xp, indices, axis: int) -> tuple:
    """The fancy index addressing arr[..., indices[i, j, ...], ...] along `axis`."""
    n = indices.ndim
    axis %= n
    return tuple(indices if d == axis else xp.arange(indices.shape[d]).reshape((-1,) + (1,) * (n - d - 1))
                 for d in range(n))


def _put_along_kernel(xp, arr, indices, values, *, axis, reduce, include_self):
    out = arr.copy()
    key = _along_key(xp, indices, axis)
    values = xp.broadcast_to(values.astype(arr.dtype, copy=False), indices.shape)
    if reduce == "assign":
        out[key] = values
    else:
        if not include_self:
            out[key] = 0
        _scatter_add(xp, out, key, values)
    return out


def _g_put_along(ctx, g):
    arr, indices, values = ctx.inputs
    axis, reduce, include_self = ctx.attrs["axis"], ctx.attrs["reduce"], ctx.attrs["include_self"]
    gx = None
    if ctx.needs_input_grad[0]:
        gx = g if reduce == "add" and include_self else _PUT_ALONG(
            g, indices, creation.zeros([], dtype=g.dtype), axis=axis, reduce="assign", include_self=True)
    gv = unbroadcast(_TAKE_ALONG(g, indices, axis=axis), values) if ctx.needs_input_grad[2] else None
    return gx, None, gv


_PUT_ALONG = defop(
    "put_along_axis", kernel=_put_along_kernel, meta=_put_along_meta, grad=_g_put_along,
    inputs=("arr", "indices", "values"), attrs={"axis": 0, "reduce": "assign", "include_self": True},
    samples=lambda: [Sample((_normal(3, 4), _ints([3, 0], [1, 2], [0, 3]), _normal(3, 2)),
                            {"axis": 1, "reduce": "assign", "include_self": True}),
                     Sample((_normal(3, 4), _ints([1, 1, 0, 2]), _normal(1, 4)),
                            {"axis": 0, "reduce": "add", "include_self": True}),
                     Sample((_normal(3, 4), _ints([1, 1, 0, 2]), _normal(1, 4)),
                            {"axis": 0, "reduce": "add", "include_self": False})])


def _broadcast_along(arr: Tensor, indices: Tensor, axis: int) -> tuple[Tensor, Tensor]:
    """Paddle's broadcast=True: indices take arr's shape outside `axis`, then arr takes indices'."""
    if indices.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: argument 'indices' {indices.shape} must have as many "
                         f"dimensions as 'arr' {arr.shape}")
    a = mu.normalize_axis("take_along_axis", axis, arr.ndim)
    target = arr.shape
    target[a] = indices.shape[a]
    if indices.shape != target:
        indices = shape.broadcast_to(indices, target)
    target = list(indices.shape)
    target[a] = arr.shape[a]
    if arr.shape != target:
        arr = shape.broadcast_to(arr, target)
    return arr, indices


@tensor_method
def take_along_axis(arr: Tensor, indices: Tensor, axis: int, broadcast: bool = True) -> Tensor:
    """arr[..., indices[..., i, ...], ...] picked along `axis` (NumPy's take_along_axis)."""
    arr = as_tensor(arr, "arr", "take_along_axis")
    indices = as_tensor(indices, "indices", "take_along_axis")
    axis = mu.int_arg("take_along_axis", "axis", axis)
    if broadcast:
        arr, indices = _broadcast_along(arr, indices, axis)
    return _TAKE_ALONG(arr, indices, axis=axis)


@tensor_method
def put_along_axis(arr: Tensor, indices: Tensor, values: Any, axis: int, reduce: str = "assign",
                   include_self: bool = True, broadcast: bool = True) -> Tensor:
    """arr with `values` written ('assign') or added ('add') at `indices` along `axis`."""
    arr = as_tensor(arr, "arr", "put_along_axis")
    indices = as_tensor(indices, "indices", "put_along_axis")
    axis = mu.int_arg("put_along_axis", "axis", axis)
    if not isinstance(values, Tensor):
        values = math._scalar_tensor("put_along_axis", values, arr, "values")
    if broadcast:
        if arr.ndim == indices.ndim:
            target = arr.shape
            target[axis] = indices.shape[axis]
            if indices.shape != target:
                indices = shape.broadcast_to(indices, target)
    return _PUT_ALONG(arr, indices, values, axis=axis, reduce=reduce, include_self=bool(include_self))


@tensor_method
def index_sample(x: Tensor, index: Tensor) -> Tensor:
    """For 2-D x and index: out[i, j] = x[i, index[i, j]]."""
    x = as_tensor(x, "x", "index_sample")
    index = as_tensor(index, "index", "index_sample")
    if x.ndim != 2 or index.ndim != 2 or x.shape[0] != index.shape[0]:
        raise ValueError(f"index_sample: arguments 'x' {x.shape} and 'index' {index.shape} must be 2-D with the "
                         "same first dimension")
    return _TAKE_ALONG(x, index, axis=1)


@tensor_method
def masked_fill(x: Tensor, mask: Tensor, value: Any, name: str | None = None) -> Tensor:
    """x with `value` where the bool `mask` (broadcast to x) is True."""
    x = as_tensor(x, "x", "masked_fill")
    mask = as_tensor(mask, "mask", "masked_fill")
    if mask._data.dtype.kind != "b":
        raise TypeError(f"masked_fill: argument 'mask' must be a bool tensor, got {mask.dtype.name}")
    if isinstance(value, Tensor) and value._data.dtype != x._data.dtype:
        value = math.cast(value, x.dtype)
    return math.where(mask, value, x)


def _inplace_api(fn, api: str):
    def method(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(as_tensor(x, "x", api), fn, api, *args, **kwargs)
    method.__name__ = method.__qualname__ = api
    method.__doc__ = f"In-place `{fn.__name__}`: x itself takes the result."
    return tensor_method(method)


scatter_ = _inplace_api(scatter, "scatter_")
index_add_ = _inplace_api(index_add, "index_add_")
masked_fill_ = _inplace_api(masked_fill, "masked_fill_")
put_along_axis_ = _inplace_api(put_along_axis, "put_along_axis_")
index_put_ = _inplace_api(index_put, "index_put_")
