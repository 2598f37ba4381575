"""Variables: what the OpcodeExecutor keeps on its simulated stack instead of real values.

Each Variable has a Tracker (where it came from) and `guards()`, the assumptions a translation
made about it: a tensor input's type and meta, a Python constant's value, a module's or
function's identity. Values made during simulation (Dummy tracker) need no guard.
"""
from __future__ import annotations

import enum
import itertools
import reprlib
import sys
import types
from typing import Any, Callable

from runtime import Tensor
from sot.dynamic.shapes import StaticDimNeeded, dynamic_tensor_guards
from sot.dynamic.numbers import NumberNeeded, numpy_value_source
from sot.guards import Guard, tensor_guards
from sot.guards.checks import Held
from sot.guards.source import Source, expression
from sot.ir import Meta

from .trackers import DummyTracker, GetItemTracker, NewObjectTracker, Tracker

__all__ = ["Variable", "ConstantVariable", "TensorVariable", "TupleVariable", "ListVariable", "DictVariable",
           "IteratorVariable", "DictViewVariable", "LazyIteratorVariable", "GeneratorVariable", "ZipVariable",
           "EnumerateVariable", "SetVariable", "ExceptionVariable", "NumberVariable", "NumpyScalarVariable",
           "DimVariable", "is_none", "ObjectVariable", "FunctionVariable", "BoundMethodVariable", "CellVariable",
           "InstanceVariable", "NewObjectVariable", "SuperVariable", "TensorMethodVariable", "ContainerMethodVariable",
           "NULL", "SUSPENDED", "CONSTANT_TYPES", "ITERATOR_TYPES", "OBJECT_TYPES", "python_type", "PartialVariable",
           "ChainVariable", "AccumulateVariable", "ClassMethodOfCVariable", "known_value", "is_enum_member",
           "is_bound_to_a_c_class", "StarMapVariable", "FilterVariable", "SliceIteratorVariable", "PairwiseVariable",
           "ZipLongestVariable", "NamedTupleVariable", "is_namedtuple_class", "plain_sequence",
           "LibraryContextVariable", "GeneratorContextVariable", "SuppressVariable", "LibraryContextExitVariable"]

CONSTANT_TYPES = (type(None), bool, int, float, str, type(Ellipsis))


_births = itertools.count()


def birth_now() -> int:
    """A birth number: Variables made from now on have larger ones."""
    return next(_births)


class Variable:
    """A simulated value with its tracker; `birth` orders Variables by creation (see OpcodeExecutor.touch)."""

    def __init__(self, tracker: Tracker | None = None):
        self.tracker = tracker or DummyTracker()
        self.birth = next(_births)

    def guards(self) -> list[Guard]:
        """The guards that keep this Variable's assumptions valid (none without a source)."""
        return []

    @reprlib.recursive_repr()  # a list that contains itself shows as `...` there, as a list's repr does
    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        return ""


