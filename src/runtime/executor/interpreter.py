"""The InterpreterCore: build a program's plan once, then run it many times (Paddle's
InterpreterCore, the new executor's design).

Build (`build()`, or the first `run()`):
0. data transfers (`transfer.py`): when kernels run on (emulated) device streams, memcpy_h2d /
   memcpy_d2h copies go where a value crosses between host and device, in a copy of the program;
1. the variable table: every var an op names gets an integer slot (Paddle's VariableScope); fed vars
   are marked skip-inplace (an op that updates a fed var in place gets a copy of the caller's
   array, never the array itself);
2. the op function list: each op's kernel is looked up ONCE (`stats["kernel_lookups"]`), its
   inputs and outputs resolved to slots, its attributes bound;
3. the run-safety analysis: which persistables a run loads from the scope, which it writes
   (committed to the scope only after every op succeeded), and how in-place updates of
   persistables are kept undoable (below);
4. dependencies (`dependency.DependencyBuilder`), lifetimes (`gc.analyse_lifetimes`), cost
   estimates and the parallel-or-sequential choice (`cost`), execution contexts and edge kinds
   (`stream_analysis`);
5. code: the sequential mode lowers the plan to one generated straight-line Python function
   (kernel calls on local variables, each var dropped right after its last user, in plan order);
   its cost per op is one Python call plus the kernel.

Run: the generated function loads the persistables it reads from their scope cells (resolved
once per scope), runs the ops, commits, and returns the fetches; a run does no name lookup, no
registry lookup and no meta inference. When the build chose the parallel mode, runs go through
`parallel.ParallelRunner` instead (host pool, device-launch queue, emulated streams, the same
plan and the same per-op code) — from the second run on when the cost estimate chose it. `run(scheduler=True)` runs the plan with its
dependency counters and reference counts, popping ready ops by priority, then plan order, on the calling thread
(the single-threaded reference). All accept a `hook(event, index, slots)` ("start"/"end" of op
`index`, "free" of var slot `index`; the parallel mode adds "wait" and "record" and calls it from
worker threads) for tests and tools. The scheduled and parallel runs free var slots through
`_release_fn`, which under FLAGS_executor_poison_freed poisons the freed buffers (`poison.py`).
In the parallel runs, the device ops whose outputs `allocator.pooled_outputs` finds compute into
blocks of their stream's allocator. FLAGS_check_nan_inf (read per run) selects a variant
of the generated code that checks each op's outputs for NaN/Inf right after it ran.

Atomicity. Ops that produce a persistable's new value write it to the run's own storage; the
scope's cells are updated only after the last op. In-place kernels (optimizer updates) change
their inputs' arrays, which for a persistable read from the scope are the scope's arrays; the
plan makes those updates undoable at the lowest cost: the in-place ops that end the program
(the optimizer ops of a training step, with only fetches after them) are checked with their
meta functions on the run's actual arrays before the first of them runs (memoised on shapes and
dtypes, the same "validate everything, then mutate" rule as eager `optimizer.step`), so no copy
is made; an in-place update of a scope array that is followed by ordinary ops gets a snapshot
(one copy) that is written back if a later op fails. A failing op is re-raised as the same
exception type naming the op type, its plan index, its input shapes and the line that built it;
the scope is left as it was before the run.
"""
from __future__ import annotations

import dataclasses
import heapq
import linecache
import types
from typing import Any, Callable, Sequence

import numpy as np

from .. import flags as _flags
from ..flags import _values as _flag_values
from ..ops import registry as _registry
from ..ops.fused import inplace_kernel
from ..ops.registry import TensorSpec
from ..place import array_module
from . import cost as _cost
from .control_flow import ControlFlowKernel, control_flow_cost
from .dependency import DependencyBuilder
from .allocator import StreamAllocator, kernel_into_block, pooled_outputs
from .gc import analyse_lifetimes
from .nan_inf import check_finite
from .parallel import ParallelRunner
from .plan import FEED_OP, FETCH_OP, NO_SLOT, Instruction, Plan
from .program import Program, frontend
from .prepare import prepare_program
from .poison import poisoned_like, release_poisoned
from .scope import Scope, ScopeVariable
from .stream_analysis import POLICIES, STREAM_ATTR, StreamAnalyzer, edge_kind, on_device, place
from .streams import host_threads
from .transfer import MEMCPY_D2H, MEMCPY_H2D, copy_kernel, insert_transfers

__all__ = ["InterpreterCore", "FEED_OP", "FETCH_OP", "NO_NEED_BUFFER", "PRIORITY_ATTR"]

_NOT_KERNELS = (FEED_OP, FETCH_OP, MEMCPY_H2D, MEMCPY_D2H)
PRIORITY_ATTR = "scheduling_priority"   # Paddle's name; lower runs first among ops ready at once
_PLACEMENT_ATTRS = (STREAM_ATTR, PRIORITY_ATTR)   # read by the build, never passed to a kernel

# Inputs whose kernels read only the shape and dtype (Paddle's no-need-buffer inputs): they do
# not extend the var's life; once freed, the var is replaced by a one-element broadcast stub
# of the same shape and dtype, which is all such kernels look at.
NO_NEED_BUFFER: dict[str, tuple[int, ...]] = {"shape": (0,), "numel": (0,), "full_like": (0,)}

Hook = Callable[[str, int, list], None]


