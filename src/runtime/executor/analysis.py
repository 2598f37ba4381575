"""The analysis of a build, from the op list to the Plan (data only, no kernels run).

In order: the run-safety analysis (`run_safety.py`); dependencies (`dependency.DependencyBuilder`,
with the optional edges of non-strict control-flow ops); lifetimes (`gc.analyse_lifetimes`); cost
estimates and the parallel-or-sequential choice (`cost`); execution contexts and edge kinds
(`stream_analysis`); the outputs a stream's allocator provides (`allocator.pooled_outputs`).
The code generator and the run modes read the `Analysis`; tests and tools read its `plan`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import flags as _flags
from ..ops.registry import OpDef
from . import cost as _cost
from .allocator import pooled_outputs
from .control_flow import ControlFlowKernel, control_flow_cost
from .dependency import Dependencies, DependencyBuilder
from .gc import Lifetimes, analyse_lifetimes
from .instructions import OpList
from .plan import FEED_OP, FETCH_OP, NO_SLOT, Instruction, Plan
from .program import Program, Variable, frontend
from .run_safety import RunSafety, analyse_run_safety
from .stream_analysis import POLICIES, Context, StreamAnalyzer, StreamSchedule, device_policy, place
from .streams import host_threads

__all__ = ["Analysis", "analyse"]

Cases = dict[int, tuple[frozenset[int], frozenset[int]]]


@dataclass
class Analysis:
    """What the build decided, over var slots: the plan and what the generated code and the runs read."""

    plan: Plan
    instrs: list[Instruction]        # with their contexts, streams and queues
    opdefs: list[OpDef | None]
    kernels: list[Any]
    n_outs: list[int]
    var_meta: list[Variable]
    freeable: list[bool]             # slot -> a run may drop it after its last user
    life: Lifetimes
    stubbed: set[int]                # slots read for their shape only: freed to a stub
    contexts: list[Context]
    pooled: dict[int, tuple[int, tuple[int, ...], np.dtype]]   # op -> (output slot, shape, dtype) of its pool
    safety: RunSafety
    record_stream: bool
    poison: bool
    sequential_run: bool


def analyse(ops: OpList, program: Program, place_: Any, feed_names: tuple[str, ...], fetch_names: tuple[str, ...],
            holder_vars: frozenset[str], skip_gc_vars: frozenset[str], emulated: bool) -> Analysis:
    """The analysis of `ops` (the op list of `program`); `emulated`: device memory is NumPy's, so
    stream allocators may provide outputs (otherwise it is CuPy's, and kernels go on device streams
    whatever the policy says: `device_policy`)."""
    instrs, names, ids = ops.instrs, ops.names, ops.ids
    holders = {ids[n] for n in holder_vars if n in ids}
    pers = {v for v, var in enumerate(ops.var_meta) if var.persistable and v not in holders}
    fed = {ins.outputs[0] for ins in instrs if ins.kind == FEED_OP}
    fetched = {ins.inputs[0] for ins in instrs if ins.kind == FETCH_OP}
    skip = {ids[n] for n in skip_gc_vars if n in ids} | holders
    safety = analyse_run_safety(instrs, ops.opdefs, names, pers, fed, holders)

    sequential_run = bool(_flags.flag("FLAGS_new_executor_sequential_run"))
    freeable = [v not in pers and v not in fed and v not in fetched and v not in skip for v in range(len(names))]
    cases = _case_reads(instrs, ops.kernels)
    deps = DependencyBuilder().build(
        [ins.reads | ins.shape_reads for ins in instrs], [ins.writes for ins in instrs],
        random=[d is not None and d.random for d in ops.effects],
        side_effect=[d is not None and d.side_effect for d in ops.effects],
        sequential_run=sequential_run, optional_reads=_optional_reads(len(instrs), cases))
    life = analyse_lifetimes([ins.reads | ins.writes for ins in instrs], tracked=lambda v: v not in skip,
                             freeable=freeable.__getitem__, reach=deps.reach)
    stubbed = {s for ins in instrs for s in ins.shape_reads}
    policy, record_stream, poison = _checked_flags()
    policy = device_policy(policy, not emulated)
    op_cost, parallel, contexts, schedule = _analyse_streams(program, instrs, ops.var_meta, ops.annotations, deps,
                                                             policy)
    instrs = [dataclasses.replace(ins, context=c.kind, stream=c.stream, queue="device" if c.is_device else "host")
              for ins, c in zip(instrs, contexts)]
    pooled = pooled_outputs(instrs, ops.var_meta, freeable) if emulated else {}

    nm = names.__getitem__
    plan = Plan(
        program=program, place=place_, feed_names=feed_names, fetch_names=fetch_names,
        var_names=tuple(names), var_ids=dict(ids), persistable=frozenset(map(nm, pers)),
        holder_vars=holder_vars, skip_inplace=frozenset(map(nm, fed)), skip_gc_vars=skip_gc_vars,
        instructions=tuple(instrs), order=tuple(range(len(instrs))), downstream=deps.downstream,
        upstream=deps.upstream, dep_count=deps.dep_count, extra_edges=deps.extra_edges, reach=deps.reach,
        next_kind=schedule.next_kind, events={e: tuple(map(nm, vs)) for e, vs in schedule.events.items()},
        last_live={nm(v): s for v, s in life.last_live.items()},
        ref_count={nm(v): c for v, c in life.ref_count.items()},
        gc_check_vars=tuple(tuple(map(nm, c)) for c in life.gc_check_vars),
        free_after=tuple(tuple(map(nm, f)) for f in life.free_after), op_cost=op_cost, parallel=parallel,
        pooled={i: nm(v) for i, (v, _, _) in pooled.items()},
        non_strict=_non_strict(instrs, cases, deps.optional))
    return Analysis(plan=plan, instrs=instrs, opdefs=ops.opdefs, kernels=ops.kernels, n_outs=ops.n_outs,
                    var_meta=ops.var_meta, freeable=freeable, life=life, stubbed=stubbed, contexts=contexts,
                    pooled=pooled, safety=safety, record_stream=record_stream, poison=poison,
                    sequential_run=sequential_run)


def _case_reads(instrs: Sequence[Instruction], kernels: Sequence[Any]) -> Cases:
    """Control-flow op -> the var slots it reads only when its predicate holds, and only when it
    does not (a non-strict op needs only those of the case its predicate picks; the predicate and
    what both cases read it always needs). cond: each branch's own inputs; while: the captured vars,
    read only if the loop runs a trip (otherwise its results are its initial values)."""
    out = {}
    for ins, kernel in zip(instrs, kernels):
        if not isinstance(kernel, ControlFlowKernel) or kernel.type == "while_grad":
            continue
        if kernel.type == "cond":
            true, false = ({ins.inputs[p] for p in reads} for reads in kernel.reads)
        else:
            true, false = set(ins.inputs[1 + kernel.n:]) - set(ins.inputs[:1 + kernel.n]), set()
        out[ins.index] = (frozenset(true - false - {ins.inputs[0]}), frozenset(false - true - {ins.inputs[0]}))
    return out


def _optional_reads(n_ops: int, cases: Cases) -> list[frozenset[int]]:
    """Per op, the vars it may run without (those of either case)."""
    out = [frozenset()] * n_ops
    for j, (true, false) in cases.items():
        out[j] = true | false
    return out


def _non_strict(instrs: Sequence[Instruction], cases: Cases,
                optional: Sequence[frozenset[int]]) -> dict[int, tuple[frozenset[int], ...]]:
    """Control-flow op -> per case (predicate true, false), the producers of its optional edges
    it waits for in that case."""
    return {j: tuple(frozenset(u for u in optional[j] if instrs[u].writes & reads) for reads in case)
            for j, case in cases.items() if optional and optional[j]}


def _checked_flags() -> tuple[str, bool, bool]:
    """FLAGS_executor_stream_policy, FLAGS_executor_record_stream and FLAGS_executor_poison_freed,
    after checking the mode and policy flags (a bad value fails the build, naming the flag)."""
    mode, policy = _flags.flag("FLAGS_executor_parallel"), _flags.flag("FLAGS_executor_stream_policy")
    if mode not in ("auto", "always", "never"):
        raise ValueError(f"InterpreterCore.build: FLAGS_executor_parallel must be 'auto', 'always' or 'never', "
                         f"got {mode!r}")
    if policy not in POLICIES:
        raise ValueError(f"InterpreterCore.build: FLAGS_executor_stream_policy must be one of {POLICIES}, "
                         f"got {policy!r}")
    return policy, bool(_flags.flag("FLAGS_executor_record_stream")), bool(_flags.flag("FLAGS_executor_poison_freed"))


def _analyse_streams(program: Program, instrs: Sequence[Instruction], meta: Sequence[Variable],
                     annotations: Sequence[str | None], deps: Dependencies,
                     policy: str) -> tuple[tuple[float, ...], bool, list[Context], StreamSchedule]:
    """Op costs, the parallel-or-sequential choice, the contexts of the ops and the edge kinds of
    the stream analysis."""

    def shape(v: int) -> Any:
        return None if v == NO_SLOT else meta[v]._shape
    ops = program.global_block().ops
    control_flow_ops = frontend().control_flow_ops
    op_cost = tuple(0.0 if ins.kind in (FEED_OP, FETCH_OP) else
                    control_flow_cost(ops[ins.index]) if ins.kind in control_flow_ops else
                    _cost.op_cost(ins.type, [shape(v) for v in ins.inputs], [shape(v) for v in ins.outputs])
                    for ins in instrs)
    threads = host_threads()
    parallel = _cost.prefer_parallel(op_cost, deps.downstream, threads)
    contexts = place(["host" if ins.kind in control_flow_ops else ins.kind for ins in instrs], annotations,
                     policy, deps.upstream, op_cost, _cost.RUN_OVERHEAD_US + _cost.HOP_US, threads)
    schedule = StreamAnalyzer(contexts, [ins.reads | ins.shape_reads for ins in instrs],
                              [ins.writes for ins in instrs]).analyse(deps.downstream)
    return op_cost, parallel, contexts, schedule
