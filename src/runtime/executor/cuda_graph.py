"""CUDA graphs: a device core's run captured once per feed signature, then replayed as one launch.

On a GPU every op of a run is a kernel launch made from Python; a CUDA graph replays the whole
launch sequence with one call. FLAGS_cuda_graph (read when the core is built) picks: "off"
(plain runs), "on" (capture on the first run of each feed signature) or "auto" (after
FLAGS_cuda_graph_warmup plain runs of a signature, capture it, time replays against plain runs
in turn, `mode_trial.RUNS_EACH` of each, and keep the faster).

Only a program whose every op is a device kernel with a fixed launch sequence can be replayed:
no random op (its generator state would be frozen into the graph), no control flow (its predicate
is read on the host), no op whose output shape depends on values (a host sync), and no persistable
given a new array per run (the graph writes in place only). Such a program runs plain, and
`status()` says why. A kernel that syncs with the host (an optimizer reading its learning rate
with `.item()`) shows only when the capture raises: that signature then runs plain for good.

Per signature (feed shapes and dtypes; GRAPH_CAPACITY of them, least recently used dropped) the
runner keeps static device buffers for the feeds, a private `cupy.cuda.MemoryPool` that every
allocation of the warm-up run and of the capture comes from (so no block the graph writes is
ever handed to anything else), the graph and its output arrays. A run copies the feeds into the
buffers (device to device, or host to device), launches the graph and returns device copies of
the fetches (the next replay overwrites the graph's outputs). Parameters are read in place: the
graph holds their device buffers, so when a scope cell holds another array than the one captured
(a parameter rebound, not updated in place) the signature is captured again.

Capture runs the core's generated sequential code with the feed conversion made an identity (the
feeds are already the static buffers) and constant ops made from device copies of their values:
first once as a warm-up (it initialises what kernels set up lazily, and fills the private pool
so the capture allocates nothing new), then between `begin_capture` and `end_capture` (which runs
nothing). Persistables the program updates in place are restored after the warm-up, so the run
that captured applies its updates exactly once, by its launch.
"""
from __future__ import annotations

import threading
import types
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .. import flags as _flags
from ..ops.registry import OpDef
from .analysis import Analysis
from .codegen import CodeGen
from .control_flow import ControlFlowKernel
from .mode_trial import ModeTrial
from .plan import FEED_OP, FETCH_OP, Instruction

__all__ = ["CudaGraphRunner", "graph_runner", "summary", "MODES", "GRAPH_CAPACITY"]

MODES = ("off", "on", "auto")
GRAPH_CAPACITY = 8   # graphs kept per core: each holds its own buffers and memory pool

Signature = tuple[tuple[tuple[int, ...], str], ...]


def _same(a: Any) -> Any:
    return a


def _makes_a_constant(ins: Instruction, opdef: OpDef | None) -> bool:
    """An op whose output is the same array on every run: a kernel with no input, not random."""
    return ins.kind == "kernel" and not ins.inputs and opdef is not None and not (opdef.random or opdef.inplace)


class _Constant:
    """A constant op's kernel in a graph: a device copy of its value, made once outside the capture.
    The op itself may copy its value from the host (`assign_value`), which a capture refuses; the
    core did not fold it because a fetch hands it out or an op updates it in place, so each run
    needs a fresh one."""

    def __init__(self, value: Any):
        self.value = value

    def __call__(self, xp: Any, **attrs: Any) -> Any:
        return self.value.copy()


def ineligible_reason(a: Analysis) -> str | None:
    """Why the plan's runs cannot be replayed as one graph (None: they can)."""
    names = a.plan.var_names
    if a.safety.commits:
        return (f"the program stores a new array in persistable '{names[a.safety.commits[0]]}' on every run "
                "(a graph can only update persistables in place)")
    for ins, opdef, kernel in zip(a.instrs, a.opdefs, a.kernels):
        if ins.kind in (FEED_OP, FETCH_OP):
            continue
        what = f"op #{ins.index} '{ins.type}'"
        if isinstance(kernel, ControlFlowKernel):
            return f"{what} is control flow: its predicate is read on the host"
        if opdef is None:
            return f"{what} is not a device kernel"
        if opdef.random:
            return f"{what} is random: a graph would replay the generator state it captured"
        if opdef.dynamic_shape:
            return f"{what} has an output shape that depends on values (a host sync)"
    return None


def _signature(feeds: Sequence[Any]) -> Signature | None:
    """The feeds' shapes and dtypes (None when a feed is not an array)."""
    try:
        return tuple((tuple(f.shape), f.dtype.str) for f in feeds)
    except AttributeError:
        return None


@dataclass
class _Entry:
    """One feed signature: its warm-up count, and once captured its graph and what the graph uses."""

    plain_runs: int = 0
    graph: Any = None
    pool: Any = None                 # the private MemoryPool: lives exactly as long as the graph
    inputs: list = field(default_factory=list)     # static device buffers of the feeds
    outputs: list = field(default_factory=list)    # the graph's fetched arrays
    params: tuple = ()               # the persistable arrays the graph reads and writes in place
    trial: ModeTrial | None = None   # "auto": timing replays against plain runs


