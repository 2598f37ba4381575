"""Dependency analysis of a plan (Paddle's DependencyBuilder::Build).

Edges come from variable accesses in program order:
- read after write:  A writes X, B later reads X            -> A -> B
- write after read:  A reads X, B later writes X            -> A -> B
- write after write: A writes X, others read it, B writes X -> A -> B
Then the happens-before relation (transitive closure), the shrink (i -> j is dropped when another
downstream op k of i happens before j: a -> b -> c drops a -> c), and, after the shrink, extra
ordering edges: random ops chained in program order (so a seeded run draws the same numbers in
any schedule), ops with side effects chained likewise, and with `sequential_run` every op after
the one before it. Every edge points forward in program order, so program order is always a
valid schedule. The relation is kept as one bitset (a Python int) per op: bit j of reach[i] says
i happens before j, a compact row of the bool matrix Paddle stores.

Non-strict ops (TFRT's non-strict kernels): an op may name `optional_reads`, vars
it reads only on some of its paths (a cond's branch inputs). A read-after-write edge that exists
only because of such a read is OPTIONAL: the op may start, and finish, before its producer ran,
so the edge adds nothing to happens-before (a -> cond -> c does not order a before c, and the
shrink keeps a -> c), and the runner decides at run time whether the op waits for it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = ["DependencyBuilder", "Dependencies"]


@dataclass(frozen=True)
class Dependencies:
    downstream: tuple[frozenset[int], ...]
    upstream: tuple[frozenset[int], ...]
    dep_count: tuple[int, ...]
    reach: tuple[int, ...]
    extra_edges: tuple[tuple[int, int], ...]
    optional: tuple[frozenset[int], ...] = ()   # per op: the upstream ops of its optional edges


class DependencyBuilder:
    """Builds the op graph of one instruction list, once."""

    def __init__(self) -> None:
        self._built = False
        self._down: list[set[int]] = []
        self._reach: list[int] = []
        self._extra: list[tuple[int, int]] = []
        self._optional: set[tuple[int, int]] = set()

    def build(self, reads: Sequence[Iterable[int]], writes: Sequence[Iterable[int]],
              random: Sequence[bool] = (), side_effect: Sequence[bool] = (),
              sequential_run: bool = False, optional_reads: Sequence[Iterable[int]] = ()) -> Dependencies:
        """The graph for ops whose i-th entry reads/writes the given var ids (program order);
        `optional_reads[i]`: the vars op i may run without (a non-strict op)."""
        if self._built:
            raise RuntimeError("DependencyBuilder.build: the op dependency has already been built")
        n = len(reads)
        if len(writes) != n:
            raise ValueError(f"DependencyBuilder.build: {n} read sets but {len(writes)} write sets")
        self._down, self._optional = _access_edges(reads, writes, optional_reads)
        self._reach = _closure(self._down, self._optional)
        self._shrink()
        for flags in (random, side_effect):
            self._chain([i for i, f in enumerate(flags) if f])
        if sequential_run:
            self._chain(list(range(n)))
        self._built = True
        down = tuple(frozenset(d) for d in self._down)
        up: list[set[int]] = [set() for _ in range(n)]
        for i, ds in enumerate(down):
            for j in ds:
                up[j].add(i)
        optional: list[frozenset[int]] = [frozenset()] * n
        for i, j in self._optional:
            if j in down[i] and not self._reach[i] >> j & 1:
                optional[j] = optional[j] | {i}
        return Dependencies(down, tuple(frozenset(u) for u in up), tuple(len(u) for u in up),
                            tuple(self._reach), tuple(self._extra), tuple(optional))

    def _shrink(self) -> None:
        """Keep i -> j only when no other downstream op of i happens before j (an optional edge
        i -> k says nothing of what follows k)."""
        reach, optional = self._reach, self._optional
        for i, ds in enumerate(self._down):
            if len(ds) < 2:
                continue
            after_others = 0
            for k in ds:
                if not optional or (i, k) not in optional:
                    after_others |= reach[k]
            self._down[i] = {j for j in ds if not after_others >> j & 1}

    def _chain(self, ops: list[int]) -> None:
        for a, b in zip(ops, ops[1:]):
            self._add_edge(a, b)

    def _add_edge(self, a: int, b: int) -> None:
        """Paddle's AddDownstreamOp: skip an implied edge, refuse one that would make a cycle."""
        reach = self._reach
        if reach[a] >> b & 1:
            return
        if reach[b] >> a & 1:
            raise RuntimeError(f"DependencyBuilder: op {b} happens before op {a}; the edge {a} -> {b} "
                               "would make a cycle")
        self._down[a].add(b)
        self._optional.discard((a, b))   # an ordering edge over an optional one: now required
        self._extra.append((a, b))
        gained = reach[b] | 1 << b
        for p in range(a + 1):
            if p == a or reach[p] >> a & 1:
                reach[p] |= gained


def _access_edges(reads: Sequence[Iterable[int]], writes: Sequence[Iterable[int]],
                  optional_reads: Sequence[Iterable[int]] = ()) -> tuple[list[set[int]], set[tuple[int, int]]]:
    """RAW, WAR and WAW edges: track the last writer of each var and its readers since then; and
    the edges that exist only for an optional read."""
    down: list[set[int]] = [set() for _ in reads]
    required: set[tuple[int, int]] = set()
    maybe: set[tuple[int, int]] = set()
    last_writer: dict[int, int] = {}
    readers: dict[int, list[int]] = {}
    track = any(optional_reads)   # which edges are required matters only when some read is optional
    for i, (rs, ws) in enumerate(zip(reads, writes)):
        optional = optional_reads[i] if i < len(optional_reads) else ()
        for v in rs:
            w = last_writer.get(v)
            if w is not None and w != i:
                down[w].add(i)                       # read after write
                if optional:
                    (maybe if v in optional else required).add((w, i))
        for v in ws:
            for r in readers.get(v, ()):
                if r != i:
                    down[r].add(i)                   # write after read
                    if track:
                        required.add((r, i))
            w = last_writer.get(v)
            if w is not None and w != i:
                down[w].add(i)                       # write after write
                if track:
                    required.add((w, i))
        for v in rs:
            readers.setdefault(v, []).append(i)
        for v in ws:
            last_writer[v] = i
            readers[v] = []
    return down, maybe - required


def _closure(down: list[set[int]], optional: set[tuple[int, int]]) -> list[int]:
    """reach[i] = every op that surely follows i (over required edges); edges point forward, so
    fill from the back."""
    reach = [0] * len(down)
    for i in range(len(down) - 1, -1, -1):
        bits = 0
        for j in down[i]:
            if not optional or (i, j) not in optional:
                bits |= reach[j] | 1 << j
        reach[i] = bits
    return reach