def _mutated_inputs(op: Any, opdef: Any) -> set[int]:
    """Input positions an in-place kernel updates: those named again as outputs, else all of them."""
    if not opdef.inplace:
        return set()
    named = {p for p, n in enumerate(op.inputs) if n is not None and n in op.outputs}
    return named or {p for p, n in enumerate(op.inputs) if n is not None}


def _meta_outputs(opdef: Any, op: Any, attrs: dict, block: Any) -> int:
    """How many outputs the kernel returns (0: a single array), from the op's meta at build."""
    specs = tuple(None if n is None else block.var(n).spec() for n in op.inputs)
    try:
        meta = opdef.meta(*specs, **attrs)
    except Exception:  # noqa: BLE001 - a hand-built op the meta rejects: trust the recorded outputs
        return len(op.outputs) if len(op.outputs) > 1 else 0
    return len(meta) if type(meta) is tuple else 0


def _validator(opdef: Any, attrs: dict) -> Callable[..., None]:
    """Run `opdef`'s meta on actual arrays, once per distinct (shape, dtype) signature."""
    seen: set = set()

    def validate(*arrays: Any) -> None:
        key = tuple(None if a is None else (a.shape, a.dtype) for a in arrays)
        if key not in seen:
            opdef.meta(*(None if a is None else TensorSpec(a.shape, a.dtype) for a in arrays), **attrs)
            seen.add(key)
    return validate


def _owned(a: Any) -> Any:
    """A fetched temporary: itself, or a copy when it is a view of some other buffer."""
    return a if a.base is None else a.copy()


