"""Static mode: the public API appends ops to the current program instead of computing.

Static mode is per thread (`runtime.mode.hooks` is thread-local): `enable_static()` installs the
static parameter factory for this thread and, while any thread is in static mode, the registry's
apply function is `_apply_in_mode`, which appends (`append_op_from_call`) in static threads and
dispatches eagerly in the others. With no thread in static mode it is eager dispatch itself, so
eager ops pay nothing for the mode. A garbage collection runs eagerly even in a static thread: the
finalizers it calls are cleanup code, not part of the program being built.
"""
from __future__ import annotations

import contextlib
import gc
import threading
import types
from typing import Any, Callable, Iterator

import numpy as np

from .. import dtypes, mode as _mode
from ..ops import creation, dispatch, registry
from ..ops.registry import OpDef, TensorSpec
from ..tensor import Tensor
from .framework import (Program, Variable, _user_callsite, default_main_program, default_startup_program,
                        program_guard, unique_name)

__all__ = ["enable_static", "disable_static", "in_dynamic_mode", "appending_to", "stand_in_layer", "data",
           "InputSpec"]


_static_threads = 0  # threads in static mode; the registry dispatches by mode while it is not 0
_static_threads_lock = threading.Lock()


def _apply_in_mode(op: registry.OpDef, inputs: tuple, attrs: dict):
    """The registry's apply function while some thread is in static mode: by this thread's mode."""
    if _mode.hooks.static:
        return append_op_from_call(op, inputs, attrs)
    return dispatch.apply(op, inputs, attrs)


def enable_static() -> None:
    """From now on public APIs build ops into `default_main_program()` (Paddle's static mode), in this thread."""
    global _static_threads
    hooks = _mode.hooks
    if hooks.static:
        return
    with _static_threads_lock:
        _static_threads += 1
        registry._apply = _apply_in_mode
    hooks.create_parameter = create_parameter_var
    hooks.static = True


def disable_static() -> None:
    """Back to eager execution in this thread."""
    global _static_threads
    hooks = _mode.hooks
    if not hooks.static:
        return
    hooks.static = False
    hooks.create_parameter = None
    with _static_threads_lock:
        _static_threads -= 1
        if _static_threads == 0:
            registry._apply = dispatch.apply


class _GcState(threading.local):
    suspended = False  # this thread's static mode, switched off while a collection runs in it


_gc_state = _GcState()


@contextlib.contextmanager
def appending_to(program: Program) -> Iterator[None]:
    """Static mode appending to `program` in this thread, whatever the mode was; initialisers go to a
    throwaway startup program (building from existing tensors must never add them to the user's), and the
    previous mode and default programs come back after."""
    was_dynamic = in_dynamic_mode()
    if was_dynamic:
        enable_static()
    try:
        with program_guard(program, Program()):
            yield
    finally:
        if was_dynamic:
            disable_static()


def stand_in_layer(layer: Any, bind: Callable[[Tensor], Any], training: bool | None = None) -> Any:
    """A stand-in for `layer` and its sublayers whose parameters and buffers are `bind(tensor)` (Variables of
    the program being built), so a forward run on it builds ops on those Variables and the real layer never
    changes. Shallow copies, one per distinct sublayer (a layer shared by two parents stays shared):
    everything but the parameter, buffer and sublayer tables is the layer's own (hooks, settings, plain
    attributes); a method bound to the layer itself (a compiled `forward`) is bound to its stand-in;
    `training` sets every copy's mode (None keeps each layer's)."""
    made: dict[int, Any] = {}

    def bound(tensor: Tensor | None) -> Any:
        return tensor if tensor is None or isinstance(tensor, Variable) else bind(tensor)

    def copy(sub: Any) -> Any:
        twin = made.get(id(sub))
        if twin is None:
            twin = made[id(sub)] = object.__new__(type(sub))
            d = twin.__dict__
            d.update(sub.__dict__)
            for key, value in sub.__dict__.items():
                if isinstance(value, types.MethodType) and value.__self__ is sub:
                    d[key] = types.MethodType(value.__func__, twin)
            if training is not None:
                d["training"] = training
            d["_parameters"] = {k: bound(t) for k, t in sub.__dict__["_parameters"].items()}
            d["_buffers"] = {k: bound(t) for k, t in sub.__dict__["_buffers"].items()}
            d["_sub_layers"] = {k: None if s is None else copy(s) for k, s in sub.__dict__["_sub_layers"].items()}
        return twin

    return copy(layer)


