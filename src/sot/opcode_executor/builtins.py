"""Builtins simulated at translation time: each takes the executor and the argument Variables.

Pure builtins of Python values known at translation time (and the `math` module's functions)
fold into constants; `len`, `enumerate`, `zip`, `list`, `tuple`, `isinstance`, `getattr`,
`hasattr`, `super` and `type` work on Variables whose Python-level shape is known even when
their items are tensors. `print` of values whose text the graph decides is deferred (`_print`).
"""
from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Callable

from runtime import Tensor
from sot import config
from sot.dynamic import specialise

from .trackers import TypeTracker
from .variables import (CONSTANT_TYPES, ConstantVariable, DictVariable, FunctionVariable, InstanceVariable,
                        IteratorVariable, ListVariable, ObjectVariable, SuperVariable, TensorVariable,
                        TupleVariable, Variable)

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["BUILTINS", "builtin_of"]

Builtin = Callable[["OpcodeExecutor", list[Variable], dict[str, Variable]], Variable]


def _fold(fn: Callable) -> Builtin:
    """`fn` applied to Python values known at translation time, folded into a constant."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        result = fn(*(ex.python_value(a) for a in args), **{k: ex.python_value(v) for k, v in kwargs.items()})
        if not _is_folded_value(result):
            ex.unsupported(f"{fn.__name__} returning {type(result).__name__}")
        if type(result) is list:  # a new mutable list (sorted): items the frame may append to
            return ListVariable([ConstantVariable(v) for v in result])
        return ConstantVariable(result)
    return call


def _is_folded_value(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_folded_value(v) for v in value)
    return type(value) in CONSTANT_TYPES or isinstance(value, (range, slice))


def _len(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """len of a container: known even when its items are tensors; of a tensor, its first dimension."""
    (var,) = args
    if isinstance(var, (TupleVariable, DictVariable)):
        return ConstantVariable(len(var.items))
    if isinstance(var, InstanceVariable):
        return ex.protocol(var, "__len__")
    if isinstance(var, TensorVariable):
        shape = var.meta.shape
        if shape and shape[0] < 0:  # needed as an int: keep that dim static (sot.dynamic), or break
            specialise(var, ex.inputs, (0,), f"len() at {ex.where()}")
        if not shape or shape[0] < 0:
            ex.unsupported(f"len of {var!r}")
        return ConstantVariable(shape[0])
    return _fold(len)(ex, args, kwargs)


def _zip_enumerate(fn: Callable) -> Builtin:
    """enumerate/zip over Variables: an iterator of tuples of items."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if fn is enumerate:
            start = ex.python_value(args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0)))
            items = ex.elements(args[0])
            lists = [[ConstantVariable(start + i) for i in range(len(items))], items]
        else:
            if kwargs:
                ex.unsupported("zip with keyword arguments")
            lists = [ex.elements(a) for a in args]
        return IteratorVariable([TupleVariable(list(t)) for t in zip(*lists)])
    return call


