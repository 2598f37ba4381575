"""Dynamic dims: which dims of which tensor input a translation leaves free (-1), and why.

Our kernels are shape-polymorphic, so a Program built from input Metas with -1 runs for any size
there (meta functions propagate -1). A function's first translation specialises on every shape.
When a later call misses ONLY because dims of tensor inputs changed (every failing guard of an
entry is a tensor_meta guard whose rank, dtype and stop_gradient still hold), those dims of those
sources become dynamic for the function's code object, and the next translation guards only the
rank, dtype, stop_gradient and the dims still static: a function fed batches of varying size
translates at most twice. `mark_dynamic(t, dim)` makes a dim dynamic from the first translation,
`mark_static(t, dim)` keeps it static whatever the misses say. The same miss makes Python numbers
that alone changed value dynamic too (`sot.dynamic.numbers`, kept in `ShapePolicy.numbers`).

Sizes 0 and 1 are never dynamic (a dynamic dim is guarded `>= 2`): broadcasting treats size 1
apart, and a Program built for a dim of unknown size assumes no broadcasting along it (the
gradient of `a * b` would not be summed back to a size-1 dim). A size-1 call gets a translation
of its own. A translation that needs a dim larger for what it derives from it to be at least 2
too (`x[:, :-1]` of a dim of at least 3) raises its least size (`StaticDimNeeded` with `minimum`):
the dim stays dynamic, guarded `>= minimum`, and calls of smaller sizes get translations of their
own.

`x.shape` gives a dynamic dim as a `DimVariable` (`sot.opcode_executor.dims`): a size the graph
computes at run time, which shape arguments (`x.reshape([B, -1])`, `paddle.zeros([B, n])`) take
as it is, and `+`/`*`/`-` keep; two sizes of one dim's (`sot.opcode_executor.size_forms`) differ by
an int known while translating. A translation that needs its value as a Python int (a condition,
`range`, a print, `len(x)`, `x.size`) raises `StaticDimNeeded`; the translator keeps those dims
static for this code object, with the reason (`ShapePolicy.static`), and simulates again: never
a result computed from a wrong size. A dim of a tensor computed in the frame cannot be traced
back to one input dim, so needing its value specialises every dynamic dim of that translation.
Such a function translates once per size, so reports say which dim was kept static, why and on
which line (`ShapePolicy.kept_static`, a `KeptStatic` each, the dim named as the code names it:
`x dim 0`), as they do for a dim `mark_static` kept static.

Where -1 hides what sizes would show, the translation specialises rather than guess: a
differentiable translation builds its gradient Program while translating (`check_gradient`; a
rule that needs sizes keeps them static), a meta function's error with dims dynamic is tried again
with them static (`ShapePolicy.keep_static_after`), and on the hit path a size eager code rejects
raises the meta function's error, not the kernel's (`with_eager_errors`).
"""
from __future__ import annotations

import linecache
import re
import sys
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from runtime import Tensor
from sot.dynamic.numbers import NumberNeeded, NumberPolicy, changed_number
from sot.guards import Guard, tensor_guards
from sot.guards.checks import TensorMeta
from sot.guards.layer_tree import leaf_guards
from sot.guards.source import Scope, Source, expression
from sot.ir import Meta, StatementIR, Symbol, lower

__all__ = ["mark_dynamic", "mark_static", "ShapePolicy", "StaticDimNeeded", "KeptStatic", "Recompile", "policy_of",
           "input_meta", "dynamic_tensor_guards", "dims_behind", "specialise", "check_gradient", "with_eager_errors"]

_MIN_DYNAMIC = 2  # sizes 0 and 1 are specialised (see the module docstring)


_READ_AS_INT = "read as a Python int"
_MARKED_STATIC = "marked static by sot.mark_static"
_ROOT_ITEM = re.compile(r"^f_(?:locals|globals|builtins)\[(['\"])([^\W\d]\w*)\1\]")


