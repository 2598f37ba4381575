"""Methods of lists, tuples, dicts and sets, simulated on their Variables.

`xs.pop()`, `d.setdefault(k, [])`, `s.add(k)`: the call is simulated on the container's items, so
the frame stays one graph. A mutation goes through `OpcodeExecutor.write_into`: a list or dict from
outside the frame is written back after the graph (a set from outside cannot be, so mutating one is
Unsupported, a graph break at the call). Comparing items (`index`, `count`, `remove`) is decided by
identity, or on Python constants by `==`; anything else needs a tensor's `==` at run time, a break.
A set holds Python constants only (see `SetVariable`); its methods run for real on that set.
Arguments that do not fit a method's signature are Unsupported: the call runs for real and raises
what eager raises.
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable

from .builtins import builtin_of
from .dispatch import FrameRaises
from .variables import (ConstantVariable, DictVariable, DictViewVariable, ListVariable, SetVariable,
                        TensorVariable, TupleVariable, Variable, known_value)
from .wording import shown

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["CONTAINER_METHODS", "call_container_method", "same_item", "set_of"]

_NO_DEFAULT = ConstantVariable(None)  # (compared by identity: "no default given")


def same_item(ex: "OpcodeExecutor", a: Variable, b: Variable) -> bool:
    """`a == b` as list.index/count/remove decide it: identity first, then `==` on Python constants."""
    if a is b:
        return True
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        ex.unsupported(f"compares {shown(a)} with {shown(b)}: a tensor's == decides it at run time", "SOT-B001")
    return ex.python_value(a) == ex.python_value(b)


def _position(ex: "OpcodeExecutor", items: list[Variable], value: Variable, start: int = 0,
              stop: int | None = None) -> int | None:
    """Index of the first item equal to `value` in items[start:stop] (None: there is none)."""
    begin, end, _ = slice(start, stop).indices(len(items))
    return next((i for i in range(begin, end) if same_item(ex, items[i], value)), None)


def set_of(ex: "OpcodeExecutor", values: list[Variable]) -> set:
    """The Python values of `values`, which a set can hold (constants; a tensor cannot be simulated there)."""
    out = set()
    for value in values:
        out.add(_element(ex, value))
    return out


def _element(ex: "OpcodeExecutor", var: Variable) -> Any:
    """A set element's Python value: a hashable constant (a tensor in a set is not simulated)."""
    value = ex.python_value(var)
    try:
        hash(value)
    except TypeError:
        raise FrameRaises("CALL", ex.where(), f"raises TypeError: unhashable type: {type(value).__name__!r}") from None
    return value


# ------------------------------------------------------------------ tuple and list (reads)
def _index(ex, seq: TupleVariable, value: Variable, start: Variable = ConstantVariable(0),
           stop: Variable = ConstantVariable(None)) -> Variable:
    found = _position(ex, seq.items, value, ex.python_value(start), ex.python_value(stop))
    if found is None:
        raise FrameRaises("CALL", ex.where(), "raises ValueError: the value is not in the sequence")
    return ConstantVariable(found)


def _count(ex, seq: TupleVariable, value: Variable) -> Variable:
    return ConstantVariable(sum(same_item(ex, item, value) for item in seq.items))


# ------------------------------------------------------------------ list (mutations)
def _append(ex, xs: ListVariable, value: Variable) -> Variable:
    ex.write_into(xs)
    xs.extend([value])
    return ConstantVariable(None)


def _extend(ex, xs: ListVariable, iterable: Variable) -> Variable:
    items = ex.elements(iterable)  # (before the write: `xs.extend(xs)` adds the items it had)
    ex.write_into(xs)
    xs.extend(items)
    return ConstantVariable(None)


def _insert(ex, xs: ListVariable, index: Variable, value: Variable) -> Variable:
    position = ex.python_value(index)
    ex.write_into(xs)
    xs.items.insert(position, value)
    return ConstantVariable(None)


def _pop(ex, xs: ListVariable, index: Variable = ConstantVariable(-1)) -> Variable:
    position = ex.python_value(index)
    if not -len(xs.items) <= position < len(xs.items):
        raise FrameRaises.of("CALL", ex.where(), IndexError("pop index out of range"))
    ex.write_into(xs)
    return xs.items.pop(position)


def _remove(ex, xs: ListVariable, value: Variable) -> Variable:
    found = _position(ex, xs.items, value)
    if found is None:
        raise FrameRaises.of("CALL", ex.where(), ValueError("list.remove(x): x not in list"))
    ex.write_into(xs)
    del xs.items[found]
    return ConstantVariable(None)


def _clear(ex, container: ListVariable | DictVariable) -> Variable:
    ex.write_into(container)
    container.items.clear()
    return ConstantVariable(None)


def _reverse(ex, xs: ListVariable) -> Variable:
    ex.write_into(xs)
    xs.items.reverse()
    return ConstantVariable(None)


def _sort(ex, xs: ListVariable, *, key: Variable = ConstantVariable(None),
          reverse: Variable = ConstantVariable(False)) -> Variable:
    """list.sort: ordered as the simulated `sorted` orders the items (stable; a key function simulated per item)."""
    ordered = builtin_of(sorted)(ex, [ListVariable(list(xs.items))], {"key": key, "reverse": reverse})
    ex.write_into(xs)
    xs.items[:] = ordered.items
    return ConstantVariable(None)


def _list_copy(ex, xs: ListVariable) -> Variable:
    return ListVariable(list(xs.items))


