"""The check kinds a guard can make, as one table: `CHECKS[name]` describes each kind once.

Every kind says how to check a value naively (`holds`, used for careful lookups, miss reports
and as the oracle of the tests), how to write the same check as inline Python for the generated
guard function (`code`: a template over `VALUE`, the guarded value's expression), how to print
it, what it costs (cheap kinds are checked first), and when two expectations on the same source
can never both hold (`exclusive`, which lets the cache reorder exclusive entries freely).
A check never reads tensor values: only shapes, dtypes and stop_gradient.
"""
from __future__ import annotations

import builtins
import math
import re
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Protocol

import numpy as np

import runtime

__all__ = ["VALUE", "Check", "CHECKS", "Held", "TensorMeta", "Namer", "value_key", "describe"]

# Stands for the guarded value's expression in a code template; never in a repr.
VALUE = "\x01"
_NoneType = type(None)
_SCALARS = (_NoneType, bool, int, float, str, bytes)


class Namer(Protocol):
    """Binds objects to constant names in the generated function's namespace."""

    def name(self, obj: Any, hint: str) -> str: ...

    def type_name(self, t: type) -> str: ...


@dataclass(frozen=True)
class Check:
    """One check kind: naive semantics, generated code, text, cost, exclusivity."""

    name: str
    cost: int  # rank: lower runs earlier on a path
    validate: Callable[[Any], Any]  # the expectation, normalised; raises on a bad one
    key: Callable[[Any], Hashable]  # what makes two expectations the same
    holds: Callable[[Any, Any], bool]  # (value, expected) -> passes; may raise (= fails)
    code: Callable[[Any, Namer], str]  # inline Python over VALUE, the guarded value's expression
    text: Callable[[str, Any], str]  # (source text, expected) -> readable guard
    show: Callable[[Any], str]  # an actual value, as a miss report shows it
    exclusive: Callable[[Any, Any], bool]  # two expectations on one source never both hold
    implied_type: Callable[[Any], "type | None"] = lambda e: None  # exact type a pass implies


def describe(obj: Any) -> str:
    """A short human name for an object held by an identity guard or seen in a miss."""
    if isinstance(obj, types.ModuleType):
        return f"module {obj.__name__}"
    if isinstance(obj, type):
        return f"class {_qualname(obj)}"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return f"function {getattr(obj, '__module__', None) or '?'}.{obj.__qualname__}"
    text = repr(obj) if isinstance(obj, _SCALARS + (tuple,)) else None
    if text is not None and len(text) <= 60:
        return f"{text} ({type(obj).__name__})"
    return f"{type(obj).__qualname__} object at {id(obj):#x}"


def _qualname(t: type) -> str:
    mod = t.__module__
    return t.__qualname__ if mod == "builtins" else f"{mod}.{t.__qualname__}"


def _const_name(obj: Any) -> str:
    return getattr(obj, "__name__", None) or type(obj).__name__


# ----- type_is: the exact type (a subclass does not pass) -----

def _validate_type(e: Any) -> type:
    if not isinstance(e, type):
        raise TypeError(f"type_is expects a type, got {e!r}")
    return e


TYPE_IS = Check(
    "type_is", 1, _validate_type, id,
    holds=lambda v, e: type(v) is e,
    code=lambda e, ns: f"type({VALUE}) is {ns.type_name(e)}",
    text=lambda s, e: f"type({s}) is {_qualname(e)}",
    show=lambda v: f"type {_qualname(type(v))}",
    exclusive=lambda a, b: a is not b,
    implied_type=lambda e: e,
)

# ----- id_is: this very object (modules, functions, classes, parameters) -----


class Held:
    """The object an identity guard expects, held weakly where its type allows: a cache entry must not keep a
    lambda or a Layer's parameters alive (`CodeCache` drops an entry once such an object died, see `alive`).
    Objects that cannot be weakly referenced (method descriptors of C types, dtype singletons, ...) are held
    strongly: an `id()` kept without a reference could match a new object that reuses the address; so are
    modules and functions that live as long as their module (`_lives_on`). Its key is the object's id, valid
    while the entry exists (the entry goes when the object does)."""

    __slots__ = ("ref", "strong", "key", "type", "text", "hint", "owner")

    def __init__(self, obj: Any, owner: Any = None):
        try:
            if _lives_on(obj):
                raise TypeError
            self.ref, self.strong = weakref.ref(obj), None
        except TypeError:
            self.ref, self.strong = None, obj
        self.key = id(obj)
        self.type = type(obj)
        self.text = describe(obj)
        self.hint = _const_name(obj)
        # what `obj` was read from (the Layer of a parameter): once it died the entry is dropped too (the
        # entry's graph holds the parameter itself), a hint that is neither compared nor checked
        self.owner = None
        if owner is not None:
            try:
                self.owner = weakref.ref(owner)
            except TypeError:  # (an object without weak references: no hint)
                pass

    def get(self) -> Any:
        """The object (None once a weakly held one died)."""
        return self.strong if self.ref is None else self.ref()

    def __repr__(self) -> str:
        return self.text


def _lives_on(obj: Any) -> bool:
    """Modules, the functions of C modules (`len`, `math.sqrt`) and functions defined at a module's or class's
    top level (not lambdas or nested functions, made anew by the code that defines them) live as long as
    their module: a strong reference costs nothing, and the guard reads one name instead of calling a weak
    reference."""
    if isinstance(obj, types.FunctionType):
        return "<" not in obj.__qualname__
    return isinstance(obj, types.ModuleType) or (isinstance(obj, types.BuiltinFunctionType) and (
        obj.__self__ is None or isinstance(obj.__self__, types.ModuleType)))


def _held_code(e: Held, ns: Namer) -> str:
    if e.ref is None:
        return f"{VALUE} is {ns.name(e.strong, 'I_' + e.hint)}"
    # `is not None`: a dead reference gives None, which must not match an argument that is None
    return f"{VALUE} is {ns.name(e.ref, 'W_' + e.hint)}() is not None"


ID_IS = Check(
    "id_is", 1, lambda e: e if isinstance(e, Held) else Held(e), lambda e: e.key,
    holds=lambda v, e: v is not None and v is e.get(),
    code=_held_code,
    text=lambda s, e: f"{s} is {e.text}",
    show=describe,
    exclusive=lambda a, b: a.key != b.key,
    implied_type=lambda e: e.type,
)

# ----- value_eq: a Python constant, type included (1, 1.0 and True differ; NaN equals NaN) -----


def value_key(v: Any) -> Hashable:
    """The typed identity of a constant: equal keys iff value_eq holds between the two."""
    t = type(v)
    if t is float:
        return (float, "nan") if v != v else (float, v, math.copysign(1.0, v))
    if t is tuple:
        return (tuple, tuple(value_key(x) for x in v))
    return (t, v)


def _validate_value(e: Any) -> Any:
    t = type(e)
    if t is tuple:
        for x in e:
            _validate_value(x)
    elif t not in _SCALARS:
        raise TypeError(f"value_eq supports None, bool, int, float, str, bytes and tuples of them, "
                        f"not {t.__name__}; guard its identity or type instead")
    return e


def _value_code(e: Any, expr: str, ns: Namer) -> str:
    """Code that `expr` is of type(e) and equals constant `e` (typed, NaN equal to NaN)."""
    t = type(e)
    if t is _NoneType or t is bool:
        return f"{expr} is {e!r}"
    if t is tuple:
        parts = [f"len({expr}) == {len(e)}"]
        parts += [_value_code(x, f"{expr}[{i}]", ns) for i, x in enumerate(e)]
        return f"type({expr}) is tuple and " + " and ".join(parts)
    typed = f"type({expr}) is {t.__name__} and "
    if t is not float:
        return f"{typed}{expr} == {e!r}"
    if e != e:
        return f"{typed}{expr} != {expr}"
    if e == 0.0:  # 0.0 == -0.0: the sign tells them apart
        sign = math.copysign(1.0, e)
        return f"{typed}{expr} == 0.0 and {ns.name(math.copysign, 'copysign')}(1.0, {expr}) == {sign!r}"
    if math.isinf(e):
        return f"{typed}{expr} == {ns.name(e, 'F_inf' if e > 0 else 'F_ninf')}"
    return f"{typed}{expr} == {e!r}"


def _value_eq_code(e: Any, ns: Namer) -> str:
    # The very object the translation saw passes at once (these types are immutable): an
    # unchanged global costs one dict read and one `is`; only a new object is compared.
    if type(e) is _NoneType or type(e) is bool:
        return _value_code(e, VALUE, ns)
    const = ns.name(e, "K_" + re.sub(r"\W", "_", repr(e))[:24])
    return f"({VALUE} is {const} or {_value_code(e, VALUE, ns)})"


VALUE_EQ = Check(
    "value_eq", 2, _validate_value, value_key,
    holds=lambda v, e: value_key(v) == value_key(e),
    code=_value_eq_code,
    text=lambda s, e: f"{s} == {e!r}",
    show=describe,
    exclusive=lambda a, b: value_key(a) != value_key(b),
    implied_type=type,
)

# ----- tensor_meta: shape (-1 matches any size), dtype, stop_gradient, place; never values -----
_CPU = runtime.CPUPlace()
_HOST_ARRAY = np.ndarray


@dataclass(frozen=True)
class TensorMeta:
    """What a translation assumed of a tensor: shape (-1: any size), dtype, stop_gradient and the place
    that holds it (a compiled graph runs its kernels on one place)."""

    shape: tuple[int, ...]
    dtype: runtime.dtype
    stop_gradient: bool
    place: Any = _CPU

    @classmethod
    def of(cls, t: runtime.Tensor, dynamic_dims: tuple[int, ...] = ()) -> "TensorMeta":
        """The meta of tensor `t`, with the dims in `dynamic_dims` left free (-1)."""
        shape = tuple(-1 if i in dynamic_dims else d for i, d in enumerate(t.shape))
        return cls(shape, t.dtype, bool(t.stop_gradient), t.place)

    def __str__(self) -> str:
        where = "" if self.place == _CPU else f", on {self.place}"
        return (f"shape {list(self.shape)}, dtype {self.dtype.name}, "
                f"stop_gradient={self.stop_gradient}{where}")


def _validate_meta(e: Any) -> TensorMeta:
    if not isinstance(e, TensorMeta):
        raise TypeError(f"tensor_meta expects a TensorMeta, got {e!r}")
    if any(type(d) is not int or d < -1 for d in e.shape):
        raise ValueError(f"tensor_meta: dims must be ints >= -1, got {list(e.shape)}")
    if not isinstance(e.dtype, runtime.dtype) or type(e.stop_gradient) is not bool:
        raise TypeError(f"tensor_meta expects a runtime dtype and a bool stop_gradient, got {e!r}")
    if not isinstance(e.place, runtime.place.Place):
        raise TypeError(f"tensor_meta expects a place such as paddle.CPUPlace(), got {e.place!r}")
    return e


def _meta_holds(v: Any, e: TensorMeta) -> bool:
    shape = v.shape
    return (v.stop_gradient is e.stop_gradient and v.dtype is e.dtype and len(shape) == len(e.shape)
            and all(w == -1 or d == w for d, w in zip(shape, e.shape)) and v.place == e.place)


def _place_code(e: TensorMeta, ns: Namer) -> str:
    """The check of the array's place: on a GPU, CuPy's array type and the device id; on the host, NumPy's
    array type, left out where no GPU can exist (every array is then a NumPy array, and a GPU entry's check
    can never hold: the guard code is made again whenever a cache changes, whatever entries it holds)."""
    gpu = runtime.is_compiled_with_cuda()
    if e.place.is_gpu_place():
        if not gpu:
            return "False"
        cupy = runtime.place.array_module(e.place)
        return f"type(_a) is {ns.name(cupy.ndarray, 'DEVICE_ARRAY')} and _a.device.id == {e.place.get_device_id()}"
    if gpu:
        return f"type(_a) is {ns.name(_HOST_ARRAY, 'HOST_ARRAY')}"
    return ""


def _meta_code(e: TensorMeta, ns: Namer) -> str:
    # The runtime keeps a tensor's array in `_data`; its shape tuple and NumPy dtype (a singleton
    # per builtin dtype, so `is` is exact) are read directly: the public `shape` property builds a
    # list and `dtype` maps the NumPy dtype, three times the cost for the same facts; the flag is read
    # from its slot, not through the property that watches writes (runtime.structure).
    dt = ns.name(e.dtype.np_dtype, f"D_{e.dtype.name}")
    code = f"{VALUE}._stop_gradient is {e.stop_gradient!r} and (_a := {VALUE}._data).dtype is {dt}"
    place = _place_code(e, ns)
    if place:
        code = f"{code} and {place}"
    if -1 not in e.shape:
        return f"{code} and _a.shape == {e.shape!r}"
    fixed = [f"_s[{i}] == {d}" for i, d in enumerate(e.shape) if d != -1]
    return " and ".join([f"{code} and len(_s := _a.shape) == {len(e.shape)}", *fixed])


def _meta_show(v: Any) -> str:
    if isinstance(v, runtime.Tensor):
        where = "" if v.place == _CPU else f", on {v.place}"
        return f"tensor of shape {v.shape}, dtype {v.dtype.name}, stop_gradient={v.stop_gradient}{where}"
    return describe(v)


def _meta_exclusive(a: TensorMeta, b: TensorMeta) -> bool:
    return (a.dtype is not b.dtype or a.stop_gradient is not b.stop_gradient or a.place != b.place
            or len(a.shape) != len(b.shape)
            or any(x != -1 and y != -1 and x != y for x, y in zip(a.shape, b.shape)))


TENSOR_META = Check(
    "tensor_meta", 5, _validate_meta, lambda e: e,
    holds=_meta_holds,
    code=_meta_code,
    text=lambda s, e: f"{s} is a tensor of {e}",
    show=_meta_show,
    exclusive=_meta_exclusive,
)

# ----- len_eq, keys_eq: container structure -----


def _validate_len(e: Any) -> int:
    if type(e) is not int or e < 0:
        raise ValueError(f"len_eq expects a length >= 0, got {e!r}")
    return e


LEN_EQ = Check(
    "len_eq", 3, _validate_len, lambda e: e,
    holds=lambda v, e: len(v) == e,
    code=lambda e, ns: f"len({VALUE}) == {e}",
    text=lambda s, e: f"len({s}) == {e}",
    show=lambda v: f"len {len(v)}",
    exclusive=lambda a, b: a != b,
)


def _validate_keys(e: Any) -> tuple:
    keys = tuple(e)
    for k in keys:
        hash(k)
    return keys


def _keys_holds(v: Any, e: tuple) -> bool:
    keys = list(v)
    return keys == list(e) and [type(k) for k in keys] == [type(k) for k in e]


def _keys_code(e: tuple, ns: Namer) -> str:
    code = f"list({VALUE}) == {ns.name(list(e), 'K_keys')}"
    if all(type(k) is str for k in e):
        return code
    return f"{code} and [*map(type, {VALUE})] == {ns.name([type(k) for k in e], 'K_key_types')}"


KEYS_EQ = Check(
    "keys_eq", 4, _validate_keys, lambda e: (e, tuple(type(k) for k in e)),
    holds=_keys_holds,
    code=_keys_code,
    text=lambda s, e: f"list({s}) == {list(e)!r}",
    show=lambda v: f"keys {list(v)!r}",
    exclusive=lambda a, b: a != b or [type(k) for k in a] != [type(k) for k in b],
)

# ----- is_none / not_none -----

IS_NONE = Check(
    "is_none", 0, lambda e: None, lambda e: None,
    holds=lambda v, e: v is None,
    code=lambda e, ns: f"{VALUE} is None",
    text=lambda s, e: f"{s} is None",
    show=describe,
    exclusive=lambda a, b: False,
    implied_type=lambda e: _NoneType,
)

NOT_NONE = Check(
    "not_none", 0, lambda e: None, lambda e: None,
    holds=lambda v, e: v is not None,
    code=lambda e, ns: f"{VALUE} is not None",
    text=lambda s, e: f"{s} is not None",
    show=describe,
    exclusive=lambda a, b: False,
)

# ----- lacks: a mapping without a key (a builtin not shadowed by a global, a method not by an instance's own) -----

LACKS = Check(
    "lacks", 2, lambda e: e, lambda e: value_key(e),
    holds=lambda v, e: e not in v,
    code=lambda e, ns: f"{e!r} not in {VALUE}",
    text=lambda s, e: f"{e!r} not in {s}",
    show=lambda v: f"keys {describe(tuple(v))}" if len(v) < 8 else f"{len(v)} keys",
    exclusive=lambda a, b: False,
)

# ----- disjoint_memory: two tensors whose arrays cannot overlap -----


def _disjoint(v: Any) -> bool:
    """False when the two tensors' arrays may share memory. NumPy's bounds test (no exact overlap solving, which can
    cost exponential time): views of one buffer count as sharing even where they interleave, a safe answer."""
    first, second = v
    return not np.may_share_memory(first._data, second._data)


DISJOINT_MEMORY = Check(
    "disjoint_memory", 6, lambda e: None, lambda e: None,
    holds=lambda v, e: _disjoint(v),
    code=lambda e, ns: f"{ns.name(_disjoint, 'disjoint')}({VALUE})",
    text=lambda s, e: f"the tensors {s} share no memory",
    show=lambda v: "they share memory" if not _disjoint(v) else "they share no memory",
    exclusive=lambda a, b: False,
)

# ----- layer_tree: the guards about one Layer tree, checked again only after it changed (guards.layer_tree) -----


def _validate_tree(e: Any) -> Any:
    if not callable(getattr(e, "holds", None)) or not hasattr(e, "guards"):
        raise TypeError(f"layer_tree expects a LayerTree, got {e!r}")
    return e


LAYER_TREE = Check(
    "layer_tree", 3, _validate_tree, id,
    holds=lambda v, e: e.holds(v),
    code=lambda e, ns: f"{ns.name(e, 'TREE')}.holds({VALUE})",
    text=lambda s, e: f"the Layer tree at {s} is as translated ({len(e)} guards, checked again when it changes)",
    show=describe,
    exclusive=lambda a, b: False,
)

CHECKS: dict[str, Check] = {c.name: c for c in (
    TYPE_IS, ID_IS, VALUE_EQ, TENSOR_META, LEN_EQ, KEYS_EQ, IS_NONE, NOT_NONE, LACKS, DISJOINT_MEMORY, LAYER_TREE)}

BUILTIN_TYPES = {t: t.__name__ for t in vars(builtins).values()
                 if isinstance(t, type) and getattr(builtins, t.__name__, None) is t}
