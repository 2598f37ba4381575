"""A host-backed stand-in for CuPy, so the device code paths run in the CPU suite.

It is not a GPU emulator: kernels run at once on the host with NumPy. What it reproduces are the
rules of CuPy that device code must follow and that NumPy code silently breaks:

- its `ndarray` is not a `numpy.ndarray`; implicit conversion to NumPy (`np.asarray(x)`,
  `__array__`) raises TypeError, and so does mixing a device array with a `numpy.ndarray` in one call
  (NumPy functions on device arrays dispatch here, NEP 13/18, as they do to CuPy);
- reductions give 0-d device arrays, never NumPy scalars; `flags` has no `writeable`; there is no
  `errstate`; pickling a device array is refused (a saved file must hold host arrays);
- host <-> device moves copy (`asarray(host)`, `asnumpy`, `.get()`): device memory never aliases
  host memory;
- streams, events and graph launches are logged in `trace`, so a test can check where a record, a wait
  or a launch happened (kernels run synchronously, so misordered work cannot show as a wrong value);
- stream capture: calls made while a stream captures are recorded AND run (so shapes exist), then at
  `end_capture` the arrays they made are poisoned and the ones they wrote restored, since a captured
  kernel does not run; `Graph.launch` runs the recorded calls again into the same arrays. A host sync
  during capture raises `CUDARuntimeError` and invalidates the capture, as CUDA does;
- `ElementwiseKernel` and `RawKernel` cannot compile CUDA: calling one raises `CompileException`.

Tests install it with the `fake_gpu` fixture (tests/conftest.py).
"""
from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import types
import weakref
from typing import Any, Callable

import numpy as np

# every launch, record, wait, sync and graph launch, in order (not `log`: that is CuPy's ufunc)
trace: list[tuple] = []
_POISON_BYTE = 0x5A


class _State:
    capture: "_Capture | None" = None
    allocator: Callable | None = None
    device_count = 1


_state = _State()
_thread = threading.local()   # the current stream and the streams entered: per thread, as in CuPy


def reset() -> None:
    """Forget the trace and any capture (the fixture calls it between tests)."""
    trace.clear()
    _state.capture = None
    _thread.stream = None
    _state.allocator = None


# ------------------------------------------------------------------ errors
class CUDARuntimeError(RuntimeError):
    """What CUDA reports (the name of the error first, as CuPy words it)."""


class CompileException(Exception):
    """Raised by kernels this stand-in cannot compile."""


def _host_sync(what: str) -> None:
    """A device -> host wait: illegal while a stream captures (and the capture is lost)."""
    trace.append(("sync", what))
    cap = _state.capture
    if cap is not None:
        cap.invalidated = True
        raise CUDARuntimeError(f"cudaErrorStreamCaptureUnsupported: operation not permitted when stream is "
                               f"capturing ({what})")


# ------------------------------------------------------------------ arrays
class _Flags:
    """CuPy's flags: contiguity and ownership only (no `writeable`)."""

    def __init__(self, a: np.ndarray):
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.flags.owndata

    def __getitem__(self, name: str) -> bool:
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "OWNDATA": self.owndata}[name]


# what numpy.ndarray has and cupy.ndarray lacks (dir() of NumPy 2.5 against CuPy 14.2)
_NO_SUCH_METHODS = frozenset({"ctypes", "getfield", "resize", "setfield", "setflags", "to_device"})
_MUTATING_METHODS = frozenset({"fill", "sort", "put"})


