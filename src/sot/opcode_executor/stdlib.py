"""Standard-library calls model code makes, simulated like the builtins (see `builtins`).

`functools.partial` made in the frame is a PartialVariable; calling it, or a partial read from
outside the frame (an attribute `self.act = partial(F.leaky_relu, negative_slope=0.1)`), calls its
`func` with its `args` and `keywords` first, the call's keywords winning, as `partial.__call__` does.
An outside partial's `func`, `args` and `keywords` are read through its source, so their guards pin
them: rebinding the attribute to another partial misses the cache where eager would compute
something else. `functools.reduce` and the `operator` functions run the operators the executor
simulates (a tensor's `operator.add` is recorded as `+`); `itemgetter`/`attrgetter` made in the
frame from constant keys are the real (immutable) objects, called as the subscripts and attribute
reads they stand for (one read from outside has its keys guarded). `itertools.chain`, `accumulate`,
`starmap`, `islice`, `pairwise` and `zip_longest` are lazy iterators (a generator runs no further than
eager code runs it); `product`, `combinations` and `permutations` take all their input first, as the
real ones do. Calling an enum class with a value (`Mode(1)`) folds to the member; `get` of a dict
from outside keyed by enum members is guarded as the lookup itself (see `BuildMixin.keyed_by_member`).
"""
from __future__ import annotations

import enum
import functools
import itertools
import operator
from typing import TYPE_CHECKING, Any, Callable

from sot.guards.source import expression

from .folding import Builtin, bind, folded, real
from .trackers import ExpressionTracker
from .variables import (AccumulateVariable, BoundMethodVariable, ChainVariable, ConstantVariable, DictVariable,
                        FunctionVariable, InstanceVariable, IteratorVariable, ObjectVariable, PairwiseVariable,
                        PartialVariable, SliceIteratorVariable, StarMapVariable, TensorMethodVariable, TupleVariable,
                        Variable, ZipLongestVariable, is_enum_member)
from .wording import shown

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["stdlib_of", "is_callable", "partial_call"]

# operator functions and the BINARY_OP operator each one is (its in-place form: `op=`)
_BINARY_FUNCTIONS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
                     operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
                     operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
                     operator.rshift: ">>"}
_IN_PLACE_FUNCTIONS = {operator.iadd: "+", operator.isub: "-", operator.imul: "*", operator.itruediv: "/",
                       operator.ifloordiv: "//", operator.imod: "%", operator.ipow: "**", operator.imatmul: "@",
                       operator.iand: "&", operator.ior: "|", operator.ixor: "^", operator.ilshift: "<<",
                       operator.irshift: ">>"}
_COMPARE_FUNCTIONS = {operator.lt: "<", operator.le: "<=", operator.eq: "==", operator.ne: "!=", operator.gt: ">",
                      operator.ge: ">="}
_UNARY_FUNCTIONS = {operator.neg: "UNARY_NEGATIVE", operator.invert: "UNARY_INVERT", operator.inv: "UNARY_INVERT",
                    operator.pos: "INTRINSIC_UNARY_POSITIVE"}


def is_callable(var: Variable) -> bool:
    """callable() of the value `var` stands for: an object's is its (pinned) type's answer; constants,
    tensors, containers and iterators are never callable."""
    if isinstance(var, (FunctionVariable, BoundMethodVariable, TensorMethodVariable, PartialVariable)):
        return True
    return isinstance(var, ObjectVariable) and callable(var.value)


