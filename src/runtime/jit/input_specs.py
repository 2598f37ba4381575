"""`input_spec` of `paddle.jit.to_static`: which call arguments it describes, and what it does to them.

The i-th spec describes the i-th parameter of the function (after `self` for a method). A spec
never changes a result: dims given as None/-1 are marked dynamic in the backend, so the first
translation already serves any size there; an argument that contradicts a spec (another rank, a
fixed dim of another size, another dtype) gets a warning naming the argument and runs as it is,
translated for what it really is (Paddle warns the same way and traces the real input).
"""
from __future__ import annotations

import inspect
import types
import warnings
from typing import Any, Sequence

from ..static import InputSpec
from ..tensor import Tensor
from .backend import JitBackend

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
        self.offset = 1 if skips_self else 0
        names = [p.name for p in params[self.offset:]]
        self.specs = [(i + self.offset, names[i] if i < len(names) else None, spec)
                      for i, spec in enumerate(specs) if spec is not None]
        self.qualname = function.__qualname__

    def apply(self, args: tuple, kwargs: dict, backend: JitBackend) -> None:
        """Mark the dynamic dims of the call's tensors; warn about a tensor contradicting its spec."""
        for position, name, spec in self.specs:
            value = args[position] if position < len(args) else kwargs.get(name)
            if not isinstance(value, Tensor):
                continue
            shape = value._data.shape
            problem = _contradiction(spec, shape, value._data.dtype)
            if problem:
                warnings.warn(f"to_static: argument '{name}' of {self.qualname} {problem} than its input_spec "
                              f"{spec}: it runs with its own shape and dtype", UserWarning, stacklevel=4)
                continue
            for dim, size in enumerate(spec.shape):
                if size == -1:
                    backend.mark_dynamic(value, dim)


def _contradiction(spec: InputSpec, shape: tuple[int, ...], dtype: Any) -> str:
    if len(shape) != len(spec.shape):
        return f"has rank {len(shape)} (shape {list(shape)}), other"
    if any(want not in (-1, got) for want, got in zip(spec.shape, shape)):
        return f"has shape {list(shape)}, other"
    if dtype != spec.dtype.np_dtype:
        return f"has dtype {dtype}, other"
    return ""


def shapes_of_call(args: tuple, offset: int) -> tuple[tuple[tuple[int, ...], Any] | None, ...]:
    """(shape, NumPy dtype) of each positional argument after `offset` that is a tensor (None for
    others): what `paddle.jit.save` exports when given no input_spec. Cheap, as every call records it."""
    return tuple((v._data.shape, v._data.dtype) if isinstance(v, Tensor) else None for v in args[offset:])
