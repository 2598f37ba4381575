"""Placeholders for the `paddle.incubate` APIs runtime does not implement (fused GPU kernels,
graph sampling, distributed optimisers). Importing them works, so model files that import them at
the top and use them only on some configurations load; calling one raises NotImplementedError
naming the API, instead of an AttributeError somewhere inside the model."""
from __future__ import annotations

from typing import Any, Callable, NoReturn

__all__ = ["unsupported_function", "unsupported_class"]


def _message(qualname: str, hint: str) -> str:
    return f"{qualname} is not supported by runtime ({hint})"


def unsupported_function(qualname: str, hint: str) -> Callable[..., NoReturn]:
    """A function named like the Paddle API `qualname` that raises NotImplementedError when called."""
    def unsupported(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(_message(qualname, hint))

    unsupported.__name__ = unsupported.__qualname__ = qualname.rsplit(".", 1)[-1]
    unsupported.__doc__ = _message(qualname, hint)
    return unsupported


def unsupported_class(qualname: str, hint: str) -> type:
    """A class named like the Paddle API `qualname` whose construction raises NotImplementedError."""
    def __init__(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(_message(qualname, hint))

    name = qualname.rsplit(".", 1)[-1]
    return type(name, (), {"__init__": __init__, "__doc__": _message(qualname, hint), "__qualname__": name})