class StaticDimNeeded(Exception):
    """A translation needed dynamic dims' sizes: keep `dims` ((source, rank, dim), ...) static.

    `read_at` (file:line) says the code read them as Python ints there (empty: an op or a gradient
    rule needed the sizes, `why` says which); `needed_at` is set by the simulation to the instruction
    whose value it was, when the read's value was needed later (`n = x.shape[0]`, then `if n > 4`)."""

    def __init__(self, dims: tuple[tuple[str, int, int], ...], why: str, read_at: str = "",
                 minimum: int | None = None):
        self.dims = dims
        self.why = why
        self.read_at = read_at
        self.needed_at = ""
        self.minimum = minimum  # (set: the dims may stay dynamic, for sizes of at least this)
        need = "must stay static" if minimum is None else f"must be at least {minimum} to stay dynamic"
        super().__init__(f"{why}: {', '.join(f'{s} dim {d}' for s, _, d in dims)} {need}")

    def needed(self, where: str) -> None:
        """Note the innermost instruction simulated when the value was needed (the first one told)."""
        if not self.needed_at:
            self.needed_at = where


@dataclass(frozen=True)
class KeptStatic:
    """A dim kept static that a recompile would have made dynamic, as reports show it: the dim as the
    code names it (`x dim 0`), why, and the line (as written) of the read as a Python int, of the
    `mark_static` call, or where the translation stopped; plus the line that needed a read's value
    when it is another one. Plain data: it is saved in reports (`sot.tools.report`)."""

    dim: str
    why: str
    file: str
    line: int
    source: str
    needed_file: str = ""
    needed_line: int = 0
    needed_source: str = ""

    def text(self, path: Callable[[str], str] = str) -> str:
        """One line for people, each file shown as `path` gives it."""
        out = f"{self.dim} kept static: {self.why} at {path(self.file)}:{self.line}" + _quoted(self.source)
        if self.needed_line:
            out += f", its value needed at {path(self.needed_file)}:{self.needed_line}" + _quoted(self.needed_source)
        return out


def _quoted(source: str) -> str:
    return f" `{source}`" if source else ""


def _line_of(where: str) -> tuple[str, int, str]:
    """file, line and that line's text (stripped) of a file:line ("", 0, "" for none)."""
    file, _, line = where.rpartition(":")
    if not line.isdigit():
        return "", 0, ""
    return file, int(line), linecache.getline(file, int(line)).strip()


def _dim_name(source: str, dim: int) -> str:
    """`x dim 0` for the dim of a tensor read from `f_locals['x']`: the name the code uses."""
    return f"{_ROOT_ITEM.sub(lambda m: m.group(2), source)} dim {dim}"


@dataclass(frozen=True)
class Recompile:
    """Why a function was translated again: the first failing guard of its most recent entry,
    what it expected and what the call had, and the dims that miss made dynamic ("source dim i")."""

    guard: str
    expected: str
    actual: str
    dynamic: tuple[str, ...] = ()


# ----- side tables by identity (Tensor has __slots__; equal code objects are still distinct functions)

