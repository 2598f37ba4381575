"""`paddle.jit.to_static` and its switches, over whichever JIT backend is registered (backend.py).

`to_static` returns a `StaticFunction` (a Layer keeps its identity: its `forward` becomes one). A
call runs the backend's compiled callable, or the plain function while `enable_to_static(False)`
holds or the thread is in static mode (building a Program, e.g. for `paddle.jit.save`); with no backend at all, `to_static` warns once and returns the function unchanged, since
running eagerly always gives the eager result.
"""
from __future__ import annotations

import functools
import types
import warnings
from typing import Any, Callable

from .. import mode as _mode
from ..nn import Layer
from ..static import InputSpec
from .backend import JitBackend, current_backend, mark_ignored_module, mark_not_to_static
from .input_specs import SpecBinding, check_input_spec, shapes_of_call

__all__ = ["to_static", "not_to_static", "enable_to_static", "ignore_module", "StaticFunction"]

# Paddle's backend names; every one runs on the registered JIT's interpreter (there is no CINN here)
_BACKENDS = ("cinn", "pcc", "interpreter")
_KNOWN_OPTIONS = ("property",)   # accepted for Paddle's signature; a property is compiled like any method


class _Switch:
    enabled = True   # enable_to_static's global switch (all threads, as Paddle's)
    warned_no_backend = False


def enable_to_static(enable_to_static_bool: bool) -> None:
    """Turn compiling on or off for every to_static function (off: they run eagerly), in all threads."""
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(f"enable_to_static: argument 'enable_to_static_bool' must be a bool, "
                        f"got {type(enable_to_static_bool).__name__}")
    _Switch.enabled = enable_to_static_bool


class StaticFunction:
    """A function compiled by the JIT backend; it binds as a method like the function it wraps.

    `input_spec` is what `to_static` was given; `last_call_shapes` the (shape, dtype) of each
    positional tensor argument of the last compiled call (what `paddle.jit.save` exports when it is
    given no spec). The backend's wrapper attributes are copied here, so a backend that recognises
    its own wrappers inside compiled code (and compiles `__wrapped__` in line) recognises this one."""

    def __init__(self, function: types.FunctionType, backend: JitBackend, full_graph: bool,
                 input_spec: tuple[InputSpec | None, ...] | None, skips_self: bool):
        functools.update_wrapper(self, function)
        self._binding = None if input_spec is None else SpecBinding(function, input_spec, skips_self)
        self._compiled = backend.compile(function, full_graph, {} if self._binding is None else self._binding.by_name)
        self.__dict__.update({k: v for k, v in getattr(self._compiled, "__dict__", {}).items() if k != "__wrapped__"})
        self._function = function
        self._backend = backend
        self._offset = 1 if skips_self else 0
        self.input_spec = input_spec
        self.last_call_shapes: list | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _Switch.enabled or _mode.hooks.static:   # static mode builds ops from the plain code (as Paddle)
            return self._function(*args, **kwargs)
        if self._binding is not None:
            self._binding.check(args, kwargs)
        self.last_call_shapes = shapes_of_call(args, self._offset)
        return self._compiled(*args, **kwargs)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<StaticFunction {self._function.__qualname__} on {self._backend.name}>"


def _is_defined_in_class(function: types.FunctionType) -> bool:
    """Whether `function` was defined in a class body (`Net.forward`), so its first argument is `self`
    and input_spec describes the arguments after it."""
    parts = function.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def _check_backend(backend: Any) -> None:
    if backend is not None and (not isinstance(backend, str) or backend.lower() not in _BACKENDS):
        raise ValueError(f"to_static: argument 'backend' must be None, 'CINN', 'PCC' or 'interpreter', "
                         f"got {backend!r}")


def _no_backend(what: str) -> None:
    if not _Switch.warned_no_backend:
        _Switch.warned_no_backend = True
        warnings.warn(f"paddle.jit.to_static: no JIT backend is registered, so {what} runs eagerly, unchanged. "
                      "`import sot` registers the sot JIT (an installed distribution can also provide one "
                      "through the 'runtime.jit_backends' entry point group)", UserWarning, stacklevel=4)


def to_static(function: Any = None, input_spec: Any = None, build_strategy: Any = None, backend: str | None = None,
              full_graph: bool = False, **kwargs: Any) -> Any:
    """Compile a function, a Layer (its forward, in place) or a bound method; usable as a decorator with
    or without arguments. `full_graph=True` raises where the code cannot be captured whole instead of
    running that part eagerly; `build_strategy` is accepted and ignored (one interpreter runs everything)."""
    unknown = sorted(set(kwargs) - set(_KNOWN_OPTIONS))
    if unknown:
        raise TypeError(f"to_static: unexpected keyword argument(s) {', '.join(unknown)}")
    _check_backend(backend)
    if not isinstance(full_graph, bool):
        raise TypeError(f"to_static: argument 'full_graph' must be a bool, got {type(full_graph).__name__}")
    specs = check_input_spec(input_spec)
    if function is None:
        return functools.partial(to_static, input_spec=input_spec, build_strategy=build_strategy, backend=backend,
                                 full_graph=full_graph, **kwargs)
    if isinstance(function, StaticFunction):
        return function
    if isinstance(function, Layer):
        return _layer_to_static(function, specs, full_graph)
    if isinstance(function, types.MethodType) and isinstance(function.__func__, (types.FunctionType, StaticFunction)):
        return types.MethodType(_compile(function.__func__, specs, full_graph, True), function.__self__)
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_static: argument 'function' must be a Python function, a method or an nn.Layer, "
                        f"got {type(function).__name__}")
    return _compile(function, specs, full_graph, _is_defined_in_class(function))


def _compile(function: Any, specs: tuple | None, full_graph: bool, skips_self: bool) -> Any:
    if isinstance(function, StaticFunction):
        return function
    jit = current_backend()
    if jit is None:
        _no_backend(function.__qualname__)
        return function
    return StaticFunction(function, jit, full_graph, specs, skips_self)


def _layer_to_static(layer: Layer, specs: tuple | None, full_graph: bool) -> Layer:
    """The same layer, its forward compiled (parameters, state_dict and train()/eval() stay its own)."""
    if isinstance(getattr(layer.forward, "__func__", None), StaticFunction):
        return layer
    forward = type(layer).forward
    if not isinstance(forward, types.FunctionType):
        raise TypeError(f"to_static: {type(layer).__name__}.forward is not a Python function")
    compiled = _compile(forward, specs, full_graph, True)
    if compiled is not forward:
        layer.forward = types.MethodType(compiled, layer)
    return layer


def not_to_static(func: Callable[..., Any] | None = None) -> Any:
    """Mark `func` never to be compiled, even when compiled code calls it (it runs eagerly there)."""
    if func is None:
        return not_to_static
    func = func._function if isinstance(func, StaticFunction) else func
    mark_not_to_static(func)
    return func


def ignore_module(modules: list[types.ModuleType]) -> None:
    """Run the functions of these modules eagerly whenever compiled code calls them."""
    if not isinstance(modules, (list, tuple)) or not all(isinstance(m, types.ModuleType) for m in modules):
        raise TypeError(f"ignore_module: argument 'modules' must be a list of modules, got {modules!r}")
    for module in modules:
        mark_ignored_module(module)