def _positional(name: str, count: int) -> Callable[["OpcodeExecutor", list[Variable], dict[str, Variable]], None]:
    """A function of `count` positional arguments, as eager checks them (TypeError: the frame runs eagerly)."""
    def check(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> None:
        if kwargs or len(args) != count:
            ex.raises(f"{name}() takes exactly {count} positional argument(s)")
    return check


def _binary_function(fn: Any, op: str, in_place: bool) -> Builtin:
    """`operator.add(a, b)` is `a + b` (`operator.iadd(a, b)` is `a += b`, its result returned)."""
    check = _positional(fn.__name__, 2)

    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        check(ex, args, kwargs)
        return ex.binary(op, *args, in_place=in_place)
    return call


def _compare_function(fn: Any, op: str) -> Builtin:
    """`operator.lt(a, b)` is `a < b`."""
    check = _positional(fn.__name__, 2)

    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        check(ex, args, kwargs)
        return ex.compare(op, *args)
    return call


def _unary_function(fn: Any, kind: str) -> Builtin:
    """`operator.neg(a)` is `-a`."""
    check = _positional(fn.__name__, 1)

    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        check(ex, args, kwargs)
        return ex.unary(kind, args[0])
    return call


def _getitem(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`operator.getitem(a, b)` is `a[b]`."""
    _positional("getitem", 2)(ex, args, kwargs)
    return ex.subscript(*args)


def _truth(negate: bool) -> Builtin:
    """`operator.truth(a)` is `bool(a)`, `operator.not_(a)` is `not a`."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        _positional("not_" if negate else "truth", 1)(ex, args, kwargs)
        return ConstantVariable(ex.truth(args[0]) != negate)
    return call


def _getter(kind: type) -> Builtin:
    """`operator.itemgetter(*keys)` / `attrgetter(*names)` of constants: the real object (immutable), called
    through `stdlib_of` as the subscripts or attribute reads it stands for."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if kwargs or not all(isinstance(a, ConstantVariable) for a in args):
            ex.unsupported(f"makes an operator.{kind.__name__} of values known only at run time, which sot cannot "
                           "translate yet")
        return ObjectVariable(real(ex, kind, *(a.value for a in args)))
    return call


def _get(ex: "OpcodeExecutor", kind: type, keys: tuple, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """What calling an itemgetter / attrgetter of `keys` does: `obj[key]` / `obj.a.b` for each key."""
    _positional(kind.__name__, 1)(ex, args, kwargs)
    found = []
    for key in keys:
        obj = args[0]
        if kind is operator.itemgetter:
            obj = ex.subscript(obj, ConstantVariable(key))
        else:
            for name in key.split("."):
                obj = ex.load_attr(obj, name)
        found.append(obj)
    return found[0] if len(found) == 1 else TupleVariable(found)


def _call_getter(getter: Any) -> Builtin:
    """Calling an itemgetter / attrgetter the frame made (its keys are known: it was made of constants)."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        return _get(ex, type(getter), getter.__reduce__()[1], args, kwargs)
    return call


def _call_outside_getter(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itemgetter.__call__(g, obj)` for a getter read from outside the frame (`by_score = itemgetter(1)`):
    its keys, which only `__reduce__` tells, are guarded as `<g>.__reduce__()[1]`, so another getter
    with other keys misses the cache."""
    getter, *rest = args
    source = getter.tracker.source
    if source is None or not isinstance(getter, InstanceVariable):
        ex.unsupported(f"calls {shown(getter)}, whose keys sot cannot find again on the next call")
    keys = getter.value.__reduce__()[1]
    ex.wrap(keys, ExpressionTracker(expression(f"{source}.__reduce__()[1]")))
    return _get(ex, type(getter.value), keys, rest, kwargs)


def _partial(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`functools.partial(func, *args, **keywords)` made in the frame. A partial of a partial the frame made
    is flattened, as the real constructor does (its `func` is the inner one's)."""
    if not args:
        ex.raises("type 'partial' takes at least one argument")
    func, *rest = args
    if isinstance(func, InstanceVariable) and isinstance(func.value, functools.partial):
        ex.unsupported(f"makes a functools.partial of {shown(func)}, which sot cannot translate yet")
    if not is_callable(func):
        ex.raises("the first argument must be callable")
    if isinstance(func, PartialVariable):
        return PartialVariable(func.func, [*func.args, *rest], DictVariable({**func.keywords.items, **kwargs}))
    return PartialVariable(func, rest, DictVariable(dict(kwargs)))


def partial_call(ex: "OpcodeExecutor", partial: Variable, args: list[Variable],
                 kwargs: dict[str, Variable]) -> tuple[Variable, list[Variable], dict[str, Variable]]:
    """What calling `partial(*args, **kwargs)` calls: its func, with its args first and its keywords
    updated by the call's. A partial from outside the frame is read through its source (guarded)."""
    if isinstance(partial, PartialVariable):
        func, stored, keywords = partial.func, partial.args, partial.keywords
    else:
        func, stored, keywords = (ex.load_attr(partial, name) for name in ("func", "args", "keywords"))
        stored = ex.elements(stored)
    if not isinstance(keywords, DictVariable):
        ex.unsupported(f"calls a functools.partial whose keywords are {shown(keywords)}, which sot cannot "
                       "translate yet")
    if not all(type(k) is str for k in keywords.items):
        ex.raises("keywords must be strings")
    return func, [*stored, *args], {**keywords.items, **kwargs}


def _call_partial(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`partial.__call__(p, *args, **kwargs)`: calling a partial read from outside the frame."""
    func, pos, kw = partial_call(ex, args[0], args[1:], kwargs)
    return ex.call(func, pos, kw)


def _reduce(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`functools.reduce(function, iterable[, initial])`: `function` called through the executor, item by item."""
    if kwargs or len(args) not in (2, 3):
        ex.raises("reduce() takes two or three positional arguments")
    function, iterable = args[:2]
    iterator = ex.iterator_of(iterable)
    total = args[2] if len(args) == 3 else ex.next_of(iterator)
    if total is None:
        ex.raises("reduce() of empty iterable with no initial value")
    while (item := ex.next_of(iterator)) is not None:
        total = ex.call(function, [total, item], {})
    return total


def _chain(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.chain(*iterables)`."""
    if kwargs:
        ex.raises("chain() takes no keyword arguments")
    return ChainVariable(IteratorVariable(args))


def _chain_from_iterable(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.chain.from_iterable(iterables)`: the outer iterable is iterated lazily too."""
    _positional("from_iterable", 1)(ex, args, kwargs)
    return ChainVariable(ex.iterator_of(args[0]))


def _product(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.product(*iterables, repeat=1)`: every input is consumed first, as the real one does."""
    unknown = sorted(set(kwargs) - {"repeat"})
    repeat = ex.python_value(kwargs.get("repeat", ConstantVariable(1)))
    if unknown or type(repeat) is not int:
        ex.raises("product() called with arguments eager code rejects")
    pools = [ex.elements(a) for a in args] * repeat
    return IteratorVariable([TupleVariable([pool[i] for pool, i in zip(pools, index)])
                             for index in itertools.product(*(range(len(pool)) for pool in pools))])


def _accumulate(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.accumulate(iterable, func=None, *, initial=None)`."""
    bound = bind(ex, "accumulate", args, kwargs, ("iterable", "func", "initial"),
                 {"func": ConstantVariable(None), "initial": ConstantVariable(None)})
    if len(args) > 2:
        ex.raises("accumulate() takes at most 2 positional arguments")
    func, initial = (None if isinstance(v, ConstantVariable) and v.value is None else v
                     for v in (bound["func"], bound["initial"]))
    return AccumulateVariable(ex.iterator_of(bound["iterable"]), func, initial)


def _starmap(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.starmap(func, iterable)`."""
    _positional("starmap", 2)(ex, args, kwargs)
    return StarMapVariable(args[0], ex.iterator_of(args[1]))


def _islice(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.islice(iterable, stop)` / `(iterable, start, stop[, step])`, its bounds checked by the real one."""
    if kwargs or not 2 <= len(args) <= 4:
        ex.raises("islice() takes 2 to 4 positional arguments")
    bounds = [ex.python_value(a) for a in args[1:]]
    real(ex, itertools.islice, (), *bounds)  # (what eager raises for bad bounds)
    window = slice(*bounds) if len(bounds) > 1 else slice(None, bounds[0])
    return SliceIteratorVariable(ex.iterator_of(args[0]), window.start or 0, window.stop, window.step or 1)


def _pairwise(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.pairwise(iterable)`."""
    _positional("pairwise", 1)(ex, args, kwargs)
    return PairwiseVariable(ex.iterator_of(args[0]))


def _zip_longest(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.zip_longest(*iterables, fillvalue=None)`."""
    if set(kwargs) - {"fillvalue"}:
        ex.raises("zip_longest() got an unexpected keyword argument")
    return ZipLongestVariable([ex.iterator_of(a) for a in args], kwargs.get("fillvalue", ConstantVariable(None)))


def _repeat(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`itertools.repeat(obj, times)`: the one object, `times` times (without `times` it never ends)."""
    bound = bind(ex, "repeat", args, kwargs, ("object", "times"), {})
    times = ex.python_value(bound["times"])
    real(ex, itertools.repeat, None, times)  # (what eager raises for a bad count)
    return IteratorVariable([bound["object"]] * max(times, 0))


def _combinatoric(fn: Any) -> Builtin:
    """`itertools.combinations` / `permutations` / `combinations_with_replacement`: the pool is taken
    first, as the real ones do, and the real function picks the positions of each tuple's items."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if not args:
            ex.raises(f"{fn.__name__}() missing required argument 'iterable'")
        pool = ex.elements(args[0])
        options = {k: ex.python_value(v) for k, v in kwargs.items()}
        picks = real(ex, fn, range(len(pool)), *(ex.python_value(a) for a in args[1:]), **options)
        return IteratorVariable([TupleVariable([pool[i] for i in pick]) for pick in picks])
    return call


def _fromkeys(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`dict.fromkeys(iterable, value=None)`: every key holds the one value object, as eagerly."""
    if kwargs or len(args) not in (1, 2):
        ex.raises("fromkeys() takes one or two positional arguments")
    value = args[1] if len(args) == 2 else ConstantVariable(None)
    return DictVariable({ex.python_value(k): value for k in ex.elements(args[0])})


def _dict_get(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """`table.get(member[, default])` of a dict from outside the frame keyed by enum members (the dict's own
    `get`, found on its type, whose exact type is guarded)."""
    if kwargs or len(args) not in (2, 3):
        ex.raises("get() takes one or two arguments")
    table, key, *default = args
    if not (isinstance(table, InstanceVariable) and type(table.value) is dict and is_enum_member(key)):
        ex.unsupported(f"calls dict.get on {shown(table)}, which sot cannot translate yet")
    return ex.keyed_by_member(table, key, default[0] if default else ConstantVariable(None))


def _enum_member(cls: enum.EnumMeta) -> Builtin:
    """`Mode(value)`: the member of that value (the class is pinned by identity, its members fixed)."""
    def call(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if kwargs or len(args) != 1:  # the functional API makes a new enum class
            ex.unsupported(f"calls the enum {cls.__name__} with arguments sot cannot translate yet")
        return folded(ex, real(ex, cls, ex.python_value(args[0])))
    return call


STDLIB: dict[Any, Builtin] = {
    **{fn: _binary_function(fn, op, False) for fn, op in _BINARY_FUNCTIONS.items()},
    **{fn: _binary_function(fn, op, True) for fn, op in _IN_PLACE_FUNCTIONS.items()},
    **{fn: _compare_function(fn, op) for fn, op in _COMPARE_FUNCTIONS.items()},
    **{fn: _unary_function(fn, kind) for fn, kind in _UNARY_FUNCTIONS.items()},
    operator.getitem: _getitem, operator.truth: _truth(False), operator.not_: _truth(True),
    operator.itemgetter: _getter(operator.itemgetter), operator.attrgetter: _getter(operator.attrgetter),
    operator.itemgetter.__call__: _call_outside_getter, operator.attrgetter.__call__: _call_outside_getter,
    functools.partial: _partial, functools.partial.__call__: _call_partial, functools.reduce: _reduce,
    itertools.chain: _chain, itertools.chain.from_iterable: _chain_from_iterable, itertools.product: _product,
    itertools.accumulate: _accumulate, itertools.starmap: _starmap, itertools.islice: _islice,
    itertools.pairwise: _pairwise, itertools.zip_longest: _zip_longest, itertools.repeat: _repeat,
    **{fn: _combinatoric(fn) for fn in (itertools.combinations, itertools.permutations,
                                        itertools.combinations_with_replacement)},
    dict.fromkeys: _fromkeys, dict.get: _dict_get,
}


def stdlib_of(fn: Any) -> Builtin | None:
    """How a call of `fn` is simulated, for the standard-library callables above (None: not one of them)."""
    if type(fn) in (operator.itemgetter, operator.attrgetter):
        return _call_getter(fn)
    if isinstance(fn, enum.EnumMeta) and fn.__members__:
        return _enum_member(fn)
    try:
        return STDLIB.get(fn)
    except TypeError:  # an unhashable callable
        return None
