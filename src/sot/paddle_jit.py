"""sot as the JIT of `paddle.jit` (runtime.jit): registered when `sot` is imported, and found through
the `runtime.jit_backends` entry point when it is not (pyproject.toml)."""
from __future__ import annotations

import types
from typing import Any, Callable, Mapping

from runtime.jit import register_backend
from runtime.static import InputSpec

from .api import not_to_static, to_static
from .dynamic.shapes import policy_of
from .guards.source import F_LOCALS
from .opcode_executor.blocklist import skip_function

__all__ = ["BACKEND"]


class SotBackend:
    """`paddle.jit.to_static(full_graph=True)` is `sot.to_static(fallback=False)`: a graph break raises
    `sot.GraphBreakError` before any of the frame runs. An InputSpec's -1 dims become dynamic dims of
    the function's shape policy for that parameter and rank, as if a miss had taught them, so every
    translation leaves them free and a call pays nothing for them (a per-tensor `mark_dynamic` would)."""

    name = "sot"

    def compile(self, function: types.FunctionType, full_graph: bool,
                input_specs: Mapping[str, InputSpec]) -> Callable[..., Any]:
        policy = policy_of(function.__code__)
        for name, spec in input_specs.items():
            dims = {i for i, d in enumerate(spec.shape) if d == -1}
            if dims:
                policy.dynamic.setdefault((F_LOCALS.item(name).text, len(spec.shape)), set()).update(dims)
        return to_static(function, fallback=not full_graph)

    def not_to_static(self, function: Callable[..., Any]) -> None:
        not_to_static(function)

    def ignore_module(self, module: types.ModuleType) -> None:
        """Skip every function and method defined in `module` now (a name bound later is not covered)."""
        for value in list(vars(module).values()):
            for function in _defined_functions(value, module.__name__):
                skip_function(function)


def _defined_functions(value: Any, module_name: str) -> list[Callable[..., Any]]:
    if getattr(value, "__module__", None) != module_name:
        return []
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, type):
        return [v for v in vars(value).values() if isinstance(v, types.FunctionType)]
    return []


BACKEND = SotBackend()
register_backend(BACKEND)