class InterpreterCore:
    """Builds the plan of one prepared program (feed/fetch ops included) for one scope; runs it."""

    def __init__(self, program: Any, scope: Scope, place: Any = None, feed_names: Sequence[str] = (),
                 fetch_names: Sequence[str] = (), holder_vars: Sequence[str] = (),
                 skip_gc_vars: Sequence[str] = (), inplace_pairs: dict[int, tuple[int, int]] | None = None):
        self.program = program
        self.scope = scope
        self.place = place
        self.feed_names = tuple(feed_names)
        self.fetch_names = tuple(fetch_names)
        self.holder_vars = frozenset(holder_vars)
        self.skip_gc_vars = frozenset(skip_gc_vars)
        self.inplace_pairs = dict(inplace_pairs or {})
        self.plan: Plan | None = None
        self.local_scope: Scope | None = None
        self.stats = {"builds": 0, "kernel_lookups": 0, "runs": 0}
        if place is not None and getattr(place, "kind", "cpu") == "gpu":
            self._xp = array_module(place)
        else:
            self._xp = np
        self._g: dict[str, Any] = {}          # globals of the generated code
        self._fast: Callable | None = None
        self._variants: dict[tuple[bool, bool], Callable] = {}   # (traced, checked) -> sequential code
        self._op_fns: dict[bool, list[Callable]] = {}            # checked -> per-op code
        self._runner: ParallelRunner | None = None
        self._use_parallel = False
        self._parallel_from = 1
        self._codes: dict[types.CodeType, tuple[dict[int, int], bool]] = {}
        self._bound = False
        self._created: list[str] = []

    # ------------------------------------------------------------ build
    def build(self) -> Plan:
        """Analyse the program and generate the sequential code (once; a second call raises)."""
        if self.plan is not None:
            raise RuntimeError("InterpreterCore.build: this core is already built")
        self._insert_transfers()
        block = self.program.global_block()
        names: list[str] = []
        ids: dict[str, int] = {}

        def slot(name: str | None) -> int:
            if name is None:
                return NO_SLOT
            if name not in ids:
                ids[name] = len(names)
                names.append(name)
            return ids[name]

        instrs, opdefs, kernels, n_outs, annotations, effects = [], [], [], [], [], []
        control_flow_ops = frontend().control_flow_ops
        for i, op in enumerate(block.ops):
            ins, outs = tuple(slot(n) for n in op.inputs), tuple(slot(n) for n in op.outputs)
            attrs = {k: v for k, v in op.attrs.items() if k not in _PLACEMENT_ATTRS}
            annotations.append(op.attrs.get(STREAM_ATTR))
            opdef, kernel, mutated, shape_only, pair, multi = None, None, set(), (), None, 0
            if op.type in (MEMCPY_H2D, MEMCPY_D2H):
                kernel = copy_kernel
            elif op.type in control_flow_ops:   # runs its sub-blocks' own cores
                kernel = ControlFlowKernel(op, self._sub_core)
                multi = len(op.outputs)
            elif op.type not in _NOT_KERNELS:
                opdef = _registry.get_op(op.type)
                self.stats["kernel_lookups"] += 1
                kernel = opdef.kernel
                mutated = {ins[p] for p in _mutated_inputs(op, opdef)}
                shape_only = NO_NEED_BUFFER.get(op.type, ())
                pair = self.inplace_pairs.get(i)
                into = pair is not None and len(outs) == 1 and ins[pair[0]] != NO_SLOT and inplace_kernel(op.type)
                if into:  # the passes let the op write into that input's buffer
                    kernel = into
                    mutated.add(ins[pair[0]])
                else:
                    pair = None
                multi = _meta_outputs(opdef, op, attrs, block)
            instrs.append(Instruction(
                index=i, type=op.type, kind="kernel" if opdef else op.type, inputs=ins, outputs=outs,
                attrs=attrs, priority=int(op.attrs.get(PRIORITY_ATTR, 0)),
                reads=frozenset(s for p, s in enumerate(ins) if s != NO_SLOT and p not in shape_only),
                shape_reads=frozenset(s for p, s in enumerate(ins) if s != NO_SLOT and p in shape_only),
                writes=frozenset(outs) | mutated, inplace=frozenset(mutated), callsite=op.callsite,
                col=op.attrs.get("col", -1), inplace_pair=pair))
            opdefs.append(opdef)
            kernels.append(kernel)
            n_outs.append(multi)
            effects.append(op.opdef if opdef is None and op.type in control_flow_ops else opdef)
        self._instrs, self._opdefs, self._kernels, self._n_outs = instrs, opdefs, kernels, n_outs
        self._var_meta = [block.var(n) for n in names]
        holders = {ids[n] for n in self.holder_vars if n in ids}
        pers = {v for v, var in enumerate(self._var_meta) if var.persistable and v not in holders}
        fed = {ins.outputs[0] for ins in instrs if ins.kind == FEED_OP}
        fetched = {ins.inputs[0] for ins in instrs if ins.kind == FETCH_OP}
        skip = {ids[n] for n in self.skip_gc_vars if n in ids} | holders
        self._analyse_run_safety(names, pers, fed, holders)

        sequential_run = bool(_flags.flag("FLAGS_new_executor_sequential_run"))
        self._freeable = [v not in pers and v not in fed and v not in fetched and v not in skip
                          for v in range(len(names))]
        cases = self._case_reads(kernels)
        deps = DependencyBuilder().build(
            [ins.reads | ins.shape_reads for ins in instrs], [ins.writes for ins in instrs],
            random=[d is not None and d.random for d in effects],
            side_effect=[d is not None and d.side_effect for d in effects],
            sequential_run=sequential_run, optional_reads=self._optional_reads(cases))
        life = analyse_lifetimes([ins.reads | ins.writes for ins in instrs], tracked=lambda v: v not in skip,
                                 freeable=self._freeable.__getitem__, reach=deps.reach)
        self._life = life
        self._stubbed = {s for ins in instrs for s in ins.shape_reads}
        op_cost, parallel, schedule = self._analyse_streams(annotations, deps)
        instrs = self._instrs
        self._pooled = pooled_outputs(instrs, self._var_meta, self._freeable) if self._xp is np else {}

        nm = names.__getitem__
        self.plan = Plan(
            program=self.program, place=self.place, feed_names=self.feed_names, fetch_names=self.fetch_names,
            var_names=tuple(names), var_ids=dict(ids), persistable=frozenset(map(nm, pers)),
            holder_vars=self.holder_vars, skip_inplace=frozenset(map(nm, fed)), skip_gc_vars=self.skip_gc_vars,
            instructions=tuple(instrs), order=tuple(range(len(instrs))), downstream=deps.downstream,
            upstream=deps.upstream, dep_count=deps.dep_count, extra_edges=deps.extra_edges, reach=deps.reach,
            next_kind=schedule.next_kind, events={e: tuple(map(nm, vs)) for e, vs in schedule.events.items()},
            last_live={nm(v): s for v, s in life.last_live.items()},
            ref_count={nm(v): c for v, c in life.ref_count.items()},
            gc_check_vars=tuple(tuple(map(nm, c)) for c in life.gc_check_vars),
            free_after=tuple(tuple(map(nm, f)) for f in life.free_after), op_cost=op_cost, parallel=parallel,
            pooled={i: nm(v) for i, (v, _, _) in self._pooled.items()},
            non_strict=self._non_strict(cases, deps.optional))
        mode = _flags.flag("FLAGS_executor_parallel")
        self._use_parallel = (not sequential_run and self._xp is np
                              and (mode == "always" or (mode == "auto" and parallel)))
        self._parallel_from = 0 if mode == "always" else 1   # "auto": the first run is the build run
        self._init_globals()
        self._fast = self._sequential(traced=False, checked=False)
        self.stats["builds"] += 1
        return self.plan

    def _sub_core(self, program: Program, fed: Sequence[str], fetched: Sequence[str]) -> "InterpreterCore":
        """An unbuilt core of a control-flow op's sub-block, in this core's scope and place."""
        prepared, pairs = prepare_program(program, fed, fetched)
        return InterpreterCore(prepared, self.scope, self.place, fed, fetched, holder_vars=("feed", "fetch"),
                               inplace_pairs=pairs)

    def _case_reads(self, kernels: list) -> dict[int, tuple[frozenset[int], frozenset[int]]]:
        """Control-flow op -> the var slots it reads only when its predicate holds, and only when it
        does not (a non-strict op needs only those of the case its predicate picks; the predicate and
        what both cases read it always needs). cond: each branch's own inputs; while: the captured vars,
        read only if the loop runs a trip (otherwise its results are its initial values)."""
        out = {}
        for ins, kernel in zip(self._instrs, kernels):
            if not isinstance(kernel, ControlFlowKernel) or kernel.type == "while_grad":
                continue
            if kernel.type == "cond":
                true, false = ({ins.inputs[p] for p in reads} for reads in kernel.reads)
            else:
                true, false = set(ins.inputs[1 + kernel.n:]) - set(ins.inputs[:1 + kernel.n]), set()
            out[ins.index] = (frozenset(true - false - {ins.inputs[0]}), frozenset(false - true - {ins.inputs[0]}))
        return out

    def _optional_reads(self, cases: dict[int, tuple[frozenset[int], frozenset[int]]]) -> list[frozenset[int]]:
        """Per op, the vars it may run without (those of either case)."""
        out = [frozenset()] * len(self._instrs)
        for j, (true, false) in cases.items():
            out[j] = true | false
        return out

    def _non_strict(self, cases: dict[int, tuple[frozenset[int], frozenset[int]]],
                    optional: Sequence[frozenset[int]]) -> dict[int, tuple[frozenset[int], ...]]:
        """Control-flow op -> per case (predicate true, false), the producers of its optional edges
        it waits for in that case."""
        return {j: tuple(frozenset(u for u in optional[j] if self._instrs[u].writes & reads) for reads in case)
                for j, case in cases.items() if optional and optional[j]}

    def _insert_transfers(self) -> None:
        """memcpy_h2d / memcpy_d2h ops where a value crosses between host and (emulated) device
        memory, in a copy of the program: the program given to the core never
        changes. A real device place (CuPy) keeps converting in its feed and fetch ops."""
        if self._xp is not np:
            return
        policy = _flags.flag("FLAGS_executor_stream_policy")
        fe = frontend()
        host_ops = (*_NOT_KERNELS, *fe.control_flow_ops)   # never placed on a device stream

        def device(op: Any) -> bool:
            return op.type not in host_ops and on_device(op.attrs.get(STREAM_ATTR), policy)
        if not any(device(op) for op in self.program.global_block().ops):
            return
        program = self.program.clone()
        block = program.global_block()
        kept = {n for n, v in block.vars.items() if v.persistable} | self.holder_vars

        def mutated(op: Any) -> set[int]:
            return set() if op.type in host_ops else _mutated_inputs(op, _registry.get_op(op.type))
        moved = insert_transfers(block, device, lambda op: NO_NEED_BUFFER.get(op.type, ()), mutated,
                                 kept.__contains__, lambda kind, src, dst, callsite: fe.operator(
                                     block, kind, [src], [dst], {}, callsite))
        program._changed()
        self.program = program
        self.inplace_pairs = {moved[i]: pair for i, pair in self.inplace_pairs.items()}

    def _analyse_streams(self, annotations: list, deps: Any) -> tuple[tuple[float, ...], bool, Any]:
        """Op costs, the parallel-or-sequential choice, contexts (written into the instructions)
        and the edge kinds of the stream analysis."""
        mode, policy = _flags.flag("FLAGS_executor_parallel"), _flags.flag("FLAGS_executor_stream_policy")
        if mode not in ("auto", "always", "never"):
            raise ValueError(f"InterpreterCore.build: FLAGS_executor_parallel must be 'auto', 'always' or 'never', "
                             f"got {mode!r}")
        if policy not in POLICIES:
            raise ValueError(f"InterpreterCore.build: FLAGS_executor_stream_policy must be one of {POLICIES}, "
                             f"got {policy!r}")
        self._record_stream = bool(_flags.flag("FLAGS_executor_record_stream"))
        self._poison = bool(_flags.flag("FLAGS_executor_poison_freed"))
        meta = self._var_meta

        def shape(v: int) -> Any:
            return None if v == NO_SLOT else meta[v]._shape
        instrs = self._instrs
        ops = self.program.global_block().ops
        control_flow_ops = frontend().control_flow_ops
        op_cost = tuple(0.0 if ins.kind in (FEED_OP, FETCH_OP) else
                        control_flow_cost(ops[ins.index]) if ins.kind in control_flow_ops else
                        _cost.op_cost(ins.type, [shape(v) for v in ins.inputs], [shape(v) for v in ins.outputs])
                        for ins in instrs)
        threads = host_threads()
        parallel = _cost.prefer_parallel(op_cost, deps.downstream, threads)
        contexts = place(["host" if ins.kind in control_flow_ops else ins.kind for ins in instrs], annotations,
                         policy, deps.upstream, op_cost,
                         _cost.RUN_OVERHEAD_US + _cost.HOP_US, threads)
        self._instrs = [dataclasses.replace(ins, context=c.kind, stream=c.stream,
                                           queue="device" if c.is_device else "host")
                        for ins, c in zip(instrs, contexts)]
        self._contexts = contexts
        schedule = StreamAnalyzer(contexts, [ins.reads | ins.shape_reads for ins in instrs],
                                  [ins.writes for ins in instrs]).analyse(deps.downstream)
        return op_cost, parallel, schedule

    def _analyse_run_safety(self, names: list[str], pers: set[int], fed: set[int], holders: set[int]) -> None:
        """Loads, commits, missing feeds, skip-inplace copies and the guards of in-place updates."""
        instrs = self._instrs
        written: set[int] = set()
        loads: list[int] = []
        scope_arrays: set[int] = set()     # persistables whose current value is the scope's array
        guards: list[tuple[int, int]] = []
        guarded: set[int] = set()
        for ins in instrs:
            for s in ins.inputs:
                if s == NO_SLOT or s in holders or s in written or s in scope_arrays:
                    continue
                if s not in pers:
                    raise ValueError(
                        f"Executor.run: variable '{names[s]}' is read by op '{ins.type}' (#{ins.index} of the "
                        f"plan, built at {ins.callsite}) but it is not fed and no op before it writes it; "
                        f"pass it in `feed`")
                loads.append(s)
                scope_arrays.add(s)
            for s in sorted(ins.inplace):
                if s in scope_arrays and s not in guarded:
                    guards.append((ins.index, s))
                    guarded.add(s)
            for s in ins.writes:
                if s not in ins.inplace:
                    scope_arrays.discard(s)  # a new array: staged until the commit
                written.add(s)
        self._loads = loads
        self._commits = sorted(s for s in pers if s in written and s not in scope_arrays)
        self._copy_feeds = {s for s in fed if any(s in ins.inplace for ins in instrs)}
        start = self._tail_start()
        self._validate_tail = start if any(i >= start for i, _ in guards) else None
        self._snapshots: dict[int, list[int]] = {}
        self._checked_snapshots: dict[int, list[int]] = {}  # the nan/inf check may fail after any update
        for i, s in guards:
            self._checked_snapshots.setdefault(i, []).append(s)
            if i < start:
                self._snapshots.setdefault(i, []).append(s)

    def _tail_start(self) -> int:
        """Start of the longest suffix of in-place kernels and fetches whose inputs all exist at
        its start (no op of the suffix makes a new value another one of them reads)."""
        instrs, opdefs = self._instrs, self._opdefs
        start = len(instrs)
        while start > 0:
            ins, d = instrs[start - 1], opdefs[start - 1]
            if not (ins.kind in (FETCH_OP, MEMCPY_D2H) or (d is not None and d.inplace and ins.inplace_pair is None)):
                break
            start -= 1
        i, fresh = start, {}
        while i < len(instrs):
            ins = instrs[i]
            clash = [fresh[s] for s in ins.inputs if s in fresh]
            if clash:
                start, i, fresh = max(clash) + 1, max(clash) + 1, {}
                continue
            if ins.kind == "kernel":
                for s in set(ins.outputs) - ins.inplace:
                    fresh[s] = i
            i += 1
        return start

    # ------------------------------------------------------------ code generation
    def _init_globals(self) -> None:
        """Kernels, attributes, validators and helpers, bound once as globals of the generated code."""
        xp = self._xp
        g = self._g
        g.update(_xp=xp, _asarray=xp.asarray, _owned=_owned, _missing=self._missing, _finite=check_finite,
                 _stub=lambda a: xp.broadcast_to(xp.zeros((), a.dtype), a.shape))
        if xp is not np:
            g.update(_to_device=xp.asarray, _to_host=lambda a: a.get())
        self._folded = self._fold_constants()
        for i, value in self._folded.items():
            g[f"kc{i}"] = value
        for ins, kernel in zip(self._instrs, self._kernels):
            if kernel is None:
                continue
            i = ins.index
            g[f"k{i}"] = kernel
            if i in self._pooled:
                g[f"p{i}"] = kernel_into_block(ins.type)
            for j, value in enumerate(ins.attrs.values()):
                g[f"a{i}_{j}"] = value
        if self._validate_tail is not None:
            for ins, opdef in zip(self._instrs[self._validate_tail:], self._opdefs[self._validate_tail:]):
                if opdef is not None:
                    g[f"_v{ins.index}"] = _validator(opdef, ins.attrs)

    def _fold_constants(self) -> dict[int, Any]:
        """The output, computed once now, of each op that makes the same array on every run: a kernel
        with no input, not random and without side effects (`full`, `assign_value`: the constants of
        a SIR), whose output no op updates in place and no fetch hands out. The array is read-only,
        so a write that slipped through raises instead of changing later runs."""
        fetched = {ins.inputs[0] for ins in self._instrs if ins.kind == FETCH_OP}
        updated = {s for ins in self._instrs for s in ins.inplace}
        updated |= {ins.inputs[ins.inplace_pair[0]] for ins in self._instrs if ins.inplace_pair is not None}
        folded = {}
        for ins, d, kernel in zip(self._instrs, self._opdefs, self._kernels):
            if (kernel is None or ins.kind != "kernel" or ins.inputs or len(ins.outputs) != 1 or d is None
                    or d.random or d.side_effect or d.inplace or self._n_outs[ins.index] or ins.index in self._pooled):
                continue
            (out,) = ins.outputs
            if out in fetched or out in updated or self._var_meta[out].persistable:
                continue
            value = self._xp.asarray(kernel(self._xp, **ins.attrs))
            if self._xp is np:
                value.flags.writeable = False
            folded[ins.index] = value
        return folded

    def _op_lines(self, i: int, ref: Callable[[int], str], checked: bool,
                  into_blocks: bool = False) -> list[tuple[int, str]]:
        """The statements of op `i` (guards, then the kernel call, then, `checked`, the nan/inf
        checks of what it wrote), with vars spelled by `ref`, each with the index of the op an
        error on that line is reported for. `into_blocks` (the per-op code of the scheduler and
        parallel runs): an op whose output a stream allocator provides computes into the block
        found in the output's slot (none in the scheduler mode: the plain kernel runs)."""
        checks = []
        if i == self._validate_tail:
            checks = [(t.index, f"_v{t.index}({self._args(t, ref)})") for t in self._instrs[i:] if t.kind == "kernel"]
        return checks + [(i, line) for line in self._statements(i, ref, checked, into_blocks)]

    def _statements(self, i: int, ref: Callable[[int], str], checked: bool, into_blocks: bool) -> list[str]:
        ins = self._instrs[i]
        lines = []
        for s in (self._checked_snapshots if checked else self._snapshots).get(i, ()):
            lines.append(f"_s.append(({ref(s)}, {ref(s)}.copy()))")
        if ins.kind == FEED_OP:
            x = ins.outputs[0]
            value = f"feeds[{ins.col}]"
            if self._xp is not np:
                value = f"_to_device({value})"
            elif x in self._copy_feeds:
                value += ".copy()"  # skip-inplace: an in-place op must not write the caller's array
            return lines + [f"{ref(x)} = {value}"]
        if ins.kind == FETCH_OP:
            x = ins.inputs[0]
            value = f"{ref(x)}.copy()" if self._var_meta[x].persistable else f"_owned({ref(x)})"
            if self._xp is not np:
                value = f"_to_host({ref(x)})"
            return lines + [f"r[{ins.col}] = {value}"]
        if i in self._folded:
            return lines + [f"{ref(ins.outputs[0])} = kc{i}", *self._check_lines(i, ref, checked)]
        args, kernel = self._args(ins, ref), f"k{i}"
        if ins.inplace_pair is not None:
            args = f"{ref(ins.inputs[ins.inplace_pair[0]])}, {args}"
        elif into_blocks and i in self._pooled:   # the block the stream's allocator bound to the output
            args, kernel = f"{ref(ins.outputs[0])}, {args}", f"p{i}"
        kw = "".join(f", {k}=a{i}_{j}" for j, k in enumerate(ins.attrs))
        call = f"{kernel}(_xp{', ' if args else ''}{args}{kw})"
        outs = [ref(o) for o in ins.outputs]
        n_meta = self._n_outs[i]
        if not outs:   # a construct whose branches return nothing
            lines.append(call)
        elif n_meta:
            if n_meta != len(outs):
                call += f"[:{len(outs)}]"
            lines.append(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")
        else:
            lines.append(f"{outs[0]} = {call}")
        for o in ins.outputs:
            if self._var_meta[o].shape == []:  # NumPy hands back scalars for 0-d results
                lines.append(f"{ref(o)} = _asarray({ref(o)})")
        return lines + self._check_lines(i, ref, checked)

    def _check_lines(self, i: int, ref: Callable[[int], str], checked: bool) -> list[str]:
        """`checked`: the nan/inf checks of what op `i` wrote."""
        if not checked:
            return []
        names = self.plan.var_names
        ins = self._instrs[i]
        return [f"_finite({ref(v)}, {ins.type!r}, {i}, {names[v]!r})" for v in sorted(ins.writes)]

    @staticmethod
    def _args(ins: Instruction, ref: Callable[[int], str]) -> str:
        return ", ".join("None" if s == NO_SLOT else ref(s) for s in ins.inputs)

    def _free_line(self, v: int, ref: Callable[[int], str]) -> str:
        return f"{ref(v)} = _stub({ref(v)})" if v in self._stubbed else f"{ref(v)} = None"

    def _compile_sequential(self, traced: bool, checked: bool = False) -> Callable:
        """The whole plan as one straight-line function, in plan order (seed: "trace" mode);
        `traced` calls a hook around each op, `checked` checks each op's outputs for nan/inf."""
        suffix = "_checked" if checked else ""
        if traced:
            def ref(v: int) -> str:
                return f"s[{v}]"
            body = [f"s = [None] * {len(self.plan.var_names) if self.plan else len(self._var_meta)}"]
            header = f"def _run_traced{suffix}(feeds, _s, hook):"
        else:
            def ref(v: int) -> str:
                return f"v{v}"
            body = []
            header = f"def _run{suffix}(feeds, _s):"
        body.append(f"r = [None] * {len(self.fetch_names)}")
        body += self._load_lines(ref)
        line_op: dict[int, int] = {}
        for i in range(len(self._instrs)):
            if traced:
                body.append(f"hook('start', {i}, s)")
            for op_index, line in self._op_lines(i, ref, checked):
                line_op[len(body) + 2] = op_index  # +1 for the header, +1 for 1-based line numbers
                body.append(line)
            if traced:
                body.append(f"hook('end', {i}, s)")
            for v in self._life.free_after[i]:
                body.append(self._free_line(v, ref))
                if traced:
                    body.append(f"hook('free', {v}, s)")
        body += [f"c{v}.value = {ref(v)}" for v in self._commits]
        body.append("return r")
        name = header[4:header.index("(")]
        fn = self._exec([header] + ["    " + line for line in body], name, name)
        self._codes[fn.__code__] = (line_op, traced)
        return fn

    def _sequential(self, traced: bool, checked: bool) -> Callable:
        """The sequential code of that variant, generated on its first use."""
        fn = self._variants.get((traced, checked))
        if fn is None:
            fn = self._variants[(traced, checked)] = self._compile_sequential(traced, checked)
        return fn

    def _load_lines(self, ref: Callable[[int], str]) -> list[str]:
        out = []
        for v in self._loads:
            out += [f"{ref(v)} = c{v}.value", f"if {ref(v)} is None: _missing({v})"]
        return out

    def _op_functions(self, checked: bool) -> list[Callable]:
        """One function per op over a slot list (what the scheduler runs), generated on first
        use, with `_load` and `_commit`; `checked` adds the nan/inf checks."""
        fns = self._op_fns.get(checked)
        if fns is not None:
            return fns

        def ref(v: int) -> str:
            return f"s[{v}]"
        suffix = "_checked" if checked else ""
        lines: list[str] = []
        line_op: dict[int, int] = {}
        for i in range(len(self._instrs)):
            lines.append(f"def _op{i}{suffix}(s, _s, feeds, r):")
            for op_index, line in self._op_lines(i, ref, checked, into_blocks=True):
                line_op[len(lines) + 1] = op_index
                lines.append("    " + line)
        lines += ["def _load(s):"] + ["    " + x for x in self._load_lines(ref)] + ["    pass"]
        lines += ["def _commit(s):"] + [f"    c{v}.value = s[{v}]" for v in self._commits] + ["    pass"]
        self._exec(lines, None, "ops" + suffix)
        fns = self._op_fns[checked] = [self._g[f"_op{i}{suffix}"] for i in range(len(self._instrs))]
        for fn in fns:
            self._codes[fn.__code__] = (line_op, True)
        return fns

    def _exec(self, lines: list[str], name: str | None, tag: str) -> Any:
        source = "\n".join(lines) + "\n"
        filename = f"<interpretercore {id(self):x} {tag}>"
        linecache.cache[filename] = (len(source), None, [x + "\n" for x in lines], filename)
        exec(compile(source, filename, "exec"), self._g)  # noqa: S102 - our own generated code
        return self._g[name] if name else None

    # ------------------------------------------------------------ run
    def _missing(self, v: int) -> None:
        raise ValueError(f"Executor.run: persistable variable '{self.plan.var_names[v]}' has no value in the "
                         "scope; run the startup program (or set the variable) first")

    def _bind(self) -> None:
        """Resolve the scope cells of the persistables this plan loads or commits (once per scope)."""
        created = []
        for v in {*self._loads, *self._commits}:
            name = self.plan.var_names[v]
            cell = self.scope.find_var(name)
            if cell is None:
                cell = self.scope.vars[name] = ScopeVariable(name)
                created.append(name)
            self._g[f"c{v}"] = cell
        if self.local_scope is None:
            self.local_scope = self.scope.new_scope()
            for name in self.plan.var_names:  # temporaries: declared here, their arrays live in a run
                if name not in self.plan.persistable and name not in self.holder_vars:
                    self.local_scope.vars[name] = ScopeVariable(name)
        self._created = created
        self._bound = True

    def prepare(self) -> None:
        """Build (if needed) and resolve the scope cells now, in this thread (before queuing a run)."""
        if self.plan is None:
            self.build()
        if not self._bound:
            self._bind()

    def run(self, feeds: Sequence[Any] = (), *, scheduler: bool = False, parallel: bool | None = None,
            hook: Hook | None = None) -> list:
        """Run the plan on `feeds` (in `feed_names` order); the fetched arrays in `fetch_names` order.
        `parallel` overrides the build's choice (FLAGS_executor_parallel and the cost estimate). A
        choice made by the estimate applies from the second run on: like Paddle's build run, the
        first runs on this thread, so a program run once (a startup program) never starts the work
        queues; FLAGS_executor_parallel="always" threads every run.
        FLAGS_check_nan_inf (read per run) checks every op's outputs as soon as it ran; under
        FLAGS_benchmark (read per run) a parallel run waits for each op to finish before another
        starts (the other modes run one op at a time anyway)."""
        if not self._bound:  # inline, not prepare(): the tiny-program path counts every call
            self.prepare()
        snaps: list[tuple[Any, Any]] = []
        check = _flag_values["FLAGS_check_nan_inf"]
        try:
            if scheduler:
                out = self._run_scheduled(feeds, snaps, hook, check)
            elif (self._use_parallel and self.stats["runs"] >= self._parallel_from) if parallel is None else parallel:
                out = self._run_parallel(feeds, snaps, hook, check)
            elif hook is not None:
                out = self._sequential(True, check)(feeds, snaps, hook)
            elif check:
                out = self._sequential(False, True)(feeds, snaps)
            else:
                out = self._fast(feeds, snaps)
        except BaseException as e:
            for array, saved in reversed(snaps):
                array[...] = saved
            self._unbind_created()
            located = self._locate(e)
            if located is None or not isinstance(e, Exception):
                raise
            err = self._op_error(e, *located)
            if err is e:
                raise
            raise err from e
        self._created = []
        self.stats["runs"] += 1
        return out

    def _unbind_created(self) -> None:
        """After a failed run: take back the empty cells this core added to the scope."""
        for name in self._created:
            cell = self.scope.vars.get(name)
            if cell is not None and cell.value is None:
                del self.scope.vars[name]
                self._bound = False

    @property
    def sub_cores(self) -> dict[tuple[int, int], "InterpreterCore | None"]:
        """(op index, sub-block index) -> the core running that sub-block of a control-flow op
        (None while no run needed it)."""
        return {(i, sub.index): sub.core for i, k in enumerate(self._kernels) if isinstance(k, ControlFlowKernel)
                for sub in k.sub_blocks}

    @property
    def runs_parallel(self) -> bool:
        """Whether `run()` without `parallel=` uses the parallel runner."""
        return self._use_parallel

    def _run_parallel(self, feeds: Sequence[Any], snaps: list, hook: Hook | None, check: bool) -> list:
        runner = self._runner
        if runner is None:
            runner = self._runner = self._make_runner()
        fns = self._op_functions(check)
        return runner.run(fns, feeds, snaps, hook, self._g["_load"], self._g["_commit"],
                          serial=_flag_values["FLAGS_benchmark"])

    def _make_runner(self) -> ParallelRunner:
        """The frozen parallel schedule (made on the first parallel run: a run-once program never pays)."""
        plan, life = self.plan, self._life
        owner: dict[int, str | None] = {}   # a var belongs to the stream of its first writer
        for ins, ctx in zip(self._instrs, self._contexts):
            for v in ins.writes:
                owner.setdefault(v, ctx.stream if ctx.is_device else None)
        down, dep, kinds = [set(d) for d in plan.downstream], list(plan.dep_count), dict(plan.next_kind)
        tail = self._validate_tail
        if tail is not None:  # the checks of the trailing updates read all their inputs: a barrier
            for p in range(tail):
                if all(q > tail for q in down[p]):
                    down[p].add(tail)
                    dep[tail] += 1
                    kinds[(p, tail)] = edge_kind(self._contexts[p], self._contexts[tail])
        return ParallelRunner(
            contexts=self._contexts, downstream=[frozenset(d) for d in down], dep_count=dep,
            next_kind=kinds, gc_check_vars=life.gc_check_vars, ref_count=life.ref_count,
            freeable=self._freeable, owner=[owner.get(v) for v in range(len(plan.var_names))],
            release=self._release_fn(), n_vars=len(plan.var_names), n_fetches=len(self.fetch_names),
            record_stream=self._record_stream, priority=[ins.priority for ins in self._instrs], pooled=self._pooled,
            non_strict=plan.non_strict, predicate={j: self._instrs[j].inputs[0] for j in plan.non_strict})

    @property
    def allocators(self) -> dict[str, StreamAllocator]:
        """The per-stream allocators of the parallel runs, by stream name (empty before the
        first parallel run, and for a plan with no op whose output a pool provides)."""
        return {} if self._runner is None else self._runner.allocators

    def _release_fn(self) -> Callable[[list, int, tuple], None]:
        """How the scheduled and parallel runs free var slot v: drop it (a shape-only reader
        later gets a stub), or under FLAGS_executor_poison_freed poison its buffer and leave it.
        The block of a var a stream allocator provides goes on to that stream's next ops, which
        overwrite it: its slot gets a poisoned array of its own instead."""
        stub, stubbed = self._g["_stub"], self._stubbed
        if not self._poison:
            def release(s: list, v: int, alive: tuple) -> None:
                s[v] = stub(s[v]) if v in stubbed else None
            return release
        keep = [a for ins in self._instrs for a in ins.attrs.values() if isinstance(a, np.ndarray)]
        recycled = {v for v, _, _ in self._pooled.values()}

        def release_poisoning(s: list, v: int, alive: tuple) -> None:
            if v in recycled:
                s[v] = None if s[v] is None else poisoned_like(s[v])
            elif not release_poisoned(s, v, alive, keep):
                s[v] = stub(s[v]) if v in stubbed else None
        return release_poisoning

    def _run_scheduled(self, feeds: Sequence[Any], snaps: list, hook: Hook | None, check: bool) -> list:
        """Dependency counters and reference counts, reset from the plan; ready ops by
        (scheduling_priority, plan index)."""
        plan = self.plan
        fns, g = self._op_functions(check), self._g
        s: list[Any] = [None] * len(plan.var_names)
        r: list[Any] = [None] * len(self.fetch_names)
        g["_load"](s)
        dep = list(plan.dep_count)
        ref = [0] * len(s)
        for v, c in self._life.ref_count.items():
            ref[v] = c
        checks, freeable, down = self._life.gc_check_vars, self._freeable, plan.downstream
        release, alive = self._release_fn(), (feeds, r)
        rank = [ins.priority for ins in self._instrs]
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

    def _locate(self, e: BaseException) -> tuple[int, Callable[[int], Any]] | None:
        """(op index, slot -> value) of the generated frame the exception came through, if any."""
        tb = e.__traceback__
        while tb is not None:
            entry = self._codes.get(tb.tb_frame.f_code)
            if entry is not None:
                line_op, slotted = entry
                i = line_op.get(tb.tb_lineno)
                if i is None:
                    return None
                frame_locals = tb.tb_frame.f_locals
                if slotted:
                    return i, frame_locals["s"].__getitem__
                return i, lambda v: frame_locals.get(f"v{v}")
            tb = tb.tb_next
        return None

    def _op_error(self, e: Exception, i: int, value: Callable[[int], Any]) -> Exception:
        """`e` again (same type), its message naming the op, its index, input shapes and callsite."""
        ins = self._instrs[i]
        shapes = ", ".join("None" if s == NO_SLOT else str(list(np.shape(value(s))))
                           if value(s) is not None else "None" for s in ins.inputs)
        msg = (f"{e} [operator '{ins.type}' (#{ins.index} of the plan) failed with input shapes ({shapes}); "
               f"it was built at {ins.callsite}]")
        try:
            new = type(e)(msg)
        except Exception:  # noqa: BLE001 - an exception type that needs more arguments
            e.add_note(msg)
            return e
        return new

    def close(self) -> None:
        """Forget the local scope (the executor's cache evicted this core)."""
        if self.local_scope is not None and self.local_scope in self.scope.kids:
            self.scope.kids.remove(self.local_scope)
        self.local_scope = None
