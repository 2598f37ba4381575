"""The code cache of ONE code object: translated entries, their guards, lookups, misses.

Interface (what the frame hook and the translator use):

- `CodeCache(code, cache_size_limit=8)`; `insert(guards, code, payload=None, disposable=False) -> CacheEntry`
  adds a translation (most recent first); a disposable one is dropped to make room when a miss finds
  the cache full, before it gives up. `clear()` forgets every entry, miss and count.
- `lookup(frame) -> code | None | RUN_EAGERLY` (`frame`: a frame, or anything with `f_locals`,
  `f_globals`, `f_builtins`, e.g. `FrameLike`): the code of the first entry, most recent hit
  first, whose guards all pass; `None` on a miss (translate, then `insert`); `RUN_EAGERLY` once
  a miss found the cache full: a `CacheSizeLimitWarning` named the function and the guard that
  failed most, and the code runs untranslated from then on (a subclass may return something
  else then: `gave_up`). `lookup_quietly(frame)`: the same answer, no miss recorded (a thread that
  waited for another's translation looks again).
- The hit path is in C (`CacheBase`, the hook's side of the cache): the frame hook calls the
  generated guard function with the frame's namespaces and, when it names the entry hit last,
  counts the hit and runs its code with no other Python frame; everything else (a miss, the
  limit, another entry moving to the front) is `_lookup_slow`.
- One generated function checks all entries (`codegen`); `guard_source()` is its text. It is
  regenerated when an entry is inserted, and when a hit moves an entry ahead of one it could
  match together with (exclusive entries keep their relative order irrelevant); generated
  functions are kept per such order, so alternating entries do not recompile.
- Threads: hits take no lock (the C path, and `_lookup_slow`'s reads); every change (insert, promotion,
  dropping dead entries, giving up) is made under the cache's lock and published in one assignment of an
  immutable `_State` (entries, order, check order), so a concurrent lookup sees the cache before or after
  a change, never in between. A generated function's miss and careful callbacks read the variable names
  of that very function, whatever was installed since.
- `miss_reasons()`: the last misses, each naming per entry the first guard that failed, with
  expected and actual values; `guard_counts()`: hits and failures per guard; `entries` (MRU),
  each with its hits and payload; `describe()`: all of it as text.
"""
from __future__ import annotations

import builtins
import collections
import functools
import threading
import types
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple

from sot.hook.eval_frame import CacheBase

from .codegen import UNBOUND, Generated, generate
from .checks import Held
from .layer_tree import leaf_guards
from .guard import Guard, exclusive
from .source import Scope

__all__ = ["RUN_EAGERLY", "CacheSizeLimitWarning", "CacheLimitError", "CacheEntry", "CodeCache", "FrameLike",
           "GuardCount", "Miss", "MissReason"]

_MAX_ORDERS = 32  # generated functions kept per cache, one per order of overlapping entries


class _RunEagerly:
    """The marker `lookup` returns once a cache gave up: run the original code."""

    def __repr__(self) -> str:
        return "RUN_EAGERLY"


RUN_EAGERLY = _RunEagerly()


class CacheSizeLimitWarning(UserWarning):
    """A function needed more translations than its cache holds and now runs eagerly."""


@dataclass(slots=True)
class FrameLike:
    """The three namespaces a lookup reads, for callers and tests without a real frame."""

    f_locals: Mapping
    f_globals: Mapping = field(default_factory=dict)
    f_builtins: Mapping = field(default_factory=lambda: vars(builtins))


@dataclass(eq=False, slots=True)
class CacheEntry:
    """One translation: its guards, its code, whatever the translator keeps with it."""

    id: int  # its index in insertion order; what the generated function returns
    guards: tuple[Guard, ...]
    code: Any
    payload: Any = None
    hits: int = 0
    watches: tuple = ()  # weak references to the objects its identity guards hold weakly (see `CodeCache._watch`)
    disposable: bool = False  # dropped to make room at the limit instead of giving up (see `CodeCache.insert`)


@dataclass(frozen=True)
class MissReason:
    """Why one entry did not match: the first of its guards that failed."""

    entry: int
    guard: Guard
    expected: str
    actual: str

    def __str__(self) -> str:
        return f"entry {self.entry}: {self.expected}; got {self.actual}"