class ndarray:  # noqa: N801 - CuPy's name
    """A device array: a NumPy array behind CuPy's rules."""

    __slots__ = ("_a", "__weakref__")
    __hash__ = None

    def __init__(self, *args, **kwargs):
        raise TypeError("fake_cupy.ndarray: create device arrays with asarray/empty/zeros")

    @classmethod
    def _of(cls, a: np.ndarray) -> "ndarray":
        if a.dtype.kind in "OUSV":
            raise ValueError(f"Unsupported dtype {a.dtype}")
        obj = object.__new__(cls)
        obj._a = a
        return obj

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: _Flags(self._a))
    device = property(lambda self: cuda.Device(0))
    T = property(lambda self: _call(np.transpose, (self,), {}))
    real = property(lambda self: _call(np.real, (self,), {}))
    imag = property(lambda self: _call(np.imag, (self,), {}))

    @property
    def base(self):
        return None if self._a.base is None else ndarray._of(self._a.base)

    def get(self, stream=None, order="C", out=None) -> np.ndarray:
        _host_sync("ndarray.get")
        return np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None) -> None:
        """Host -> device copy into this array (CuPy's rules: a host array of the same shape and dtype)."""
        if type(arr) is not np.ndarray:
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr).__name__}")
        if arr.shape != self.shape or arr.dtype != self.dtype:
            raise ValueError(f"Shape mismatch or dtype mismatch: {arr.shape} {arr.dtype} into {self.shape} "
                             f"{self.dtype}")
        _host_sync("ndarray.set")
        trace.append(("h2d", current_stream_name()))
        np.copyto(self._a, arr)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _call(getattr(ufunc, method), inputs, kwargs, name=f"{ufunc.__name__}.{method}")

    def __array_function__(self, func, types_, args, kwargs):
        if func.__name__ in _NO_SUCH_FUNCTIONS["cupy"]:   # CuPy implements no such function
            raise TypeError(f"no implementation found for 'numpy.{func.__name__}' on types that implement "
                            "__array_function__: [<class 'cupy.ndarray'>]")
        return _call(func, args, kwargs)

    def __reduce__(self):
        raise TypeError("pickling a device array: convert it with .get() first (a file holding CuPy arrays "
                        "cannot be loaded where there is no GPU)")

    def _scalar(self, convert: Callable, what: str):
        _host_sync(what)
        return convert(self._a)

    def __float__(self):
        return self._scalar(float, "float()")

    def __int__(self):
        return self._scalar(int, "int()")

    def __index__(self):
        return self._scalar(lambda a: a.__index__(), "index")

    def __bool__(self):
        return self._scalar(bool, "bool()")

    def __complex__(self):
        return self._scalar(complex, "complex()")

    def item(self):
        return self._scalar(lambda a: a.item(), "item()")

    def tolist(self):
        return self._scalar(lambda a: a.tolist(), "tolist()")

    def __repr__(self) -> str:
        return self._scalar(repr, "repr()")

    def __str__(self) -> str:
        return self._scalar(str, "str()")

    def __format__(self, spec: str) -> str:
        return self._scalar(lambda a: format(a, spec), "format()")

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, key):
        return _call(_getitem, (self, key), {}, name="getitem")

    def __setitem__(self, key, value) -> None:
        _call(_setitem, (self, key, value), {}, name="setitem")

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __getattr__(self, name: str):
        if name in _NO_SUCH_METHODS or name.startswith("__"):   # no __array_interface__ either
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        attr = getattr(self._a, name)
        if callable(attr):
            mutates = name in _MUTATING_METHODS
            return lambda *a, **k: _call(_method, (self, name, *a), k, name=f"ndarray.{name}",
                                         writes=(self,) if mutates else ())
        return _wrap(attr)


def _getitem(a: np.ndarray, key):
    return a[key]


def _setitem(a: np.ndarray, key, value) -> None:
    a[key] = value


def _method(a: np.ndarray, name: str, *args, **kwargs):
    return getattr(a, name)(*args, **kwargs)


def _binary(ufunc: np.ufunc, reflected: bool = False, inplace: bool = False) -> Callable:
    def op(self, other):
        if inplace:
            return _call(ufunc, (self, other), {"out": self}, name=ufunc.__name__)
        args = (other, self) if reflected else (self, other)
        return _call(ufunc, args, {}, name=ufunc.__name__)
    return op


for _name, _uf in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
                   "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
                   "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
                   "lshift": np.left_shift, "rshift": np.right_shift}.items():
    setattr(ndarray, f"__{_name}__", _binary(_uf))
    setattr(ndarray, f"__r{_name}__", _binary(_uf, reflected=True))
    if _name != "matmul":
        setattr(ndarray, f"__i{_name}__", _binary(_uf, inplace=True))
for _name, _uf in {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                   "eq": np.equal, "ne": np.not_equal}.items():
    setattr(ndarray, f"__{_name}__", _binary(_uf))
for _name, _uf in {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}.items():
    setattr(ndarray, f"__{_name}__", lambda self, _uf=_uf: _call(_uf, (self,), {}, name=_uf.__name__))