class ConstantVariable(Variable):
    """A Python constant (None/bool/int/float/str, or a folded range/slice/constant tuple): operations on it fold."""

    def __init__(self, value: Any, tracker: Tracker | None = None):
        super().__init__(tracker)
        self.value = value

    def guards(self) -> list[Guard]:
        """value_eq on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "value_eq", self.value)]

    def _describe(self) -> str:
        return repr(self.value)


def is_none(var: Variable) -> bool:
    """Whether `var` is the constant None (not a size or number whose value is unknown)."""
    return type(var) is ConstantVariable and var.value is None


class NumberVariable(ConstantVariable):
    """A Python int or float of the frame whose value varies between calls (`sot.dynamic.numbers`):
    guarded by its exact type only. The executor feeds it to tensor operators as a SIR input;
    anything that reads `value` (folding, a condition, an attribute) raises NumberNeeded, so the
    translation keeps it static and simulates again instead of baking one value in."""

    def __init__(self, number: int | float, tracker: Tracker, sources: tuple[str, ...] | None = None):
        Variable.__init__(self, tracker)
        self.number = number  # this call's value: its type is guarded, its value is not
        # the frame's numbers it is computed from (itself, when read from the frame)
        self.sources = (tracker.source.text,) if sources is None else sources

    @property
    def value(self) -> Any:
        """Not known at translation time: the reader is named in NumberNeeded's reason."""
        raise NumberNeeded(self.sources, f"its value was needed at translation time (by "
                                         f"{sys._getframe(1).f_code.co_name})")

    def guards(self) -> list[Guard]:
        """type_is on its source (a number computed from others: none, they guard themselves)."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", type(self.number))]

    def _describe(self) -> str:
        return f"dynamic {type(self.number).__name__} from {', '.join(self.sources)}"


class DimVariable(ConstantVariable):
    """A size known only at run time: a dynamic dim read from `x.shape`, or `+`/`*`/`-` of such sizes
    (`sot.opcode_executor.dims`). `symbol` is the 0-D int tensor the graph computes for it, which a
    shape argument (`reshape([B, -1])`) takes as it is; anything that reads `value` (a condition,
    `range`, a print, an operator with a tensor) raises StaticDimNeeded for the input dims `dims`
    it comes from, so the translation specialises them and simulates again. `form` (base, offset)
    says which size it is exactly: the run-time size `base` stands for, plus `offset` (see
    `size_forms`); two sizes of one base differ by a known int."""

    def __init__(self, symbol: Any, dims: tuple[tuple[str, int, int], ...], read_at: str,
                 form: tuple[object, int] | None = None):
        Variable.__init__(self)
        self.symbol = symbol
        self.dims = dims
        self.read_at = read_at  # file:line of the `.shape` read it comes from
        self.form = form if form is not None else (object(), 0)

    @property
    def lower(self) -> int:
        """The least it can be: a base is a dynamic dim, at least 2 (see sot.dynamic.shapes)."""
        return 2 + self.form[1]

    @property
    def value(self) -> Any:
        """Not known at translation time: the reader is named in StaticDimNeeded's reason."""
        raise StaticDimNeeded(self.dims, f"`.shape` read at {self.read_at}, its value needed at translation time "
                                         f"(by {sys._getframe(1).f_code.co_name})", self.read_at)

    def _describe(self) -> str:
        return f"size known at run time ({self.symbol.name})"


class NumpyScalarVariable(ConstantVariable):
    """A NumPy scalar (np.float32(2.0), an int64 from a shape): folded like a Python constant,
    guarded by its exact type and its value as a Python number."""

    def guards(self) -> list[Guard]:
        """type_is + value_eq of `.item()` on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", type(self.value)),
                                       Guard(numpy_value_source(src), "value_eq", self.value.item())]


class TensorVariable(Variable):
    """A tensor: a SIR symbol, or (`bound`) an eager tensor bound into the SIR by identity (a
    parameter or buffer read through an attribute). An input also keeps the eager tensor it
    stands for. `passed`: passed to an op of this translation (which may hold a view of it). A tensor
    the frame made is updated in place by giving its Variable a new symbol where nothing else sees it
    (see OperatorMixin.update_in_place). `detached`: (its symbol, the one before) after a
    `stop_gradient = True` the translation captured as a detach (False brings the one before back)."""

    def __init__(self, symbol: Any, tracker: Tracker | None = None, value: Any = None, bound: bool = False):
        super().__init__(tracker)
        self.symbol = symbol
        self.value = value
        self.bound = bound
        self.passed = False
        self.detached: tuple[Any, Any] | None = None
        self.owner = None  # a bound tensor: the object (a Layer) it was read from (see guards.checks.Held)
        self.least: dict[int, int] = {}  # an input: dim -> its least size above 2 where left dynamic

    @property
    def meta(self) -> Meta:
        """Shape, dtype and stop_gradient the translation knows."""
        return Meta.from_tensor(self.value) if self.bound else self.symbol.meta

    def guards(self) -> list[Guard]:
        """type_is + tensor_meta on its source; a bound tensor also its identity."""
        src = self.tracker.source
        if src is None or self.value is None:
            return []
        if not self.bound:  # an input: from its symbol's Meta, -1 where the translation left a dim dynamic
            return dynamic_tensor_guards(src, self.value, self.symbol.meta, self.least)
        return [Guard(src, "id_is", Held(self.value, self.owner)), *tensor_guards(src, self.value)]

    def _describe(self) -> str:
        return f"bound {self.value.name}" if self.bound else repr(self.symbol)


class TupleVariable(Variable):
    """A tuple: built during simulation, returned by an op, or read from the frame item by item."""

    def __init__(self, items: list[Variable], tracker: Tracker | None = None):
        super().__init__(tracker)
        self.items = list(items)

    def guards(self) -> list[Guard]:
        """type_is + len_eq on its source (each item guards itself through its own tracker)."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", tuple), Guard(src, "len_eq", len(self.items))]

    def _describe(self) -> str:
        return ", ".join(map(repr, self.items))


