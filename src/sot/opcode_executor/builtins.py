"""Builtins simulated at translation time: each takes the executor and the argument Variables.

Pure builtins of Python values known at translation time (and the `math` module's functions)
fold into constants: the real builtin is called on the real values, so its result is eager's
(3.12's compensated float `sum` included), and what it raises makes the frame run eagerly, which
raises it. Builtins that call a function (`min`/`max`/`sorted`'s `key=`) call it through the
executor, once per item and in eager's order, so a lambda made in the frame is simulated (its
tensor work recorded) and then the real builtin decides on the keys it gave. `any`, `all`, `next`,
`zip` and `enumerate` consume an iterator one item at a time, as far as the real builtin would (a
generator runs no further than eager code runs it); `map` and `filter` are lazy the same way. `len`,
`list`, `tuple`, `isinstance`, `getattr`, `setattr`, `hasattr`, `super` and `type` work on Variables
whose Python-level shape is known even when their items are tensors. `print` of values whose text the
graph decides is deferred (`_print`).
"""
from __future__ import annotations

import collections

import types
from typing import TYPE_CHECKING, Any, Callable

from sot import config
from sot.dynamic.shapes import specialise

from .dispatch import FrameRaises
from .folding import Builtin, bind, fold, fold_numpy, folded, is_numpy_foldable, real
from .stdlib import is_callable, stdlib_of
from .trackers import NewObjectTracker, TypeTracker
from .variables import (CONSTANT_TYPES, ITERATOR_TYPES, ConstantVariable, DictVariable, DictViewVariable,
                        EnumerateVariable, ExceptionVariable, FilterVariable, InstanceVariable, IteratorVariable,
                        ListVariable, NamedTupleVariable, NewObjectVariable, NumberVariable, ObjectVariable,
                        SetVariable, StarMapVariable, SuperVariable, TensorVariable, TupleVariable, Variable,
                        ZipVariable, is_namedtuple_class, python_type)
from .wording import shown

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["BUILTINS", "builtin_of"]