# ------------------------------------------------------------------ calls
def _unwrap(x, seen: list):
    """x with device arrays replaced by their NumPy arrays; seen[0]/[1]: a device / host array met."""
    if type(x) is ndarray:
        seen[0] = True
        return x._a
    if type(x) is np.ndarray:
        seen[1] = True
        return x
    if type(x) in (tuple, list):
        return type(x)(_unwrap(v, seen) for v in x)
    if type(x) is dict:
        return {k: _unwrap(v, seen) for k, v in x.items()}
    return x


def _wrap(r, made: list | None = None):
    if type(r) is np.ndarray:
        w = ndarray._of(r)
        if made is not None:
            made.append(w)
        return w
    if isinstance(r, np.generic):
        return _wrap(np.asarray(r), made)
    if type(r) in (tuple, list):
        return type(r)(_wrap(v, made) for v in r)
    if isinstance(r, tuple):  # NumPy's named results (QRResult, SVDResult...): CuPy returns plain tuples
        return tuple(_wrap(v, made) for v in r)
    return r


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _call(fn: Callable, args: tuple, kwargs: dict, name: str | None = None, writes: tuple = ()):
    """Run a NumPy callable on device arrays as CuPy would run its own: checks, capture, wrapping."""
    seen = [False, False]
    raw_args, raw_kwargs = _unwrap(args, seen), _unwrap(kwargs, seen)
    if seen[1]:
        raise TypeError(f"Unsupported type <class 'numpy.ndarray'> in a call of {name or fn.__name__} on device "
                        "arrays (move it with cupy.asarray first)")
    label = name or getattr(fn, "__name__", "call")
    trace.append(("launch", current_stream_name(), label))
    cap = _state.capture
    if cap is not None:
        out = kwargs.get("out")
        targets = [w for w in (*writes, *(out if isinstance(out, tuple) else (out,)))
                   if type(w) is ndarray]
        if fn is _setitem:
            targets.append(args[0])
        cap.before_write(targets)
    with np.errstate(all="ignore"):   # CuPy never warns about floating-point errors
        result = fn(*raw_args, **raw_kwargs)
    made: list = []
    wrapped = _same_objects(result, args, kwargs)
    if wrapped is None:
        wrapped = _wrap(result, made)
    if cap is not None:
        cap.record(fn, args, kwargs, made, raw_args, raw_kwargs)
    _allocate(made)
    return wrapped


def _allocate(made: list) -> None:
    """Charge the arrays a call made to the allocator in use (the default pool unless `using_allocator`
    names another); an array's bytes go back to its pool when the array is freed."""
    malloc = _state.allocator or _default_pool.malloc
    for w in made:
        if w._a.base is None:   # a view allocates nothing
            malloc(w.nbytes)
            pool = getattr(malloc, "__self__", None)
            if isinstance(pool, MemoryPool):
                weakref.finalize(w, pool._free, w.nbytes)


def _same_objects(result, args: tuple, kwargs: dict):
    """An `out=` call returns its `out` wrapper itself, as CuPy does."""
    out = kwargs.get("out")
    if type(out) is ndarray and result is out._a:
        return out
    if type(out) is tuple and type(result) is tuple and all(type(o) is ndarray for o in out):
        return out
    return None


# ------------------------------------------------------------------ module namespace
class _Ufunc:
    """A NumPy ufunc over device arrays, with its methods."""

    def __init__(self, uf: np.ufunc):
        self._uf = uf
        self.__name__ = uf.__name__
        self.nin, self.nout = uf.nin, uf.nout

    def __call__(self, *args, **kwargs):
        return _call(self._uf, args, kwargs, name=self.__name__)

    def __getattr__(self, method: str):
        fn = getattr(self._uf, method)
        return lambda *a, **k: _call(fn, a, k, name=f"{self.__name__}.{method}")