class NamedTupleVariable(TupleVariable):
    """A namedtuple (of a class `is_namedtuple_class` accepts): a tuple whose fields are attributes too.
    `value`: the namedtuple read from the frame, or one of None fields standing for one made in the
    simulation (whose tracker, a NewObjectTracker, finds its class): what the attribute lookup reads its
    type from, as for the objects the frame makes (see `objects`)."""

    def __init__(self, items: list[Variable], kind: type, value: tuple, tracker: Tracker | None = None):
        super().__init__(items, tracker)
        self.kind = kind
        self.value = value

    def guards(self) -> list[Guard]:
        """type_is its class + len_eq on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", self.kind), Guard(src, "len_eq", len(self.items))]

    def _describe(self) -> str:
        return f"{self.kind.__name__}: {super()._describe()}"


def plain_sequence(like: TupleVariable, items: list[Variable]) -> TupleVariable:
    """A new list of `items` if `like` is a list, else a plain tuple (what slicing, `+` and `*` of a
    namedtuple give, as eagerly)."""
    return ListVariable(items) if isinstance(like, ListVariable) else TupleVariable(items)


_NAMEDTUPLE_HOOKS = ("__new__", "__init__", "__getattribute__", "__getattr__", "__getitem__", "__iter__", "__len__",
                     "__eq__", "__hash__", "__bool__", "__contains__")


def is_namedtuple_class(cls: Any) -> bool:
    """A class `collections.namedtuple` or `typing.NamedTuple` made, or a subclass of one that adds only
    methods: its objects are the tuples of their fields, made by the generated `__new__`."""
    if not (isinstance(cls, type) and issubclass(cls, tuple)) or type(cls).__call__ is not type.__call__:
        return False
    mro = cls.__mro__
    base = next((k for k in mro if "_fields" in k.__dict__ and "_make" in k.__dict__), None)
    return base is not None and not any(hook in k.__dict__ for k in mro[:mro.index(base)] for hook in _NAMEDTUPLE_HOOKS)


def _alias_guards(src: Source | None, aliases: list[Source]) -> list[Guard]:
    """The other sources a mutable container was read from are the very same object (the translation
    shares one Variable between them, see OpcodeExecutor.wrap)."""
    return [] if src is None else [Guard(expression(f"{alias} is {src}"), "value_eq", True) for alias in aliases]


class ListVariable(TupleVariable):
    """A list: built during simulation (BUILD_LIST), or read from the frame (`unread` given).

    A list from the frame is read lazily, because a translation must guard only what it read: its items
    are wrapped (and so guarded) when the simulation first reads `items`; appends made before that are
    kept apart (`appended`) and replayed as appends (sot.codegen.effects.effects_plan), so a list the frame
    only appends to (`losses.append(loss)`) is guarded by its type alone and one that grows every call
    still hits the cache. Once read, its length is guarded as it was when the frame was entered
    (`entry_len`: the frame's own appends are simulated, not assumed)."""

    def __init__(self, items: list[Variable], tracker: Tracker | None = None,
                 unread: tuple[list, Callable[[Any, Tracker], Variable]] | None = None):
        Variable.__init__(self, tracker)
        self._items = list(items)
        self._unread = unread  # (the real list's items at entry, how to wrap one) until they are read
        self.entry_len = len(unread[0]) if unread is not None else len(self._items)
        self.appended: list[Variable] = []  # appended while unread
        self.aliases: list[Source] = []
        self._read: tuple[int, tuple] | None = None  # (birth number when read, what `_unread` was)

    @property
    def items(self) -> list[Variable]:
        """The items as the simulation sees them now; reading them makes the entry items guarded."""
        if self._unread is not None:
            value, wrap = self._unread
            self._read = (birth_now(), self._unread)
            self._unread = None
            self._items = [*(wrap(v, GetItemTracker(self.tracker, i)) for i, v in enumerate(value)), *self.appended]
        return self._items

    @property
    def unread(self) -> bool:
        """Whether the simulation never read the items (it only appended to the list)."""
        return self._unread is not None

    def forget_read(self, barrier: int) -> None:
        """Unread again if the items were read since the birth number `barrier` (see OpcodeExecutor's
        graph breaks: the instruction that read them runs for real instead)."""
        if self._read is not None and self._read[0] >= barrier:
            self._unread, self._items, self._read = self._read[1], [], None

    def extend(self, items: list[Variable]) -> None:
        """Append `items`, without reading the list."""
        (self.appended if self._unread is not None else self._items).extend(items)

    def guards(self) -> list[Guard]:
        """type_is on its source; once its items were read, len_eq of its length at entry."""
        src = self.tracker.source
        if src is None:
            return []
        entry = [] if self.unread else [Guard(src, "len_eq", self.entry_len)]
        return [Guard(src, "type_is", list), *entry, *_alias_guards(src, self.aliases)]

    def _describe(self) -> str:
        if self.unread:
            return f"{self.entry_len} unread item(s), {len(self.appended)} appended"
        return super()._describe()


class DictVariable(Variable):
    """A dict with constant keys and Variable values: built during simulation, or read from the frame.
    A `collections.defaultdict` has its `factory` (a Variable: what a missing key's value is made by)."""

    def __init__(self, items: dict[Any, Variable], tracker: Tracker | None = None, kind: type = dict,
                 factory: Variable | None = None):
        super().__init__(tracker)
        self.items = dict(items)
        self.kind = kind
        self.factory = factory
        self.entry_keys = tuple(self.items)  # the frame's own writes are simulated, not assumed
        self.aliases: list[Source] = []

    def guards(self) -> list[Guard]:
        """type_is + keys_eq (the keys at entry) on its source (each value guards itself through its own tracker)."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", self.kind), Guard(src, "keys_eq", self.entry_keys),
                                       *_alias_guards(src, self.aliases)]

    def _describe(self) -> str:
        return ", ".join(f"{k!r}: {v!r}" for k, v in self.items.items())


class SetVariable(Variable):
    """A set or frozenset of Python constants. `items` is a real set of those values, changed by the very
    operations eager code makes, in its order, so that iterating or popping it gives eager's order
    (a copy could lay its table out differently). One read from the frame is guarded by its type and its
    items in iteration order."""

    def __init__(self, items: set | frozenset, tracker: Tracker | None = None):
        super().__init__(tracker)
        self.items = items

    @property
    def kind(self) -> type:
        """set or frozenset."""
        return type(self.items)

    def copied_in_order(self) -> bool:
        """Whether a copy of the set iterates in its order: generated code makes the frame's set anew as a
        copy of the simulated one, and a set whose history grew or emptied its table may copy into another
        order (it is not made again). (The copy's table may still be smaller: what the caller adds to it
        later may then iterate in another order than eager's.)"""
        return list(self.items.copy()) == list(self.items)

    def guards(self) -> list[Guard]:
        """type_is, and the items in iteration order, on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", self.kind),
                                       Guard(expression(f"tuple({src})"), "value_eq", tuple(self.items))]

    def _describe(self) -> str:
        return ", ".join(map(repr, self.items))


class ExceptionVariable(Variable):
    """An exception the frame makes, `kind(*args)` with constant arguments (see `exceptions`)."""

    def __init__(self, kind: type, args: list[Variable]):
        super().__init__()
        self.kind = kind
        self.args = args
        self.made: BaseException | None = None  # its Python value, made once: exceptions compare by identity

    def _describe(self) -> str:
        return f"{self.kind.__name__}({', '.join(map(repr, self.args))})"


class IteratorVariable(Variable):
    """An iterator over Variables known at translation time: FOR_ITER unrolls the loop over it."""

    def __init__(self, items: list[Variable]):
        super().__init__()
        self.items = list(items)
        self.position = 0

    def next(self, ex: Any = None) -> Variable | None:
        """The next item, None when exhausted (`ex`: unused, see LazyIteratorVariable.next)."""
        if self.position == len(self.items):
            return None
        self.position += 1
        return self.items[self.position - 1]


class DictViewVariable(Variable):
    """`d.keys()`, `d.values()` or `d.items()` of a DictVariable: a live view, not an iterator. Each
    iteration reads the dict's items as they are then (a view may be iterated again, and sees the
    writes made since it was taken), and it is reversible and has a length, as a real view."""

    def __init__(self, mapping: DictVariable, kind: str):
        super().__init__()
        self.mapping = mapping
        self.kind = kind

    def current(self) -> list[Variable]:
        """The view's items now."""
        items = self.mapping.items.items()
        if self.kind == "keys":
            return [known_value(k) for k, _ in items]
        if self.kind == "values":
            return [v for _, v in items]
        return [TupleVariable([known_value(k), v]) for k, v in items]

    def _describe(self) -> str:
        return f"{self.kind} of {self.mapping!r}"


class LazyIteratorVariable(Variable):
    """An iterator whose items are simulated as they are consumed, one step of the real iterator per
    item: a consumer that stops early (next, any, all, a shorter zip, a `break`) runs no more of it
    than eager code does, and what its steps do (a generator's appends, prints, tensor ops) comes
    in eager's order, interleaved with the consumer's. It exists only in the simulation: a break while
    one is live makes a zip or enumerate again over its sources as they are then (see
    sot.codegen.rebuild), and cannot rebuild the others (the frame then runs eagerly)."""

    def next(self, ex: Any) -> Variable | None:
        """The next item, simulated by the executor `ex`; None when exhausted."""
        raise NotImplementedError


class GeneratorVariable(LazyIteratorVariable):
    """A generator of an inlined generator function: `frame` (its OpcodeInlineExecutor) stopped at
    its start or at a `yield`, run on to the next one for each item."""

    def __init__(self, frame: Any):
        super().__init__()
        self.frame = frame
        self.done = False

    def next(self, ex: Any) -> Variable | None:
        if self.done:
            return None
        self.frame.run()
        item, self.frame.yielded = self.frame.yielded, None
        self.done = item is None
        return item

    def _describe(self) -> str:
        return self.frame.code.co_qualname


class ZipVariable(LazyIteratorVariable):
    """zip(*sources) over iterators: each item takes one item from each source in order, as zip does,
    so the sources before the first exhausted one lose the item they gave; `strict`: an exhausted
    source when the others are not is zip's ValueError (`ex.raises`: the frame raises it)."""

    def __init__(self, sources: list[Variable], strict: bool):
        super().__init__()
        self.sources = sources
        self.strict = strict
        self.done = False

    def next(self, ex: Any) -> Variable | None:
        if self.done:
            return None
        items = []
        for i, source in enumerate(self.sources):
            item = ex.next_of(source)
            if item is None:
                self.done = True
                if self.strict and (i > 0 or any(ex.next_of(s) is not None for s in self.sources[1:])):
                    ex.raises("zip() arguments of different lengths (strict=True)")
                return None
            items.append(item)
        return TupleVariable(items)


class EnumerateVariable(LazyIteratorVariable):
    """enumerate(source, start) over an iterator: one item of the source per item."""

    def __init__(self, source: Variable, start: int):
        super().__init__()
        self.source = source
        self.count = start

    def next(self, ex: Any) -> Variable | None:
        item = ex.next_of(self.source)
        if item is None:
            return None
        self.count += 1
        return TupleVariable([ConstantVariable(self.count - 1), item])


class ObjectVariable(Variable):
    """A module, function, class or builtin: used by identity, guarded with id_is."""

    def __init__(self, value: Any, tracker: Tracker | None = None):
        super().__init__(tracker)
        self.value = value

    def guards(self) -> list[Guard]:
        """id_is on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "id_is", self.value)]

    def _describe(self) -> str:
        return getattr(self.value, "__name__", type(self.value).__name__)


class FunctionVariable(ObjectVariable):
    """A Python function to inline: a real one read from the frame (guarded by identity), or one that
    MAKE_FUNCTION built during simulation (`value` None; its defaults and closure cells are Variables).

    `global_tracker(name)` says where a global read by its code comes from (None: not reloadable,
    the read is not guarded — functions of the `runtime` library, whose module globals are fixed).
    """

    def __init__(self, value: types.FunctionType | None, tracker: Tracker | None = None, *,
                 code: types.CodeType | None = None, defaults: tuple = (), kwdefaults: dict | None = None,
                 closure: tuple = (), f_globals: dict | None = None, global_tracker: Any = None):
        super().__init__(value, tracker)
        self.code = value.__code__ if value is not None else code
        self.defaults = defaults
        self.kwdefaults = kwdefaults or {}
        self.closure = closure
        self.f_globals = value.__globals__ if value is not None else f_globals
        self.global_tracker = global_tracker

    def guards(self) -> list[Guard]:
        """id_is for a real function; a simulated one has no source."""
        return super().guards() if self.value is not None else []

    def _describe(self) -> str:
        return self.code.co_qualname


class BoundMethodVariable(Variable):
    """`obj.method`: a FunctionVariable (or Tensor method) called with the object (or class) as its first argument."""

    def __init__(self, function: Variable, receiver: Variable):
        super().__init__()
        self.function = function
        self.receiver = receiver

    def _describe(self) -> str:
        return f"{self.function._describe()} of {self.receiver!r}"


class CellVariable(Variable):
    """A closure cell: `content` is its Variable (None while empty). A cell of a real function
    (`real`) is shared with code outside the translation, so storing into it is a side effect,
    replayed into the cell object `where` says: the cell and its tracker, or the Variable of the cell
    itself (a free variable of the translated frame); None: no source to reach it."""

    def __init__(self, content: Variable | None = None, real: bool = False, where: tuple | None = None):
        super().__init__()
        self.content = content
        self.real = real
        self.where = where

    def _describe(self) -> str:
        return repr(self.content)


class InstanceVariable(ObjectVariable):
    """Any other object (a user class instance, an nn.Layer): attributes are read through its
    tracker, methods resolved on its type, which is what its guard pins (type_is)."""

    def guards(self) -> list[Guard]:
        """type_is on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", type(self.value))]

    def _describe(self) -> str:
        return type(self.value).__name__


class NewObjectVariable(InstanceVariable):
    """An object of a plain Python class constructed during simulation (`Box(x)`): `value` is a blank
    instance made by `object.__new__`, there only for its type; the attributes the simulation set are
    `attrs` (in the order first set, as its `__dict__` keeps them). Nothing outside the frame can hold
    it before the frame ends, so setting them is no side effect; where it escapes (returned, stored,
    live at a break) the generated code makes it again with them (see sot.codegen.returns `Made`)."""

    def __init__(self, value: Any, cls: Variable):
        super().__init__(value, NewObjectTracker(cls.tracker))
        self.attrs: dict[str, Variable] = {}

    def _describe(self) -> str:
        return f"new {type(self.value).__name__}"


class SuperVariable(Variable):
    """`super(cls, obj)`: attribute lookups start after `cls` in the MRO of obj's type."""

    def __init__(self, cls: type, receiver: Variable):
        super().__init__()
        self.cls = cls
        self.receiver = receiver

    def _describe(self) -> str:
        return f"{self.cls.__name__}, {self.receiver!r}"


class TensorMethodVariable(Variable):
    """A Tensor method loaded by LOAD_ATTR(is_method): the tensor itself is the call's self slot."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def _describe(self) -> str:
        return self.name


class ContainerMethodVariable(TensorMethodVariable):
    """A list, tuple, dict or set method loaded with its container as self; `kind` is the container's
    Python type (a break rebuilds the method as `kind.name`, the unbound method CPython pushes)."""

    def __init__(self, name: str, kind: type):
        super().__init__(name)
        self.kind = kind


class _Null(Variable):
    """The NULL call slot CPython pushes beside a callable."""


NULL = _Null()


class _Suspended(Variable):
    """What `OpcodeExecutor.run` returns when an inlined generator stops: at its start, at a `yield`
    (its `yielded`), or at its end."""


SUSPENDED = _Suspended()
ITERATOR_TYPES = (IteratorVariable, LazyIteratorVariable)


def python_type(var: Variable) -> type | None:
    """The Python type of the value `var` stands for, when the translation knows it (its guard pins it)."""
    if isinstance(var, TensorVariable):  # an input or a bound tensor (a Parameter): its exact type is guarded
        return type(var.value) if var.value is not None else Tensor
    if isinstance(var, (DictVariable, SetVariable, ExceptionVariable)):
        return var.kind
    if isinstance(var, NamedTupleVariable):
        return var.kind
    if isinstance(var, TupleVariable):
        return list if isinstance(var, ListVariable) else tuple
    if isinstance(var, (ConstantVariable, ObjectVariable)):
        return type(var.value)
    return None


# enum members are singletons: used, and guarded, by identity like classes
OBJECT_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, enum.Enum)


def known_value(value: Any) -> Variable:
    """The Variable of a Python value known at translation time (a dict key, a folded result): an enum
    member stays an object compared by identity (`m is Mode.A`), anything else is a constant."""
    return ObjectVariable(value) if isinstance(value, enum.Enum) else ConstantVariable(value)


def is_enum_member(var: Variable) -> bool:
    """Whether `var` is an enum member (pinned by identity, so operators on it fold like on constants)."""
    return isinstance(var, ObjectVariable) and isinstance(var.value, enum.Enum)


class PartialVariable(Variable):
    """`functools.partial(func, *args, **keywords)` made in the frame: calling it calls `func` with its
    arguments first and its keywords updated by the call's (eager's rule). `keywords` is a DictVariable,
    as the real `.keywords` is a dict the frame may change before the call."""

    def __init__(self, func: Variable, args: list[Variable], keywords: DictVariable):
        super().__init__()
        self.func = func
        self.args = list(args)
        self.keywords = keywords

    def _describe(self) -> str:
        return f"partial of {self.func!r}"



class ChainVariable(LazyIteratorVariable):
    """`itertools.chain(*iterables)` / `chain.from_iterable(outer)`: the items of each iterable in turn,
    each iterable taken from `outer` (and iterated) only once the one before is exhausted, as chain does."""

    def __init__(self, outer: Variable):
        super().__init__()
        self.outer = outer
        self.current: Variable | None = None

    def next(self, ex: Any) -> Variable | None:
        while True:
            if self.current is None:
                iterable = ex.next_of(self.outer)
                if iterable is None:
                    return None
                self.current = ex.iterator_of(iterable)
            item = ex.next_of(self.current)
            if item is not None:
                return item
            self.current = None


class AccumulateVariable(LazyIteratorVariable):
    """`itertools.accumulate(source, func, initial=...)`: running totals, `total + item` (or
    `func(total, item)`, called through the executor) computed as each item is consumed."""

    def __init__(self, source: Variable, func: Variable | None, initial: Variable | None):
        super().__init__()
        self.source = source
        self.func = func
        self.total = initial
        self.started = False  # whether the first item (the initial value, or the source's first) was given

    def next(self, ex: Any) -> Variable | None:
        if not self.started:
            self.started = True
            if self.total is not None:
                return self.total
        item = ex.next_of(self.source)
        if item is None:
            return None
        if self.total is None:
            self.total = item
        elif self.func is None:
            self.total = ex.binary("+", self.total, item)
        else:
            self.total = ex.call(self.func, [self.total, item], {})
        return self.total


_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a class whose attributes cannot be set (C types)


def is_bound_to_a_c_class(value: Any) -> bool:
    """A C class's classmethod bound to the class (`dict.fromkeys`, `itertools.chain.from_iterable`)."""
    return isinstance(value, types.BuiltinMethodType) and isinstance(value.__self__, type) and bool(
        value.__self__.__flags__ & _IMMUTABLE_TYPE)


