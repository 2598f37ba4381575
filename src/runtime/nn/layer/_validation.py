"""Argument checks shared by the layer constructors (errors name the layer and the argument)."""
from __future__ import annotations

from typing import Any


def positive_int(layer: str, arg: str, value: Any, types: type | tuple[type, ...] = int) -> Any:
    """`value` unchanged if it is a positive int (an instance of `types`, bool excluded), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, types) or value <= 0:
        raise ValueError(f"{layer}: argument '{arg}' must be a positive int, got {value!r}")
    return value
