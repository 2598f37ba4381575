"""The translators a graph break makes: of its resume functions, and of callees run as frames of their own.

The code after a break runs in resume functions; a callee that cannot be resumed inside runs for
real, translated as a frame of its own. Each is called through a `CallWithCallback` whose callback
is a child translator of the breaking frame's (reports and `explain` walk `children`). They are
made once per resume code and globals, or per function: a break met again (a loop's next
iteration, the next call) reuses its translator and that translator's cache.
"""
from __future__ import annotations

import types
import weakref
from typing import TYPE_CHECKING, Any, Callable

from sot.codegen.break_code import NeedsClosure
from sot.codegen.resume_code import CodeMap
from sot.hook.eval_frame import CallWithCallback

if TYPE_CHECKING:
    from sot.translation.translator import Translator

__all__ = ["resume_function", "translated_callee", "as_it_is"]

_RESUME_TRANSLATORS = CodeMap()  # resume code -> (its globals, a weak reference to its translator)
_TRANSLATED: "weakref.WeakKeyDictionary[types.FunctionType, Any]" = weakref.WeakKeyDictionary()
_SHARED_CODE_CACHE_LIMIT = 64  # entries for a callee translated on its own at a break, or a loop's body


def resume_function(parent: Translator, code: types.CodeType, f_globals: dict, eager: bool = False,
                    shared: bool = False) -> Callable:
    """A resume function, translated when it runs (its translator, of the parent's class, is a child of
    `parent`). `eager`: a plain function, run as it is; `shared`: its calls see many objects (a loop body
    over Layers, each binding its own parameters), so it keeps as many entries as a callee translated on
    its own."""
    if eager:
        if code.co_freevars:
            return NeedsClosure(code, lambda cells: types.FunctionType(code, f_globals, code.co_name, None, cells))
        return types.FunctionType(code, f_globals, code.co_name)
    known = _RESUME_TRANSLATORS.get(code)
    child = known[1]() if known is not None and known[0] is f_globals else None
    if child is None:
        limit = parent.cache.cache_size_limit
        child = type(parent)(code, fallback=True,
                             cache_size_limit=max(limit, _SHARED_CODE_CACHE_LIMIT) if shared else limit)
        _RESUME_TRANSLATORS.set(code, (f_globals, weakref.ref(child)))  # (the break code holds it)
    if child is not parent and child not in parent.children:
        parent.children.append(child)
    if code.co_freevars:  # a closure's: made on each call with the frame's cells
        return NeedsClosure(code, lambda cells: CallWithCallback(
            types.FunctionType(code, f_globals, code.co_name, None, cells), child))
    return CallWithCallback(types.FunctionType(code, f_globals, code.co_name), child)


def translated_callee(parent: Translator, fn: types.FunctionType) -> Callable:
    """`fn` translated as a frame of its own when called (one wrapper per function, its translator a
    child of `parent`)."""
    wrapper = _TRANSLATED.get(fn)
    if wrapper is None:  # its code may be shared by many objects (Layer.__call__: one entry per layer)
        limit = max(parent.cache.cache_size_limit, _SHARED_CODE_CACHE_LIMIT)
        wrapper = _TRANSLATED[fn] = CallWithCallback(fn, type(parent)(fn.__code__, fallback=True,
                                                                      cache_size_limit=limit))
    if wrapper.callback not in parent.children:
        parent.children.append(wrapper.callback)
    return wrapper


def as_it_is(fn: types.FunctionType) -> types.FunctionType:
    """A callee run for real at a break as eager code runs it (not translated as a frame of its own)."""
    return fn
