"""`assert_same(fn, *inputs)`: the JIT must behave exactly like eager code (public: users test their models).

Runs `fn` eagerly (under `sot.disable()`) and under `sot.to_static`, each on deep copies of the
inputs and starting from the same values of the globals `fn`'s code names, and compares with a
clear `AssertionError` naming the first difference: the returned value (tensors exactly: dtype,
shape, stop_gradient, values; containers recursively; types), or the raised exception (type and
message), and with `check_side_effects` the inputs after the call (list/dict/object mutations) and
the globals touched. The globals are left as the JIT run left them. `bisect(fn, *args)` (from
`sot.tools.bisect`) names the smallest compiled subgraph whose result differs from eager.
"""
from __future__ import annotations

import copy
import types
from typing import Any, Callable

import numpy as np

from runtime import Tensor

from .api import disable, to_static
from .tools.bisect import bisect

__all__ = ["assert_same", "bisect"]

_MISSING = object()


def assert_same(fn: Callable, *inputs: Any, check_side_effects: bool = True) -> Any:
    """Fail unless `to_static(fn)` matches eager `fn` in result, exception and side effects; returns the result."""
    eager_fn = fn.__wrapped__ if hasattr(fn, "sot_translator") else fn
    jit_fn = fn if hasattr(fn, "sot_translator") else to_static(fn)
    names = _global_names(getattr(eager_fn, "__code__", None))
    module = getattr(eager_fn, "__globals__", {})
    before = _snapshot(module, names)

    eager_in = copy.deepcopy(inputs)
    with disable():
        eager_out, eager_exc = _call(eager_fn, eager_in)
    eager_globals = _snapshot(module, names)
    _restore(module, names, before)

    jit_in = copy.deepcopy(inputs)
    jit_out, jit_exc = _call(jit_fn, jit_in)
    jit_globals = _snapshot(module, names)

    name = getattr(eager_fn, "__qualname__", repr(eager_fn))
    if (eager_exc is None) != (jit_exc is None):
        raise AssertionError(f"{name}: eager {_outcome(eager_out, eager_exc)} but JIT {_outcome(jit_out, jit_exc)}")
    if eager_exc is not None:
        if type(eager_exc) is not type(jit_exc) or str(eager_exc) != str(jit_exc):
            raise AssertionError(f"{name}: eager raised {eager_exc!r} but JIT raised {jit_exc!r}")
    else:
        _compare(jit_out, eager_out, f"{name}: result")
    if check_side_effects:
        _compare(jit_in, eager_in, f"{name}: inputs after the call")
        for g in sorted(set(eager_globals) | set(jit_globals)):
            _compare(jit_globals.get(g, _MISSING), eager_globals.get(g, _MISSING), f"{name}: global {g!r}")
    return jit_out


def _call(fn: Callable, inputs: tuple) -> tuple[Any, BaseException | None]:
    try:
        return fn(*inputs), None
    except Exception as e:  # noqa: BLE001 - the exception is part of the behaviour compared
        return None, e


def _outcome(out: Any, exc: BaseException | None) -> str:
    return f"raised {exc!r}" if exc is not None else f"returned {_short(out)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."


def _global_names(code: types.CodeType | None) -> set[str]:
    """The names a code object (and the code objects nested in it) may read or write as globals."""
    if code is None:
        return set()
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _is_data(value: Any) -> bool:
    """Values compared and restored as state; modules, functions and classes are code, not state."""
    return not isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
                                  types.MethodType))


def _snapshot(module: dict, names: set[str]) -> dict[str, Any]:
    """Deep copies of the data globals among `names` (absent ones left out)."""
    out = {}
    for n in names:
        value = module.get(n, _MISSING)
        if value is not _MISSING and _is_data(value):
            try:
                out[n] = copy.deepcopy(value)
            except Exception:  # noqa: BLE001 - an uncopyable global is compared by identity
                out[n] = value
    return out


def _restore(module: dict, names: set[str], snapshot: dict[str, Any]) -> None:
    """Put the globals back as they were before the eager run (fresh copies; new ones removed)."""
    for n in names:
        if n not in snapshot and n in module and _is_data(module[n]):
            del module[n]
    for n, value in snapshot.items():
        try:
            module[n] = copy.deepcopy(value)
        except Exception:  # noqa: BLE001
            module[n] = value


def _compare(got: Any, want: Any, where: str) -> None:
    """Raise AssertionError at the first difference between the JIT's `got` and eager's `want`."""
    if type(got) is not type(want):
        raise AssertionError(f"{where}: JIT gave {type(got).__name__} {_short(got)}, "
                             f"eager {type(want).__name__} {_short(want)}")
    if isinstance(want, Tensor):
        for attr in ("dtype", "shape", "stop_gradient"):
            if getattr(got, attr) != getattr(want, attr):
                raise AssertionError(f"{where}: tensor {attr} {getattr(got, attr)} (JIT) != {getattr(want, attr)} (eager)")
        _arrays(got.numpy(), want.numpy(), where)
    elif isinstance(want, np.ndarray):
        _arrays(got, want, where)
    elif isinstance(want, (list, tuple)):
        if len(got) != len(want):
            raise AssertionError(f"{where}: length {len(got)} (JIT) != {len(want)} (eager)")
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        if list(got) != list(want):
            raise AssertionError(f"{where}: keys {list(got)} (JIT) != {list(want)} (eager)")
        for k in want:
            _compare(got[k], want[k], f"{where}[{k!r}]")
    elif want is _MISSING or not _is_data(want):
        if got is not want:
            raise AssertionError(f"{where}: JIT {_short(got)} is not eager {_short(want)}")
    elif hasattr(want, "__dict__") and type(want).__eq__ is object.__eq__:
        _compare(vars(got), vars(want), f"{where}.__dict__")
    else:
        equal = got == want or (isinstance(want, float) and want != want and got != got)
        if not equal:
            raise AssertionError(f"{where}: JIT {_short(got)} != eager {_short(want)}")


def _arrays(got: np.ndarray, want: np.ndarray, where: str) -> None:
    try:
        np.testing.assert_array_equal(got, want, strict=True)
    except AssertionError as e:
        raise AssertionError(f"{where}: values differ (JIT vs eager)\n{e}") from None
