"""The run of a plan on real CUDA streams (CuPy): what the stream analysis decided, launched.

On a GPU place with CuPy, a plan whose device kernels the stream analysis spreads over more than
one stream (FLAGS_executor_stream_policy="auto", or ops annotated with `execution_stream`) runs
through `CudaStreamRunner`; a single-stream plan keeps the sequential generated code (program
order on the caller's stream is then a valid launch order). The runner:

- streams: the analysis' stream "compute" is the caller's current CuPy stream, so a run's results
  are ordered before the caller's next kernels exactly as with the sequential code; every other
  stream name (compute1..., user-named streams, the copy streams "h2d" and "d2h", and "host",
  where a control-flow op's sub-block launches its kernels) is a
  `cupy.cuda.Stream(non_blocking=True)` of this runner, made on its first run. At the start of a
  run each side stream waits on one event recorded on the caller's stream (fork: what the
  caller's earlier kernels made is ready); at the end of every run, failed or not, the caller's
  stream waits on an event recorded on each side stream (join);
- launches: ONE host thread (the caller's) launches the device ops, in a topological order (of
  the ready ops, the lowest (scheduling_priority, index) first). A launch makes the op's stream
  current and calls the op's generated function, which enqueues its CuPy kernels and returns;
  host ops (feeds, fetches, device-to-host copies, control-flow ops) run on the host pool as soon
  as their inputs are ready;
- edges, as the stream analysis classifies them: direct - nothing (one stream's order, or a host
  producer that finished before the consumer was launched); event - the producer records a
  `cupy.cuda.Event` on its stream right after its launch and the consumer's stream `wait_event`s
  it right before the consumer's launch; sync - the host op calls `event.synchronize()` before it
  runs. The host waits for the device nowhere else, except after a control-flow op: its sub-block
  ran its own kernels (on the "host" stream), and its successors take its results as ready;
- copies (`transfer.py`): memcpy_h2d is `cupy.array(x)` launched on the copy stream "h2d" (feeds
  reach the device so, ordered by events like any device op); memcpy_d2h, a host op, runs
  `.get()` with the copy stream "d2h" current after its sync. A fetch hands out the device array
  (after its sync edge's wait, as Paddle's fetch does); a feed of a program without copies
  converts its value on the caller's stream;
- GC: CuPy's default `MemoryPool` keeps one arena of free blocks per stream: a freed block goes
  back to the arena of the stream that allocated it and is handed to the next allocation made on
  that stream at once, with no event (CuPy has no `record_stream`: a kernel on another stream
  still reading the block is not waited for, cupy/cupy#8068). What this runner relies on: a
  block is reused only by allocations made after its last reference is dropped, on the stream
  that allocated it, and one stream runs its kernels in launch order. So during a run it drops a
  var's last reference only once every op that used it has completed on the device: when the
  var's count reaches zero its array leaves its slot for the run's deferred list with the
  completion event of each of its device last users (the event the op records for its
  successors, or one recorded after its launch); after each launch the runner drops the arrays
  whose events are done (`Event.done`, a query that never blocks). After the join it drops the
  rest: every later allocation, on the caller's stream or (after its fork) on a side stream, is
  then ordered after every use. Deferring every release, not only those of vars used on several
  streams, also covers views and outputs that alias an input, whose memory belongs to the stream
  that allocated the base;
- errors: the first error is kept with its op; no kernel starts after it, every op is still
  settled, the caller's stream joins the side streams, and the error is raised (the core restores
  the snapshots on the caller's stream, after the join).
A run's hook sees per op "wait" (its waits are enqueued / synchronized), "start", "end",
"record" (its event is recorded) and "free" per var slot when its array is finally dropped.
"""
from __future__ import annotations

import threading
from collections import deque
from heapq import heappop, heappush
from typing import Any, Callable, Sequence

from .plan import FEED_OP, event_waits, ref_counts
from .stream_analysis import CPU, D2H, Context
from .streams import host_pool

__all__ = ["CudaStreamRunner", "COMPUTE", "HOST_OP_STREAM", "D2H_STREAM"]

COMPUTE = "compute"           # the analysis' default compute stream: the caller's current stream
HOST_OP_STREAM = "host"       # where host ops' own kernels (a control-flow op's sub-block) run
D2H_STREAM = "d2h"            # where device-to-host copies run
Hook = Callable[[str, int, list], None]


