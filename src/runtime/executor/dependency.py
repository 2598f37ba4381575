"""Dependency analysis of a plan (seed 000 §3.3.1.1, Paddle's DependencyBuilder::Build).

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


class DependencyBuilder:
    """Builds the op graph of one instruction list, once."""

    def __init__(self) -> None:
        self._built = False
        self._down: list[set[int]] = []
        self._reach: list[int] = []
        self._extra: list[tuple[int, int]] = []

    def build(self, reads: Sequence[Iterable[int]], writes: Sequence[Iterable[int]],
              random: Sequence[bool] = (), side_effect: Sequence[bool] = (),
              sequential_run: bool = False) -> Dependencies:
        """The graph for ops whose i-th entry reads/writes the given var ids (program order)."""
        if self._built:
            raise RuntimeError("DependencyBuilder.build: the op dependency has already been built")
        n = len(reads)
        if len(writes) != n:
            raise ValueError(f"DependencyBuilder.build: {n} read sets but {len(writes)} write sets")
        self._down = _access_edges(reads, writes)
        self._reach = _closure(self._down)
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
        return Dependencies(down, tuple(frozenset(u) for u in up), tuple(len(u) for u in up),
                            tuple(self._reach), tuple(self._extra))

    def _shrink(self) -> None:
        """Keep i -> j only when no other downstream op of i happens before j."""
        reach = self._reach
        for i, ds in enumerate(self._down):
            if len(ds) < 2:
                continue
            after_others = 0
            for k in ds:
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
        self._extra.append((a, b))
        gained = reach[b] | 1 << b
        for p in range(a + 1):
            if p == a or reach[p] >> a & 1:
                reach[p] |= gained


def _access_edges(reads: Sequence[Iterable[int]], writes: Sequence[Iterable[int]]) -> list[set[int]]:
    """RAW, WAR and WAW edges: track the last writer of each var and its readers since then."""
    down: list[set[int]] = [set() for _ in reads]
    last_writer: dict[int, int] = {}
    readers: dict[int, list[int]] = {}
    for i, (rs, ws) in enumerate(zip(reads, writes)):
        for v in rs:
            w = last_writer.get(v)
            if w is not None and w != i:
                down[w].add(i)                       # read after write
        for v in ws:
            for r in readers.get(v, ()):
                if r != i:
                    down[r].add(i)                   # write after read
            w = last_writer.get(v)
            if w is not None and w != i:
                down[w].add(i)                       # write after write
        for v in rs:
            readers.setdefault(v, []).append(i)
        for v in ws:
            last_writer[v] = i
            readers[v] = []
    return down


def _closure(down: list[set[int]]) -> list[int]:
    """reach[i] = every op reachable from i; edges point forward, so fill from the back."""
    reach = [0] * len(down)
    for i in range(len(down) - 1, -1, -1):
        bits = 0
        for j in down[i]:
            bits |= reach[j] | 1 << j
        reach[i] = bits
    return reach
