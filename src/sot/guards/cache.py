"""The code cache of ONE code object: translated entries, their guards, lookups, misses.

Interface (what the frame hook and the translator use):

- `CodeCache(code, cache_size_limit=8)`; `insert(guards, code, payload=None) -> CacheEntry`
  adds a translation (most recent first).
- `lookup(frame) -> code | None | RUN_EAGERLY` (`frame`: a frame, or anything with `f_locals`,
  `f_globals`, `f_builtins`, e.g. `FrameLike`): the code of the first entry, most recent hit
  first, whose guards all pass; `None` on a miss (translate, then `insert`); `RUN_EAGERLY` once
  a miss found the cache full: a `CacheSizeLimitWarning` named the function and the guard that
  failed most, and the code runs untranslated from then on (a subclass may return something
  else then: `gave_up`).
- The hit path is in C (`CacheBase`, the hook's side of the cache): the frame hook calls the
  generated guard function with the frame's namespaces and, when it names the entry hit last,
  counts the hit and runs its code with no other Python frame; everything else (a miss, the
  limit, another entry moving to the front) is `_lookup_slow`.
- One generated function checks all entries (`codegen`); `guard_source()` is its text. It is
  regenerated when an entry is inserted, and when a hit moves an entry ahead of one it could
  match together with (exclusive entries keep their relative order irrelevant); generated
  functions are kept per such order, so alternating entries do not recompile.
- `miss_reasons()`: the last misses, each naming per entry the first guard that failed, with
  expected and actual values; `guard_counts()`: hits and failures per guard; `entries` (MRU),
  each with its hits and payload; `describe()`: all of it as text.
"""
from __future__ import annotations

import builtins
import collections
import types
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from sot.eval_frame import CacheBase

from .codegen import UNBOUND, Generated, generate
from .checks import Held
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


class CacheLimitError(RuntimeError):
    """cache_limit_policy='error': a function needed more translations than its cache_size_limit."""