class _CaptureFailed(Exception):
    pass


class CudaGraphRunner:
    """Runs a device core's sequential code as captured CUDA graphs, one per feed signature."""

    def __init__(self, code: CodeGen, analysis: Analysis, xp: Any, mode: str, warmup: int):
        self._xp = xp
        self._mode = mode
        self._warmup = warmup
        self._plain = code.sequential(False, False)
        self._g = code.g
        self._constant_ops = [(f"k{ins.index}", kernel, ins.attrs) for ins, opdef, kernel
                              in zip(analysis.instrs, analysis.opdefs, analysis.kernels)
                              if _makes_a_constant(ins, opdef) and ins.index not in code.folded
                              and not analysis.n_outs[ins.index]]
        self._constants: dict[str, "_Constant"] | None = None
        self._loads = list(analysis.safety.loads)
        updated = {s for slots in analysis.safety.checked_snapshots.values() for s in slots}
        self._updated = [i for i, v in enumerate(self._loads) if v in updated]   # positions in `params`
        self.reason = ineligible_reason(analysis)
        self._entries: OrderedDict[Signature, _Entry] = OrderedDict()
        self._failed: dict[Signature, str] = {}     # signatures that run plain for good, and why
        self._stream: Any = None
        self._lock = threading.Lock()
        self.stats = {"captures": 0, "recaptures": 0, "replays": 0, "plain_runs": 0, "failed_captures": 0}
        _live.add(self)

    # ------------------------------------------------------------ run
    def run(self, feeds: Sequence[Any], snaps: list) -> list:
        """One run of the core: a replay of this signature's graph, or a plain run. One at a time:
        runs share the static buffers (a queued run, `return_futures`, may overlap a direct one)."""
        with self._lock:
            return self._run(feeds, snaps)

    def _run(self, feeds: Sequence[Any], snaps: list) -> list:
        sig = None if self.reason is not None else _signature(feeds)
        entry = None if sig is None or sig in self._failed else self._entry(sig)
        if entry is None or (self._mode == "auto" and entry.plain_runs < self._warmup):
            if entry is not None:
                entry.plain_runs += 1
            return self._run_plain(feeds, snaps)
        params = tuple(self._g[f"c{v}"].value for v in self._loads)
        if any(p is None for p in params):   # the plain run raises, naming the missing persistable
            return self._run_plain(feeds, snaps)
        if entry.graph is None or any(p is not q for p, q in zip(params, entry.params)):
            if entry.graph is not None:
                self.stats["recaptures"] += 1
            try:
                self._capture(entry, feeds, params, snaps)
            except _CaptureFailed as e:
                self._failed[sig] = str(e)
                del self._entries[sig]
                return self._run_plain(feeds, snaps)
        if entry.trial is not None:
            return self._run_trial(sig, entry, feeds, snaps)
        return self._replay(entry, feeds)

    def _entry(self, sig: Signature) -> _Entry:
        entry = self._entries.get(sig)
        if entry is None:
            entry = self._entries[sig] = _Entry(trial=ModeTrial() if self._mode == "auto" else None)
            while len(self._entries) > GRAPH_CAPACITY:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(sig)
        return entry

    def _run_plain(self, feeds: Sequence[Any], snaps: list) -> list:
        self.stats["plain_runs"] += 1
        return self._plain(feeds, snaps)

    def _run_trial(self, sig: Signature, entry: _Entry, feeds: Sequence[Any], snaps: list) -> list:
        """One timed run, a replay or a plain run in turn, to the end of its device work; after the
        last, the faster for good. (The trial's "parallel" side is the graph here.)"""
        trial = entry.trial
        graph = trial.next_parallel()
        start = trial.clock()
        out = self._replay(entry, feeds) if graph else self._run_plain(feeds, snaps)
        self._xp.cuda.get_current_stream().synchronize()   # both return before the device is done
        verdict = trial.record(graph, trial.clock() - start)
        if verdict is not None:
            entry.trial = None
            if not verdict:
                self._failed[sig] = "plain runs measured faster than graph replays"
                del self._entries[sig]
        return out

    def _replay(self, entry: _Entry, feeds: Sequence[Any]) -> list:
        """Feeds into the static buffers and one launch, after the caller's stream's work so far;
        then copies of the fetches on the caller's stream, after the launch (the next replay, which
        waits for them, overwrites the graph's outputs)."""
        caller, stream = self._xp.cuda.get_current_stream(), self._stream
        with stream:
            stream.wait_event(caller.record())
            self._copy_in(entry.inputs, feeds)
            entry.graph.launch(stream)
            caller.wait_event(stream.record())
        self.stats["replays"] += 1
        return [a.copy() for a in entry.outputs]

    def _copy_in(self, buffers: list, feeds: Sequence[Any]) -> None:
        for buf, f in zip(buffers, feeds):
            if isinstance(f, self._xp.ndarray):
                buf[...] = f   # device to device
            else:
                buf.set(np.asarray(f, order="C"))   # host to device (0-d stays 0-d)

    # ------------------------------------------------------------ capture
    def _capture(self, entry: _Entry, feeds: Sequence[Any], params: tuple, snaps: list) -> None:
        """Warm up, then capture this signature's run into a new graph with a new private pool.
        A warm-up error is the plain run's own error (same code, same values): it propagates;
        an error of the capture is `_CaptureFailed`."""
        xp = self._xp
        if self._stream is None:
            self._stream = xp.cuda.Stream(non_blocking=True)
        stream = self._stream
        entry.graph, entry.outputs, entry.params = None, [], ()
        pool = xp.cuda.MemoryPool()
        if self._constants is None:
            self._constants = {name: _Constant(kernel(xp, **attrs)) for name, kernel, attrs in self._constant_ops}
        fn = types.FunctionType(self._plain.__code__, {**self._g, "_to_device": _same, **self._constants},
                                "_run_graph")
        caller = xp.cuda.get_current_stream()
        with stream, xp.cuda.using_allocator(pool.malloc):
            stream.wait_event(caller.record())
            inputs = [xp.empty(f.shape, f.dtype) for f in feeds]
            self._copy_in(inputs, feeds)
            saved = [params[i].copy() for i in self._updated]
            fn(inputs, snaps)
            self._restore(params, saved)
            stream.begin_capture()
            try:
                outputs = fn(inputs, [])
            except BaseException as e:
                self._abort_capture(stream)
                if not isinstance(e, Exception):
                    raise
                self.stats["failed_captures"] += 1
                raise _CaptureFailed(f"capture failed: {type(e).__name__}: {e}") from e
            graph = stream.end_capture()
        entry.graph, entry.pool, entry.inputs, entry.outputs, entry.params = graph, pool, inputs, outputs, params
        self.stats["captures"] += 1

    def _restore(self, params: tuple, saved: list) -> None:
        for i, value in zip(self._updated, saved):
            params[i][...] = value

    @staticmethod
    def _abort_capture(stream: Any) -> None:
        """End a capture that failed: CUDA keeps the stream capturing (invalidated) until then, and
        its end_capture raises the invalidation, which the caller reports as the first error."""
        try:
            stream.end_capture()
        except Exception:  # noqa: BLE001, S110 - the invalidation of the error already being reported
            pass

    # ------------------------------------------------------------ status
    def status(self) -> dict[str, Any]:
        """The mode, why the program cannot be captured (or None), the counters, and per feed
        signature what its runs do: 'graph', 'timing', 'warming up k/N' or 'plain: <why>'."""
        sigs: dict[str, str] = {}
        for sig, entry in self._entries.items():
            if entry.graph is None:
                sigs[_spell(sig)] = f"warming up {entry.plain_runs}/{self._warmup}"
            else:
                sigs[_spell(sig)] = "graph" if entry.trial is None else "timing"
        for sig, why in self._failed.items():
            sigs[_spell(sig)] = f"plain: {why}"
        return {"mode": self._mode, "reason": self.reason, "signatures": sigs, **self.stats}


