"""Tensor __getitem__ / __setitem__, slice / strided_slice, take, index_put, nonzero and
masked_select (the gather/scatter family built on the same index templates is in `gather`).

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
from .dispatch import check_one_place
from .grad_mode import is_grad_enabled
from .grad_utils import unbroadcast
from .inplace import alias, inplace, inplace_api
from .registry import Sample, TensorSpec, defop, normal_sampler

__all__ = ["take", "index_put", "index_put_", "nonzero", "masked_select", "slice", "strided_slice"]

_rng = np.random.default_rng(5)
_normal = normal_sampler(_rng)
_I64 = np.dtype("int64")
_ndarray = np.ndarray
FULL_SLICE = ("slice", None, None, None)
_META_CACHE_LIMIT = 4096


def int64_array(*values):
    """An int64 NumPy array of `values` (op samples' index arrays)."""
    return np.asarray(values, dtype=np.int64)


def scatter_add(xp, out, key, values) -> None:
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


def on_device_of(arr: np.ndarray, like):
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
    return Tensor._wrap(on_device_of(arr, like))


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
        scatter_add(xp, out, key, g)
    else:
        out[key] = g
    return out


def _g_getitem(ctx, g):
    x, *indices = ctx.inputs
    if -1 in x.shape and not indices:  # a static program's unknown sizes: g written into zeros of x's run-time shape
        return (SETITEM(creation.zeros_like(x), g, index=ctx.attrs["index"]),)
    return (GETITEM_GRAD(g, *indices, index=ctx.attrs["index"], shape=tuple(x.shape)),) + (None,) * len(indices)


def _g_getitem_grad(ctx, g):
    _, *indices = ctx.inputs
    return (_GETITEM(g, *indices, index=ctx.attrs["index"]),) + (None,) * len(indices)


def _getitem_samples():
    return [Sample((_normal(3, 4, 5),), {"index": (1, ("slice", None, None, -2))}),
            Sample((_normal(3, 4, 5),), {"index": (Ellipsis, None, ("slice", 1, 3, None))}),
            Sample((_normal(4, 3), int64_array(0, 2, 2, -1)), {"index": (("tensor", 0),)}),
            Sample((_normal(3, 4, 5), int64_array([0], [2]), int64_array(1, 3)),
                   {"index": (("tensor", 0), ("slice", None, None, None), ("tensor", 1))}),
            Sample((_normal(3, 4, 5), int64_array(1, 0)), {"index": (("slice", 1, None, None), 2, ("tensor", 0))})]


_GETITEM = defop("getitem", kernel=_getitem_kernel, meta=_getitem_meta, grad=_g_getitem, inputs=("x", "*indices"),
                 attrs={"index": ()}, samples=_getitem_samples)
GETITEM_GRAD = defop(
    "getitem_grad", kernel=_getitem_grad_kernel, meta=_getitem_grad_meta, grad=_g_getitem_grad,
    inputs=("g", "*indices"), attrs={"index": (), "shape": ()},
    samples=lambda: [Sample((_normal(4, 2),), {"index": (("slice", None, None, 2), 1), "shape": (7, 3, 2)}),
                     Sample((_normal(4, 3), int64_array(0, 2, 2, 0)), {"index": (("tensor", 0),), "shape": (3, 3)})])


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
    gx = SETITEM(g, creation.zeros([], dtype=g.dtype), *indices, index=template) if need[0] else None
    gv = _reduce_to(_index(g, template, indices), value) if need[1] else None
    return (gx, gv) + (None,) * len(indices)


SETITEM = defop(
    "setitem", kernel=_setitem_kernel, meta=_setitem_meta, grad=_g_setitem, inputs=("x", "value", "*indices"),
    attrs={"index": ()},
    samples=lambda: [Sample((_normal(3, 4), _normal(4)), {"index": (("slice", 0, 2, None),)}),
                     Sample((_normal(3, 4), _normal(1, 1, 2)), {"index": (Ellipsis, ("slice", None, None, -2))}),
                     Sample((_normal(4, 3), _normal(2, 3), int64_array(3, 0)), {"index": (("tensor", 0),)}, (0, 1)),
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
        value = Tensor._wrap(on_device_of(arr, a))
    if is_grad_enabled() and not (self.stop_gradient and value.stop_gradient):
        inplace(self, SETITEM, "__setitem__", value, *tensors, index=template)
        return
    # nothing to record: check as the op would (memoised as eager dispatch does), then write in place
    arrays = (a, value._data, *(t._data for t in tensors))
    if any(arr is not None and type(arr) is not _ndarray for arr in arrays):
        check_one_place(SETITEM, (self, value, *tensors))
    key = ((("index", template),),) + tuple(v for arr in arrays for v in (arr.shape, arr.dtype))
    cache = SETITEM.meta_cache
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
    return SETITEM(x, value, *tensors, index=template)


def slice_axes(x: Tensor, axes: tuple, starts: tuple, ends: tuple, strides: tuple, api: str) -> Tensor:
    """x sliced as starts[i]:ends[i]:strides[i] along each axes[i] (paddle.slice / strided_slice)."""
    items = [FULL_SLICE] * x.ndim
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
        return SETITEM(x, value, *tensors, index=template)
    template, tensors = _int_indices(x, template, tensors, "index_put")
    target = _index_shape("index_put", tuple(x.shape), template,
                          tuple(TensorSpec(t._data.shape, t._data.dtype) for t in tensors), False)
    _value_fits("index_put", tuple(value.shape), target)
    if value._data.dtype != x._data.dtype:
        value = math.cast(value, x.dtype)
    if tuple(value.shape) != target:
        value = shape.expand(shape.reshape(value, value.shape[max(value.ndim - len(target), 0):]), list(target))
    return math.add(x, GETITEM_GRAD(value, *tensors, index=template, shape=tuple(x.shape)))


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
    return unbroadcast(SETITEM(zeros, g, mask, index=(("tensor", 0),)), x), None


_MASKED_SELECT = defop("masked_select", kernel=_masked_select_kernel, meta=_masked_select_meta,
                       grad=_g_masked_select, inputs=("x", "mask"), dynamic_shape=True,
                       samples=lambda: [Sample((_normal(3, 4), _rng.random((3, 4)) > 0.4)),
                                        Sample((_normal(3, 1), _rng.random((3, 4)) > 0.4))])


@tensor_method
def masked_select(x: Tensor, mask: Tensor, name: str | None = None) -> Tensor:
    """The elements of x where the bool `mask` (broadcast with x) is True, as a 1-D tensor."""
    return _MASKED_SELECT(as_tensor(x, "x", "masked_select"), as_tensor(mask, "mask", "masked_select"))


index_put_ = inplace_api(index_put, "index_put_")