# what the numpy namespaces have and CuPy's lack (dir() of NumPy 2.5 against CuPy 14.2)
_NO_SUCH_FUNCTIONS = {
    "cupy": frozenset({
        "False_", "ScalarType", "True_", "asmatrix", "block", "bmat", "busday_count", "busday_offset",
        "busdaycalendar", "bytes_", "char", "character", "clongdouble", "complex256", "core", "ctypeslib",
        "datetime64", "datetime_as_string", "datetime_data", "dtypes", "einsum_path", "emath", "errstate", "f2py",
        "flexible", "float128", "frompyfunc", "fromregex", "geomspace", "get_include", "getbufsize", "geterr",
        "geterrcall", "histogram_bin_edges", "info", "insert", "is_busday", "isnat", "little_endian", "longdouble",
        "ma", "matrix", "matvec", "memmap", "nanpercentile", "nanquantile", "ndenumerate", "nditer", "nested_iters",
        "object_", "polyder", "polydiv", "polyint", "rec", "recarray", "record", "sctypeDict", "setbufsize", "seterr",
        "seterrcall", "show_runtime", "spacing", "str_", "strings", "test", "timedelta64", "typecodes", "unstack",
        "vecdot", "vecmat", "void"}),
    "cupy.linalg": frozenset({"diagonal", "matrix_norm", "multi_dot", "outer", "svdvals", "tensordot", "trace",
                              "vecdot", "vector_norm"}),
    "cupy.random": frozenset({"MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64", "SeedSequence", "bit_generator",
                              "get_bit_generator", "get_state", "mtrand", "set_bit_generator", "set_state"}),
}


def _namespace_getattr(source: Any, cache: dict, qualname: str) -> Callable[[str], Any]:
    def getattr_(name: str):
        if name in cache:
            return cache[name]
        if name in _NO_SUCH_FUNCTIONS.get(qualname, ()):
            raise AttributeError(f"module '{qualname}' has no attribute '{name}'")
        obj = getattr(source, name)
        if isinstance(obj, np.ufunc):
            obj = _Ufunc(obj)
        elif isinstance(obj, types.ModuleType):   # numpy.lib.stride_tricks -> cupy.lib.stride_tricks
            obj = _submodule(f"{qualname[5:]}.{name}".lstrip("."), obj)
        elif callable(obj) and not isinstance(obj, type):
            fn = obj
            obj = lambda *a, _fn=fn, _n=name, **k: _call(_fn, a, k, name=_n)  # noqa: E731
            obj.__name__ = name
        cache[name] = obj
        return obj
    return getattr_


def _submodule(name: str, source: Any) -> types.ModuleType:
    mod = types.ModuleType(f"cupy.{name}")
    mod.__getattr__ = _namespace_getattr(source, {}, f"cupy.{name}")
    return mod


linalg = _submodule("linalg", np.linalg)
fft = _submodule("fft", np.fft)
random = _submodule("random", np.random)
lib = _submodule("lib", np.lib)
__getattr__ = _namespace_getattr(np, {}, "cupy")
# the `cupyx` module (the fixture installs it): scatter_add accumulates over repeated indices
cupyx = types.ModuleType("cupyx")
cupyx.scatter_add = lambda a, slices, value: _call(np.add.at, (a, slices, value), {}, name="scatter_add",
                                                   writes=(a,))


def asarray(a, dtype=None, order=None, *, blocking=False) -> ndarray:
    """Host -> device copy (device arrays pass through, cast where `dtype` says)."""
    if type(a) is ndarray:
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    return array(a, dtype=dtype, order=order)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False) -> ndarray:
    if type(obj) is ndarray:
        return _call(np.array, (obj,), {"dtype": dtype, "copy": True, "order": order, "ndmin": ndmin}, name="array")
    if type(obj) in (list, tuple) and any(type(v) is ndarray for v in obj):
        return _call(np.stack, ([asarray(v) for v in obj],), {}, name="array")
    _host_sync("host-to-device copy")
    a = np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin)
    made: list = []
    w = _wrap(a, made)
    _allocate(made)
    trace.append(("h2d", current_stream_name()))
    return w


def ascontiguousarray(a, dtype=None) -> ndarray:
    return _call(np.ascontiguousarray, (asarray(a),), {"dtype": dtype}, name="ascontiguousarray")


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True) -> np.ndarray:
    """Device -> host copy (host input passes through, as CuPy's does)."""
    if type(a) is ndarray:
        return a.get(order=order)
    return np.asarray(a, order=order)


def get_array_module(*args) -> Any:
    return sys.modules[__name__] if any(type(a) is ndarray for a in args) else np


class ElementwiseKernel:
    """Keeps its source; calling it raises, since the stand-in compiles no CUDA."""

    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel", **kwargs):
        self.in_params, self.out_params, self.operation, self.name = in_params, out_params, operation, name
        self.kwargs = kwargs

    def __call__(self, *args, **kwargs):
        raise CompileException(f"fake_cupy cannot compile the CUDA kernel {self.name!r}")