def _eager_during_collection(phase: str, info: dict) -> None:
    """gc callback: a collection (and the finalizers it runs) computes eagerly in a static thread."""
    hooks = _mode.hooks
    if phase == "start" and hooks.static:
        hooks.static = False
        _gc_state.suspended = True
    elif phase == "stop" and _gc_state.suspended:
        _gc_state.suspended = False
        hooks.static = True


gc.callbacks.append(_eager_during_collection)


in_dynamic_mode = _mode.in_dynamic_mode


def _as_var(t: Tensor) -> Variable:
    """A Variable for an op input: itself, or an eager constant recorded as assign_value."""
    if isinstance(t, Variable):
        return t
    return creation.assign_value(t.numpy())


def append_op_from_call(op: OpDef, inputs: tuple, attrs: dict):
    """Record `op(*inputs, **attrs)` in the current block after checking it with its meta function."""
    block = default_main_program().current_block()
    args = [None if t is None else _as_var(t) for t in inputs]
    callsite = _user_callsite()
    specs = tuple(None if v is None else v.spec() for v in args)
    try:
        out_meta = op.meta(*specs, **attrs)
    except (ValueError, TypeError, IndexError) as e:
        raise type(e)(f"{e} [while building op '{op.name}' at {callsite}]") from None
    multi = type(out_meta) is tuple
    metas = out_meta if multi else (out_meta,)
    no_grad = op.grad is None or all(v is None or v.stop_gradient for v in args)
    prefix = unique_name(op.name)
    outs = [block.create_var(f"{prefix}.tmp_{i}", m.shape, m.dtype,
                             stop_gradient=no_grad or i in op.nondiff_outputs or m.dtype.kind not in "fc")
            for i, m in enumerate(metas)]
    block.append_op(op.name, [None if v is None else v.name for v in args], [o.name for o in outs],
                    {**op.attrs, **attrs}, callsite)
    fold_constants(op, args, attrs, outs)
    return tuple(outs) if multi else outs[0]


_MAX_FOLDED = 64  # elements: shape arithmetic and small constants, never a model's data


def fold_constants(op: OpDef, args: list, attrs: dict, outs: list[Variable]) -> None:
    """Give the outputs of `op` their values where they are known at build time: the shape of a Variable
    whose dims are all known, a constant (assign_value), and a pure op (not random, no side effect) of inputs
    whose values are known, computed by its eager kernel. Model code that reads such a value as numbers
    (`F.interpolate(x, size=paddle.shape(y)[2:])`) then builds, as it runs eagerly; the op is still
    recorded, so the program computes the same value at run time."""
    if op.name == "shape":
        if -1 not in args[0]._shape:
            outs[0].const = np.array(args[0]._shape, dtype=outs[0]._np_dtype)
        return
    if op.name == "assign_value":  # an eager constant or `to_tensor` data: the values are its attribute
        if len(attrs["values"]) <= _MAX_FOLDED:
            outs[0].const = np.asarray(attrs["values"], dtype=attrs["dtype"]).reshape(attrs["shape"])
        return
    if op.random or op.side_effect or op.inplace or not any(v is not None for v in args):
        return
    known = [None if v is None else v.const for v in args]
    if any(v is not None and c is None for v, c in zip(args, known)):
        return
    values = dispatch.apply(op, tuple(None if c is None else Tensor._wrap(c) for c in known), attrs)
    for out, value in zip(outs, values if isinstance(values, tuple) else (values,)):
        if value._data.size <= _MAX_FOLDED:
            out.const = value._data


def create_parameter_var(name: str, shape: tuple, dtype: np.dtype, initializer: Any, trainable: bool = True,
                         optimize_attr: dict | None = None, regularizer: Any = None,
                         need_clip: bool = True) -> Variable:
    """A parameter: a persistable var in the main program, initialised by ops in startup."""
    main_param = default_main_program().global_block().create_parameter(name, shape, dtype, trainable)
    if optimize_attr is not None:
        main_param.optimize_attr = dict(optimize_attr)
    main_param.regularizer = regularizer
    main_param.need_clip = need_clip
    startup = default_startup_program()
    with program_guard(startup):
        startup_param = startup.global_block().create_parameter(name, shape, dtype, trainable)
        value = initializer._generate(tuple(shape), dtype)
        startup.global_block().append_op("assign", [value.name], [startup_param.name], {})
    main_param.initializer = initializer
    return main_param


