"""The JIT behind `paddle.jit.to_static`: one registered backend, found without importing it by name.

`runtime` never imports a JIT (the JIT imports `runtime`), so the JIT hands itself over: a backend
calls `register_backend` when it is imported (`import sot` does), and when none has registered,
`current_backend()` looks once through the `runtime.jit_backends` entry point group (declared by
an installed distribution's metadata: `[project.entry-points."runtime.jit_backends"]`) and loads
the first entry, by name. Marks made before any backend exists (`not_to_static`, `ignore_module`)
are kept and handed to the backend when it registers, so the order of imports does not matter.
"""
from __future__ import annotations

import importlib.metadata
import types
import warnings
import weakref
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

from ..static import InputSpec

__all__ = ["JitBackend", "ENTRY_POINT_GROUP", "register_backend", "current_backend", "mark_not_to_static",
           "mark_ignored_module"]

ENTRY_POINT_GROUP = "runtime.jit_backends"


@runtime_checkable
class JitBackend(Protocol):
    """What `paddle.jit` needs from a JIT."""

    name: str

    def compile(self, function: types.FunctionType, full_graph: bool,
                input_specs: Mapping[str, InputSpec]) -> Callable[..., Any]:
        """A callable computing what `function` computes. With `full_graph`, a function that
        cannot be captured whole must raise instead of running part of it eagerly. `input_specs`
        gives parameters' InputSpecs: their -1 dims should serve any size from the first call."""

    def not_to_static(self, function: Callable[..., Any]) -> None:
        """Never translate `function`, even when compiled code calls it."""

    def ignore_module(self, module: types.ModuleType) -> None:
        """Run the functions of `module` eagerly when compiled code calls them."""


class _Registry:
    backend: JitBackend | None = None
    searched = False  # the entry points were looked through (once per process)
    not_to_static: "weakref.WeakSet[Any]" = weakref.WeakSet()
    ignored_modules: list[types.ModuleType] = []


def register_backend(backend: JitBackend) -> None:
    """Make `backend` the JIT of `paddle.jit` and hand it the marks made so far (a later call replaces it)."""
    if not isinstance(backend, JitBackend):
        raise TypeError(f"register_backend: argument 'backend' must implement runtime.jit.JitBackend "
                        f"(name, compile, not_to_static, ignore_module), got {type(backend).__name__}")
    _Registry.backend = backend
    for function in list(_Registry.not_to_static):
        backend.not_to_static(function)
    for module in _Registry.ignored_modules:
        backend.ignore_module(module)


def current_backend() -> JitBackend | None:
    """The registered backend; if none, the first `runtime.jit_backends` entry point (looked up once)."""
    if _Registry.backend is None and not _Registry.searched:
        _Registry.searched = True
        _load_entry_point()
    return _Registry.backend


def _load_entry_point() -> None:
    for entry in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            backend = entry.load()  # importing the backend's module usually registers it already
        except Exception as e:  # a broken plugin must not break `import runtime`'s users: say so, run eagerly
            warnings.warn(f"paddle.jit: the JIT backend entry point {entry.name} = {entry.value} failed to load "
                          f"({type(e).__name__}: {e})", RuntimeWarning, stacklevel=4)
            continue
        if _Registry.backend is None:
            register_backend(backend)
        return


def mark_not_to_static(function: Callable[..., Any]) -> None:
    """Record `function` as never translated, now (if a backend exists) and for a backend registered later."""
    _Registry.not_to_static.add(function)
    backend = current_backend()
    if backend is not None:
        backend.not_to_static(function)


def mark_ignored_module(module: types.ModuleType) -> None:
    """Record `module` as run eagerly, now (if a backend exists) and for a backend registered later."""
    if module not in _Registry.ignored_modules:
        _Registry.ignored_modules.append(module)
    backend = current_backend()
    if backend is not None:
        backend.ignore_module(module)