class RawKernel(ElementwiseKernel):
    def __init__(self, code: str, name: str, options: tuple = (), **kwargs):
        self.code, self.name, self.options = code, name, options


# ------------------------------------------------------------------ capture
class _Capture:
    """What a capturing stream saw: the calls to replay, the arrays they made and those they wrote."""

    def __init__(self, stream: "Stream"):
        self.stream = stream
        self.calls: list[tuple] = []
        self.new_roots: dict[int, np.ndarray] = {}
        self.saved: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.invalidated = False

    def before_write(self, targets: list) -> None:
        for w in targets:
            root = _root(w._a)
            if id(root) not in self.new_roots and id(root) not in self.saved:
                self.saved[id(root)] = (root, root.copy())

    def record(self, fn, args, kwargs, made: list, raw_args, raw_kwargs) -> None:
        inputs = set()
        _collect_roots((raw_args, raw_kwargs), inputs)
        for w in made:
            root = _root(w._a)
            if id(root) not in inputs:
                self.new_roots[id(root)] = root
        self.calls.append((fn, args, kwargs, made))

    def finish(self) -> "Graph":
        for root, copy in self.saved.values():
            np.copyto(root, copy)
        for root in self.new_roots.values():
            if root.dtype.kind in "fc":
                root.fill(np.nan)
            elif root.flags.c_contiguous:
                root.view(np.uint8).fill(_POISON_BYTE)
        return Graph(self.calls)


def _collect_roots(x, into: set) -> None:
    if type(x) is np.ndarray:
        into.add(id(_root(x)))
    elif type(x) in (tuple, list):
        for v in x:
            _collect_roots(v, into)
    elif type(x) is dict:
        for v in x.values():
            _collect_roots(v, into)


class Graph:
    """A captured sequence of calls; `launch` runs them again into the same arrays."""

    def __init__(self, calls: list):
        self._calls = calls

    def launch(self, stream: "Stream | None" = None) -> None:
        if _state.capture is not None:
            raise CUDARuntimeError("cudaErrorStreamCaptureUnsupported: graph launch while capturing")
        trace.append(("graph_launch", (stream or current_stream()).name, len(self._calls)))
        for fn, args, kwargs, made in self._calls:
            seen = [False, False]
            result = fn(*_unwrap(args, seen), **_unwrap(kwargs, seen))
            fresh: list = []
            _wrap(result, fresh)
            for old, new in zip(made, fresh):
                if old._a is not new._a:
                    np.copyto(old._a, new._a)

    def upload(self, stream=None) -> None:
        return None


# ------------------------------------------------------------------ cuda
class Stream:
    """A stream: a name in the trace; the work itself runs at once on the host."""

    _ids = itertools.count(1)

    def __init__(self, null: bool = False, non_blocking: bool = False, ptr: int = 0, priority: int = 0):
        self.name = "null" if null else f"stream{next(Stream._ids)}"
        self.ptr = 0 if null else id(self)

    def __enter__(self) -> "Stream":
        _thread.__dict__.setdefault("outer", []).append(getattr(_thread, "stream", None))
        _thread.stream = self
        return self

    def __exit__(self, *exc) -> None:
        _thread.stream = _thread.outer.pop()

    def use(self) -> "Stream":
        _thread.stream = self
        return self

    def synchronize(self) -> None:
        _host_sync(f"{self.name}.synchronize")

    def record(self, event: "Event | None" = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        trace.append(("wait", self.name, event.id))

    def begin_capture(self, mode: Any = None) -> None:
        if _state.capture is not None:
            raise CUDARuntimeError("cudaErrorIllegalState: a stream is already capturing")
        if self.ptr == 0:
            raise CUDARuntimeError("cudaErrorStreamCaptureUnsupported: the null stream cannot capture")
        trace.append(("begin_capture", self.name))
        _state.capture = _Capture(self)

    def end_capture(self) -> Graph:
        cap = _state.capture
        if cap is None or cap.stream is not self:
            raise CUDARuntimeError("cudaErrorIllegalState: this stream is not capturing")
        _state.capture = None
        graph = cap.finish()
        trace.append(("end_capture", self.name))
        if cap.invalidated:
            raise CUDARuntimeError("cudaErrorStreamCaptureInvalidated: the capture was invalidated")
        return graph

    @property
    def done(self) -> bool:
        return True

    def is_capturing(self) -> bool:
        return _state.capture is not None and _state.capture.stream is self

    def __repr__(self) -> str:
        return f"<fake_cupy Stream {self.name}>"


Stream.null = Stream(null=True)


def current_stream() -> Stream:
    return getattr(_thread, "stream", None) or Stream.null


def current_stream_name() -> str:
    return current_stream().name


class Event:
    """An event: its record and its waits go to the trace."""

    _ids = itertools.count(1)

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False):
        self.id = next(Event._ids)
        self.ptr = id(self)

    def record(self, stream: Stream | None = None) -> None:
        trace.append(("record", (stream or current_stream()).name, self.id))

    def synchronize(self) -> None:
        _host_sync(f"event{self.id}.synchronize")

    @property
    def done(self) -> bool:
        return True


