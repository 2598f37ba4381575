"""Calls during simulation: what `fn(*args, **kwargs)` becomes in the SIR.

A runtime public function is recorded as call_api (inlined when it is given an object of its own
subpackage, which no tensor operation takes: Python glue of the library, such as a distribution's
helpers), a Tensor method as call_method; a Python
function, bound method, lambda, closure or comprehension is inlined (`OpcodeExecutor.inline`),
and so is the function a nested `to_static` wrapper wraps;
a callable object (an nn.Layer) is called through its type's `__call__`, inlined the same way;
a plain Python class is constructed with its `__init__` inlined (see `objects`);
the grad-mode API (`no_grad()`, `is_grad_enabled()`, ...) is simulated (see `contexts`);
a runtime function that reads or sets the runtime's own state rather than computing on tensors
(`in_dynamic_mode()`, `get_default_dtype()`, `set_default_dtype(...)`) is never recorded, since a
recorded call runs in static mode, once, at translation time: a query of that state is read for
real and guarded (`_STATE_QUERIES`), anything else of those modules breaks the graph and runs for real,
as do the optimizers' methods (`opt.step()` writes parameters in place);
builtins and `math` functions on values known at translation time are simulated (see
`builtins`). Anything else cannot be captured.
"""
from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any, Iterator

import runtime
from runtime import Tensor
from sot.opcode_executor.blocklist import allows_dynamic_shape, breaks_on, is_skipped
from sot.guards.source import expression
from sot.ir import DynamicShapeOp, NeedsTensorValue, Symbol, WritesSymbol
from sot.ir.pytree import tree_leaves
from sot.opcode_executor.markers import is_to_static_wrapper
from sot.pyversion import Instruction

from .builtins import builtin_of
from .dims import arange_over_sizes, call_arguments, sized_arguments
from .dispatch import InPlaceUpdate, Unsupported, handles
from .size_forms import record_forms
from .stdlib import partial_call
from .trackers import ExpressionTracker, GetAttrTracker
from .variables import (NULL, BoundMethodVariable, ContainerMethodVariable, DictVariable, FunctionVariable,
                        InstanceVariable, ObjectVariable, PartialVariable, TensorMethodVariable, TensorVariable,
                        Variable)
from .wording import kind_of_callee, shown

__all__ = ["CallMixin", "MAX_INLINE_DEPTH", "ReadsFrames", "is_optimizer_code", "is_runtime_api"]

MAX_INLINE_DEPTH = 32  # nested inline calls

# modules of runtime whose public functions read or change the runtime's state, not tensors
_STATE_MODULES = frozenset({"runtime.mode", "runtime.dtypes", "runtime.flags", "runtime.place", "runtime.device",
                            "runtime.device.cuda", "runtime.generator",
                            "runtime.static.builder", "runtime.serialization", "runtime.amp.auto_cast"})
# functions of those modules that only read state: called with no arguments, read for real at translation time
# and guarded by calling them again (exported at the top of `runtime` under these names)
_STATE_QUERIES = frozenset({"in_dynamic_mode", "get_default_dtype", "get_device", "is_compiled_with_cuda",
                            "device_count"})
# functions of those modules that compute on their arguments alone (a tensor's dtype): recorded as usual
_STATE_FREE = frozenset({"is_complex", "is_floating_point", "is_integer"})

# builtins whose result depends on the frame calling them (or its callers), with how many positional
# arguments make them stop reading it (None: always read it): `vars(obj)`, `eval(src, namespace)` do not
_FRAME_READERS = tuple((f, n) for f, n in ((sys._getframe, None), (getattr(sys, "_getframemodulename", None), None),
                                          (locals, None), (globals, None), (warnings.warn, None), (vars, 1), (dir, 1),
                                          (eval, 2), (exec, 2)) if f is not None)


class ReadsFrames(Unsupported):
    """A call of a function that reads the frame it is called from (`sys._getframe`, `locals()`,
    `warnings.warn`): run for real only in a real frame, never in an inlined callee's place."""

    default_code = "SOT-B003"


def is_runtime_api(fn: Any) -> bool:
    """A public function of the runtime package (recorded as call_api); its methods are inlined."""
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "_")
    return (callable(fn) and not isinstance(fn, type) and (module == "runtime" or module.startswith("runtime."))
            and not name.startswith("_") and "." not in name)