def _to_sequence(kind: type) -> Builtin:
    """list(...) / tuple(...) of an iterable of Variables."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        return (ListVariable if kind is list else TupleVariable)(ex.elements(args[0]) if args else [])
    return call


def _reversed(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """reversed(...) of a sequence of Variables."""
    return IteratorVariable(ex.elements(args[0])[::-1])


def _iter(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """iter(x): an iterator over the items known at translation time."""
    return IteratorVariable(ex.elements(args[0]))


def _next(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """next(iterator[, default])."""
    iterator = args[0]
    if not isinstance(iterator, IteratorVariable):
        ex.unsupported(f"next() of {iterator!r}")
    ex.touch(iterator)
    item = iterator.next()
    if item is None:
        if len(args) < 2:
            ex.unsupported("next() of an exhausted iterator (StopIteration)")
        return args[1]
    return item


def _python_type(var: Variable) -> type | None:
    """The Python type of the value a Variable stands for, when the translation knows it."""
    if isinstance(var, (ConstantVariable, ObjectVariable)):
        return type(var.value)
    if isinstance(var, TensorVariable) and var.value is not None:
        return type(var.value)  # an input or a bound tensor (a Parameter): its exact type is guarded
    kinds = {TensorVariable: Tensor, ListVariable: list, TupleVariable: tuple}
    if isinstance(var, DictVariable):
        return var.kind
    return kinds.get(type(var))


def _isinstance(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """isinstance of a Variable whose Python type is known, against classes given as objects."""
    var, classes = args
    known = _python_type(var)
    if isinstance(classes, ObjectVariable):
        targets = classes.value
    elif isinstance(classes, TupleVariable) and all(isinstance(c, ObjectVariable) for c in classes.items):
        targets = tuple(c.value for c in classes.items)
    else:
        targets = None
    if known is None or targets is None:
        ex.unsupported(f"isinstance({var!r}, {classes!r})")
    return ConstantVariable(issubclass(known, targets))


def _type(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """type(x) of a Variable whose type its guards pin."""
    known = _python_type(args[0]) if len(args) == 1 and not kwargs else None
    if known is None:
        ex.unsupported("type() of this value")
    source = args[0].tracker.source
    # reached from the frame: `type(x).ATTR` is read through `type(<x's source>)`, so it is guarded
    return ObjectVariable(known, TypeTracker(args[0].tracker) if source is not None else None)


def _getattr(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """getattr(obj, name[, default]) with a constant name: the same lookup as LOAD_ATTR."""
    name = ex.python_value(args[1])
    if not isinstance(name, str):
        ex.unsupported("getattr with a non-constant name")
    if len(args) == 3 and not ex.has_attr(args[0], name):
        return args[2]
    return ex.load_attr(args[0], name)


def _hasattr(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """hasattr(obj, name) with a constant name."""
    name = ex.python_value(args[1])
    if not isinstance(name, str):
        ex.unsupported("hasattr with a non-constant name")
    return ConstantVariable(ex.has_attr(args[0], name))


def _super(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """super(cls, obj), or super() in a method: its class cell and first argument."""
    if len(args) == 2:
        cls, receiver = args
    elif not args:
        cls, receiver = ex.zero_arg_super()
    else:
        cls = receiver = None
    if not isinstance(cls, ObjectVariable) or not isinstance(cls.value, type) or not isinstance(
            receiver, InstanceVariable):
        ex.unsupported("super() outside a method of an object")
    return SuperVariable(cls.value, receiver)


def _sum(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """sum(items, start=0) as eager computes it: start + item + item ..., tensors included."""
    total = args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))
    for item in ex.elements(args[0]):
        total = ex.binary("+", total, item)
    return total


def _callable(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """callable(x) of a Variable whose type is known."""
    (var,) = args
    if isinstance(var, ObjectVariable):
        return ConstantVariable(callable(var.value))
    return ConstantVariable(isinstance(var, FunctionVariable))


_PRINT_OPTIONS = frozenset({"sep", "end", "flush"})


def _print(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """print(...) deferred to right after the graph (a side-effect record, replayed in order with the
    others), so it does not break the graph. Safe where its text depends only on values the replay
    has: tensors (their repr, stop_gradient included, is that of the tensor eager code would hold),
    Python constants, dtypes, and tuples, lists and dicts of them, with sep/end/flush constants.
    Anything else may run user code or write elsewhere when printed (`file=`, an object's own
    `__str__`): the call breaks the graph and runs for real (SOT-B003)."""
    if not config.defer_print():
        ex.unsupported("print (SOT_DEFER_PRINT=0)", "SOT-B003")
    unknown = sorted(set(kwargs) - _PRINT_OPTIONS)
    if unknown:
        ex.unsupported(f"print with {', '.join(unknown)}= cannot be deferred", "SOT-B003")
    options = {}
    for name, var in kwargs.items():
        if not isinstance(var, ConstantVariable) or (name != "flush" and not isinstance(var.value, (str, type(None)))):
            ex.unsupported(f"print with {name}={var!r} cannot be deferred", "SOT-B003")
        options[name] = var.value
    ex.translation.effects.print([_printed(ex, a, ()) for a in args], options, ex.builder.mark()[0], ex.where())
    return ConstantVariable(None)


def _printed(ex: "OpcodeExecutor", var: Variable, within: tuple[int, ...]) -> Variable:
    """A snapshot of what `print` shows of `var` now: computed tensors keep the symbol they have at the
    call (an in-place update later gives the Variable a new one), containers their current items."""
    if isinstance(var, TensorVariable):
        return var if var.tracker.source is not None else TensorVariable(var.symbol)  # inputs, bound tensors
    if isinstance(var, ConstantVariable):
        return var
    if isinstance(var, ObjectVariable) and type(var.value).__module__ == "runtime.dtypes":
        return ObjectVariable(var.value)  # a value, not where it was read from: its guards hold already
    if id(var) not in within and isinstance(var, TupleVariable) and type(var) in (TupleVariable, ListVariable):
        return type(var)([_printed(ex, v, (*within, id(var))) for v in var.items])
    if id(var) not in within and isinstance(var, DictVariable) and var.kind is dict and all(
            type(k) in CONSTANT_TYPES for k in var.items):
        return DictVariable({k: _printed(ex, v, (*within, id(var))) for k, v in var.items.items()})
    ex.unsupported(f"print of a {type(var).__name__} cannot be deferred (its text may not be the graph's values)",
                   "SOT-B003")


BUILTINS: dict[Any, Builtin] = {
    **{fn: _fold(fn) for fn in (range, min, max, abs, int, float, bool, str, round, divmod, pow, any, all,
                                 sorted, repr, chr, ord, hash, slice)},
    len: _len, enumerate: _zip_enumerate(enumerate), zip: _zip_enumerate(zip),
    list: _to_sequence(list), tuple: _to_sequence(tuple), reversed: _reversed, isinstance: _isinstance,
    iter: _iter, next: _next,
    type: _type, getattr: _getattr, hasattr: _hasattr, super: _super, callable: _callable, sum: _sum,
    print: _print,
}


def builtin_of(fn: Any) -> Builtin | None:
    """How a call of `fn` is simulated: a BUILTINS entry, or folding for `math`'s functions."""
    try:
        found = BUILTINS.get(fn)
    except TypeError:  # an unhashable callable
        return None
    if found is None and isinstance(fn, types.BuiltinFunctionType) and (
            getattr(fn, "__module__", None) == "math" or type(fn.__self__) in (str, int, float, tuple, bytes)):
        return _fold(fn)  # math.sqrt(2), "a,b".split(","): pure functions of constants
    return found