def _len(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """len of a container: known even when its items are tensors; of a tensor, its first dimension."""
    (var,) = args
    if isinstance(var, (TupleVariable, DictVariable)):
        return ConstantVariable(len(var.items))
    if isinstance(var, DictViewVariable):
        return ConstantVariable(len(var.mapping.items))
    if isinstance(var, InstanceVariable):
        return ex.protocol(var, "__len__")
    if isinstance(var, TensorVariable):
        shape = var.meta.shape
        if shape and shape[0] < 0:  # needed as an int: keep that dim static (sot.dynamic.shapes), or break
            specialise(var, ex.inputs, (0,), f"len() at {ex.where()}", ex.where())
        if not shape or shape[0] < 0:
            ex.unsupported(f"takes the len() of {shown(var)}, known only at run time")
        return ConstantVariable(shape[0])
    return fold(len)(ex, args, kwargs)


def _enumerate(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """enumerate(iterable, start=0): over a sequence, its items numbered; over an iterator, one item
    of it per item (see LazyIteratorVariable)."""
    bound = bind(ex, "enumerate", args, kwargs, ("iterable", "start"), {"start": ConstantVariable(0)})
    start = ex.python_value(bound["start"])
    if not isinstance(start, int):
        ex.unsupported(f"calls enumerate with start={shown(start)}, which sot cannot translate yet")
    iterable = bound["iterable"]
    if isinstance(iterable, ITERATOR_TYPES):
        return EnumerateVariable(iterable, start)
    return IteratorVariable([TupleVariable([ConstantVariable(start + i), item])
                             for i, item in enumerate(ex.elements(iterable))])


def _zip(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """zip(*iterables, strict=False): over sequences, their items in tuples; with an iterator among
    them, one item of each per item (see ZipVariable: an iterator before a shorter one gives one
    item more than the tuples, as zip pulls it)."""
    unknown = sorted(set(kwargs) - {"strict"})
    if unknown:
        ex.raises(f"zip() got an unexpected keyword argument {unknown[0]!r}")
    strict = bool(ex.python_value(kwargs.get("strict", ConstantVariable(False))))
    if any(isinstance(a, ITERATOR_TYPES) for a in args):
        return ZipVariable([ex.iterator_of(a) for a in args], strict)
    lists = [ex.elements(a) for a in args]
    if strict and len({len(items) for items in lists}) > 1:
        ex.raises("zip() arguments of different lengths (strict=True)")
    return IteratorVariable([TupleVariable(list(t)) for t in zip(*lists)])


def _map(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """map(func, *iterables): lazy, `func` called through the executor on one item of each iterable per
    item (the items of their zip, see ZipVariable), as the item is consumed."""
    if kwargs or len(args) < 2:
        ex.raises("map() must have at least two arguments")
    return StarMapVariable(args[0], ZipVariable([ex.iterator_of(a) for a in args[1:]], False))


def _filter(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """filter(func, iterable): lazy; func None keeps the true items."""
    if kwargs or len(args) != 2:
        ex.raises("filter() takes exactly two arguments")
    func = None if isinstance(args[0], ConstantVariable) and args[0].value is None else args[0]
    return FilterVariable(func, ex.iterator_of(args[1]))


def _to_sequence(kind: type) -> Builtin:
    """list(...) / tuple(...) of an iterable of Variables."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if kwargs or len(args) > 1:
            ex.raises(f"{kind.__name__}() takes at most 1 positional argument")
        return (ListVariable if kind is list else TupleVariable)(ex.elements(args[0]) if args else [])
    return call


def _to_dict(kind: type) -> Builtin:
    """dict(mapping or pairs, **kwargs) (or OrderedDict(...)): a new one of the same items, in eager's order."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if len(args) > 1:
            ex.raises(f"{kind.__name__}() called with more than one positional argument")
        made = DictVariable({}, kind=kind)
        ex.container_method("update", made, *args, **kwargs)
        return made
    return call


def _defaultdict(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """collections.defaultdict(factory, mapping or pairs, **kwargs): a dict whose missing keys get
    `factory()` (see BuildMixin.subscript)."""
    factory = args[0] if args else ConstantVariable(None)
    if isinstance(factory, ConstantVariable) and factory.value is not None:
        ex.raises("first argument must be callable or None")
    if len(args) > 2:
        ex.raises("defaultdict() called with more than two positional arguments")
    made = DictVariable({}, kind=collections.defaultdict, factory=factory)
    ex.container_method("update", made, *args[1:], **kwargs)
    return made


def _to_set(kind: type) -> Builtin:
    """set(...) / frozenset(...) of an iterable of constants, made by the real constructor (eager's order)."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if kwargs or len(args) > 1:
            ex.raises(f"{kind.__name__}() called with arguments eager code rejects")
        return SetVariable(real(ex, kind, ex.python_value(args[0])) if args else kind())
    return call


def _reversed(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """reversed(...) of a sequence or dict view of Variables (an iterator is not reversible: eager raises)."""
    if kwargs or len(args) != 1:
        ex.raises("reversed() takes exactly one argument")
    if isinstance(args[0], ITERATOR_TYPES):
        ex.raises(f"{shown(args[0])} is not reversible")
    return IteratorVariable(ex.elements(args[0])[::-1])


def _iter(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """iter(x): an iterator is its own; anything else an iterator over the items known at translation time."""
    if kwargs or len(args) != 1:
        ex.unsupported("calls iter() with a sentinel (a function called until it returns the sentinel), which sot "
                       "cannot translate yet")
    return ex.iterator_of(args[0])


def _next(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """next(iterator[, default]): one item, one step of the real iterator."""
    if kwargs or len(args) not in (1, 2):
        ex.raises("next() takes one or two positional arguments")
    iterator = args[0]
    if not isinstance(iterator, ITERATOR_TYPES):
        ex.unsupported(f"calls next() on {shown(iterator)}, which sot cannot translate yet")
    item = ex.next_of(iterator)
    if item is None:
        if len(args) < 2:
            raise FrameRaises.of("CALL", ex.where(), StopIteration())
        return args[1]
    return item


def _any_all(fn: Callable) -> Builtin:
    """any / all: the truth of each item in turn, stopping where the real builtin stops (a generator
    runs no further)."""
    stop_at = fn is any  # any stops at the first true item, all at the first false one

    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if kwargs or len(args) != 1:
            ex.raises(f"{fn.__name__}() takes exactly one argument")
        iterator = ex.iterator_of(args[0])
        while (item := ex.next_of(iterator)) is not None:
            if ex.truth(item) == stop_at:
                return ConstantVariable(stop_at)
        return ConstantVariable(not stop_at)
    return call


def _keys(ex: "OpcodeExecutor", items: list[Variable], key: Variable | None) -> list[Any]:
    """The value each item is compared by: `key(item)`, called through the executor in eager's order
    (a lambda made in the frame is simulated, its tensor work recorded), or the item itself."""
    if key is None or (isinstance(key, ConstantVariable) and key.value is None):
        return [ex.python_value(item) for item in items]
    return [ex.python_value(ex.call(key, [item], {})) for item in items]


def _min_max(fn: Callable) -> Builtin:
    """min / max (iterable, *, key, default) or (a, b, *rest, *, key): the real builtin, run on the
    keys, picks the index of the item it returns (ties go to the first, as eager's)."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        unknown = sorted(set(kwargs) - {"key", "default"})
        if unknown or not args or (len(args) > 1 and "default" in kwargs):
            ex.raises(f"{fn.__name__}() called with arguments eager code rejects")
        items = ex.elements(args[0]) if len(args) == 1 else list(args)
        keys = _keys(ex, items, kwargs.get("key"))
        options = {"default": None} if "default" in kwargs else {}
        index = real(ex, fn, range(len(items)), key=keys.__getitem__, **options)
        return kwargs["default"] if index is None else items[index]
    return call


def _sorted(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """sorted(iterable, *, key, reverse): the real sort of the keys orders the items (stable, as eager's)."""
    unknown = sorted(set(kwargs) - {"key", "reverse"})
    if unknown or len(args) != 1:
        ex.raises("sorted() called with arguments eager code rejects")
    items = ex.elements(args[0])
    keys = _keys(ex, items, kwargs.get("key"))
    reverse = ex.python_value(kwargs.get("reverse", ConstantVariable(False)))
    order = real(ex, sorted, range(len(items)), key=keys.__getitem__, reverse=reverse)
    return ListVariable([items[i] for i in order])


def _isinstance(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """isinstance of a Variable whose Python type is known, against classes given as objects."""
    var, classes = args
    known = python_type(var)
    if isinstance(classes, ObjectVariable):
        targets = classes.value
    elif isinstance(classes, TupleVariable) and all(isinstance(c, ObjectVariable) for c in classes.items):
        targets = tuple(c.value for c in classes.items)
    else:
        targets = None
    if known is None or targets is None:
        ex.unsupported(f"checks isinstance() of {shown(var)} against {shown(classes)}, which sot cannot decide")
    return ConstantVariable(issubclass(known, targets))


def _type(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """type(x) of a Variable whose type its guards pin."""
    known = python_type(args[0]) if len(args) == 1 and not kwargs else None
    if known is None:
        ex.unsupported("calls type() on a value whose type sot does not know")
    source = args[0].tracker.source
    # reached from the frame: `type(x).ATTR` is read through `type(<x's source>)`, so it is guarded
    return ObjectVariable(known, TypeTracker(args[0].tracker) if source is not None else None)


def _getattr(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """getattr(obj, name[, default]) with a constant name: the same lookup as LOAD_ATTR."""
    name = ex.python_value(args[1])
    if not isinstance(name, str):
        ex.unsupported("calls getattr() with a name known only at run time")
    if len(args) == 3 and not ex.has_attr(args[0], name):
        return args[2]
    return ex.load_attr(args[0], name)


def _setattr(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """setattr(obj, name, value) with a constant name: the same write as STORE_ATTR (weight_norm's hook
    sets the layer's weight this way on every call)."""
    name = ex.python_value(args[1]) if len(args) == 3 and not kwargs else None
    if not isinstance(name, str):
        ex.unsupported("calls setattr() with a name known only at run time")
    ex.store_attr(args[0], name, args[2])
    return ConstantVariable(None)


def _object_init(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """object.__init__(obj), where a class's `super().__init__()` ends: it does nothing (given more
    arguments it may raise: that runs for real)."""
    if len(args) != 1 or kwargs:
        ex.unsupported("calls object.__init__ with arguments, which it may reject")
    return ConstantVariable(None)


def _object_setattr(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """object.__setattr__(obj, name, value) on an object the frame made (a frozen dataclass's `__init__`)."""
    name = ex.python_value(args[1]) if len(args) == 3 and not kwargs else None
    if not isinstance(args[0], NewObjectVariable) or not isinstance(name, str):
        ex.unsupported("calls object.__setattr__ on an object from outside the function, or with a name known only "
                       "at run time")
    ex.set_new_attr(args[0], name, args[2], generic=True)
    return ConstantVariable(None)


def _tuple_new(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """tuple.__new__(cls, iterable), which a namedtuple's generated `__new__` and `_make` call: a tuple of
    the iterable's items, of the namedtuple class `cls`."""
    cls = args[0] if args and not kwargs and len(args) <= 2 else None
    if not isinstance(cls, ObjectVariable) or not (cls.value is tuple or is_namedtuple_class(cls.value)):
        ex.unsupported("calls tuple.__new__ for a class that is not a namedtuple's")
    items = ex.elements(args[1]) if len(args) == 2 else []
    if cls.value is tuple:
        return TupleVariable(items)
    blank = cls.value._make([None] * len(cls.value._fields))  # (its type for lookups: see NamedTupleVariable)
    return NamedTupleVariable(items, cls.value, blank, NewObjectTracker(cls.tracker))


def _hasattr(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """hasattr(obj, name) with a constant name."""
    name = ex.python_value(args[1])
    if not isinstance(name, str):
        ex.unsupported("calls hasattr() with a name known only at run time")
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
        ex.unsupported("calls super() outside a method of an object, which sot cannot translate yet")
    return SuperVariable(cls.value, receiver)


def _sum(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """sum(iterable, start=0) as eager computes it: the leading items known at translation time are
    summed by the real `sum` (3.12's compensated float sum included), the others added one by one
    (`total + item`, tensors included), as eager's sum does from its first item it cannot add fast."""
    bound = bind(ex, "sum", args, kwargs, ("iterable", "start"), {"start": ConstantVariable(0)}, positional=1)
    items = [bound["start"], *ex.elements(bound["iterable"])]
    known = 0
    while known < len(items) and _known(items[known]):
        known += 1
    total = folded(ex, real(ex, sum, [ex.python_value(v) for v in items[1:known]],
                            ex.python_value(items[0]))) if known else items[0]
    for item in items[max(known, 1):]:
        total = ex.binary("+", total, item)
    return total


def _known(var: Variable) -> bool:
    """Whether `var` is a Python value known at translation time (no tensor, no dynamic number in it)."""
    if isinstance(var, NumberVariable):
        return False
    if isinstance(var, ConstantVariable):
        return True
    return type(var) in (TupleVariable, ListVariable) and all(_known(v) for v in var.items)


def _callable(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """callable(x) of a Variable whose type is known."""
    (var,) = args
    return ConstantVariable(is_callable(var))


_PRINT_OPTIONS = frozenset({"sep", "end", "flush"})


def _print(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """print(...) deferred to right after the graph (a side-effect record, replayed in order with the
    others), so it does not break the graph. Safe where its text depends only on values the replay
    has: tensors (their repr, stop_gradient included, is that of the tensor eager code would hold),
    Python constants, dtypes, and tuples, lists and dicts of them, with sep/end/flush constants.
    Anything else may run user code or write elsewhere when printed (`file=`, an object's own
    `__str__`): the call breaks the graph and runs for real (SOT-B003)."""
    if not config.defer_print():
        ex.unsupported("calls print, which sot does not defer with SOT_DEFER_PRINT=0", "SOT-B003")
    unknown = sorted(set(kwargs) - _PRINT_OPTIONS)
    if unknown:
        ex.unsupported(f"calls print with {', '.join(unknown)}=, which sot cannot defer", "SOT-B003")
    options = {}
    for name, var in kwargs.items():
        if not isinstance(var, ConstantVariable) or (name != "flush" and not isinstance(var.value, (str, type(None)))):
            ex.unsupported(f"calls print with {name}={shown(var)}, which sot cannot defer", "SOT-B003")
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
    if isinstance(var, ExceptionVariable) and not within:  # print shows str() of an argument, which is known
        return ConstantVariable(str(ex.python_value(var)))
    if id(var) not in within and isinstance(var, TupleVariable) and type(var) in (TupleVariable, ListVariable):
        return type(var)([_printed(ex, v, (*within, id(var))) for v in var.items])
    if id(var) not in within and isinstance(var, DictVariable) and var.kind is dict and all(
            type(k) in CONSTANT_TYPES for k in var.items):
        return DictVariable({k: _printed(ex, v, (*within, id(var))) for k, v in var.items.items()})
    ex.unsupported(f"prints {shown(var)}, which sot cannot defer (its text may not be the graph's values)",
                   "SOT-B003")


def _hash(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`hash()` folded, but not of an exception the frame raised: eager code makes a new one, with a new
    identity hash, on every call, where a folded hash would be the same number each time."""
    if any(isinstance(a, ExceptionVariable) for a in args):
        ex.unsupported("hashes an exception made in the function (a new object and hash on every call)")
    return fold(hash)(ex, args, kwargs)


BUILTINS: dict[Any, Builtin] = {
    **{fn: fold(fn) for fn in (range, abs, int, float, bool, str, round, divmod, pow, repr, chr, ord, slice)},
    hash: _hash,
    min: _min_max(min), max: _min_max(max), sorted: _sorted, any: _any_all(any), all: _any_all(all),
    len: _len, enumerate: _enumerate, zip: _zip, map: _map, filter: _filter,
    list: _to_sequence(list), tuple: _to_sequence(tuple), set: _to_set(set), frozenset: _to_set(frozenset),
    dict: _to_dict(dict), collections.OrderedDict: _to_dict(collections.OrderedDict),
    collections.defaultdict: _defaultdict,
    reversed: _reversed, isinstance: _isinstance,
    iter: _iter, next: _next,
    type: _type, getattr: _getattr, setattr: _setattr, hasattr: _hasattr, super: _super, callable: _callable, sum: _sum,
    print: _print, object.__init__: _object_init, object.__setattr__: _object_setattr,
    tuple.__new__: _tuple_new,
}


def builtin_of(fn: Any) -> Builtin | None:
    """How a call of `fn` is simulated: a BUILTINS entry, a standard-library one (`stdlib`), or folding for
    `math`'s functions."""
    try:
        found = BUILTINS.get(fn)
    except TypeError:  # an unhashable callable
        return None
    if found is None:
        found = stdlib_of(fn)
    if found is None and is_numpy_foldable(fn):
        return fold_numpy(fn)  # np.prod(x.shape[1:]): a NumPy scalar of constants
    if found is None and isinstance(fn, types.BuiltinFunctionType) and (
            getattr(fn, "__module__", None) == "math" or type(fn.__self__) in (str, int, float, tuple, bytes)):
        return fold(fn)  # math.sqrt(2), "a,b".split(","): pure functions of constants
    return found

