"""`input_spec` of `paddle.jit.to_static`: which call arguments it describes, and what it does to them.

The i-th spec describes the i-th parameter of the function (after `self` for a method). A spec
never changes a result: the backend is told each parameter's spec when it compiles, so dims given
as None/-1 are dynamic from the first translation on; an argument that contradicts a spec (another
rank, a fixed dim of another size, another dtype) gets a warning naming the argument and runs as
it is, translated for what it really is (Paddle warns the same way and traces the real input).
"""
from __future__ import annotations

import inspect
import types
import warnings
from typing import Any, Sequence

from ..static import InputSpec
from ..tensor import Tensor

__all__ = ["SpecBinding", "check_input_spec", "shapes_of_call"]


def check_input_spec(input_spec: Any) -> tuple[InputSpec | None, ...] | None:
    """`input_spec` as a tuple (None: none given); only InputSpec items describe tensors."""
    if input_spec is None:
        return None
    if not isinstance(input_spec, (list, tuple)):
        raise TypeError(f"to_static: argument 'input_spec' must be a list or tuple of InputSpec, "
                        f"got {type(input_spec).__name__}")
    return tuple(s if isinstance(s, InputSpec) else None for s in input_spec)


class SpecBinding:
    """The specs of one function, bound to its parameter names (for arguments passed by keyword)."""

    def __init__(self, function: types.FunctionType, specs: Sequence[InputSpec | None], skips_self: bool):
        params = [p for p in inspect.signature(function).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        offset = 1 if skips_self else 0
        names = [p.name for p in params[offset:]]
        bound = [(i + offset, names[i] if i < len(names) else None, spec) for i, spec in enumerate(specs)
                 if spec is not None]
        self.by_name = {name: spec for _, name, spec in bound if name is not None}   # what the backend is told
        # per spec: where its argument is, and what a call must match (rank, dtype, the dims not -1)
        self._checks = [(position, name, spec, len(spec.shape), spec.dtype.np_dtype,
                         tuple((i, d) for i, d in enumerate(spec.shape) if d != -1)) for position, name, spec in bound]
        self.qualname = function.__qualname__

    def check(self, args: tuple, kwargs: dict) -> None:
        """Warn about each tensor argument that contradicts its spec (called on every call: kept cheap)."""
        for position, name, spec, rank, dtype, fixed in self._checks:
            value = args[position] if position < len(args) else kwargs.get(name)
            if isinstance(value, Tensor):
                data = value._data
                shape = data.shape
                if len(shape) != rank or data.dtype != dtype or any(shape[i] != d for i, d in fixed):
                    warnings.warn(f"to_static: argument '{name}' of {self.qualname} {_contradiction(spec, data)} "
                                  f"than its input_spec {spec}: it runs with its own shape and dtype",
                                  UserWarning, stacklevel=4)


def _contradiction(spec: InputSpec, data: Any) -> str:
    if len(data.shape) != len(spec.shape):
        return f"has rank {len(data.shape)} (shape {list(data.shape)}), other"
    if data.dtype != spec.dtype.np_dtype:
        return f"has dtype {data.dtype}, other"
    return f"has shape {list(data.shape)}, other"


def shapes_of_call(args: tuple, offset: int) -> list[tuple[tuple[int, ...], Any] | None]:
    """(shape, NumPy dtype) of each positional argument after `offset` that is a tensor (None for
    others): what `paddle.jit.save` exports when given no input_spec. Cheap, as every call records it."""
    return [(v._data.shape, v._data.dtype) if isinstance(v, Tensor) else None for v in args[offset:]]
