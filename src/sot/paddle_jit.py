"""sot as the JIT of `paddle.jit` (runtime.jit): registered when `sot` is imported, and found through
the `runtime.jit_backends` entry point when it is not (pyproject.toml)."""
from __future__ import annotations

import types
from typing import Any, Callable

from runtime.jit import register_backend
from runtime.tensor import Tensor

from .api import not_to_static, to_static
from .dynamic.shapes import mark_dynamic
from .opcode_executor.blocklist import skip_function

__all__ = ["BACKEND"]


class SotBackend:
    """`paddle.jit.to_static(full_graph=True)` is `sot.to_static(fallback=False)`: a graph break raises
    `sot.GraphBreakError` before any of the frame runs."""

    name = "sot"

    def compile(self, function: types.FunctionType, full_graph: bool) -> Callable[..., Any]:
        return to_static(function, fallback=not full_graph)

    def not_to_static(self, function: Callable[..., Any]) -> None:
        not_to_static(function)

    def mark_dynamic(self, tensor: Tensor, dim: int) -> None:
        mark_dynamic(tensor, dim)

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