# Tensor methods with effects beyond their result; names ending in "_" (add_, uniform_) are in place too
_SIDE_EFFECT_METHODS = frozenset({"set_value", "copy_", "backward", "clear_grad", "clear_gradient", "register_hook",
                                  "__setitem__"})


# mutating methods that change no tensor's data, only autograd state: run for real at a graph break
# (a compiled output is a copy where eager may hold a view; these cannot tell the difference)
_AUTOGRAD_METHODS = frozenset({"backward", "clear_grad", "clear_gradient"})


def _mutates(method: str) -> bool:
    """Whether calling Tensor.<method> changes the tensor or the autograd state."""
    return method in _SIDE_EFFECT_METHODS or (method.endswith("_") and not method.startswith("_"))


def is_optimizer_code(fn: Any) -> bool:
    """A function or method of runtime's optimizers and LR schedulers (`opt.step()`, `opt.clear_grad()`):
    they write parameters, gradients and accumulators in place, which a graph cannot capture."""
    return (getattr(fn, "__module__", None) or "").startswith("runtime.optimizer")


def _package(module: str) -> str:
    """`runtime.distribution` of `runtime.distribution.normal` (the runtime's subpackage or module)."""
    return ".".join(module.split(".")[:2])


def _glue_over_own_objects(fn: Any, args: list[Variable]) -> bool:
    """Whether a runtime function is given an object of a class of its own subpackage (a distribution's
    helpers given the distribution): no tensor op takes such an object, so the function is the library's
    Python glue, inlined. Other objects (a NumPy array, a place) leave the call to break as before:
    inlining the library's internals would break in them instead."""
    package = _package(fn.__module__)
    return package != "runtime" and any(isinstance(a, InstanceVariable) and _package(type(a.value).__module__) ==
                                        package for a in args)


def _reads_or_sets_state(fn: Any) -> bool:
    """Whether a runtime public function is about the runtime's state rather than a computation."""
    return fn.__module__ in _STATE_MODULES and fn.__name__ not in _STATE_FREE


