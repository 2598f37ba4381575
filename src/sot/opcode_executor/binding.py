"""Binding a call's argument Variables to the parameters of the code it inlines.

`bind_arguments(code, args, kwargs, defaults, kwdefaults)` does what CPython does when it
starts a frame (positional, keyword-only, `*args`, `**kwargs`, defaults), on Variables, and
returns the frame's initial locals. A call eager code would reject raises `BindError` with
CPython's reason; the executor then runs the frame eagerly, so the user sees CPython's own
TypeError with its own wording.
"""
from __future__ import annotations

import inspect
import types

from .variables import DictVariable, TupleVariable, Variable

__all__ = ["BindError", "bind_arguments"]


class BindError(TypeError):
    """The arguments do not fit the parameters (eager code raises a TypeError)."""


def bind_arguments(code: types.CodeType, args: list[Variable], kwargs: dict[str, Variable],
                   defaults: tuple[Variable, ...], kwdefaults: dict[str, Variable]) -> dict[str, Variable]:
    """The initial locals of a frame of `code` called with `args` and `kwargs`."""
    n_pos, n_kwonly = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    positional, kwonly = names[:n_pos], names[n_pos:n_pos + n_kwonly]
    rest = iter(names[n_pos + n_kwonly:])
    star = next(rest) if code.co_flags & inspect.CO_VARARGS else None
    starstar = next(rest) if code.co_flags & inspect.CO_VARKEYWORDS else None
    name = code.co_qualname

    if len(args) > n_pos and star is None:
        raise BindError(f"{name}() takes {n_pos} positional arguments but {len(args)} were given")
    bound: dict[str, Variable] = dict(zip(positional, args))
    extra_kwargs: dict[str, Variable] = {}
    keywordable = set(positional[code.co_posonlyargcount:]) | set(kwonly)
    for key, value in kwargs.items():
        if key in keywordable:
            if key in bound:
                raise BindError(f"{name}() got multiple values for argument {key!r}")
            bound[key] = value
        elif starstar is not None:
            extra_kwargs[key] = value
        else:
            raise BindError(f"{name}() got an unexpected keyword argument {key!r}")
    for param, default in zip(positional[n_pos - len(defaults):], defaults):
        bound.setdefault(param, default)
    for param in kwonly:
        if param not in bound and param in kwdefaults:
            bound[param] = kwdefaults[param]
    missing = [p for p in (*positional, *kwonly) if p not in bound]
    if missing:
        raise BindError(f"{name}() missing required argument(s): {', '.join(map(repr, missing))}")
    if star is not None:
        bound[star] = TupleVariable(list(args[n_pos:]))
    if starstar is not None:
        bound[starstar] = DictVariable(extra_kwargs)
    return bound