_live: "weakref.WeakSet[CudaGraphRunner]" = weakref.WeakSet()


def summary() -> dict[str, Any]:
    """The counters of every live core's runner added up, and each distinct reason a program or a
    signature runs plain: what a graph did where the cores are out of reach (`sot.to_static`
    builds its own)."""
    total = dict.fromkeys(("captures", "recaptures", "replays", "plain_runs", "failed_captures"), 0)
    reasons: set[str] = set()
    for runner in list(_live):
        for key in total:
            total[key] += runner.stats[key]
        reasons.update(why for why in (runner.reason, *runner._failed.values()) if why is not None)
    return {**total, "plain_because": sorted(reasons)}


def _spell(sig: Signature) -> str:
    return ", ".join(f"{list(shape)} {dtype}" for shape, dtype in sig) or "(no feeds)"


def graph_runner(code: CodeGen, analysis: Analysis, xp: Any, device: bool) -> CudaGraphRunner | None:
    """The runner of a core under FLAGS_cuda_graph (None: plain runs; `device`: the core runs on a
    real device, whose array module `xp` is CuPy). A bad flag value fails the build, naming it."""
    mode = _flags.flag("FLAGS_cuda_graph")
    if mode not in MODES:
        raise ValueError(f"InterpreterCore.build: FLAGS_cuda_graph must be one of {MODES}, got {mode!r}")
    if mode == "off" or not device:
        return None
    return CudaGraphRunner(code, analysis, xp, mode, int(_flags.flag("FLAGS_cuda_graph_warmup")))


def unused_status(device: bool) -> dict[str, Any]:
    """`status()` of a core that has no runner."""
    why = "FLAGS_cuda_graph was 'off' when the core was built" if device else "the core does not run on a GPU"
    return {"mode": "off", "reason": why, "signatures": {}}