# ------------------------------------------------------------------ dict
def _key(ex: "OpcodeExecutor", var: Variable) -> Any:
    """A dict key's Python value (keys of a simulated dict are constants)."""
    return _element(ex, var)


def _view(kind: str) -> Callable:
    def view(ex, d: DictVariable) -> Variable:
        return DictViewVariable(d, kind)  # live: it sees later writes, and iterates again
    return view


def _get(ex, d: DictVariable, key: Variable, default: Variable = ConstantVariable(None)) -> Variable:
    return d.items.get(_key(ex, key), default)


def _update(ex, d: DictVariable, *others: Variable, **kwargs: Variable) -> Variable:
    if len(others) > 1:
        ex.unsupported("calls dict.update with more than one positional argument, which sot cannot translate yet")
    new: dict[Any, Variable] = {}
    for other in others:
        if isinstance(other, DictVariable):
            new.update(other.items)
            continue
        for pair in ex.elements(other):
            key, value = ex.elements(pair)
            new[_key(ex, key)] = value
    new.update(kwargs)
    ex.write_into(d)
    d.items.update(new)
    return ConstantVariable(None)


def _dict_pop(ex, d: DictVariable, key: Variable, default: Variable = _NO_DEFAULT) -> Variable:
    k = _key(ex, key)
    if k not in d.items:
        if default is _NO_DEFAULT:
            raise FrameRaises.of("CALL", ex.where(), KeyError(k))
        return default
    ex.write_into(d)
    return d.items.pop(k)


def _setdefault(ex, d: DictVariable, key: Variable, default: Variable = ConstantVariable(None)) -> Variable:
    k = _key(ex, key)
    if k not in d.items:
        ex.write_into(d)
        d.items[k] = default
    return d.items[k]


def _popitem(ex, d: DictVariable) -> Variable:
    if not d.items:
        raise FrameRaises.of("CALL", ex.where(), KeyError("popitem(): dictionary is empty"))
    ex.write_into(d)
    k, v = d.items.popitem()
    return TupleVariable([known_value(k), v])


def _dict_copy(ex, d: DictVariable) -> Variable:
    if d.kind is not dict:
        ex.unsupported(f"calls {d.kind.__name__}.copy, which sot cannot translate yet")
    return DictVariable(d.items)


# ------------------------------------------------------------------ set
def _set_mutation(name: str) -> Callable:
    """A set method that changes the set (add, discard, update, ...), run on its values."""
    def method(ex, s: SetVariable, *args: Variable) -> Variable:
        values = [_element(ex, a) if name in ("add", "discard", "remove") else ex.python_value(a) for a in args]
        ex.write_into(s)
        try:
            result = getattr(s.items, name)(*values)
        except (KeyError, TypeError) as e:
            raise FrameRaises("CALL", ex.where(), f"raises {type(e).__name__}: {e}") from None
        return known_value(result) if name == "pop" else ConstantVariable(None)
    return method


def _set_query(name: str) -> Callable:
    """A set method that makes a new set or answers a question (union, issubset, ...), run on its values."""
    def method(ex, s: SetVariable, *args: Variable) -> Variable:
        try:
            result = getattr(s.items, name)(*(ex.python_value(a) for a in args))
        except TypeError as e:
            raise FrameRaises("CALL", ex.where(), f"raises TypeError: {e}") from None
        return SetVariable(result) if isinstance(result, (set, frozenset)) else ConstantVariable(result)
    return method


_SET_MUTATIONS = ("add", "discard", "remove", "pop", "clear", "update", "difference_update",
                  "intersection_update", "symmetric_difference_update")
_SET_QUERIES = ("copy", "union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset",
                "isdisjoint")

_TUPLE_METHODS: dict[str, Callable] = {"index": _index, "count": _count}

# the container methods simulated, by Variable type (an exact type: a list is not a tuple here)
CONTAINER_METHODS: dict[type, dict[str, Callable]] = {
    TupleVariable: _TUPLE_METHODS,
    ListVariable: {**_TUPLE_METHODS, "append": _append, "extend": _extend, "insert": _insert, "pop": _pop,
                   "remove": _remove, "clear": _clear, "reverse": _reverse, "sort": _sort, "copy": _list_copy},
    DictVariable: {"keys": _view("keys"), "values": _view("values"), "items": _view("items"), "get": _get,
                   "update": _update, "pop": _dict_pop, "setdefault": _setdefault, "popitem": _popitem,
                   "copy": _dict_copy, "clear": _clear},
    SetVariable: {**{name: _set_mutation(name) for name in _SET_MUTATIONS},
                  **{name: _set_query(name) for name in _SET_QUERIES}},
}


def call_container_method(ex: "OpcodeExecutor", name: str, container: Variable, args: list[Variable],
                          kwargs: dict[str, Variable]) -> Variable:
    """Simulate `container.name(*args, **kwargs)`; a frozenset has only the methods that make no change."""
    method = CONTAINER_METHODS[type(container)][name]
    if isinstance(container, SetVariable) and container.kind is frozenset and name in _SET_MUTATIONS:
        ex.unsupported(f"calls frozenset.{name}, which frozenset does not have")
    try:
        inspect.signature(method).bind(ex, container, *args, **kwargs)
    except TypeError:
        ex.unsupported(f"calls {name}() with arguments it does not take: the call runs for real")
    return method(ex, container, *args, **kwargs)
