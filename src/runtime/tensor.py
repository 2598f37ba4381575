"""The eager Tensor: an array (NumPy or CuPy) plus autograd bookkeeping.

Methods and magic methods that compute are bound here by the op modules
(`tensor_method`), so each op's public function is written once and reached both as
`paddle.add(x, y)` and as `x + y` / `x.add(y)`.
"""
from __future__ import annotations

import copy
import itertools
from typing import Any, Callable

import numpy as np

from . import dtypes as _dt
from . import mode as _mode
from . import structure
from .place import (CPUPlace, CUDAPlace, Place, array_module, current_place, is_device_array, move, place_of_array,
                    to_place)

__all__ = ["Tensor", "to_tensor", "tensor_method", "as_tensor", "is_tensor"]

_ndarray = np.ndarray
_name_counter = itertools.count()


class Tensor:
    """A multi-dimensional array with gradient tracking, as `paddle.Tensor`."""

    # _grad_owned: the grad array belongs to this tensor alone (may be updated in place);
    # _grad_zero: clear_grad() zeroed it lazily (materialised on read, replaced on the next
    # backward), so a training step pays no pass over the gradients to zero them.
    __slots__ = ("_data", "_stop_gradient", "_node", "_oidx", "_grad", "_grad_owned", "_grad_zero",
                 "_name", "_version", "_hooks", "persistable", "__weakref__")
    # numpy must defer to our reflected operators (np.float32(2) * t -> t.__rmul__)
    __array_ufunc__ = None

    def __init__(self, data: Any = None, dtype: Any = None, place: Any = None,
                 stop_gradient: bool = True, name: str | None = None):
        arr = _to_array(np.zeros((0,), np.float32) if data is None else data, dtype, place, "Tensor")
        self._init(arr, stop_gradient)
        self._name = name

    def _init(self, arr, stop_gradient: bool = True) -> None:
        self._data = arr
        self._stop_gradient = stop_gradient
        self._node = None
        self._oidx = 0
        self._grad = None
        self._grad_owned = False
        self._grad_zero = False
        self._name = None
        self._version = 0
        self._hooks = None
        self.persistable = False

    @classmethod
    def _wrap(cls, arr) -> "Tensor":
        """A new stop-gradient tensor over `arr` (no copy)."""
        t = object.__new__(cls)
        t._init(arr)
        return t

    @classmethod
    def _from_node(cls, arr, node, index: int) -> "Tensor":
        """A non-leaf tensor: output `index` of autograd `node`."""
        t = object.__new__(cls)
        t._init(arr, False)
        t._node = node
        t._oidx = index
        return t

    def _edge(self):
        """Where this tensor's gradient goes: (node, output index), or the leaf itself."""
        node = self._node
        return self if node is None else (node, self._oidx)

    # ----- metadata -----
    @property
    def stop_gradient(self) -> bool:
        """Whether autograd stops here (no gradient flows to or through this tensor)."""
        return self._stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, value: bool) -> None:
        # a persistable tensor's flag is part of the structure a compiled Layer forward relies on
        changed = value != self._stop_gradient
        self._stop_gradient = value
        if changed and self.persistable:
            structure.bump()

    @property
    def shape(self) -> list[int]:
        return list(self._data.shape)

    @property
    def dtype(self) -> _dt.dtype:
        return _dt.from_np_dtype(self._data.dtype)

    @property
    def place(self) -> Place:
        return place_of_array(self._data)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = f"generated_tensor_{next(_name_counter)}"
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    @property
    def grad(self) -> "Tensor | None":
        g = self._grad
        if g is not None and self._grad_zero:
            if self._grad_owned:
                g._data.fill(0)
            else:
                g._data = array_module(self.place).zeros_like(self._data)
                self._grad_owned = True
            self._grad_zero = False
        return g

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            value = as_tensor(value, "grad", "Tensor.grad")
            if value._data.shape != self._data.shape:
                raise ValueError(f"Tensor.grad: expected shape {self.shape}, got {value.shape}")
        self._grad = value
        self._grad_owned = False
        self._grad_zero = False

    def dim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    # ----- conversion to Python / NumPy -----
    def numpy(self) -> np.ndarray:
        """A NumPy copy of the values (host memory)."""
        a = self._data
        return a.copy() if type(a) is _ndarray else a.get()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def item(self, *args: int):
        """The value of a one-element tensor (or of the element at `args`) as a Python scalar."""
        if args:
            return self._data[args].item() if len(args) > 1 else self._data.reshape(-1)[args[0]].item()
        if self._data.size != 1:
            raise ValueError(f"Tensor.item: only a tensor with one element can be converted to a "
                             f"Python scalar, got shape {self.shape}")
        return self._data.item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueError(f"The truth value of a Tensor with {self._data.size} elements is ambiguous "
                             f"(shape {self.shape}); only a tensor with one element can be used as a bool. "
                             "Use .any() or .all()")
        return bool(self._data.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype}")
        return int(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-D tensor")
        return self._data.shape[0]

    __hash__ = object.__hash__

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-D tensor")
        for i in range(self._data.shape[0]):
            yield self[i]

    def __repr__(self) -> str:
        body = np.array2string(np.asarray(self.numpy()), separator=", ", prefix=" " * 7,
                               max_line_width=100, threshold=1000)
        return (f"Tensor(shape={self.shape}, dtype={self.dtype.name}, place={self.place!r}, "
                f"stop_gradient={self.stop_gradient},\n       {body})")

    __str__ = __repr__

    # ----- autograd entry points (`backward` is bound by runtime.autograd.engine) -----
    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Zero the gradient in place (default, as Paddle) or drop it."""
        if self._grad is None:
            return
        if set_to_zero:
            self._grad_zero = True
        else:
            self._grad = None
            self._grad_owned = False
            self._grad_zero = False

    clear_grad = clear_gradient

    def register_hook(self, hook: Callable[["Tensor"], "Tensor | None"]) -> "HookRemoveHelper":
        """Call `hook(grad)` when this tensor's gradient is computed; a returned tensor replaces it."""
        if self.stop_gradient:
            raise RuntimeError("register_hook: cannot register a hook on a tensor with stop_gradient=True")
        if not callable(hook):
            raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
        if self._node is None:
            if self._hooks is None:
                self._hooks = []
            self._hooks.append(hook)
            hooks = self._hooks
        else:
            self._node.add_out_hook(self._oidx, hook)
            hooks = self._node.out_hooks[self._oidx]
        return HookRemoveHelper(hooks, hook)

    def detach(self) -> "Tensor":
        """A stop-gradient tensor sharing this tensor's memory."""
        return Tensor._wrap(self._data)

    def detach_(self) -> "Tensor":
        self._node = None
        self.stop_gradient = True
        return self

    def set_value(self, value: Any) -> None:
        """Overwrite the values in place (no autograd), keeping shape and dtype."""
        arr = _to_array(value, None, self.place, "set_value")
        if tuple(arr.shape) != self._data.shape:
            raise ValueError(f"set_value: expected a value of shape {self.shape}, got {list(arr.shape)}")
        self._data[...] = arr.astype(self._data.dtype, copy=False)
        self._version += 1

    def _replace_data(self, arr) -> None:
        """Swap in a new array (optimizer and in-place writes; `Layer.to` casts and moves)."""
        old = self._data
        self._data = arr
        self._version += 1
        if self.persistable and (arr.shape != old.shape or arr.dtype != old.dtype):
            structure.bump()

    def cpu(self) -> "Tensor":
        """This tensor when on the CPU, else a host copy (stop_gradient and persistable kept, as Paddle)."""
        if type(self._data) is _ndarray:
            return self
        return self._copy_to(CPUPlace())

    def cuda(self, device_id: int | None = None, blocking: bool = True) -> "Tensor":
        """This tensor when on GPU `device_id`, else a copy there. Without an id: the current GPU,
        or GPU 0 when the current device is the CPU (as Paddle)."""
        if device_id is None:
            current = current_place()
            place = current if current.kind == "gpu" else CUDAPlace(0)
        elif isinstance(device_id, int):
            place = CUDAPlace(device_id)
        else:
            raise ValueError(f"Tensor.cuda: device_id must be an int or None, got {device_id!r}")
        return self if self.place == place else self._copy_to(place)

    def _copy_to(self, place: Place) -> "Tensor":
        """A copy on `place` outside autograd (a new leaf), keeping the flags Paddle keeps."""
        t = Tensor._wrap(move(self._data, place))
        t._stop_gradient = self._stop_gradient
        t.persistable = self.persistable
        return t

    @property
    def is_cuda(self) -> bool:
        return not isinstance(self._data, _ndarray)

    def to(self, *args: Any, **kwargs: Any) -> "Tensor":
        """`to(device, dtype=None)`, `to(dtype)` or `to(other)`: this tensor when it already has that
        place and dtype, else a copy with them (a cast stays differentiable, as Paddle's)."""
        device, dtype = _to_args(args, kwargs)
        t = self
        if dtype is not None and _dt.to_np_dtype(dtype) != self._data.dtype:
            from .ops.math import cast  # noqa: PLC0415 - the ops sit above Tensor
            t = cast(t, dtype)
        if device is not None and to_place(device) != t.place:
            t = t._copy_to(to_place(device))
        return t

    def __deepcopy__(self, memo: dict) -> "Tensor":
        new = object.__new__(type(self))
        new._init(self._data.copy(), self.stop_gradient)
        new.persistable = self.persistable
        new._name = self._name
        for slot in getattr(type(self), "__slots__", ()):
            if slot not in Tensor.__slots__ and hasattr(self, slot):
                setattr(new, slot, copy.deepcopy(getattr(self, slot), memo))
        memo[id(self)] = new
        return new


class HookRemoveHelper:
    """Returned by `register_hook`; `.remove()` unregisters the hook."""

    def __init__(self, hooks: list, hook: Callable):
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> bool:
        try:
            self._hooks.remove(self._hook)
            return True
        except ValueError:
            return False


def tensor_method(fn: Callable | None = None, *, names: tuple[str, ...] = ()):
    """Bind a public function as a Tensor method under its own name and `names`."""
    def bind(f: Callable) -> Callable:
        for n in (f.__name__, *names):
            setattr(Tensor, n, f)
        return f
    return bind(fn) if fn is not None else bind


def _to_array(data: Any, dtype: Any, place: Any, api: str):
    """A new array holding `data` on `place` (default: the current device, as Paddle) with Paddle's
    default dtypes; never shares memory with `data`."""
    target = to_place(place)
    if isinstance(data, Tensor):
        data = data._data
    elif isinstance(data, (list, tuple)) and data and any(isinstance(d, Tensor) for d in _flat(data)):
        data = _nested_numpy(data)
    if isinstance(data, _ndarray) or is_device_array(data):
        arr = data
    else:
        try:
            arr = np.array(data)
        except ValueError as e:
            raise ValueError(f"{api}: data has an inhomogeneous (ragged) shape: {e}") from None
        if arr.dtype == object:
            raise TypeError(f"{api}: cannot convert data of type {type(data).__name__} to a tensor")
        if arr.dtype.kind == "f":
            arr = arr.astype(_dt.default_float())
        elif arr.dtype.kind == "c":
            arr = arr.astype(np.complex64)
        elif arr.dtype.kind in "iu" and not isinstance(data, np.generic):
            arr = arr.astype(np.int64)
        elif arr.dtype.kind in "US":
            raise TypeError(f"{api}: cannot convert strings to a tensor")
    if dtype is not None:
        arr = arr.astype(_dt.to_np_dtype(dtype), copy=False)
    out = move(arr, target)
    return out.copy() if out is data else out


_TO_KEYS = {"device", "dtype", "blocking", "other"}


def _to_args(args: tuple, kwargs: dict) -> tuple:
    """(device, dtype) from Tensor.to's three call forms, as Paddle reads them."""
    unknown = set(kwargs) - _TO_KEYS
    if unknown:
        raise TypeError(f"Tensor.to: unexpected keyword argument {sorted(unknown)[0]!r}")
    if not args and not kwargs or len(args) + len(kwargs) > 3:
        raise TypeError("Tensor.to: expected to(device, dtype=None, blocking=None), to(dtype, blocking=None) "
                        "or to(other, blocking=None)")
    other = args[0] if args and isinstance(args[0], Tensor) else kwargs.get("other")
    if other is not None:
        return other.place, other.dtype
    if args and _is_dtype(args[0]):
        return None, args[0]
    device = args[0] if args else kwargs.get("device")
    dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
    return device, dtype


def _is_dtype(v: Any) -> bool:
    if isinstance(v, str):
        return v.lower() not in ("cpu", "gpu") and not v.lower().startswith("gpu:")
    return not isinstance(v, Place)


def _flat(seq):
    for d in seq:
        if isinstance(d, (list, tuple)):
            yield from _flat(d)
        else:
            yield d


def _nested_numpy(seq):
    return [_nested_numpy(d) if isinstance(d, (list, tuple)) else
            (d.numpy() if isinstance(d, Tensor) else d) for d in seq]


def to_tensor(data: Any, dtype: Any = None, place: Any = None, stop_gradient: bool = True) -> Tensor:
    """Create a tensor from Python data, a NumPy array or a Tensor (always copies). Building a static
    Program (static mode, or sot translating a function) a stop-gradient result is a var of the Program,
    as Paddle's static to_tensor gives: data become a constant op, a tensor is copied by an op."""
    if stop_gradient and not _mode.in_dynamic_mode():
        return _static_to_tensor(data, dtype)
    t = Tensor._wrap(_to_array(data, dtype, place, "to_tensor"))
    t._stop_gradient = stop_gradient
    return t


def _static_to_tensor(data: Any, dtype: Any) -> Tensor:
    """to_tensor in static mode: a var of the Program is copied (cast to `dtype`), other data become
    a constant op of it (the program runs on its own place); gradients do not flow back through it."""
    from .ops.creation import assign, assign_value  # (the ops and the static package import this module)
    from .ops.math import cast
    from .static.framework import Variable
    if isinstance(data, Variable):
        out = assign(data) if dtype is None else cast(data, dtype)
    else:
        out = assign_value(_to_array(data, dtype, CPUPlace(), "to_tensor"))
    out.stop_gradient = True
    return out


def as_tensor(x: Any, arg: str, op: str) -> Tensor:
    """`x` itself if a Tensor, else a clear TypeError naming the op and argument."""
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{op}: argument '{arg}' must be a Tensor, got {type(x).__name__}")


def is_tensor(x: Any) -> bool:
    """True for runtime Tensors (and Parameters)."""
    return isinstance(x, Tensor)