@dataclass(frozen=True)
class Miss:
    """One lookup that matched no entry: the reason of each entry, most recent first."""

    reasons: tuple[MissReason, ...]

    def __str__(self) -> str:
        if not self.reasons:
            return "miss: no entries"
        return "miss:\n" + "\n".join(f"  {r}" for r in self.reasons)


@dataclass(frozen=True)
class GuardCount:
    """How often a guard held in a hit, and how often it was an entry's first failure."""

    guard: Guard
    hits: int
    fails: int


class _State(NamedTuple):
    """What lookups read, replaced as a whole: entries by id, the live ones most recent hit first, every
    entry's guards in check order."""

    entries: tuple[CacheEntry, ...]
    order: tuple[CacheEntry, ...]
    check_order: dict[int, list[Guard]]


class CacheLimitError(RuntimeError):
    """cache_limit_policy='error': a function needed more translations than its cache_size_limit."""


def _first_match(state: _State, scope: Scope) -> int:
    """The id of the first entry in `state`'s order whose guards all hold in `scope` (the careful
    evaluator, which never raises), -1 if none does."""
    for e in state.order:
        if all(g.holds_in(scope) for g in state.check_order[e.id]):
            return e.id
    return -1


class CodeCache(CacheBase):
    """Translations of one code object, checked by one generated guard function."""

    gave_up: Any = RUN_EAGERLY  # what a lookup returns once the cache gave up

    def __init__(self, code: types.CodeType, cache_size_limit: int = 8, keep_misses: int = 16,
                 on_limit: str = "eager"):
        if on_limit not in ("eager", "error"):
            raise ValueError(f"CodeCache: argument 'on_limit' must be 'eager' or 'error', got {on_limit!r}")
        # weakly: the cache lives in the code's co_extra slot, which the cycle collector never visits, so
        # a strong reference back would keep a dropped function's code (exec'd, a notebook cell run
        # again) and everything cached for it alive for good
        self._code = weakref.ref(code)
        self.cache_size_limit = cache_size_limit
        self.on_limit = on_limit
        self.eager = False
        self.eager_runs = 0  # calls run eagerly because the limit was reached
        self.careful_lookups = 0  # lookups where a source or check raised
        self.generated = 0  # guard functions generated (inserts, reorders of overlapping entries)
        self._lock = threading.RLock()  # held by every change; lookups read `_state` without it
        self._state = _State((), (), {})
        self._overlap: dict[int, set[int]] = {}  # id -> ids of entries it may match with (under the lock)
        self._fns: dict[frozenset, Generated] = {}  # under the lock
        self._misses: collections.deque[Miss] = collections.deque(maxlen=keep_misses)
        self._fails: collections.Counter[Guard] = collections.Counter()
        self._last_actual: dict[Guard, str] = {}
        self._dead: list[int] = []  # ids of entries an object of whose identity guards died, not yet dropped
        self.dropped = 0  # entries dropped because such an object died
        self.owner_drops = 0  # of which because what a guarded parameter was read from died
        self._install()

    @property
    def code(self) -> types.CodeType | None:
        """The code object this cache serves (None once it died, when the cache is about to go too)."""
        return self._code()

    # ----- the hot path -----

    def lookup(self, frame: Any) -> Any:
        """The code to run for `frame`: an entry's code, None (miss) or `gave_up` (RUN_EAGERLY)."""
        return self._lookup_namespaces(frame.f_locals, frame.f_globals, frame.f_builtins)

    def _lookup_slow(self, i: int) -> Any:
        """A lookup the C hit path does not serve: the guard function found entry `i`, not the front one, or
        no entry (-1: a miss, which it already recorded); once the cache gave up, every lookup (no guard runs)."""
        if self.eager:
            self.eager_runs += 1
            return self.gave_up
        if self._dead:
            self._drop_dead()
        state = self._state
        if i >= 0 and state.entries[i].code is None:  # retired since the guard function ran: translate again
            return None
        if i < 0:
            if len(state.order) >= self.cache_size_limit and not self._make_room():
                self._give_up()
                self.eager_runs += 1
                return self.gave_up
            return None
        entry = state.entries[i]
        entry.hits += 1
        if state.order[0] is not entry or self._front_id != entry.id:
            self._promote(entry)
        return entry.code

    def lookup_quietly(self, frame: Any) -> Any:
        """What `lookup` answers now, recording no miss: for a thread that waited while another translated
        this code (the entry it needs may be there now). Guards run through the careful evaluator."""
        if self.eager:
            return self.gave_up
        state = self._state
        match = _first_match(state, Scope(frame.f_locals, frame.f_globals, frame.f_builtins, {}))
        if match >= 0 and state.entries[match].code is not None:
            return self._lookup_slow(match)
        return self._lookup_slow(-1) if len(state.order) >= self.cache_size_limit else None

    # ----- entries -----

    @property
    def entries(self) -> list[CacheEntry]:
        """The entries, most recent hit (or insert) first."""
        return list(self._state.order)

    def insert(self, guards: Iterable[Guard], code: Any, payload: Any = None, disposable: bool = False) -> CacheEntry:
        """Adds a translation valid while all `guards` hold; it is tried first from now on. A `disposable`
        entry (a call the user got wrong, which eager code rejects) is dropped, least recently hit first,
        when a miss finds the cache full: such calls must not push the function past its limit."""
        with self._lock:
            if self._dead:
                self._drop_dead()
            if len(self._state.order) >= self.cache_size_limit:
                self._make_room()
            state = self._state
            if self.eager or len(state.order) >= self.cache_size_limit:
                raise ValueError(f"cache of {self._where()} is full ({self.cache_size_limit} entries) "
                                 "or gave up; lookup says RUN_EAGERLY")
            entry = CacheEntry(len(state.entries), tuple(dict.fromkeys(guards)), code, payload, disposable=disposable)
            entry.watches = self._watch(entry)
            by_source = _by_source(entry.guards)
            self._overlap[entry.id] = set()
            for other in state.order:
                if not _exclusive_entries(by_source, _by_source(other.guards)):
                    self._overlap[entry.id].add(other.id)
                    self._overlap[other.id].add(entry.id)
            entries = (*state.entries, entry)
            self._publish(_State(entries, (entry, *state.order), _check_orders(entries)))
            return entry

    def _publish(self, state: _State) -> None:
        """Make `state` the cache (one assignment), with its guard function and front entry; under the lock."""
        self._state = state
        self._fns.clear()
        self._install()
        if state.order:
            self._serve_front()
        else:
            self._set_front(-1, None, None)

    def _watch(self, entry: CacheEntry) -> tuple:
        """Weak references whose callbacks retire `entry` when an object its identity guards expect dies (it
        can never match again), or the Layer a guarded parameter was read from (its graph holds the parameter
        itself): see `_retire`."""
        cache = weakref.ref(self)

        def died(_: Any, eid: int = entry.id) -> None:
            alive = cache()
            if alive is not None:
                alive._retire(eid, owner=False)

        def owner_died(_: Any, eid: int = entry.id) -> None:
            alive = cache()
            if alive is not None:
                alive._retire(eid, owner=True)
        held = [g.expected for g in leaf_guards(entry.guards) if isinstance(g.expected, Held)]
        watched = [weakref.ref(h.get(), died) for h in held if h.ref is not None and h.get() is not None]
        owners = {id(o): o for h in held if h.owner is not None and (o := h.owner()) is not None}
        return (*watched, *(weakref.ref(o, owner_died) for o in owners.values()))

    def _retire(self, eid: int, owner: bool) -> None:
        """A weak reference's callback (it may run inside any lookup or insert, in any thread, whenever the
        collector runs): release what entry `eid` holds at once (its code and payload: the compiled graph and
        the parameters bound into it) and queue it to be dropped from the order at the next miss or insert.
        Until then a lookup that still matches it is a miss. Retiring because an owner died is not needed
        for soundness; it stops after `cache_size_limit` times (objects made anew on every call that share
        one parameter would otherwise retranslate on every call)."""
        if owner:
            if self.owner_drops >= self.cache_size_limit:
                return
            self.owner_drops += 1
        self._dead.append(eid)
        entries = self._state.entries
        if eid < len(entries):  # (else it dies while being inserted: released when it is dropped)
            self._release(entries[eid])

    def _release(self, entry: CacheEntry) -> None:
        """Let go of what a retired entry holds; a lookup that still finds it is a miss (`_lookup_slow`)."""
        entry.code = entry.payload = None
        if self._front_id == entry.id:
            self._set_front(-1, None, None)

    def _drop_dead(self) -> None:
        """Drop the entries whose guarded objects died: they leave the order, their code, payload and guards go."""
        with self._lock:
            dead = set()
            while self._dead:
                dead.add(self._dead.pop())
            state = self._state
            self._dead.extend(eid for eid in dead if eid >= len(state.entries))  # still being inserted
            gone = [e for e in state.order if e.id in dead]
            if gone:
                self.dropped += len(gone)
                self._drop(gone)

    def _make_room(self) -> bool:
        """Drop the least recently hit disposable entry, if there is one (under the lock); whether one went."""
        with self._lock:
            disposable = [e for e in self._state.order if e.disposable]
            if disposable:
                self._drop(disposable[-1:])
            return bool(disposable)

    def _drop(self, gone: list[CacheEntry]) -> None:
        """Take `gone` out of the order, releasing their code, payload and guards (under the lock)."""
        state = self._state
        for entry in gone:
            for other in self._overlap.pop(entry.id, ()):
                self._overlap.get(other, set()).discard(entry.id)
            self._release(entry)
            entry.guards, entry.watches = (), ()
        self._publish(_State(state.entries, tuple(e for e in state.order if e not in gone),
                             _check_orders(state.entries)))

    def clear(self) -> None:
        """Forget every entry, miss and count, and the giving up: the next call misses and is translated
        again (`sot.reset`). The old entries' weak references go with them, so no callback can retire a
        new entry that reuses an old id."""
        with self._lock:
            for entry in self._state.entries:
                self._release(entry)
                entry.guards, entry.watches = (), ()
            self.eager = False
            self.eager_runs = self.careful_lookups = self.dropped = self.owner_drops = 0
            self._dead.clear()
            self._overlap.clear()
            self._misses.clear()
            self._fails.clear()
            self._last_actual.clear()
            self._publish(_State((), (), {}))

    def _promote(self, entry: CacheEntry) -> None:
        with self._lock:  # another thread may have moved it meanwhile: work on the order as it is now
            state = self._state
            order = state.order
            if entry not in order:  # dropped meanwhile (an object it guarded died)
                return
            pos = order.index(entry)
            if pos == 0:  # (its hits were not served in C: an entry retired while it was the front)
                self._serve_front()
                return
            self._state = state._replace(order=(entry, *order[:pos], *order[pos + 1:]))
            self._serve_front()
            overlap = self._overlap[entry.id]
            if any(e.id in overlap for e in order[:pos]):
                self._install()

    def _serve_front(self) -> None:
        """Hits on the most recent entry are served in C from now on."""
        front = self._state.order[0]
        self._set_front(front.id, front, front.code)

    def _install(self) -> None:
        """Switch to the guard function of the current order (generating it if new); under the lock."""
        state = self._state
        order = state.order
        key = frozenset((a.id, b.id) for i, a in enumerate(order) for b in order[i + 1:]
                        if b.id in self._overlap[a.id])
        gen = self._fns.get(key)
        if gen is None:
            if len(self._fns) >= _MAX_ORDERS:
                self._fns.clear()
            var_sources: dict = {}  # the generated function's own names, for its callbacks
            gen = generate([(e.id, state.check_order[e.id]) for e in order],
                           lambda a, b: b in self._overlap[a], functools.partial(self._missed, var_sources),
                           functools.partial(self._careful, var_sources), self.code.co_name, self._where())
            var_sources.update(gen.var_sources)
            self._fns[key] = gen
            self.generated += 1
        self._gen = gen
        self._check = gen.fn

    # ----- misses and the careful path -----

    @staticmethod
    def _scope(var_sources: dict, local_vars: dict) -> Scope:
        """A careful evaluator that reuses what the generated function already read (`var_sources`: its
        variables' sources)."""
        known = {}
        for var, src in var_sources.items():
            v = local_vars.get(var, UNBOUND)
            if v is not UNBOUND:
                known[src.text] = v
        return Scope(local_vars["f_locals"], local_vars["f_globals"], local_vars["f_builtins"], known)

    def _missed(self, var_sources: dict, local_vars: dict) -> int:
        self._record_miss(self._scope(var_sources, local_vars), self._state)
        return -1

    def _careful(self, var_sources: dict, local_vars: dict) -> int:
        self.careful_lookups += 1
        scope = self._scope(var_sources, local_vars)
        state = self._state
        match = _first_match(state, scope)
        if match < 0:
            self._record_miss(scope, state)
        return match

    def _record_miss(self, scope: Scope, state: _State) -> None:
        reasons = []
        for e in state.order:
            for g in state.check_order[e.id]:
                if not g.holds_in(scope):
                    if g.kind == "layer_tree":  # report the folded guard that failed, as if it stood alone
                        g = next((inner for inner in leaf_guards([g]) if not inner.holds_in(scope)), g)
                    actual = g.actual(scope)
                    reasons.append(MissReason(e.id, g, str(g), actual))
                    self._fails[g] += 1
                    self._last_actual[g] = actual
                    break
        self._misses.append(Miss(tuple(reasons)))

    def miss_reasons(self) -> list[Miss]:
        """The last misses (oldest first), each with the first failing guard of every entry."""
        return list(self._misses)

    def _give_up(self) -> None:
        with self._lock:
            if self.eager:  # (a thread that missed together with another gave up already)
                return
            fails = dict.copy(self._fails)  # (other threads' misses may add to it meanwhile)
            worst = _worst_read(fails, self._last_actual) if fails else "no guard failed"
            message = (f"sot [SOT-L001]: {self._where()} needed more than cache_size_limit="
                       f"{self.cache_size_limit} translations; {worst}.")
            if self.on_limit == "error":  # every further miss raises again: nothing is given up
                raise CacheLimitError(message + " (cache_limit_policy='error')")
            self.eager = True
            self._check = None  # no guard runs from now on: every lookup is slow, and returns gave_up
            warnings.warn(message + " It runs eagerly from now on: raise cache_size_limit or keep that value "
                          "stable between calls.", CacheSizeLimitWarning, stacklevel=3)

    def _where(self) -> str:
        c = self.code
        return f"{c.co_name} ({c.co_filename}:{c.co_firstlineno})"

    # ----- reports -----

    def guard_source(self) -> str:
        """The text of the generated guard function in use (stable names, for dumps)."""
        return self._gen.text

    def guard_counts(self) -> list[GuardCount]:
        """Per distinct guard: hits of the entries holding it, and times it failed first."""
        out: dict[Guard, list[int]] = {}
        for e in self._state.entries:
            for g in e.guards:
                out.setdefault(g, [0, self._fails[g]])[0] += e.hits
        return [GuardCount(g, h, f) for g, (h, f) in out.items()]

    def describe(self) -> str:
        """The cache as text: entries most recent first, their guards in check order."""
        state = self._state
        lines = [f"cache of {self._where()}: {len(state.entries)}/{self.cache_size_limit} entries"
                 + (", gave up (runs eagerly)" if self.eager else "")]
        for e in state.order:
            lines.append(f"  entry {e.id}: {e.hits} hits")
            lines.extend(f"    {g}  (failed first {self._fails[g]}x)" for g in state.check_order[e.id])
        return "\n".join(lines)


