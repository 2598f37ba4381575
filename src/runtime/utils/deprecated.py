"""paddle.utils.deprecated: mark an API deprecated, with Paddle's levels (0 silent, 1 warn, 2 raise).

runtime implements the newest Paddle API, so a deprecation `since` any version applies: level 1
warns on every call, whatever `since` says."""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["deprecated", "VisibleDeprecationWarning"]

_F = TypeVar("_F", bound=Callable[..., Any])


class VisibleDeprecationWarning(UserWarning):
    """Shown by default, unlike DeprecationWarning outside __main__ (PEP 565)."""


def deprecated(update_to: str = "", since: str = "", reason: str = "", level: int = 0) -> Callable[[_F], _F]:
    """A decorator that notes the deprecation in the docstring and warns (level 1) or raises (level 2)."""
    for name, value in (("update_to", update_to), ("since", since), ("reason", reason)):
        if not isinstance(value, str):
            raise TypeError(f'type of "{name}" must be str.')
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < 3:
        raise ValueError(f'type of "level" must be int and must be one of 0, 1, 2. But received: {level}.')
    if update_to.strip() and not update_to.strip().startswith("paddle."):
        raise ValueError(f'Argument update_to must start with "paddle.", your value is "{update_to}"')

    def decorator(func: _F) -> _F:
        msg = f'API "{func.__module__}.{func.__name__}" is deprecated'
        if since.strip():
            msg += f" since {since.strip()}"
        msg += ", and will be removed in future versions."
        if update_to.strip():
            msg += f' Please use "{update_to.strip()}" instead.'
        if reason.strip():
            msg += f"\n    Reason: {reason.strip()}"
        if func.__doc__:
            func.__doc__ = "\n\nWarning:\n    " + msg + "\n\n" + inspect.cleandoc(func.__doc__)
        if level == 0:
            return func

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if level == 2:
                raise RuntimeError(f'API "{func.__module__}.{func.__name__}" has been deprecated.')
            warnings.warn(f"\nWarning:\n{msg} ", category=VisibleDeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorator
