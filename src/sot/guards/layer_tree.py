"""One structural guard per Layer tree instead of one guard per sublayer, parameter and flag.

A translation of a model's forward relies on hundreds of facts about its Layer tree: each
sublayer's class, its `training` flag, its empty hook dicts, which Parameter each attribute holds
and that parameter's shape, dtype and stop_gradient. As separate guards they cost more per call
than a large model's forward saves (thousands of checks, about a millisecond). `runtime.structure`
keeps one counter that every change of such a fact moves, so `fold_layer_guards` moves the guards
whose value the Layer tree alone determines into a `LayerTree` held by one `layer_tree` guard on
the tree's root. That guard checks all of them once, then again only after the counter moved: a
hit costs one counter read, one identity test of the root and a few class-attribute reads.

A guard is folded when every step of its source after the root Layer is one the counter covers,
and its check depends only on the object reached:
- an attribute a Layer holds itself (its `__dict__`, sublayers, parameters, buffers), or its
  `__dict__`; an item of a Layer's own store (`TrackedDict`) or of a tuple;
- checks of identity and type; equality of an immutable value (numbers, strings, tuples of
  them); the keys or length of a Layer's store or `__dict__` or of a tuple; a persistable
  tensor's shape, dtype and stop_gradient.
What is read from a folded layer's class (`type(layer).forward.__code__`, or a class attribute
such as a tuple of constants read through the layer) is not covered by the counter (a class can
be patched): those reads become class checks of the LayerTree, made on every hit from the class
the folded `type_is` guard expects, once per distinct class and path (a hundred sublayers of
four classes cost four sets of checks). Everything else stays a guard of its own. Writes that bypass the Layer API (`layer.__dict__[k] = v`) are not seen: see
`runtime.structure`.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Iterable, NamedTuple

from runtime import Tensor
from runtime.nn import Layer
from runtime.structure import EPOCH, TrackedDict

from .checks import VALUE
from .codegen import Namespace
from .guard import Guard
from .source import Raised, Scope, Source, step_value

__all__ = ["LayerTree", "fold_layer_guards", "leaf_guards"]

_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes)
_ON_VALUE = frozenset({"type_is", "id_is"})  # depend on the object reached only
_ON_CONTENT = frozenset({"len_eq", "keys_eq", "lacks"})  # read a mapping's or tuple's content
_ON_IMMUTABLE = frozenset({"value_eq", "is_none", "not_none"})
_MISSING = object()


class ClassCheck(NamedTuple):
    """A check of what is read from a class (`cls` then `steps`), made on every hit; `guard` is the guard it
    stands for (in reports)."""

    cls: type
    steps: tuple[Source, ...]
    guard: Guard

    def holds(self) -> bool:
        """The check, naively (reports; the hit path runs `_compile_class_checks`' function)."""
        value = self.cls
        for step in self.steps:
            value = step_value(value, step)
            if isinstance(value, Raised):
                return False
        try:
            return bool(self.guard.check.holds(value, self.guard.expected))
        except Exception:  # noqa: BLE001 - a check that cannot run fails
            return False

    def code(self, ns: Namespace) -> str:
        """The check as one Python expression over the class held in `ns`."""
        value = ns.name(self.cls, f"C_{self.cls.__name__}")
        for step in self.steps:
            value = step.render(value)
        return self.guard.check.code(self.guard.expected, ns).replace(VALUE, f"({value})")


def _compile_class_checks(checks: tuple[ClassCheck, ...]) -> Callable[[], bool]:
    """All class checks as one generated function (a Python call per check would cost a microsecond each);
    a read or check that raises fails."""
    if not checks:
        return lambda: True
    ns = Namespace()
    body = "\n        and ".join(c.code(ns) for c in checks)
    text = f"def class_checks():\n    try:\n        return bool({body})\n    except Exception:\n        return False\n"
    exec(compile(text, "<layer tree class checks>", "exec"), ns.ns)  # noqa: S102 - our own generated code
    return ns.ns["class_checks"]


class LayerTree:
    """The folded guards of one translation about the Layer tree rooted at `root`, its class checks, and
    the epoch and root object at which they last all held."""

    __slots__ = ("root", "guards", "paths", "class_checks", "classes_hold", "stamp", "__weakref__")

    def __init__(self, root: Source, guards: list[Guard], class_checks: list[ClassCheck]):
        self.root = root
        self.guards = tuple(guards)
        self.paths = tuple((g, _steps_after(g.src, root)) for g in guards)
        self.class_checks = tuple(class_checks)
        self.classes_hold = _compile_class_checks(self.class_checks)
        self.stamp: tuple[int, Any] = (-1, None)

    def holds(self, root: Any) -> bool:
        """Whether every folded guard holds for the tree at `root`: the class checks, and the rest at once
        while nothing moved the structure epoch since they last held for this very object, else by checking
        them all."""
        epoch, ref = self.stamp
        if epoch == EPOCH.value and ref is not None and ref() is root:
            return self.classes_hold()
        epoch = EPOCH.value  # read before checking: a change made meanwhile moves it past this value
        if self.first_failure(root) is not None:
            return False
        try:
            self.stamp = (epoch, weakref.ref(root))  # one assignment: threads never see half a stamp
        except TypeError:  # a root without weak references is never stamped: checked whole each time
            pass
        return True

    def first_failure(self, root: Any) -> Guard | None:
        """The first folded guard that fails for the tree at `root` (None if all hold)."""
        for guard, steps in self.paths:
            value = root
            for step in steps:
                value = step_value(value, step)
                if isinstance(value, Raised):
                    return guard
            try:
                if not guard.check.holds(value, guard.expected):
                    return guard
            except Exception:  # noqa: BLE001 - a check that cannot run fails
                return guard
        return next((c.guard for c in self.class_checks if not c.holds()), None)

    def __len__(self) -> int:
        return len(self.guards) + len(self.class_checks)

    def __repr__(self) -> str:
        return f"LayerTree({self.root.text}, {len(self.guards)} guards, {len(self.class_checks)} class checks)"


def leaf_guards(guards: Iterable[Guard]) -> Iterable[Guard]:
    """`guards` with each layer_tree guard replaced by the guards folded into it."""
    for g in guards:
        if g.kind == "layer_tree":
            yield from g.expected.guards
            yield from (c.guard for c in g.expected.class_checks)
        else:
            yield g


class _Fold(NamedTuple):
    """Where a guard folds: the tree's root; the class reads it needs (layer source, steps after `type`,
    guard); for a check of a class path itself, that path."""

    root: Source
    class_reads: tuple[tuple[Source, tuple[Source, ...], Guard], ...]
    on_class: bool


def fold_layer_guards(guards: list[Guard], scope: Scope) -> list[Guard]:
    """`guards` with those the Layer trees they read determine folded into one layer_tree guard per tree
    (placed where the tree's first folded guard was); `scope` is the frame the translation read."""
    folds = {g: _fold_of(g, scope) for g in guards}
    types = {(f.root, g.src): g.expected for g, f in folds.items()
             if f is not None and not f.on_class and g.kind == "type_is"}
    trees: dict[Source, tuple[list[Guard], dict[tuple, ClassCheck]]] = {}
    out: list[Guard | Source] = []
    for g in guards:
        f = folds[g]
        if f is None or any((f.root, layer) not in types for layer, _, _ in f.class_reads):
            out.append(g)  # a class read from a layer whose class no folded guard fixes
            continue
        if f.root not in trees:
            trees[f.root] = ([], {})
            out.append(f.root)
        folded, class_checks = trees[f.root]
        if not f.on_class:
            folded.append(g)
        for layer, steps, guard in f.class_reads:
            check = ClassCheck(types[(f.root, layer)], steps, guard)
            key = (check.cls, tuple((s.kind, s.key) for s in steps), guard.kind, guard.check.key(guard.expected))
            class_checks.setdefault(key, check)
    result: list[Guard] = []
    checked: set[tuple] = set()  # an entry holds only if all its trees do: each class check in one of them
    for item in out:
        if isinstance(item, Guard):
            result.append(item)
        else:
            folded, class_checks = trees[item]
            mine = [check for key, check in class_checks.items() if key not in checked]
            checked.update(class_checks)
            result.append(Guard(item, "layer_tree", LayerTree(item, folded, mine)))
    return result


def _fold_of(g: Guard, scope: Scope) -> _Fold | None:
    """How `g` folds into the tree of the outermost Layer on its source from which the structure epoch
    (and class checks) cover the rest of it; None if it does not."""
    chain = list(reversed(g.src.chain()))  # outermost first
    values = [scope.value(s) for s in chain]
    if any(isinstance(v, Raised) for v in values):
        return None
    for i, value in enumerate(values):
        if isinstance(value, Layer):
            fold = _walk(chain[i], value, chain[i + 1:], g, values[-1])
            if fold is not None:
                return fold
    return None


def _walk(root: Source, value: Any, steps: list[Source], g: Guard, last: Any) -> _Fold | None:
    """Follow `steps` from the Layer `value` at `root`: each must read what only a tracked change can change,
    or what is read from a layer's class (then checked on every hit)."""
    reads: list[tuple[Source, tuple[Source, ...], Guard]] = []
    in_dict = False  # the value is a Layer's `__dict__`
    for j, step in enumerate(steps):
        if isinstance(value, Layer):
            if step.kind == "type":  # the rest reads the layer's class: the whole guard is a class check
                return _Fold(root, (*reads, (step.parent, tuple(steps[j + 1:]), g)), True)
            if step.kind != "attr":
                return None
            if step.key == "__dict__":
                value, in_dict = value.__dict__, True
                continue
            if not _held_by(value, step.key):  # a plain class attribute read through the layer: pinned
                on_class = getattr(type(value), step.key, _MISSING)
                if on_class is _MISSING or hasattr(type(on_class), "__get__") or not _immutable(on_class):
                    return None
                reads.append((step.parent, (step,), Guard(step.parent.type().attr(step.key), "id_is", on_class)))
                value = on_class
                continue
        elif step.kind != "item" or not (in_dict or type(value) in (TrackedDict, tuple)):
            return None
        in_dict = False
        value = step_value(value, step)
        if isinstance(value, Raised):
            return None
    return _Fold(root, tuple(reads), False) if _covered_check(g, last, steps) else None


def _held_by(layer: Layer, name: str) -> bool:
    """Whether `layer.name` is found in the layer itself (its `__dict__` or stores), not on its class: the
    epoch watches the layer, not its class."""
    on_class = getattr(type(layer), name, _MISSING)
    d = layer.__dict__
    if name in d:
        return not hasattr(type(on_class), "__set__")  # a data descriptor on the class would win
    return on_class is _MISSING and any(name in d.get(store, ()) for store in ("_parameters", "_sub_layers",
                                                                              "_buffers"))


def _covered_check(g: Guard, value: Any, steps: list[Source]) -> bool:
    """Whether `g`'s check on `value` (reached by a covered path) depends only on what the epoch covers."""
    if g.kind in _ON_VALUE:
        return True
    if g.kind in _ON_IMMUTABLE:
        return _immutable(value)
    if g.kind in _ON_CONTENT:
        return type(value) in (TrackedDict, tuple) or bool(steps) and steps[-1].key == "__dict__"
    if g.kind == "tensor_meta":
        return isinstance(value, Tensor) and value.persistable
    return False


def _immutable(value: Any) -> bool:
    if type(value) is tuple:
        return all(_immutable(v) for v in value)
    return type(value) in _IMMUTABLE


def _steps_after(src: Source, root: Source) -> tuple[Source, ...]:
    """The steps of `src` after its prefix `root`, first step first."""
    steps = []
    while src != root:
        steps.append(src)
        src = src.parent
    return tuple(reversed(steps))
