"""The run modes beside the sequential code: the scheduled run and the parallel runner's set-up.

`run_scheduled` runs the plan with its dependency counters and reference counts, popping ready
ops by (scheduling_priority, plan index) on the calling thread: the single-threaded reference of
the parallel run. `make_runner` freezes the plan into a `parallel.ParallelRunner` (host pool,
device-launch queue, emulated streams, the same per-op code), or on a CuPy device into a
`cuda_streams.CudaStreamRunner` (real streams and events). Both free var slots through
`release_fn`, which under FLAGS_executor_poison_freed poisons the freed buffers (`poison.py`).
All accept a `hook(event, index, slots)` ("start"/"end" of op `index`, "free" of var slot
`index`; the parallel mode adds "wait" and "record" and calls it from worker threads).
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Sequence

import numpy as np

from .analysis import Analysis
from .cuda_streams import CudaStreamRunner
from .parallel import ParallelRunner
from .poison import poisoned_like, release_poisoned
from .stream_analysis import edge_kind

__all__ = ["Hook", "Release", "release_fn", "run_scheduled", "make_runner"]

Hook = Callable[[str, int, list], None]
Release = Callable[[list, int, tuple], None]   # (slots, var slot, arrays that stay alive) -> None


def release_fn(a: Analysis, stub: Callable[[Any], Any]) -> Release:
    """How the scheduled and parallel runs free var slot v: drop it (a shape-only reader
    later gets a `stub`), or under FLAGS_executor_poison_freed poison its buffer and leave it.
    The block of a var a stream allocator provides goes on to that stream's next ops, which
    overwrite it: its slot gets a poisoned array of its own instead."""
    stubbed = a.stubbed
    if not a.poison:
        def release(s: list, v: int, alive: tuple) -> None:
            s[v] = stub(s[v]) if v in stubbed else None
        return release
    keep = [x for ins in a.instrs for x in ins.attrs.values() if isinstance(x, np.ndarray)]
    recycled = {v for v, _, _ in a.pooled.values()}

    def release_poisoning(s: list, v: int, alive: tuple) -> None:
        if v in recycled:
            s[v] = None if s[v] is None else poisoned_like(s[v])
        elif not release_poisoned(s, v, alive, keep):
            s[v] = stub(s[v]) if v in stubbed else None
    return release_poisoning


def run_scheduled(a: Analysis, fns: Sequence[Callable], g: dict[str, Any], release: Release, n_fetches: int,
                  feeds: Sequence[Any], snaps: list, hook: Hook | None) -> list:
    """Dependency counters and reference counts, reset from the plan; ready ops by
    (scheduling_priority, plan index). `fns` and `g`: the per-op code and its globals."""
    plan = a.plan
    s: list[Any] = [None] * len(plan.var_names)
    r: list[Any] = [None] * n_fetches
    g["_load"](s)
    dep = list(plan.dep_count)
    ref = [0] * len(s)
    for v, c in a.life.ref_count.items():
        ref[v] = c
    checks, freeable, down = a.life.gc_check_vars, a.freeable, plan.downstream
    alive = (feeds, r)
    rank = [ins.priority for ins in a.instrs]
    ready = [(rank[i], i) for i, d in enumerate(dep) if d == 0]
    heapq.heapify(ready)
    done = 0
    while ready:
        i = heapq.heappop(ready)[1]
        if hook is not None:
            hook("start", i, s)
        fns[i](s, snaps, feeds, r)
        if hook is not None:
            hook("end", i, s)
        for v in checks[i]:
            ref[v] -= 1
            if ref[v] == 0 and freeable[v]:
                release(s, v, alive)
                if hook is not None:
                    hook("free", v, s)
        for j in down[i]:
            dep[j] -= 1
            if dep[j] == 0:
                heapq.heappush(ready, (rank[j], j))
        done += 1
    if done != len(fns):
        raise RuntimeError(f"InterpreterCore: only {done} of {len(fns)} ops became ready (a cycle in the plan)")
    g["_commit"](s)
    return r


def make_runner(a: Analysis, release: Release, n_fetches: int, xp: Any = np,
                place: Any = None) -> ParallelRunner | CudaStreamRunner:
    """The frozen parallel schedule of the plan (made on the first parallel run: a run-once program
    never pays): on CuPy's real streams when `xp` is CuPy, else on emulated ones."""
    plan, life, contexts, instrs = a.plan, a.life, a.contexts, a.instrs
    down, dep, kinds = [set(d) for d in plan.downstream], list(plan.dep_count), dict(plan.next_kind)
    tail = a.safety.validate_tail
    if tail is not None:  # the checks of the trailing updates read all their inputs: a barrier
        for p in range(tail):
            if all(q > tail for q in down[p]):
                down[p].add(tail)
                dep[tail] += 1
                kinds[(p, tail)] = edge_kind(contexts[p], contexts[tail])
    if xp is not np:
        return CudaStreamRunner(
            xp, getattr(place, "device_id", 0), contexts=contexts, kinds=[ins.kind for ins in instrs],
            downstream=[frozenset(d) for d in down], dep_count=dep, next_kind=kinds,
            gc_check_vars=life.gc_check_vars, ref_count=life.ref_count, freeable=a.freeable, release=release,
            n_vars=len(plan.var_names), n_fetches=n_fetches, priority=[ins.priority for ins in instrs])
    owner: dict[int, str | None] = {}   # a var belongs to the stream of its first writer
    for ins, ctx in zip(instrs, contexts):
        for v in ins.writes:
            owner.setdefault(v, ctx.stream if ctx.is_device else None)
    return ParallelRunner(
        contexts=contexts, downstream=[frozenset(d) for d in down], dep_count=dep,
        next_kind=kinds, gc_check_vars=life.gc_check_vars, ref_count=life.ref_count,
        freeable=a.freeable, owner=[owner.get(v) for v in range(len(plan.var_names))],
        release=release, n_vars=len(plan.var_names), n_fetches=n_fetches,
        record_stream=a.record_stream, priority=[ins.priority for ins in instrs], pooled=a.pooled,
        non_strict=plan.non_strict, predicate={j: instrs[j].inputs[0] for j in plan.non_strict})
