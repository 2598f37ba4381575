"""The plan an InterpreterCore builds once and runs many times (data only, no kernels).

It holds, in three groups (as Paddle's InterpreterCore):
- config: the prepared program (with its feed and fetch ops), the place, the feed/fetch names;
- instructions: one per op, its vars as integer slots (as in Paddle's VariableScope, vars live in
  a vector, `var_names[slot]`, `var_ids[name]`), what it reads and writes, where it runs;
- analysis: the dependency graph after shrink (`downstream`, `dep_count`, the happens-before
  relation), the successor kinds (direct/event/sync) and the vars each non-direct edge waits
  for, the last-live sets and reference counts of the GC and the free lists
  derived from them, the cost estimates and the parallel-or-sequential choice, and the outputs
  whose blocks a stream's allocator provides.
The parallel run (executor/parallel.py) and the sequential mode (in `order`) run the same plan.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Instruction", "Plan", "NO_SLOT", "FEED_OP", "FETCH_OP", "event_waits", "ref_counts"]

NO_SLOT = -1  # an absent optional input (Paddle's kEmptyVarIndex)
FEED_OP, FETCH_OP = "feed", "fetch"   # the ops a prepared program starts and ends with (`Instruction.kind`)


@dataclass(frozen=True, eq=False)
class Instruction:
    """One op of the plan: its registry type, its vars as slots and its attributes."""

    index: int
    type: str
    kind: str                   # "kernel", "feed", "fetch", "memcpy_h2d" or "memcpy_d2h"
    inputs: tuple[int, ...]     # slots, NO_SLOT for an absent optional input
    outputs: tuple[int, ...]
    attrs: dict[str, Any]
    reads: frozenset[int]       # input slots whose buffers the op needs
    shape_reads: frozenset[int]  # input slots it reads only the shape/dtype of (no-need-buffer)
    writes: frozenset[int]      # slots it writes: its outputs and `inplace`
    inplace: frozenset[int]     # input slots whose arrays the kernel updates in place
    callsite: str
    col: int = -1               # the feed/fetch column
    inplace_pair: tuple[int, int] | None = None   # (input position, output position) sharing a buffer
    place: str = "cpu"
    queue: str = "host"         # which work queue runs it: "host" or "device"
    stream: str = "default"     # its device stream; host ops keep "default"
    context: str = "cpu"        # cpu, gpu, h2d or d2h (stream_analysis.Context.kind)
    priority: int = 0           # scheduling_priority: among ops ready at once, lower runs first

    def __repr__(self) -> str:
        return f"Instruction(#{self.index} {self.type} in={self.inputs} out={self.outputs})"


@dataclass(frozen=True, eq=False)
class Plan:
    """Everything the build decided; read-only (tests and tools inspect it, runners execute it)."""

    # config
    program: Any
    place: Any
    feed_names: tuple[str, ...]
    fetch_names: tuple[str, ...]
    # variables (Paddle's VariableScope)
    var_names: tuple[str, ...]
    var_ids: dict[str, int]
    persistable: frozenset[str]
    holder_vars: frozenset[str]     # the feed/fetch holders: no tensor, never in the GC plan
    skip_inplace: frozenset[str]    # fed vars: no op may write into the caller's buffers
    skip_gc_vars: frozenset[str]
    # scheduling
    instructions: tuple[Instruction, ...]
    order: tuple[int, ...]          # the sequential mode's order (program order)
    # analysis: dependencies
    downstream: tuple[frozenset[int], ...]
    upstream: tuple[frozenset[int], ...]
    dep_count: tuple[int, ...]
    extra_edges: tuple[tuple[int, int], ...]   # added for random / side-effect ops after the shrink
    reach: tuple[int, ...] = field(repr=False)  # reach[i] bit j: op i happens before op j
    next_kind: dict[tuple[int, int], str] = field(repr=False)
    events: dict[tuple[int, int], tuple[str, ...]] = field(repr=False)
    # analysis: variable lifetimes
    last_live: dict[str, frozenset[int]] = field(repr=False)
    ref_count: dict[str, int] = field(repr=False)
    gc_check_vars: tuple[tuple[str, ...], ...] = field(repr=False)
    free_after: tuple[tuple[str, ...], ...] = field(repr=False)
    # analysis: the parallel run (executor/cost.py)
    op_cost: tuple[float, ...] = field(default=(), repr=False)   # estimated microseconds per op
    parallel: bool = False          # the cost estimate's choice: parallel pays off for this plan
    # analysis: memory (executor/allocator.py)
    pooled: dict[int, str] = field(default_factory=dict, repr=False)   # op -> output its stream's pool provides
    # analysis: non-strict ops: cond op -> per branch (true, false), the upstream ops it waits
    # for only when that branch is taken (its other upstream ops, the predicate's included, always)
    non_strict: dict[int, tuple[frozenset[int], ...]] = field(default_factory=dict, repr=False)

    @property
    def ops(self) -> list:
        """The Operators of the prepared program, in plan order."""
        return list(self.program.global_block().ops)

    @property
    def op_types(self) -> list[str]:
        return [ins.type for ins in self.instructions]

    def happens_before(self, a: int, b: int) -> bool:
        """True when op `a` must finish before op `b` starts (the transitive closure)."""
        return bool(self.reach[a] >> b & 1)

    def happens_before_matrix(self) -> np.ndarray:
        """The relation as a 2-D bool matrix (row a, column b), as Paddle stores it."""
        n = len(self.instructions)
        m = np.zeros((n, n), dtype=bool)
        nbytes = (n + 7) // 8
        for a, bits in enumerate(self.reach):
            if bits:
                row = np.frombuffer(bits.to_bytes(nbytes, "little"), dtype=np.uint8)
                m[a] = np.unpackbits(row, bitorder="little")[:n].astype(bool)
        return m

    def edges(self) -> set[tuple[int, int]]:
        """Every (upstream, downstream) op pair of the graph after the shrink."""
        return {(i, j) for i, ds in enumerate(self.downstream) for j in ds}

    def index_of(self, op_type: str, nth: int = 0) -> int:
        """The plan index of the `nth` instruction of type `op_type`."""
        hits = [ins.index for ins in self.instructions if ins.type == op_type]
        if nth >= len(hits):
            raise ValueError(f"plan has {len(hits)} '{op_type}' instruction(s), asked for number {nth}")
        return hits[nth]


def event_waits(downstream, next_kind: dict) -> tuple[tuple[int, ...], ...]:
    """For each op, the ops it waits on through an event or a sync: every dependency but a direct one
    (same stream, in order). What a runner with several streams waits on before an op starts."""
    waits: list[list[int]] = [[] for _ in downstream]
    for i, ds in enumerate(downstream):
        for j in sorted(ds):
            if next_kind[(i, j)] != "direct":
                waits[j].append(i)
    return tuple(map(tuple, waits))


def ref_counts(ref_count: dict[int, int], n_vars: int) -> tuple[int, ...]:
    """The readers of each var slot (0 where none): what a run counts down to free a var."""
    counts = [0] * n_vars
    for v, c in ref_count.items():
        counts[v] = c
    return tuple(counts)