class _ByIdentity:
    """A table keyed by the identity of weakly referenced objects, an entry dropped with its key."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, obj: Any) -> Any:
        """The value stored for `obj`, None if none."""
        entry = self._items.get(id(obj))
        return entry[1] if entry is not None and entry[0]() is obj else None

    def setdefault(self, obj: Any, make: Any) -> Any:
        """The value stored for `obj`, storing `make()` first if none."""
        found = self.get(obj)
        if found is None:
            key = id(obj)
            found = make()
            self._items[key] = (weakref.ref(obj, lambda _, k=key: self._items.pop(k, None)), found)
        return found


_marks = _ByIdentity()  # tensor -> (dims marked dynamic, dims marked static -> file:line of the mark)


def _marks_of(t: Tensor) -> tuple[set[int], dict[int, str]]:
    return _marks.get(t) or (set(), {})


def _mark(fn: str, t: Any, dim: Any, dynamic: bool, where: str = "") -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: argument 't' must be a Tensor, got {type(t).__name__}")
    if type(dim) is not int:
        raise TypeError(f"{fn}: argument 'dim' must be an int, got {type(dim).__name__}")
    ndim = len(t.shape)
    if not -ndim <= dim < ndim:
        raise IndexError(f"{fn}: argument 'dim' ({dim}) is out of range for a tensor of rank {ndim}")
    dim %= ndim
    dyn, static = _marks.setdefault(t, lambda: (set(), {}))
    if dim in (static if dynamic else dyn):
        raise ValueError(f"{fn}: argument 'dim' ({dim}) is already marked "
                         f"{'static' if dynamic else 'dynamic'} on this tensor")
    if dynamic:
        dyn.add(dim)
    else:
        static[dim] = where


def mark_dynamic(t: Tensor, dim: int) -> None:
    """Make dim `dim` of `t` dynamic from the first translation that sees `t` as an input (sizes
    0 and 1 excepted), instead of waiting for a miss on it."""
    _mark("mark_dynamic", t, dim, True)


def mark_static(t: Tensor, dim: int) -> None:
    """Never make dim `dim` of `t` dynamic: translations that see `t` specialise on its size (reports
    name the line of this call where a recompile would have made the dim dynamic)."""
    caller = sys._getframe(1)
    _mark("mark_static", t, dim, False, f"{caller.f_code.co_filename}:{caller.f_lineno}")


# ----- the decision per code object

class ShapePolicy:
    """The dynamic dims of one code object's tensor inputs, by (source text, rank), and the dims kept
    static because a translation needed their value (with why). Keyed by text: the decisions outlive
    the translations whose Sources named them, and read as they are shown."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """No decision yet: every dim and number static until a miss says otherwise (`sot.reset`)."""
        self.dynamic: dict[tuple[str, int], set[int]] = {}
        self.static: dict[tuple[str, int], dict[int, str]] = {}
        self._kept: dict[tuple[str, int, int], KeptStatic] = {}  # what reports say of each dim kept static
        self.least: dict[tuple[str, int, int], tuple[int, str]] = {}  # a dim's least dynamic size above 2, why
        self.numbers = NumberPolicy()  # the Python numbers left dynamic (sot.dynamic.numbers)
        self._seen: Any = None  # the last miss taken into account (a retry sees it again)

    def dims(self, source: str, t: Tensor) -> tuple[int, ...]:
        """The dims of input `t` (read from `source`) the next translation leaves free."""
        shape = t.shape
        key = (source, len(shape))
        marked_dynamic, marked_static = _marks_of(t)
        free = (self.dynamic.get(key, set()) | marked_dynamic) - marked_static.keys() - self.static.get(key, {}).keys()
        least = self.least_of(source, len(shape))
        return tuple(sorted(d for d in free if shape[d] >= least.get(d, _MIN_DYNAMIC)))

    def least_of(self, source: str, rank: int) -> dict[int, int]:
        """dim -> the least size a translation leaves it dynamic for, where above 2."""
        return {d: n for (s, r, d), (n, _) in self.least.items() if s == source and r == rank}

    def on_miss(self, frame: Any, cache: Any) -> Recompile | None:
        """Before a translation: if it follows a miss of `cache` (a CodeCache) on `frame`, make
        dynamic the dims and Python numbers that alone failed an entry, and return the miss as a
        Recompile."""
        misses = cache.miss_reasons()
        if not misses or misses[-1] is self._seen or not misses[-1].reasons:
            return None
        self._seen = miss = misses[-1]
        scope = Scope(frame.f_locals, frame.f_globals, frame.f_builtins)
        changed: dict[tuple[Source, int], set[int]] = {}
        numbers: set[str] = set()
        for entry in cache.entries:
            found = _dims_or_numbers_miss(list(leaf_guards(entry.guards)), scope)
            if found is None:
                continue
            dims, entry_numbers = found
            numbers |= entry_numbers
            for key, entry_dims in dims.items():
                changed.setdefault(key, set()).update(entry_dims)
        made = []
        for (src, rank), dims in changed.items():
            t = scope.value(src)  # a Tensor of rank `rank`: _dims_or_numbers_miss checked it
            source = src.text
            marked_static = _marks_of(t)[1]
            least = self.least_of(source, rank)
            eligible = {d for d in dims if t.shape[d] >= least.get(d, _MIN_DYNAMIC)}
            for d in sorted(eligible & marked_static.keys()):
                self._report((source, rank, d), _MARKED_STATIC, marked_static[d])
            new = eligible - marked_static.keys() - self.static.get((source, rank), {}).keys() \
                - self.dynamic.get((source, rank), set())
            if new:
                self.dynamic.setdefault((source, rank), set()).update(new)
                for d in new:  # a dim `mark_static` kept on earlier tensors, not marked on this one
                    self._kept.pop((source, rank, d), None)
                made += [f"{source} dim {d}" for d in sorted(new)]
        made += [f"{source} (number)" for source in self.numbers.make_dynamic(numbers)]
        first = miss.reasons[0]
        guard = first.guard
        expected = str(guard.expected) if isinstance(guard.expected, TensorMeta) else repr(guard.expected)
        return Recompile(str(guard), expected, first.actual, tuple(made))

    def keep_static(self, error: StaticDimNeeded | NumberNeeded, where: str = "") -> None:
        """The dims (or the number) `error` names stay static for this code object from now on, with its
        reason (or, with `error.minimum`, dynamic only for sizes of at least that); `where` (file:line the
        translation stopped at) is the line reports give a dim that was not read as a Python int."""
        if isinstance(error, NumberNeeded):
            self.numbers.keep_static(error)
            return
        if error.minimum is not None:  # dynamic still, for sizes of at least `minimum`
            for dim in error.dims:
                self.least[dim] = max(self.least.get(dim, (0, "")), (error.minimum, error.why))
            return
        for source, rank, dim in error.dims:
            self.static.setdefault((source, rank), {})[dim] = error.why
            self.dynamic.get((source, rank), set()).discard(dim)
            if error.read_at:
                self._report((source, rank, dim), _READ_AS_INT, error.read_at,
                             error.needed_at if error.needed_at != error.read_at else "")
            else:
                self._report((source, rank, dim), error.why, error.needed_at or where)

    def keep_static_after(self, inputs: Iterable[Any], error: Exception, where: str = "") -> bool:
        """A meta function raised `error` in a translation with dynamic dims (`inputs`: its
        TensorVariables; `where`: file:line of the op): it may be the user's error or one of the unknown
        sizes (`expand` of a -1 dim to 5), so keep them all static and say True (simulate again); False
        without dynamic dims."""
        found = _dynamic_input_dims(inputs)
        if found:
            self.keep_static(StaticDimNeeded(found, f"{type(error).__name__} with the dims dynamic: {error}"), where)
        return bool(found)

    def _report(self, dim: tuple[str, int, int], why: str, where: str, needed_at: str = "") -> None:
        """Remember for reports why `dim` ((source, rank, dim)) is static, the first reason found."""
        if dim not in self._kept:
            source, _, index = dim
            self._kept[dim] = KeptStatic(_dim_name(source, index), why, *_line_of(where), *_line_of(needed_at))

    def kept_static(self) -> list[KeptStatic]:
        """The dims kept static that a recompile would have made dynamic, in the order it was decided:
        those read as Python ints (where), those an op or gradient rule needed, those `mark_static` kept."""
        return list(self._kept.values())

    def describe(self) -> str:
        """The decisions as text, one line per dim."""
        lines = [f"{s} dim {d} (rank {r}): dynamic" + (f" for sizes of at least {self.least[s, r, d][0]}, "
                                                       f"{self.least[s, r, d][1]}" if (s, r, d) in self.least else "")
                 for (s, r), ds in self.dynamic.items() for d in sorted(ds)]
        lines += [f"{s} dim {d} (rank {r}): static, {why}" for (s, r), ds in self.static.items()
                  for d, why in sorted(ds.items())]
        return "\n".join(lines + self.numbers.describe())


def _dims_or_numbers_miss(guards: Iterable[Guard],
                          scope: Scope) -> tuple[dict[tuple[Source, int], set[int]], set[str]] | None:
    """The changed dims by (source, rank) and the sources of changed numbers, if every failing guard
    is a tensor's shape alone or a Python number's value alone (`changed_number`), else None."""
    out: dict[tuple[Source, int], set[int]] = {}
    numbers: set[str] = set()
    for g in guards:
        if g.holds_in(scope):
            continue
        number = changed_number(g, scope)
        if number is not None:
            numbers.add(number)
            continue
        if g.kind != "tensor_meta":
            return None
        t, e = scope.value(g.src), g.expected
        if (not isinstance(t, Tensor) or t.dtype is not e.dtype or bool(t.stop_gradient) is not e.stop_gradient
                or len(t.shape) != len(e.shape) or t.place != e.place):
            return None
        out[(g.src, len(e.shape))] = {i for i, (d, w) in enumerate(zip(t.shape, e.shape)) if w != -1 and d != w}
    return out, numbers


_policies = _ByIdentity()  # code object -> ShapePolicy


def policy_of(code: Any) -> ShapePolicy:
    """The ShapePolicy of a code object (shared by every translator of it)."""
    return _policies.setdefault(code, ShapePolicy)


# ----- what the opcode executor asks

def input_meta(code: Any, source: Source, t: Tensor) -> Meta:
    """The Meta of tensor input `t` read from `source` in a translation of `code`: -1 where dynamic."""
    meta = Meta.from_tensor(t)
    dims = policy_of(code).dims(source.text, t)
    return meta._replace(shape=tuple(-1 if i in dims else d for i, d in enumerate(meta.shape))) if dims else meta


def dynamic_tensor_guards(source: Source, t: Tensor, meta: Meta, least: dict[int, int] | None = None) -> list[Guard]:
    """A tensor input's guards from the Meta the translation used: a -1 dim matches any size >= 2, or
    >= its `least` size where the translation needed more."""
    dims = tuple(i for i, d in enumerate(meta.shape) if d == -1)
    least = least or {}
    return tensor_guards(source, t, dims) + [
        Guard(expression(f"{source}._data.shape[{i}] >= {least.get(i, _MIN_DYNAMIC)}"), "value_eq", True)
        for i in dims]


def _dynamic_input_dims(inputs: Iterable[Any]) -> tuple[tuple[str, int, int], ...]:
    """(source, rank, dim) of every dynamic dim of the translation's inputs (TensorVariables)."""
    return tuple((v.tracker.source.text, len(v.meta.shape), d) for v in inputs for d, n in enumerate(v.meta.shape)
                 if n == -1)


def check_gradient(compiled: Any, inputs: Iterable[Any]) -> None:
    """A translation with dynamic dims builds its gradient Program now (when its outputs can require
    grad): a gradient rule that needs the sizes fails here, not in the user's backward, and those
    dims stay static (StaticDimNeeded) instead."""
    found = _dynamic_input_dims(inputs)
    if compiled is None or not found:
        return
    try:
        compiled.build_gradient()
    except Exception as e:  # noqa: BLE001 - any failure of a rule on unknown sizes: specialise them
        raise StaticDimNeeded(found, f"the gradient cannot be built for dynamic dims ({type(e).__name__}: {e})") from e


def dims_behind(tensor: Any, inputs: Iterable[Any], dims: Iterable[int] | None) -> tuple[tuple[str, int, int], ...]:
    """(source, rank, dim) of the input dims behind the dynamic `dims` (None: all) of `tensor` (a
    TensorVariable): its own for an input; every dynamic input dim for a tensor computed in the frame
    (which one it came from is unknown)."""
    inputs = list(inputs)
    shape = tensor.meta.shape
    wanted = [d for d in (range(len(shape)) if dims is None else dims) if shape[d] == -1]
    if not wanted:
        return ()
    own = next((v for v in inputs if v.symbol is tensor.symbol), None)
    if own is not None:
        return tuple((own.tracker.source.text, len(shape), d) for d in wanted)
    return _dynamic_input_dims(inputs)


def specialise(tensor: Any, inputs: Iterable[Any], dims: Iterable[int] | None, why: str, read_at: str) -> None:
    """Raise StaticDimNeeded for the input dims behind the dynamic `dims` (None: all) of `tensor`
    (a TensorVariable), read as Python ints at `read_at` (file:line); return if none of them is dynamic."""
    found = dims_behind(tensor, inputs, dims)
    if found:
        raise StaticDimNeeded(found, why, read_at)


def with_eager_errors(runner: Callable, sir: StatementIR) -> Callable:
    """`runner` (called with `sir`'s input tensors) raising what eager code raises. The meta functions
    could not check -1 dims at translation time, so sizes eager code rejects reach a kernel, whose
    error differs in message (NumPy's): on a failure the statements are replayed on the real sizes
    and the meta function's error, if one rejects them, is raised instead."""
    if not any(-1 in s.meta.shape for s in sir.inputs):
        return runner

    def run(*tensors: Any) -> Any:
        try:
            return runner(*tensors)
        except Exception:
            _raise_meta_error(sir, tensors)
            raise
    return run


def _raise_meta_error(sir: StatementIR, tensors: tuple) -> None:
    """Raise the error a meta function gives for `sir` on the sizes of `tensors`; return if none does."""
    inputs = [Symbol(s.name, Meta.from_tensor(t)) for s, t in zip(sir.inputs, tensors)]
    try:
        lower(StatementIR(sir.name, inputs, sir.outputs, sir.statements))
    except (ValueError, TypeError, IndexError) as e:
        original = e.__context__  # static mode re-raises with a note naming the op: eager's error is the original
        if e.__suppress_context__ and type(original) is type(e) and str(e).startswith(f"{original} [while building"):
            raise original from None
        raise e from None
