"""`paddle.tensor` as a namespace: Paddle model code calls `paddle.tensor.matmul`,
`paddle.tensor.create_array` and imports `paddle.tensor.math` / `manipulation` / `creation` / ...

`runtime.tensor` is the Tensor data structure's module, the lowest layer, which imports no op. So
this package, which sits above the ops, gives that module a module-level `__getattr__` (PEP 562)
when `runtime` is imported: a name the module lacks is looked up among the submodules here and the
functions they hold (the same objects as the top-level `runtime.<name>`), and each submodule is in
sys.modules as `runtime.tensor.<name>`, so `import runtime.tensor.math` works. A module's
`__getattr__` serves attribute access and `from ... import` only, never the module's own global
lookups, so names like `any` or `max` never shadow the builtins inside runtime/tensor.py."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Callable

from .. import tensor as _tensor
from . import array, attribute, creation, linalg, logic, manipulation, math, random, search, stat

__all__ = ["SUBMODULES", "install"]

SUBMODULES: dict[str, ModuleType] = {
    "array": array, "attribute": attribute, "creation": creation, "linalg": linalg, "logic": logic,
    "manipulation": manipulation, "math": math, "random": random, "search": search, "stat": stat}


def _namespace() -> dict[str, Any]:
    names: dict[str, Any] = dict(SUBMODULES)
    for module in SUBMODULES.values():
        names.update((fn, getattr(module, fn)) for fn in module.__all__)
    return names


def _lookup(module_name: str, names: dict[str, Any]) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        try:
            return names[name]
        except KeyError:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}") from None
    return __getattr__


def install(target: ModuleType = _tensor) -> None:
    """Serve the paddle.tensor namespace from `target` (see the module docstring)."""
    if "__getattr__" in vars(target):
        raise RuntimeError(f"{target.__name__} already defines __getattr__; the paddle.tensor namespace "
                           "would replace it")
    names = _namespace()
    for sub, module in SUBMODULES.items():
        sys.modules[f"{target.__name__}.{sub}"] = module
    target.__getattr__ = _lookup(target.__name__, names)


install()
