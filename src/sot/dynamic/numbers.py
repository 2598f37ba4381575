"""Dynamic numbers: Python ints and floats of a translated frame that enter the SIR as run-time inputs.

A translation folds a Python number read from the frame into its SIR as a constant and guards the
value, so a number that changes between calls (a loss read with `.item()` and passed on to a resume
function, a learning rate given as an argument) would translate once per value, and after
cache_size_limit values run eagerly. Instead, when a call misses ONLY because numbers changed value
(keeping their exact type; bool excepted; NumPy integer and floating scalars, e.g. from `.numpy()`, count as
numbers too), beside dims of tensors (`sot.dynamic.shapes`), their sources
become dynamic for the code object (`NumberPolicy`), and the next translation reads each as a
`NumberVariable`, guarded by its type alone (int and float stay apart).

Where a dynamic number meets a tensor in an operator (`x * s`, `s - x`, `x < s`, `x += s`), the SIR
gets an input standing for it: a 0-D tensor of the dtype eager code gives that number next to that
tensor (`scalar_dtype`, runtime's own rule: a float next to float32 stays float32, next to an int
tensor it is the default float; an int takes the tensor's dtype), which the generated code makes on
every call with `np.asarray(number, dtype)`, the very conversion eager's operator makes. The op then
runs on the same arrays as in eager code: its result is eager's bit for bit. One input per (number,
dtype); a number that is only returned, stored or passed on to a resume function is loaded from the
frame again as it is.

Arithmetic of dynamic numbers with numbers (`+`, `-`, `*`, unary `-`, and `%`, `//` by a nonzero
number known at translation time: those that cannot raise; a dynamic int meeting a float is
excluded, its conversion to float may overflow) gives a dynamic number
the generated code computes again on every call with Python's own operator (so it is eager's value by
construction), e.g. a loss accumulated as a Python float, `total + loss.item()`.
Anything else that needs the value at translation time (`if s > 0`, `range(n)`, a shape, an
attribute like `full(shape, s)`'s fill value, `/`, `float(s)`) raises `NumberNeeded`: the
translator keeps the numbers it came from static (guarded by value) for this code object, with the
reason, and simulates again. Correctness first: such a function translates per value, as before.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from runtime import Tensor
from runtime.ops.math import _scalar_dtype
from sot.guards import Guard
from sot.guards.source import Scope, Source

__all__ = ["NUMBER_TYPES", "is_number", "numpy_value_source", "NumberNeeded", "NumberPolicy", "changed_number",
           "scalar_dtype", "as_tensor_of"]

NUMBER_TYPES = (int, float)  # exact types: bool (an int subclass) stays static
_LOADABLE_ROOTS = ("f_locals", "f_globals")
_NUMPY_VALUE = "item"  # a NumPy scalar's value is guarded as `<source>.item()`, a Python number


def is_number(value: Any) -> bool:
    """A value that may become a dynamic number: a Python int or float, or a NumPy integer or floating
    scalar (what `.numpy()` results give, e.g. `arr.mean()`; runtime's operators take both alike)."""
    return type(value) in NUMBER_TYPES or isinstance(value, (np.integer, np.floating))


def numpy_value_source(source: Source) -> Source:
    """The source of the Python number a NumPy scalar read from `source` is guarded by."""
    return source.call(_NUMPY_VALUE)


class NumberNeeded(Exception):
    """A translation needed the value of a dynamic number computed from the numbers read from
    `sources`: keep them static."""

    def __init__(self, sources: tuple[str, ...], why: str):
        self.sources = sources
        self.why = why
        super().__init__(f"{why}: {', '.join(sources)} must stay static")


class NumberPolicy:
    """The dynamic numbers of one code object (by source text, as ShapePolicy), and those kept static
    with why."""

    def __init__(self) -> None:
        self.dynamic: set[str] = set()
        self.static: dict[str, str] = {}

    def is_dynamic(self, source: Source | None) -> bool:
        """Whether the number read from `source` enters translations as a run-time input."""
        return source is not None and source.text in self.dynamic

    def make_dynamic(self, sources: set[str]) -> list[str]:
        """Make `sources` dynamic unless kept static; the ones newly made dynamic."""
        new = sorted(sources - self.dynamic - self.static.keys())
        self.dynamic.update(new)
        return new

    def keep_static(self, error: NumberNeeded) -> None:
        """The numbers `error` names stay static (guarded by value) from now on, with its reason."""
        for source in error.sources:
            self.static[source] = error.why
            self.dynamic.discard(source)

    def describe(self) -> list[str]:
        """The decisions as text, one line per number."""
        return [f"{s} (number): dynamic" for s in sorted(self.dynamic)] + \
            [f"{s} (number): static, {why}" for s, why in sorted(self.static.items())]


def changed_number(guard: Guard, scope: Scope) -> str | None:
    """The source of `guard` if it failed only because a number the frame loads changed value (same
    exact type int or float, read from the frame's locals or globals, through constant subscripts)."""
    if guard.kind != "value_eq" or type(guard.expected) not in NUMBER_TYPES:
        return None
    if type(scope.value(guard.src)) is not type(guard.expected):
        return None
    src = guard.src
    if src.kind == "call" and src.key == _NUMPY_VALUE:  # a NumPy scalar's value (its exact type has a guard of its own)
        src = src.parent
    return src.text if _loadable(src) else None


def _loadable(src: Source) -> bool:
    """A source generated code can load again: `f_locals[k]` or `f_globals[k]`, then constant subscripts
    and attributes (`self.steps`: a counter a forward increments)."""
    chain = src.chain()
    if not chain or any(s.kind not in ("item", "attr") for s in chain):
        return False
    root = chain[-1].parent
    return root is not None and root.text in _LOADABLE_ROOTS


def scalar_dtype(number: int | float, dtype: np.dtype) -> np.dtype:
    """The dtype eager code gives `number` next to a tensor of `dtype` (runtime's operator rule)."""
    return _scalar_dtype(number, np.dtype(dtype))


_converters: dict[np.dtype, Callable[[Any], Tensor]] = {}


def as_tensor_of(dtype: np.dtype) -> Callable[[Any], Tensor]:
    """The function generated code calls to make a number the 0-D tensor of `dtype` eager code makes."""
    found = _converters.get(dtype)
    if found is None:
        wrap = Tensor._wrap

        def found(number: Any, _dtype: np.dtype = dtype) -> Tensor:
            return wrap(np.asarray(number, dtype=_dtype))
        found.__name__ = found.__qualname__ = f"number_as_{dtype.name}"
        _converters[dtype] = found
    return found