class CodeCache(CacheBase):
    """Translations of one code object, checked by one generated guard function."""

    gave_up: Any = RUN_EAGERLY  # what a lookup returns once the cache gave up

    def __init__(self, code: types.CodeType, cache_size_limit: int = 8, keep_misses: int = 16,
                 on_limit: str = "eager"):
        if on_limit not in ("eager", "error"):
            raise ValueError(f"CodeCache: argument 'on_limit' must be 'eager' or 'error', got {on_limit!r}")
        self.code = code
        self.cache_size_limit = cache_size_limit
        self.on_limit = on_limit
        self.eager = False
        self.eager_runs = 0  # calls run eagerly because the limit was reached
        self.careful_lookups = 0  # lookups where a source or check raised
        self.generated = 0  # guard functions generated (inserts, reorders of overlapping entries)
        self._entries: list[CacheEntry] = []  # by id
        self._order: list[CacheEntry] = []  # most recent hit first
        self._overlap: dict[int, set[int]] = {}  # id -> ids of entries it may match with
        self._check_order: dict[int, list[Guard]] = {}
        self._fns: dict[frozenset, Generated] = {}
        self._misses: collections.deque[Miss] = collections.deque(maxlen=keep_misses)
        self._fails: collections.Counter[Guard] = collections.Counter()
        self._last_actual: dict[Guard, str] = {}
        self._dead: list[int] = []  # ids of entries an object of whose identity guards died, not yet dropped
        self.dropped = 0  # entries dropped because such an object died
        self.owner_drops = 0  # of which because what a guarded parameter was read from died
        self._install()

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
        if i >= 0 and self._entries[i].code is None:  # retired since the guard function ran: translate again
            return None
        if i < 0:
            if len(self._order) >= self.cache_size_limit:
                self._give_up()
                self.eager_runs += 1
                return self.gave_up
            return None
        entry = self._entries[i]
        entry.hits += 1
        if self._order[0] is not entry:
            self._promote(entry)
        return entry.code

    # ----- entries -----

    @property
    def entries(self) -> list[CacheEntry]:
        """The entries, most recent hit (or insert) first."""
        return list(self._order)

    def insert(self, guards: Iterable[Guard], code: Any, payload: Any = None) -> CacheEntry:
        """Adds a translation valid while all `guards` hold; it is tried first from now on."""
        if self._dead:
            self._drop_dead()
        if self.eager or len(self._order) >= self.cache_size_limit:
            raise ValueError(f"cache of {self._where()} is full ({self.cache_size_limit} entries) "
                             "or gave up; lookup says RUN_EAGERLY")
        entry = CacheEntry(len(self._entries), tuple(dict.fromkeys(guards)), code, payload)
        entry.watches = self._watch(entry)
        by_source = _by_source(entry.guards)
        self._overlap[entry.id] = set()
        for other in self._order:
            if not _exclusive_entries(by_source, _by_source(other.guards)):
                self._overlap[entry.id].add(other.id)
                self._overlap[other.id].add(entry.id)
        self._entries.append(entry)
        self._order.insert(0, entry)
        self._reorder_guards()
        self._fns.clear()
        self._install()
        self._serve_front()
        return entry

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
        held = [g.expected for g in entry.guards if isinstance(g.expected, Held)]
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
        if eid < len(self._entries):  # (else it dies while being inserted: released when it is dropped)
            self._release(self._entries[eid])

    def _release(self, entry: CacheEntry) -> None:
        """Let go of what a retired entry holds; a lookup that still finds it is a miss (`_lookup_slow`)."""
        entry.code = entry.payload = None
        if self._front_id == entry.id:
            self._set_front(-1, None, None)

    def _drop_dead(self) -> None:
        """Drop the entries whose guarded objects died: they leave the order, their code, payload and guards go."""
        dead = set()
        while self._dead:
            dead.add(self._dead.pop())
        self._dead.extend(eid for eid in dead if eid >= len(self._entries))  # still being inserted
        gone = [e for e in self._order if e.id in dead]
        if not gone:
            return
        for entry in gone:
            self._order.remove(entry)
            for other in self._overlap.pop(entry.id, ()):
                self._overlap.get(other, set()).discard(entry.id)
            self._release(entry)
            entry.guards, entry.watches = (), ()
        self.dropped += len(gone)
        self._reorder_guards()
        self._fns.clear()
        self._install()
        if self._order:
            self._serve_front()

    def _reorder_guards(self) -> None:
        """Each entry's guards in check order: shared by more entries first, then cheaper."""
        count: collections.Counter[Guard] = collections.Counter()
        first: dict[Guard, int] = {}
        for e in self._entries:
            for g in e.guards:
                count[g] += 1
                first.setdefault(g, len(first))
        key = lambda g: (-count[g], g.cost, first[g])  # noqa: E731
        self._check_order = {e.id: sorted(e.guards, key=key) for e in self._entries}

    def _promote(self, entry: CacheEntry) -> None:
        order = self._order
        pos = order.index(entry)
        del order[pos]
        order.insert(0, entry)
        self._serve_front()
        overlap = self._overlap[entry.id]
        if any(e.id in overlap for e in order[1:pos + 1]):
            self._install()

    def _serve_front(self) -> None:
        """Hits on the most recent entry are served in C from now on."""
        front = self._order[0]
        self._set_front(front.id, front, front.code)

    def _install(self) -> None:
        """Switch to the guard function of the current order (generating it if new)."""
        order = self._order
        key = frozenset((a.id, b.id) for i, a in enumerate(order) for b in order[i + 1:]
                        if b.id in self._overlap[a.id])
        gen = self._fns.get(key)
        if gen is None:
            if len(self._fns) >= _MAX_ORDERS:
                self._fns.clear()
            gen = generate([(e.id, self._check_order[e.id]) for e in order],
                           lambda a, b: b in self._overlap[a], self._missed, self._careful,
                           self.code.co_name, self._where())
            self._fns[key] = gen
            self.generated += 1
        self._gen = gen
        self._check = gen.fn

    # ----- misses and the careful path -----

    def _scope(self, local_vars: dict, f_locals: Mapping, f_globals: Mapping,
               f_builtins: Mapping) -> Scope:
        """A careful evaluator that reuses what the generated function already read."""
        known = {}
        gen = self._gen
        for var, src in gen.var_sources.items():
            v = local_vars.get(var, UNBOUND)
            if v is not UNBOUND:
                known[src.text] = v
        return Scope(f_locals, f_globals, f_builtins, known)

    def _missed(self, local_vars: dict) -> int:
        scope = self._scope(local_vars, local_vars["f_locals"], local_vars["f_globals"],
                            local_vars["f_builtins"])
        self._record_miss(scope)
        return -1

    def _careful(self, local_vars: dict) -> int:
        self.careful_lookups += 1
        scope = self._scope(local_vars, local_vars["f_locals"], local_vars["f_globals"],
                            local_vars["f_builtins"])
        for e in self._order:
            if all(g.holds_in(scope) for g in self._check_order[e.id]):
                return e.id
        self._record_miss(scope)
        return -1

    def _record_miss(self, scope: Scope) -> None:
        reasons = []
        for e in self._order:
            for g in self._check_order[e.id]:
                if not g.holds_in(scope):
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
        if self._fails:
            g, n = max(self._fails.items(), key=lambda kv: kv[1])
            worst = (f"the guard that failed most is `{g}` ({n} misses; last got "
                     f"{self._last_actual[g]})")
        else:
            worst = "no guard failed"
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
        for e in self._entries:
            for g in e.guards:
                out.setdefault(g, [0, self._fails[g]])[0] += e.hits
        return [GuardCount(g, h, f) for g, (h, f) in out.items()]

    def describe(self) -> str:
        """The cache as text: entries most recent first, their guards in check order."""
        lines = [f"cache of {self._where()}: {len(self._entries)}/{self.cache_size_limit} entries"
                 + (", gave up (runs eagerly)" if self.eager else "")]
        for e in self._order:
            lines.append(f"  entry {e.id}: {e.hits} hits")
            lines.extend(f"    {g}  (failed first {self._fails[g]}x)" for g in self._check_order[e.id])
        return "\n".join(lines)


def _by_source(guards: Iterable[Guard]) -> dict[str, list[Guard]]:
    out: dict[str, list[Guard]] = {}
    for g in guards:
        out.setdefault(g.source, []).append(g)
    return out


def _exclusive_entries(a: dict[str, list[Guard]], b: dict[str, list[Guard]]) -> bool:
    """True when no frame can pass the guards of both entries."""
    return any(exclusive(x, y) for src, gs in a.items() for x in gs for y in b.get(src, ()))