class _Deferred:
    """One run's arrays whose last reference waits for device events (per stream, in record order)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[int, deque] = {}   # id(stream) -> (event, item), events in record order

    def add(self, array: Any, events: Sequence[tuple[Any, Any]], on_free: Callable[[], None] | None) -> None:
        """Hold `array` until every `(stream, event)` is done; then drop it and call `on_free`."""
        item = [len(events), array, on_free]
        with self._lock:
            for st, ev in events:
                self._queues.setdefault(id(st), deque()).append((ev, item))

    def poll(self) -> None:
        """Drop the arrays all of whose events are done (never blocks)."""
        dropped = []
        with self._lock:
            for q in self._queues.values():
                while q and q[0][0].done:
                    item = q.popleft()[1]
                    item[0] -= 1
                    if item[0] == 0:
                        dropped.append(item)
        self._drop(dropped)

    def flush(self) -> None:
        """Drop everything still held: the caller's stream has joined every stream of the run, so
        whatever reuses these blocks is enqueued after every use (see the module docstring)."""
        with self._lock:
            items = list({id(item): item for q in self._queues.values() for _, item in q}.values())
            self._queues.clear()
        self._drop(items)

    @staticmethod
    def _drop(items: list) -> None:
        for item in items:
            item[1] = None
            if item[2] is not None:
                item[2]()


class _Run:
    """One run's state: slots, fetches, counters, events, the ready device ops, the first error."""

    __slots__ = ("fns", "s", "r", "feeds", "snaps", "hook", "dep", "ref", "users", "events", "ready", "cond",
                 "unfinished", "error", "streams", "origin", "serial", "deferred")

    def __init__(self, runner: "CudaStreamRunner", fns: Sequence[Callable], feeds: Sequence[Any], snaps: list,
                 hook: Hook | None, origin: Any, streams: dict[str, Any], serial: bool):
        self.fns, self.feeds, self.snaps, self.hook = fns, feeds, snaps, hook
        self.s: list[Any] = [None] * runner.n_vars
        self.r: list[Any] = [None] * runner.n_fetches
        self.dep = list(runner.dep_count)
        self.ref = list(runner.ref_count)
        self.users: dict[int, list[tuple[Any, Any]]] = {}   # var -> (stream, event) of its device last users
        self.events: list[Any] = [None] * runner.n_ops
        self.ready: list[tuple[int, int]] = []
        self.cond = threading.Condition()
        self.unfinished = runner.n_ops
        self.error: tuple[int, BaseException] | None = None
        self.streams = streams   # analysis stream name -> CuPy stream
        self.origin = origin
        self.serial = serial
        self.deferred = _Deferred()


