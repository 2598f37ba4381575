"""The InterpreterCore: build a program's plan once, then run it many times (Paddle's
InterpreterCore, the new executor's design).

Build (`build()`, or the first `run()`), one module per step:
1. the op function list (`instructions.py`): device copies where values cross between host and
   device memory (CuPy's on a GPU place; on a CPU place whose policy puts kernels on device
   streams, emulated by NumPy arrays), every var an op names an integer slot, each op's kernel
   looked up ONCE (`stats["kernel_lookups"]`), its inputs and outputs resolved to slots;
2. the analysis (`analysis.py`): run safety (`run_safety.py`: loads, commits, undoable in-place
   updates), dependencies, lifetimes, costs and the parallel-or-sequential choice, execution
   contexts and edge kinds, pooled outputs; the `Plan`;
3. code (`codegen.py`): the sequential mode lowers the plan to one generated straight-line Python
   function; the other modes get one generated function per op.

Run: the generated function loads the persistables it reads from their scope cells (resolved
once per scope), runs the ops, commits, and returns the fetches; a run does no name lookup, no
registry lookup and no meta inference. When the build chose the parallel mode, runs go through
`parallel.ParallelRunner` instead (host pool, device-launch queue, emulated streams, the same
plan and the same per-op code), from the second run on when the cost estimate chose it; the
next runs then check that choice on the machine as it is (`mode_trial.py`: a few timed runs of
each mode, then the faster one). On a GPU place with CuPy, the sequential code runs on the
caller's current CUDA stream, and a plan whose kernels the stream analysis put on several
streams goes through `cuda_streams.CudaStreamRunner` (real CUDA streams and events, launched
from one host thread) unless FLAGS_executor_parallel is "never" ("always": every run).
On a GPU, FLAGS_cuda_graph replays the sequential run as one captured CUDA graph per feed
signature (`cuda_graph.py`).
`run(scheduler=True)` is the single-threaded reference (`run_modes.py`). FLAGS_check_nan_inf
(read per run) selects a variant of the generated code that checks each op's outputs for NaN/Inf
right after it ran. A run that fails leaves the scope as it was before it (`run_safety.py`), and
its error names the failing op (`errors.py`).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import flags as _flags
from ..flags import _values as _flag_values
from ..place import array_module
from .allocator import StreamAllocator
from .analysis import Analysis, analyse
from .codegen import CodeGen
from .control_flow import ControlFlowKernel
from .cuda_graph import CudaGraphRunner, graph_runner, unused_status
from .errors import locate, op_error
from .instructions import NO_NEED_BUFFER, PRIORITY_ATTR, insert_device_copies, op_list
from .mode_trial import ModeTrial
from .parallel import ParallelRunner
from .plan import FEED_OP, FETCH_OP, Plan
from .prepare import prepare_program
from .program import Program
from .run_modes import Hook, make_runner, release_fn, run_scheduled
from .scope import Scope, ScopeVariable
from .stream_analysis import kernel_streams

__all__ = ["InterpreterCore", "FEED_OP", "FETCH_OP", "NO_NEED_BUFFER", "PRIORITY_ATTR", "set_run_observer"]

_run_observer: Callable | None = None   # runtime.profiler's recorder while it records


def set_run_observer(observer: Callable | None) -> None:
    """Send every `InterpreterCore.run` without a hook to `observer(core, feeds, scheduler, parallel)`
    (None: run directly again); the profiler installs one only while it records, so it reruns the core
    with a per-op hook and times the run; a run pays one global check otherwise."""
    global _run_observer
    _run_observer = observer


class InterpreterCore:
    """Builds the plan of one prepared program (feed/fetch ops included) for one scope; runs it."""

    def __init__(self, program: Program, scope: Scope, place: Any = None, feed_names: Sequence[str] = (),
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
        self._a: Analysis | None = None
        self._code: CodeGen | None = None
        self._fast: Callable | None = None
        self._runner: ParallelRunner | None = None
        self._use_parallel = False
        self._parallel_from = 1
        self._trial: ModeTrial | None = None
        self._graphs: CudaGraphRunner | None = None
        self._bound = False
        self._created: list[str] = []
        self.name = ""   # what a profile calls this core's runs (a compiled graph's name); "" for "program"

    # ------------------------------------------------------------ build
    def build(self) -> Plan:
        """Analyse the program and generate the sequential code (once; a second call raises)."""
        if self.plan is not None:
            raise RuntimeError("InterpreterCore.build: this core is already built")
        cuda = self._xp is not np
        self.program, self.inplace_pairs = insert_device_copies(
            self.program, self.holder_vars, self.inplace_pairs, _flags.flag("FLAGS_executor_stream_policy"), cuda)
        ops = op_list(self.program, self.inplace_pairs, self._sub_core)
        self.stats["kernel_lookups"] += ops.kernel_lookups
        a = self._a = analyse(ops, self.program, self.place, self.feed_names, self.fetch_names, self.holder_vars,
                              self.skip_gc_vars, emulated=not cuda)
        self.plan = a.plan
        mode = _flags.flag("FLAGS_executor_parallel")
        if cuda:   # CUDA streams: only kernels on several streams leave the sequential code ("auto")
            several = len(kernel_streams(a.contexts)) > 1
            self._use_parallel = not a.sequential_run and (mode == "always" or (mode == "auto" and several))
            self._parallel_from, self._trial = 0, None
        else:
            self._use_parallel = not a.sequential_run and (mode == "always" or (mode == "auto" and a.plan.parallel))
            self._parallel_from = 0 if mode == "always" else 1   # "auto": the first run is the build run
            self._trial = ModeTrial() if self._use_parallel and mode == "auto" else None
        self._code = CodeGen(a, self._xp, len(self.fetch_names))
        self._fast = self._code.sequential(traced=False, checked=False)
        self._graphs = graph_runner(self._code, a, self._xp, device=cuda)
        self.stats["builds"] += 1
        return self.plan

    def _sub_core(self, program: Program, fed: Sequence[str], fetched: Sequence[str]) -> "InterpreterCore":
        """An unbuilt core of a control-flow op's sub-block, in this core's scope and place."""
        prepared, pairs = prepare_program(program, fed, fetched)
        return InterpreterCore(prepared, self.scope, self.place, fed, fetched, holder_vars=("feed", "fetch"),
                               inplace_pairs=pairs)

    # ------------------------------------------------------------ run
    def _bind(self) -> None:
        """Resolve the scope cells of the persistables this plan loads or commits (once per scope)."""
        created = []
        for v in {*self._a.safety.loads, *self._a.safety.commits}:
            name = self.plan.var_names[v]
            cell = self.scope.find_var(name)
            if cell is None:
                cell = self.scope.vars[name] = ScopeVariable(name)
                created.append(name)
            self._code.g[f"c{v}"] = cell
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
        queues; the next runs alternate threaded and single-threaded, timed, and the faster mode
        stays (`mode_trial.py`); FLAGS_executor_parallel="always" threads every run.
        FLAGS_check_nan_inf (read per run) checks every op's outputs as soon as it ran; under
        FLAGS_benchmark (read per run) a parallel run waits for each op to finish before another
        starts (the other modes run one op at a time anyway)."""
        if _run_observer is not None and hook is None:
            return _run_observer(self, feeds, scheduler, parallel)
        if not self._bound:  # inline, not prepare(): the tiny-program path counts every call
            self.prepare()
        snaps: list[tuple[Any, Any]] = []
        check = _flag_values["FLAGS_check_nan_inf"]
        try:
            if scheduler:
                out = self._run_scheduled(feeds, snaps, hook, check)
            elif (self._trial is not None and parallel is None and hook is None and not check
                  and self.stats["runs"] >= self._parallel_from):
                out = self._run_trial(self._trial, feeds, snaps)
            elif (self._use_parallel and self.stats["runs"] >= self._parallel_from) if parallel is None else parallel:
                out = self._run_parallel(feeds, snaps, hook, check)
            elif hook is not None:
                out = self._code.sequential(True, check)(feeds, snaps, hook)
            elif check:
                out = self._code.sequential(False, True)(feeds, snaps)
            elif self._graphs is not None:
                out = self._graphs.run(feeds, snaps)
            else:
                out = self._fast(feeds, snaps)
        except BaseException as e:
            for array, saved in reversed(snaps):
                array[...] = saved
            self._unbind_created()
            located = locate(self._code.codes, e)
            if located is None or not isinstance(e, Exception):
                raise
            err = op_error(self._a.instrs, e, *located)
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
        return {(i, sub.index): sub.core for i, k in enumerate(self._a.kernels) if isinstance(k, ControlFlowKernel)
                for sub in k.sub_blocks}

    @property
    def op_types(self) -> tuple[str, ...]:
        """The type of each op of the plan, by the index a run's hook is given (feed and fetch ops included)."""
        return tuple(ins.type for ins in self._a.instrs)

    @property
    def runs_parallel(self) -> bool:
        """Whether `run()` without `parallel=` uses the parallel runner (after the trial runs of an
        'auto' choice of threads: whether they kept it)."""
        return self._use_parallel

    def _run_scheduled(self, feeds: Sequence[Any], snaps: list, hook: Hook | None, check: bool) -> list:
        code = self._code
        return run_scheduled(self._a, code.op_functions(check), code.g, release_fn(self._a, code.g["_stub"]),
                             len(self.fetch_names), feeds, snaps, hook)

    def _run_trial(self, trial: ModeTrial, feeds: Sequence[Any], snaps: list) -> list:
        """One timed run in the mode the trial asks for; after the last, the faster mode for good."""
        threaded = trial.next_parallel()
        start = trial.clock()
        out = self._run_parallel(feeds, snaps, None, False) if threaded else self._fast(feeds, snaps)
        verdict = trial.record(threaded, trial.clock() - start)
        if verdict is not None:
            self._use_parallel, self._trial = verdict, None
        return out

    def _run_parallel(self, feeds: Sequence[Any], snaps: list, hook: Hook | None, check: bool) -> list:
        code, runner = self._code, self._runner
        if runner is None:   # made on the first parallel run: a run-once program never pays
            runner = self._runner = make_runner(self._a, release_fn(self._a, code.g["_stub"]), len(self.fetch_names),
                                                self._xp, self.place)
        fns = code.op_functions(check)
        return runner.run(fns, feeds, snaps, hook, code.g["_load"], code.g["_commit"],
                          serial=_flag_values["FLAGS_benchmark"])

    def cuda_graph_status(self) -> dict[str, Any]:
        """What FLAGS_cuda_graph does for this core's runs (`cuda_graph.CudaGraphRunner.status`)."""
        return self._graphs.status() if self._graphs is not None else unused_status(self._xp is not np)

    @property
    def allocators(self) -> dict[str, StreamAllocator]:
        """The per-stream allocators of the parallel runs, by stream name (empty before the
        first parallel run, and for a plan with no op whose output a pool provides)."""
        return {} if self._runner is None else self._runner.allocators

    def close(self) -> None:
        """Forget the local scope (the executor's cache evicted this core)."""
        if self.local_scope is not None and self.local_scope in self.scope.kids:
            self.scope.kids.remove(self.local_scope)
        self.local_scope = None