class CallMixin:
    """CALL / CALL_FUNCTION_EX and the call dispatch builtins share (part of OpcodeExecutor)."""

    def call(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable], direct: bool = False) -> Variable:
        """Simulate `fn(*args, **kwargs)`: record tensor work, inline Python code, fold builtins.
        `direct`: the call is the current CALL instruction's own, so what an inlined callee returns is
        what the instruction pushes (a break inside the callee can resume inside it)."""
        if isinstance(fn, ContainerMethodVariable):
            return self.container_method(fn.name, *args, **kwargs)
        if isinstance(fn, TensorMethodVariable):
            self_var, *rest = args
            return self._record_method(fn.name, self_var, rest, kwargs)
        if isinstance(fn, BoundMethodVariable):
            return self.call(fn.function, [fn.receiver, *args], kwargs, direct)
        if isinstance(fn, PartialVariable):  # functools.partial made in the frame (see stdlib)
            return self.call(*partial_call(self, fn, args, kwargs), direct)
        if isinstance(fn, ObjectVariable) and (breaks_on(fn.value) or is_skipped(fn.value)):
            self.unsupported(f"calls {shown(fn)}, which is on the block list (sot.skip_function / "
                             "sot.graph_break_on)", "SOT-B004")
        made = self.context_call(fn, args, kwargs)  # no_grad(), is_grad_enabled(), contextlib's, a with's exit
        if made is not None:
            return made
        if isinstance(fn, ObjectVariable) and is_runtime_api(fn.value):
            if _reads_or_sets_state(fn.value):
                return self._runtime_state_call(fn.value, args, kwargs)
            if isinstance(fn, FunctionVariable) and _glue_over_own_objects(fn.value, [*args, *kwargs.values()]):
                return self.inline(fn, args, kwargs, direct)
            if fn.value.__name__.endswith("_"):
                raise InPlaceUpdate("CALL", self.where(),
                                    f"calls {fn.value.__name__}, which changes its argument in place")
            if fn.value is runtime.arange:
                ranged = arange_over_sizes(self, args, kwargs)
                if ranged is not None:
                    return ranged
            args = sized_arguments(self, fn.value.__name__, args, kwargs)
            pos, kw = call_arguments(self, fn.value, args, kwargs)
            if not any(isinstance(a, (Symbol, Tensor)) for a in tree_leaves((pos, kw))):
                self._creation_place(kw)
            with self.recording():
                result = self.from_result(self.builder.call_api(fn.value, pos, kw,
                                                                allow_dynamic_shape=allows_dynamic_shape(fn.value)))
            record_forms(self, fn.value, fn.value.__name__, args, kwargs, result)
            return result
        if isinstance(fn, ObjectVariable) and is_to_static_wrapper(fn.value):  # inline what it wraps
            return self.call(self.wrap(fn.value.__wrapped__, GetAttrTracker(fn.tracker, "__wrapped__")), args, kwargs,
                             direct)
        if isinstance(fn, FunctionVariable) and is_optimizer_code(fn.value):
            self.unsupported(f"calls {fn.value.__qualname__}, which updates parameters and gradients in place: it runs "
                             "for real",
                             "SOT-B003")
        if isinstance(fn, FunctionVariable):
            try:
                return self.inline(fn, args, kwargs, direct)
            except Unsupported as e:
                if getattr(e, "unwind_to", None) == self.depth + 1:  # the recursion's first call: it breaks here
                    e.breakable, e.unwind_to = True, None
                raise
        if isinstance(fn, InstanceVariable):
            method = self.load_attr(fn, "__call__")
            if not isinstance(method, (BoundMethodVariable, FunctionVariable)):
                self.unsupported(f"calls {shown(fn)}, whose __call__ is not Python code sot can trace")
            return self.call(method, args, kwargs, direct)
        if isinstance(fn, ObjectVariable) and isinstance(fn.value, type) and issubclass(fn.value, BaseException):
            return self.make_exception(fn.value, args, kwargs)
        if isinstance(fn, ObjectVariable):
            builtin = builtin_of(fn.value)
            if builtin is not None:
                return builtin(self, args, kwargs)
            if any(fn.value is reader and (n is None or len(args) < n) for reader, n in _FRAME_READERS):
                raise ReadsFrames("CALL", self.where(), f"calls {shown(fn)}, which reads its caller's frame")
            if isinstance(fn.value, type):
                return self.construct(fn, args, kwargs)
        self.unsupported(f"calls {shown(fn)}, which sot cannot trace{kind_of_callee(fn)}", "SOT-B003")

    def _runtime_state_call(self, fn: Any, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        """A query of the runtime's state, read now and guarded; a call that changes it breaks the graph."""
        name = fn.__name__
        if name in _STATE_QUERIES and not args and not kwargs and getattr(runtime, name, None) is fn:
            return self.wrap(fn(), ExpressionTracker(expression(f"__import__('runtime').{name}()")))
        self.unsupported(f"calls runtime.{name}, which reads or changes the runtime's global state: it runs for real",
                         "SOT-S001")

    def _creation_place(self, kwargs: dict) -> None:
        """A call reading no tensor makes its tensors of the default dtype unless told otherwise (`paddle.ones`,
        `to_tensor(1.5)`, random ops): the default dtype is guarded. It makes them on the `place` it names, else
        on the default place: where a GPU can exist, the default place is guarded and must be the graph's place
        (see `on_place`)."""
        self._runtime_state_call(runtime.get_default_dtype, [], {})
        if not runtime.is_compiled_with_cuda():
            return
        place = kwargs.get("place")
        if place is None:
            self._runtime_state_call(runtime.get_device, [], {})
        self.on_place(runtime.place.to_place(place), made=True)

    def too_deep(self, fn: FunctionVariable) -> None:
        """An inline call nested deeper than MAX_INLINE_DEPTH cannot be simulated. A recursion that deep
        runs for real from its first call, one Python frame per level as eagerly, so it reaches the
        recursion limit where eager code does (inlined levels have no frame of their own): the error
        passes through the frames inlined since as one they cannot break on, up to that call."""
        chain = [self]
        while chain[-1].parent is not None:
            chain.append(chain[-1].parent)
        owners = [frame for frame in chain if frame.code is fn.code]
        if not owners:
            self.unsupported(f"makes calls nested deeper than {MAX_INLINE_DEPTH}, which sot does not inline")
        error = Unsupported(self.current.opname, self.where(), f"recurses into {fn.code.co_qualname} deeper than "
                            f"{MAX_INLINE_DEPTH} inlined calls: the recursion runs for real from its first call "
                            "(one frame per level, as eagerly: the recursion limit applies as it does eagerly)", "SOT-B003")
        error.breakable = False
        error.unwind_to = max(owners[-1].depth, 1)  # the outermost call of its code (the translated frame's: the first)
        raise error

    def _record_method(self, name: str, self_var: Variable, args: list[Variable], kwargs: dict) -> Variable:
        """A Tensor method call, recorded as call_method; an in-place one (`add_`) updates a tensor the
        frame made as its out-of-place twin (`add`) would, anything else that mutates cannot be captured."""
        if name in _AUTOGRAD_METHODS:
            self.unsupported(f"calls Tensor.{name}, which runs autograd for real", "SOT-B003")
        if name == "detach_" and isinstance(self_var, TensorVariable) and not args and not kwargs:
            return self.detach_in_place(self_var)
        if _mutates(name):
            twin = name[:-1]
            if not (isinstance(self_var, TensorVariable) and name.endswith("_") and callable(getattr(Tensor, twin,
                                                                                                      None))):
                raise InPlaceUpdate("CALL", self.where(),
                                    f"calls Tensor.{name}, which changes a tensor in place (a side effect)")
            return self.update_in_place(self_var, lambda: self._record_method(twin, self_var, args, kwargs))
        if name in ("cpu", "cuda"):
            return self._device_move(name, self_var, args, kwargs)
        self_sym = self.as_arg(self_var)
        method = getattr(Tensor, name, None)
        if breaks_on(method):
            self.unsupported(f"calls Tensor.{name}, which is on the block list (sot.graph_break_on)", "SOT-B004")
        args = sized_arguments(self, name, [self_var, *args], kwargs)[1:]
        pos, kw = call_arguments(self, method, args, kwargs, method=True)
        with self.recording():
            result = self.from_result(self.builder.call_method(
                name, self_sym, pos, kw, allow_dynamic_shape=allows_dynamic_shape(method) or name.startswith("__")))
        record_forms(self, method, name, [self_var, *args], kwargs, result)
        return result

    def _device_move(self, name: str, self_var: Variable, args: list[Variable], kwargs: dict) -> Variable:
        """`t.cpu()` where no GPU can exist is `t` itself (runtime returns the tensor unchanged), guarded on
        that; a graph records no device moves, so any other `cpu()` / `cuda()` breaks and runs for real."""
        if name == "cpu" and not args and not kwargs and isinstance(self_var, TensorVariable):
            has_gpu = self._runtime_state_call(runtime.is_compiled_with_cuda, [], {})
            if has_gpu.value is False:
                return self_var
        self.unsupported(f"calls Tensor.{name}, which moves a tensor between devices: it runs for real", "SOT-B003")

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """A recorded call the SIR cannot hold becomes Unsupported with its reason code."""
        try:
            yield
        except NeedsTensorValue as e:
            self.unsupported("reads a tensor's value into Python", "SOT-B002")
        except WritesSymbol as e:
            self.unsupported("changes a tensor the function already computed in place", "SOT-S001")
        except DynamicShapeOp as e:
            self.unsupported("makes a tensor whose shape depends on tensor values", "SOT-B005")

    @handles("CALL")
    def _call(self, ins: Instruction) -> None:
        args = self.pop(ins.arg)
        first, second = self.pop(2)
        if first is NULL:
            fn = second
        elif second is NULL:
            fn = first
        else:
            fn, args = first, [second, *args]
        n_kw = len(ins.kwnames)
        kwargs = dict(zip(ins.kwnames, args[len(args) - n_kw:]))
        self.stack.append(self.call(fn, args[:len(args) - n_kw], kwargs, direct=True))

    @handles("CALL_FUNCTION_EX")
    def _call_function_ex(self, ins: Instruction) -> None:
        kwargs = self.stack.pop() if ins.arg & 1 else DictVariable({})
        args = self.stack.pop()
        first, second = self.pop(2)
        fn = second if first is NULL else first
        if not isinstance(kwargs, DictVariable) or not all(isinstance(k, str) for k in kwargs.items):
            self.unsupported(f"passes **{shown(kwargs)} as keyword arguments, which sot cannot translate yet")
        self.stack.append(self.call(fn, self.elements(args), kwargs.items, direct=True))
