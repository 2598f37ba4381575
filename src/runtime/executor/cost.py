"""Per-op cost estimates and the parallel-or-sequential decision of a plan.

Handing an op to another thread costs tens of microseconds (a queue put, a thread wake-up, a
lock per counter, the caller's wake-up at the end); a tiny NumPy op costs about one. So a plan
runs in parallel only when the work that could overlap is worth more than those hand-offs. The
estimate is a function of op kind and static shape (unknown dims count as 1, so a program
whose size is only known at run time stays sequential): contractions (matmul, bmm, linear,
conv) cost their multiply-adds at FLOPS_PER_US, everything else its elements at NS_PER_ELEMENT,
plus OP_OVERHEAD_US. From those, W is the total work, L the critical path; with P host threads a
parallel run takes about max(L', W' / P), where every op costs PARALLEL_OP_US more than on one
thread (the run's lock, its counters, the ready heap), plus RUN_OVERHEAD_US per run and HOP_US
per op that leaves its producer's thread: every root but the first (the caller enqueues each one),
and every ready successor of an op but the one its thread keeps. Without PARALLEL_OP_US and the
roots, a long chain of tiny ops fed by constant-producing ops (`x * 1.0001 + 0.0001`: each scalar
is a root op) looked half overlappable, and threading it ran several times slower than one thread.
Parallel is chosen only when the saving beats those costs AND is
at least MIN_GAIN of the work: the estimate is rough, the cores may be shared, and a training
step whose backward overlaps only a little (grad-weight next to grad-input) was measured slower
threaded than sequential. The constants were measured on the development machine
(benchmarks/executor_parallel.py prints the break-even), see docs/static.md.
"""
from __future__ import annotations

import math
from typing import Sequence

__all__ = ["op_cost", "critical_path", "hand_offs", "prefer_parallel", "FLOPS_PER_US", "NS_PER_ELEMENT",
           "OP_OVERHEAD_US", "PARALLEL_OP_US", "RUN_OVERHEAD_US", "HOP_US", "MIN_GAIN"]

FLOPS_PER_US = 30000.0      # one core, float64 OpenBLAS at 1024^2, about 30 GFLOP/s
NS_PER_ELEMENT = 1.0        # a NumPy elementwise pass over one element, read + write
OP_OVERHEAD_US = 1.0        # a Python call and a kernel's dispatch
PARALLEL_OP_US = 1.5        # what a threaded run adds to every op (measured: a tiny-op chain, 'always' vs 'never')
RUN_OVERHEAD_US = 100.0     # waking the pool and the caller once per run
HOP_US = 30.0               # one op handed to another thread
MIN_GAIN = 0.45             # and only when the overlap saves at least this share of the work (2 even branches: 0.5)

_CONTRACTIONS = frozenset({"matmul", "bmm", "linear", "linear_grad_input", "linear_grad_weight", "dot", "einsum"})
_CONVOLUTIONS = frozenset({"conv", "conv_transpose", "conv_grad_filter"})


def _numel(shape: Sequence[int] | None) -> int:
    if shape is None:
        return 1
    return math.prod(max(int(d), 1) for d in shape)


Shape = Sequence[int] | None


def op_cost(op_type: str, in_shapes: Sequence[Shape], out_shapes: Sequence[Shape]) -> float:
    """Estimated microseconds of one op with these static shapes (-1 counts as 1)."""
    ins = [_numel(s) for s in in_shapes if s is not None]
    outs = [_numel(s) for s in out_shapes if s is not None]
    if op_type in _CONTRACTIONS and len(ins) >= 2 and outs:
        flops = 2.0 * math.sqrt(float(ins[0]) * ins[1] * outs[0])   # m*k, k*n, m*n -> m*n*k
        return OP_OVERHEAD_US + flops / FLOPS_PER_US
    if op_type in _CONVOLUTIONS and len(in_shapes) >= 2 and in_shapes[1] and outs:
        w = in_shapes[1]
        per_out = _numel(w) / max(int(w[0]), 1)
        return OP_OVERHEAD_US + 2.0 * outs[0] * per_out / FLOPS_PER_US
    return OP_OVERHEAD_US + (sum(ins) + sum(outs)) * NS_PER_ELEMENT / 1000.0


def critical_path(cost: Sequence[float], downstream: Sequence[frozenset[int]]) -> float:
    """The costliest path through the DAG (edges point forward in program order)."""
    longest = [0.0] * len(cost)
    for i in range(len(cost) - 1, -1, -1):
        longest[i] = cost[i] + max((longest[j] for j in downstream[i]), default=0.0)
    return max(longest, default=0.0)


def hand_offs(downstream: Sequence[frozenset[int]]) -> int:
    """Ops a parallel run hands to another thread: every root but the first, and every successor
    of an op but one (a join counted at each producer, so an upper bound)."""
    roots = len(downstream) - len(set().union(*downstream)) if downstream else 0
    return max(roots - 1, 0) + sum(max(len(ds) - 1, 0) for ds in downstream)


def prefer_parallel(cost: Sequence[float], downstream: Sequence[frozenset[int]], threads: int) -> bool:
    """True when overlapping the plan's independent work saves more than the threads cost."""
    work = sum(cost)
    threaded = [c + PARALLEL_OP_US for c in cost]
    span = critical_path(threaded, downstream)
    saved = work - max(span, sum(threaded) / max(threads, 1))
    return saved > RUN_OVERHEAD_US + HOP_US * hand_offs(downstream) and saved >= MIN_GAIN * work