class ClassMethodOfCVariable(ObjectVariable):
    """A C class's classmethod bound to the class: a new object on every read, so not guarded by identity but
    by its type here, and by the class it is bound to and its name (see `wrap`): a C class cannot change."""

    def guards(self) -> list[Guard]:
        """type_is on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "type_is", type(self.value))]


class StarMapVariable(LazyIteratorVariable):
    """`itertools.starmap(func, source)`, and `map(func, *iterables)` as a starmap over their zip: `func`
    is called through the executor on each item's elements as the item is consumed."""

    def __init__(self, func: Variable, source: Variable):
        super().__init__()
        self.func = func
        self.source = source

    def next(self, ex: Any) -> Variable | None:
        item = ex.next_of(self.source)
        return None if item is None else ex.call(self.func, ex.elements(item), {})


class FilterVariable(LazyIteratorVariable):
    """`filter(func, source)`: the items for which `func(item)` (the item itself, for None) is true."""

    def __init__(self, func: Variable | None, source: Variable):
        super().__init__()
        self.func = func
        self.source = source

    def next(self, ex: Any) -> Variable | None:
        while (item := ex.next_of(self.source)) is not None:
            if ex.truth(item if self.func is None else ex.call(self.func, [item], {})):
                return item
        return None


class SliceIteratorVariable(LazyIteratorVariable):
    """`itertools.islice(source, start, stop, step)`: the source's items are taken exactly as the real
    islice takes them (skipped ones included, none past `stop`)."""

    def __init__(self, source: Variable, start: int, stop: int | None, step: int):
        super().__init__()
        self.source: Variable | None = source
        self.stop = stop
        self.step = step
        self.count = 0  # items taken from the source
        self.next_index = start  # the index of the next item given

    def next(self, ex: Any) -> Variable | None:
        if self.source is None:
            return None
        while self.count < self.next_index:
            if ex.next_of(self.source) is None:
                self.source = None
                return None
            self.count += 1
        if self.stop is not None and self.count >= self.stop:
            self.source = None
            return None
        item = ex.next_of(self.source)
        if item is None:
            self.source = None
            return None
        self.count += 1
        self.next_index += self.step
        if self.stop is not None and self.next_index > self.stop:
            self.next_index = self.stop
        return item