def _check_orders(entries: tuple[CacheEntry, ...]) -> dict[int, list[Guard]]:
    """Each entry's guards in check order: shared by more entries first, then cheaper."""
    count: collections.Counter[Guard] = collections.Counter()
    first: dict[Guard, int] = {}
    for e in entries:
        for g in e.guards:
            count[g] += 1
            first.setdefault(g, len(first))
    key = lambda g: (-count[g], g.cost, first[g])  # noqa: E731
    return {e.id: sorted(e.guards, key=key) for e in entries}


def _by_source(guards: Iterable[Guard]) -> dict[str, list[Guard]]:
    out: dict[str, list[Guard]] = {}
    for g in guards:
        out.setdefault(g.source, []).append(g)
    return out


def _exclusive_entries(a: dict[str, list[Guard]], b: dict[str, list[Guard]]) -> bool:
    """True when no frame can pass the guards of both entries."""
    return any(exclusive(x, y) for src, gs in a.items() for x in gs for y in b.get(src, ()))


def _worst_read(fails: dict[Guard, int], last_actual: dict[Guard, str]) -> str:
    """The read whose guards failed most, counted over all entries: each translation guards its own value
    of it (a cache length, 3, 4, 5...), so one guard per entry fails, while a value that changed once
    (`x is None`, then a list) fails in the first entry only and must not be named over it."""
    by_read: collections.Counter[tuple[str, str]] = collections.Counter()
    for g, n in fails.items():
        by_read[g.source, g.kind] += n
    (source, kind), n = by_read.most_common(1)[0]
    guards = [g for g in fails if (g.source, g.kind) == (source, kind)]
    latest = guards[-1]  # (the failures in insertion order: the last guard of it that failed first)
    values = f"; {len(guards)} translations guard a value of it" if len(guards) > 1 else ""
    return f"the guard that failed most is `{latest}` ({n} misses{values}; last got {last_actual[latest]})"