class Device:
    def __init__(self, device: int | None = None):
        self.id = 0 if device is None else int(device)
        if not 0 <= self.id < _state.device_count:
            raise CUDARuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id}")

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("fake_cupy.Device", self.id))

    def synchronize(self) -> None:
        _host_sync("device.synchronize")

    compute_capability = "90"


class MemoryPool:
    """Counts the bytes of the live arrays allocated through it and those it keeps after they were freed
    (tests check which pool a capture used, and what the memory figures say)."""

    def __init__(self, allocator: Any = None):
        self.allocations = 0
        self._used = 0
        self._cached = 0

    def malloc(self, size: int) -> None:
        self.allocations += 1
        self._used += size
        self._cached = max(0, self._cached - size)

    def _free(self, size: int) -> None:
        self._used -= size
        self._cached += size

    def used_bytes(self) -> int:
        return self._used

    def total_bytes(self) -> int:
        return self._used + self._cached

    def free_all_blocks(self, stream: Any = None) -> None:
        self._cached = 0


_default_pool = MemoryPool()


@contextlib.contextmanager
def _using_allocator(allocator: Callable | None = None):
    outer = _state.allocator
    _state.allocator = allocator
    try:
        yield
    finally:
        _state.allocator = outer


def _runtime_module() -> types.ModuleType:
    rt = types.ModuleType("cupy.cuda.runtime")
    rt.CUDARuntimeError = CUDARuntimeError
    rt.getDeviceCount = lambda: _state.device_count
    rt.runtimeGetVersion = lambda: 12000
    rt.driverGetVersion = lambda: 12000
    rt.getDeviceProperties = lambda i: {"name": b"fake_cupy host stand-in", "totalGlobalMem": 1 << 30, "major": 9,
                                        "minor": 0, "multiProcessorCount": 132}
    rt.deviceSynchronize = lambda: _host_sync("deviceSynchronize")
    return rt


cuda = types.ModuleType("cupy.cuda")
cuda.runtime = _runtime_module()
cuda.compiler = types.SimpleNamespace(CompileException=CompileException)
cuda.Stream, cuda.Event, cuda.Device, cuda.Graph, cuda.MemoryPool = Stream, Event, Device, Graph, MemoryPool
cuda.get_current_stream = current_stream
cuda.get_elapsed_time = lambda start, end: 0.0
cuda.using_allocator = _using_allocator
cuda.get_device_id = lambda: 0
cuda.is_available = lambda: _state.device_count > 0
cuda.graph = types.SimpleNamespace(Graph=Graph)
get_default_memory_pool = lambda: _default_pool  # noqa: E731
__version__ = "0+fake"


def install() -> None:
    """Make `import cupy` give this module and `runtime` see one GPU (what the `fake_gpu` fixture does for a
    test, for a whole process)."""
    from runtime import place  # noqa: PLC0415 - runtime is only needed when installing
    me = sys.modules[__name__]
    sys.modules["cupy"] = me
    place._cupy = lambda: me


if __name__ == "__main__":   # python tests/fake_cupy.py SCRIPT [ARGS]: run SCRIPT with the stand-in as its GPU
    import os  # noqa: PLC0415
    import runpy  # noqa: PLC0415
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fake_cupy  # noqa: PLC0415 - the module itself, not this __main__ copy
    fake_cupy.install()
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
    runpy.run_path(sys.argv[0], run_name="__main__")