def data(name: str, shape: Any, dtype: Any = None, lod_level: int = 0) -> Variable:
    """A fed input of the main program; None or -1 marks a dimension known only at run time."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"data: argument 'name' must be a non-empty str, got {name!r}")
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"data: argument 'shape' must be a list or tuple, got {type(shape).__name__}")
    dims = []
    for i, d in enumerate(shape):
        if d is None:
            d = -1
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < -1:
            raise ValueError(f"data: dimension {i} of argument 'shape' must be a non-negative int, None "
                             f"or -1, got {d!r}")
        dims.append(int(d))
    np_dtype = dtypes.default_float() if dtype is None else dtypes.to_np_dtype(dtype)
    block = default_main_program().global_block()
    return block.create_var(name, dims, np_dtype, stop_gradient=True, need_check_feed=True)


class InputSpec:
    """Shape, dtype and name of a program input: `paddle.static.data` takes its fields, and
    `paddle.jit.to_static` / `paddle.jit.save` read it (the same class as `paddle.jit.InputSpec`).
    None or any value below -1 in `shape` becomes -1, a dim of any size (as Paddle's)."""

    def __init__(self, shape: Any, dtype: Any = "float32", name: str | None = None,
                 stop_gradient: bool = False):
        self.shape = self._verify(shape)
        self.dtype = dtypes.from_np_dtype(dtypes.to_np_dtype(dtype))
        self.name = name
        self.stop_gradient = stop_gradient

    @staticmethod
    def _verify(shape: Any) -> tuple[int, ...]:
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"InputSpec: argument 'shape' must be a list or tuple, got {type(shape).__name__}")
        dims = []
        for i, d in enumerate(shape):
            if d is not None and (isinstance(d, bool) or not isinstance(d, (int, np.integer))):
                raise ValueError(f"InputSpec: shape[{i}] must be an int or None, got {type(d).__name__} {d!r}")
            dims.append(-1 if d is None or d < -1 else int(d))
        return tuple(dims)

    @classmethod
    def from_tensor(cls, tensor: Tensor, name: str | None = None) -> "InputSpec":
        """The spec of `tensor` (its shape, dtype and, unless `name` is given, its name)."""
        if not isinstance(tensor, Tensor):
            raise ValueError(f"InputSpec.from_tensor: argument 'tensor' must be a Tensor, got {type(tensor).__name__}")
        return cls(tensor.shape, tensor.dtype, name or tensor.name)

    @classmethod
    def from_numpy(cls, ndarray: np.ndarray, name: str | None = None) -> "InputSpec":
        """The spec of a NumPy array (its shape and dtype)."""
        return cls(ndarray.shape, ndarray.dtype, name)

    def batch(self, batch_size: int | list | tuple) -> "InputSpec":
        """Put `batch_size` in front of the shape (in place, as Paddle); returns this spec."""
        if isinstance(batch_size, (list, tuple)):
            if len(batch_size) != 1:
                raise ValueError(f"InputSpec.batch: argument 'batch_size' must hold one int, got {batch_size!r}")
            batch_size = batch_size[0]
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            raise TypeError(f"InputSpec.batch: argument 'batch_size' must be an int, got {type(batch_size).__name__}")
        self.shape = self._verify((batch_size, *self.shape))
        return self

    def unbatch(self) -> "InputSpec":
        """Drop the first dim of the shape (in place, as Paddle); returns this spec."""
        if not self.shape:
            raise ValueError("InputSpec.unbatch: the shape is empty, there is no batch dim to remove")
        self.shape = self.shape[1:]
        return self

    def spec(self) -> TensorSpec:
        return TensorSpec(self.shape, self.dtype.np_dtype)

    def __eq__(self, other: Any) -> bool:
        return (type(self) is type(other) and self.shape == other.shape and self.dtype == other.dtype
                and self.name == other.name and self.stop_gradient == other.stop_gradient)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name, self.stop_gradient))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype}, name={self.name}, "
                f"stop_gradient={self.stop_gradient})")
