"""`paddle.tensor.create_array` / `array_write` / `array_read` / `array_length` with Paddle's dygraph
semantics: a tensor array is a Python list, indexed by one-element int tensors.

Static programs have no tensor-array variables here: in static mode the index has no value at build
time, so writing or reading raises static mode's TypeError for reading a Variable's value (the JIT
breaks the graph there and runs the call for real) instead of building a wrong program."""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor

__all__ = ["create_array", "array_write", "array_read", "array_length"]


def create_array(dtype: Any, initialized_list: list | tuple | None = None) -> list:
    """A new tensor array (a list), optionally holding the tensors of `initialized_list`."""
    if initialized_list is None:
        return []
    if not isinstance(initialized_list, (list, tuple)):
        raise TypeError(f"create_array: argument 'initialized_list' must be a list or tuple, got "
                        f"{type(initialized_list).__name__}")
    for value in initialized_list:
        if not isinstance(value, Tensor):
            raise TypeError(f"create_array: every value in 'initialized_list' must be a Tensor, got "
                            f"{type(value).__name__}")
    return list(initialized_list)


def _position(api: str, i: Any) -> int:
    """The Python int in the one-element index tensor `i` (Paddle asserts on anything else)."""
    if not isinstance(i, Tensor):
        raise AssertionError(f"{api}: argument 'i' must be a Tensor in dygraph mode, got {type(i).__name__}")
    if list(i.shape) != [1]:
        raise AssertionError(f"{api}: argument 'i' must have shape [1], got {list(i.shape)}")
    try:
        return int(i.item())
    except TypeError as e:  # a static Variable: no value until the program runs
        e.add_note(f"{api}: a tensor array is a Python list indexed by the value of 'i'; static programs "
                   "cannot hold one")
        raise


def _require_list(api: str, array: Any) -> None:
    if not isinstance(array, list):
        raise AssertionError(f"{api}: argument 'array' must be a list in dygraph mode, got "
                             f"{type(array).__name__}")


def array_write(x: Tensor, i: Tensor, array: list | None = None) -> list:
    """Store `x` at position `i` of `array` (a new array when None), appending when `i` is its
    length; returns the array itself, changed in place."""
    position = _position("array_write", i)
    if not isinstance(x, Tensor):
        raise AssertionError(f"array_write: argument 'x' must be a Tensor in dygraph mode, got "
                             f"{type(x).__name__}")
    if array is None:
        array = []
    _require_list("array_write", array)
    if not 0 <= position <= len(array):
        raise AssertionError(f"array_write: argument 'i' ({position}) must be in [0, {len(array)}], the "
                             "length of 'array'")
    if position < len(array):
        array[position] = x
    else:
        array.append(x)
    return array


def array_read(array: list, i: Tensor) -> Any:
    """The element at position `i` of `array`."""
    _require_list("array_read", array)
    return array[_position("array_read", i)]


def array_length(array: list) -> int:
    """The number of elements of `array` (a Python int, as in Paddle's dygraph mode)."""
    _require_list("array_length", array)
    return len(array)
