"""Calling real Python functions on values known at translation time, as the simulated builtins and
standard-library calls do: the real function runs on the real values, so its result is eager's, and
what it raises eager code raises (the frame runs eagerly). Arguments are bound as eager binds them.
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .dispatch import FrameRaises
from .variables import (CONSTANT_TYPES, ConstantVariable, InstanceVariable, ListVariable, NumpyScalarVariable,
                        TensorVariable, Variable, known_value)

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["Builtin", "NUMPY_FOLDABLE", "bind", "fold", "fold_numpy", "folded", "is_numpy_foldable", "real"]

Builtin = Callable[["OpcodeExecutor", list[Variable], dict[str, Variable]], Variable]


def fold(fn: Callable) -> Builtin:
    """`fn` applied to Python values known at translation time, folded into a constant."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        values = [ex.python_value(a) for a in args]
        return folded(ex, real(ex, fn, *values, **{k: ex.python_value(v) for k, v in kwargs.items()}))
    return call


def real(ex: "OpcodeExecutor", fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """The real function's result on real values; what it raises, eager code raises: the frame runs eagerly."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - any exception of the builtin is the user's, raised by eager code
        raise FrameRaises.of("CALL", ex.where(), e) from None


def folded(ex: "OpcodeExecutor", result: Any) -> Variable:
    """A folded builtin's result as a Variable (an enum member, `Mode(1)`, stays an object compared by identity)."""
    if isinstance(result, enum.Enum):
        return known_value(result)
    if not is_folded_value(result):
        ex.unsupported(f"calls a builtin returning a {type(result).__name__}, which sot cannot translate yet")
    if type(result) is list:  # a new mutable list (sorted): items the frame may append to
        return ListVariable([ConstantVariable(v) for v in result])
    return ConstantVariable(result)


# NumPy functions of numbers that give a NumPy scalar (`int(np.prod(x.shape[1:]))`, `np.sqrt(d)`)
NUMPY_FOLDABLE = frozenset(getattr(np, name) for name in (
    "prod", "sum", "mean", "max", "min", "sqrt", "ceil", "floor", "exp", "log", "log2", "log10", "abs", "maximum",
    "minimum", "round", "power"))


def is_numpy_foldable(fn: Any) -> bool:
    """Whether `fn` is one of `NUMPY_FOLDABLE` (an object read from the frame, hashable or not)."""
    try:
        return fn in NUMPY_FOLDABLE
    except TypeError:
        return False


def fold_numpy(fn: Callable) -> Builtin:
    """`fn` of `NUMPY_FOLDABLE` on Python values known at translation time, folded into its NumPy scalar
    (kept a NumPy scalar, of eager's type); one giving an array is not folded."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if any(isinstance(a, (InstanceVariable, TensorVariable)) for a in (*args, *kwargs.values())):
            ex.unsupported(f"calls numpy.{fn.__name__} on an array or a tensor (NumPy on values): it runs for real",
                           "SOT-B003")
        values = [ex.python_value(a) for a in args]
        result = real(ex, fn, *values, **{k: ex.python_value(v) for k, v in kwargs.items()})
        if isinstance(result, np.generic) and type(result.item()) in CONSTANT_TYPES:
            return NumpyScalarVariable(result)
        return folded(ex, result)
    return call


def is_folded_value(value: Any) -> bool:
    """Whether `value` is made only of constants a ConstantVariable holds."""
    if isinstance(value, (tuple, list)):
        return all(is_folded_value(v) for v in value)
    return type(value) in CONSTANT_TYPES or isinstance(value, (range, slice))


def bind(ex: "OpcodeExecutor", name: str, args: list[Variable], kwargs: dict[str, Variable],
         params: tuple[str, ...], defaults: dict[str, Variable], positional: int = 0) -> dict[str, Variable]:
    """The arguments of a builtin with these parameters (the first `positional` positional-only), as
    eager binds them; a call eager code rejects (TypeError) makes the frame run eagerly."""
    if len(args) > len(params) or set(kwargs) & set(params[:positional]):
        ex.raises(f"{name}() takes at most {len(params)} arguments ({len(args)} given)")
    bound = dict(zip(params, args))
    for key, value in kwargs.items():
        if key not in params or key in bound:
            ex.raises(f"{name}() got an unexpected or repeated keyword argument {key!r}")
        bound[key] = value
    missing = [p for p in params if p not in bound and p not in defaults]
    if missing:
        ex.raises(f"{name}() missing required argument {missing[0]!r}")
    return {**defaults, **bound}