class CudaStreamRunner:
    """One plan's launch schedule on CuPy streams, built once per core (see the module docstring)."""

    def __init__(self, xp: Any, device_id: int, *, contexts: Sequence[Context], kinds: Sequence[str],
                 downstream: Sequence[frozenset[int]], dep_count: Sequence[int], next_kind: dict[tuple[int, int], str],
                 gc_check_vars: Sequence[Sequence[int]], ref_count: dict[int, int], freeable: Sequence[bool],
                 release: Callable[[list, int, tuple], None], n_vars: int, n_fetches: int, priority: Sequence[int]):
        n = len(contexts)
        self.xp, self.device_id = xp, device_id
        self.n_ops, self.n_vars, self.n_fetches = n, n_vars, n_fetches
        self.dep_count = tuple(dep_count)
        self.device = tuple(c.is_device for c in contexts)
        # a feed may convert its value on the caller's stream (a program with no copy ops, one stream)
        self.stream_name = tuple(c.stream if c.is_device else COMPUTE if k == FEED_OP else
                                 D2H_STREAM if c.kind == D2H else HOST_OP_STREAM for c, k in zip(contexts, kinds))
        # a host op that may launch kernels of its own (a control-flow op) finishes when they did
        self.settles = tuple(c.kind == CPU and k != FEED_OP for c, k in zip(contexts, kinds))
        self.waits = event_waits(downstream, next_kind)
        self.records = tuple(any(next_kind[(i, j)] != "direct" for j in ds) for i, ds in enumerate(downstream))
        self.succ = tuple(tuple(sorted(ds)) for ds in downstream)
        self.gc = tuple(tuple(v for v in vs if freeable[v]) for vs in gc_check_vars)
        self.ref_count = ref_counts(ref_count, n_vars)
        self.priority = tuple(priority)
        self._release_slot = release
        self._side: dict[str, Any] = {}     # this runner's own streams, by name
        self.side_names = tuple(sorted(set(self.stream_name) - {COMPUTE}))
        self.allocators: dict[str, Any] = {}   # CuPy's pool allocates: no allocator of our own

    # ------------------------------------------------------------ streams
    def _fork(self, origin: Any) -> dict[str, Any]:
        """The streams of a run by name; each side stream first waits for the caller's stream."""
        streams = {COMPUTE: origin}
        if self.side_names:
            fork = origin.record()
            for name in self.side_names:
                st = self._side.get(name)
                if st is None:
                    with self.xp.cuda.Device(self.device_id):
                        st = self._side[name] = self.xp.cuda.Stream(non_blocking=True)
                st.wait_event(fork)
                streams[name] = st
        return streams

    def _join(self, run: _Run) -> None:
        """The caller's stream waits for every side stream (a fetch's device copy is on "d2h")."""
        for name in self.side_names:
            run.origin.wait_event(run.streams[name].record())

    # ------------------------------------------------------------ the caller's side
    def run(self, fns: Sequence[Callable], feeds: Sequence[Any], snaps: list, hook: Hook | None,
            load: Callable[[list], None], commit: Callable[[list], None], serial: bool = False) -> list:
        """Run every op once with `fns` (the core's per-op code); the fetches. Raises the first op
        error. `serial` (FLAGS_benchmark): the host waits for each device op right after its launch."""
        origin = self.xp.cuda.get_current_stream()
        run = _Run(self, fns, feeds, snaps, hook, origin, self._fork(origin), serial)
        load(run.s)
        for i in range(self.n_ops):
            if self.dep_count[i] == 0:
                self._ready(run, i)
        try:
            self._launch_loop(run)
        finally:
            self._join(run)
            run.deferred.flush()
        if run.error is not None:
            raise run.error[1]
        commit(run.s)
        return run.r

    def _launch_loop(self, run: _Run) -> None:
        """Launch ready device ops until every op (host ones included) has finished."""
        cond = run.cond
        while True:
            with cond:
                while not run.ready and run.unfinished:
                    cond.wait(0.1)   # in slices: a SIGINT is handled when the wait returns
                if not run.ready:
                    return
                i = heappop(run.ready)[1]
            try:
                self._launch(run, i)
            except BaseException as e:  # noqa: BLE001 - errors are values: raised once every op settled
                self._fail(run, i, e)
                if not isinstance(e, Exception):   # KeyboardInterrupt: settle this op, then stop
                    self._finish(run, i)
                    raise
            self._finish(run, i)
            run.deferred.poll()

    def _ready(self, run: _Run, i: int) -> None:
        """Op i's inputs are ready: a device op goes to the launcher, a host op to the host pool."""
        if self.device[i]:
            with run.cond:
                heappush(run.ready, (self.priority[i], i))
                run.cond.notify()
        else:
            host_pool().submit(self._host_task, (run, i))

    def _finish(self, run: _Run, i: int) -> None:
        """Op i is launched (device) or done (host): its successors may become ready."""
        nxt = []
        with run.cond:
            for j in self.succ[i]:
                run.dep[j] -= 1
                if run.dep[j] == 0:
                    nxt.append(j)
            run.unfinished -= 1
            if not run.unfinished:
                run.cond.notify()
        for j in nxt:
            self._ready(run, j)

    def _fail(self, run: _Run, i: int, e: BaseException) -> None:
        with run.cond:
            if run.error is None:
                run.error = (i, e)

    # ------------------------------------------------------------ ops
    def _launch(self, run: _Run, i: int) -> None:
        """Enqueue device op i on its stream: waits, the kernels, its event (never blocks)."""
        st = run.streams[self.stream_name[i]]
        for p in self.waits[i]:
            st.wait_event(run.events[p])
        hook = run.hook
        if hook is not None:
            hook("wait", i, run.s)
        if run.error is None:
            if hook is not None:
                hook("start", i, run.s)
            try:
                with st:
                    run.fns[i](run.s, run.snaps, run.feeds, run.r)
            except Exception as e:  # noqa: BLE001 - kept; the op still records, so its waiters settle
                self._fail(run, i, e)
            if hook is not None:
                hook("end", i, run.s)
        if self.records[i]:
            run.events[i] = st.record()
            if hook is not None:
                hook("record", i, run.s)
        if run.serial:
            st.synchronize()
        if self.gc[i]:
            self._check_gc(run, i, st)

    def _host_task(self, arg: tuple[_Run, int]) -> None:
        """Host op i on a host-pool thread: synchronize its device producers, run it, settle it."""
        run, i = arg
        try:
            for p in self.waits[i]:
                run.events[p].synchronize()
            hook = run.hook
            if hook is not None:
                hook("wait", i, run.s)
            if run.error is None:
                if hook is not None:
                    hook("start", i, run.s)
                st = run.streams[self.stream_name[i]]
                with st:
                    run.fns[i](run.s, run.snaps, run.feeds, run.r)
                if self.settles[i]:
                    st.synchronize()
                if hook is not None:
                    hook("end", i, run.s)
            if self.gc[i]:
                self._check_gc(run, i, None)
        except BaseException as e:  # noqa: BLE001 - errors are values: raised in the caller
            self._fail(run, i, e)
        self._finish(run, i)

    # ------------------------------------------------------------ GC
    def _check_gc(self, run: _Run, i: int, st: Any) -> None:
        """Op i's uses of its gc_check_vars are enqueued (device op on `st`) or done (host op, None):
        decrement their counts; a var at zero leaves its slot and waits in the deferred list for
        the completion events of its device last users."""
        if st is not None:
            ev = run.events[i]
            if ev is None:
                ev = run.events[i] = st.record()
        zero = []
        with run.cond:
            for v in self.gc[i]:
                if st is not None:
                    run.users.setdefault(v, []).append((st, ev))
                run.ref[v] -= 1
                if run.ref[v] == 0:
                    zero.append((v, run.users.pop(v, [])))
        if run.error is not None:   # a failed run keeps its values (the error names its inputs' shapes)
            return
        for v, events in zero:
            array = run.s[v]
            self._release_slot(run.s, v, (run.feeds, run.r))
            hook = run.hook
            on_free = None if hook is None else (lambda v=v, s=run.s: hook("free", v, s))
            if events:
                run.deferred.add(array, events, on_free)
            elif on_free is not None:
                on_free()