class PairwiseVariable(LazyIteratorVariable):
    """`itertools.pairwise(source)`: overlapping pairs of consecutive items."""

    def __init__(self, source: Variable):
        super().__init__()
        self.source: Variable | None = source
        self.last: Variable | None = None

    def next(self, ex: Any) -> Variable | None:
        if self.source is None:
            return None
        if self.last is None:
            self.last = ex.next_of(self.source)
        new = ex.next_of(self.source) if self.last is not None else None
        if new is None:
            self.source = None
            return None
        pair, self.last = TupleVariable([self.last, new]), new
        return pair


class ZipLongestVariable(LazyIteratorVariable):
    """`itertools.zip_longest(*sources, fillvalue=...)`: an exhausted source gives `fill` until the last
    one is exhausted, which ends it at once (the items taken in that round are dropped, as the real one)."""

    def __init__(self, sources: list[Variable], fill: Variable):
        super().__init__()
        self.sources: list[Variable | None] = list(sources)
        self.fill = fill
        self.active = len(sources)

    def next(self, ex: Any) -> Variable | None:
        if not self.active:
            return None
        items = []
        for i, source in enumerate(self.sources):
            item = None if source is None else ex.next_of(source)
            if item is None and source is not None:
                self.active -= 1
                self.sources[i] = None
                if not self.active:
                    return None
            items.append(self.fill if item is None else item)
        return TupleVariable(items)


class LibraryContextVariable(Variable):
    """A context manager of contextlib the frame makes, simulated instead of made (see `contexts`):
    `name` is how the user's code calls it. Subclasses say what entering and leaving it does."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def _describe(self) -> str:
        return self.name


class GeneratorContextVariable(LibraryContextVariable):
    """What a `@contextlib.contextmanager` function's call gives: `generator` is the inlined generator of
    the function it decorates, not started until a `with` enters it; `entered` once one did (a second
    entry is an error in eager code)."""

    def __init__(self, name: str, generator: GeneratorVariable):
        super().__init__(name)
        self.generator = generator
        self.entered = False


class SuppressVariable(LibraryContextVariable):
    """`contextlib.suppress(*kinds)`: leaving it by an exception of one of `kinds` suppresses it."""

    def __init__(self, kinds: tuple[type, ...]):
        super().__init__("contextlib.suppress")
        self.kinds = kinds


class LibraryContextExitVariable(Variable):
    """The bound `__exit__` of an entered LibraryContextVariable, which BEFORE_WITH pushes."""

    def __init__(self, context: LibraryContextVariable):
        super().__init__()
        self.context = context

    def _describe(self) -> str:
        return self.context.name
