"""The parallel run of a plan (the multi-threaded run of Paddle's InterpreterCore).

`ParallelRunner` freezes what the scheduler needs from a plan (successors split by edge kind,
the producers each op waits on, the vars each op checks for GC, the owner stream of each var)
and runs it any number of times, each run with its own slots and counters:

- the caller enqueues the ops with no predecessor (host ops on the host pool, device ops on the
  device-launch queue) and blocks on the run's completion; it runs no op itself;
- each worker keeps its ready ops in a priority queue (Paddle's SchedulingQueue): the op with
  the lowest `scheduling_priority`, then the lowest index, runs first; roots are enqueued and
  successors handed on in that order too;
- a worker runs a ready op, then its successors as Paddle's RunNextInstructions does: after a
  HOST op, the event successors go to the launch queue; of the ready direct and sync successors
  exactly one stays on this thread, the rest are enqueued; after a DEVICE launch, direct and event
  successors stay on this thread (launching never blocks) and sync ones go to the host pool, where
  they wait;
- counters (dependency counts, reference counts, unfinished ops) are decremented under the
  run's lock (Python has no cheap atomics, and 3.13t has no GIL);
- a device op is launched: its stream waits for the events of its event-edge producers, runs
  the kernel, records its own event if a successor needs it (wait < run < record);
  a host waiter (sync edge) blocks its host thread on the producer's event;
- GC: after a host op runs, or as soon as a device op is launched (FastGC), each of
  its `gc_check_vars` loses one reference; a device op on a stream other than the var's owner
  first records an event on its own stream for that var (RecordStream). At zero the var is
  released: at once for a host var with no outstanding device use, else when the owner stream
  has passed every use enqueued so far AND every recorded event has completed — never while a
  consumer on another stream has not run;
- one allocator per stream (allocator.py): the outputs `pooled` names get their block from
  their stream's pool when the op is launched (on the host, as a CUDA runtime allocates); when
  such a var's count reaches zero and the other streams passed their uses, its block goes back
  to that stream's pool at once (FastGC, the stream may still be busy with its last use), its
  slot is released as above; only ops launched on that stream later get the block;
- errors are values: the first exception is kept with its op; from then on no op starts its
  kernel, but every op is still settled (counters, events), so the run always terminates and the
  caller raises the first error; cancellation (KeyboardInterrupt in the caller) uses the
  same path.
Under FLAGS_benchmark (`serial`) the schedule is the same but one op runs at a time: a host op
holds the run's serial lock while its kernel runs, a device op's launch holds it until its stream
has run the op (Paddle waits on the device context after each op for benchmarking).
The caller returns only after every stream this run used has drained, so nothing of a finished
run is still executing when the next run starts. A run's hook sees, per op, "wait" (its waits
passed), "start", "end" and, for a device op whose successor waits on it, "record" (its event is
set); "free" per released var slot, and "pool" (on the host) when a var's block goes back to
its stream's pool — tests read the per-op order from them.
"""
from __future__ import annotations

import threading
from heapq import heappop, heappush
from typing import Any, Callable, Sequence

from .allocator import StreamAllocator
from .asyncvalue import AsyncValue
from .plan import event_waits, ref_counts
from .stream_analysis import Context
from .streams import WorkQueue, host_pool, launch_queue, stream

__all__ = ["ParallelRunner"]

Hook = Callable[[str, int, list], None]
_DIRECT, _EVENT, _SYNC = 0, 1, 2
_KINDS = {"direct": _DIRECT, "event": _EVENT, "sync": _SYNC}


class _Lenient:
    """One run's state of a non-strict op: its required edges still to come, the optional
    producers that finished, the branch it took (-1: it waits for every input), whether it was
    handed to a worker and whether its kernel ran."""

    __slots__ = ("required_left", "arrived", "branch", "dispatched", "ran")

    def __init__(self, required: int):
        self.required_left = required
        self.arrived: set[int] = set()
        self.branch: int | None = None
        self.dispatched = self.ran = False


class _Run:
    """The state of one run: slots, fetches, counters, events, the first error."""

    __slots__ = ("fns", "s", "r", "feeds", "snaps", "hook", "dep", "ref", "lock", "unfinished", "error", "cancel",
                 "done", "events", "outstanding", "used", "blocks", "serial", "lenient")

    def __init__(self, runner: "ParallelRunner", fns: Sequence[Callable], feeds: Sequence[Any], snaps: list,
                 hook: Hook | None, serial: bool = False):
        self.fns = fns
        self.s: list[Any] = [None] * runner.n_vars
        self.r: list[Any] = [None] * runner.n_fetches
        self.feeds, self.snaps, self.hook = feeds, snaps, hook
        self.dep = list(runner.dep_count)
        self.ref = list(runner.ref_count)
        self.lock = threading.Lock()
        self.unfinished = runner.n_ops
        self.error: tuple[int, BaseException] | None = None
        self.cancel = False
        self.done = AsyncValue()
        self.events = [AsyncValue() if rec else None for rec in runner.records]
        self.outstanding: dict[int, list[AsyncValue]] = {}
        self.used: set[str] = set()
        self.blocks: list[Any] = [None] * runner.n_vars if runner.pooled else []   # var -> its allocator block
        self.serial = threading.Lock() if serial else None   # FLAGS_benchmark: held by the one op running
        self.lenient = {j: _Lenient(n) for j, n in runner.required_count.items()}


class ParallelRunner:
    """One plan's parallel schedule, built once per core; `run` may be called from many threads."""

    def __init__(self, *, contexts: Sequence[Context],
                 downstream: Sequence[frozenset[int]], dep_count: Sequence[int], next_kind: dict[tuple[int, int], str],
                 gc_check_vars: Sequence[Sequence[int]], ref_count: dict[int, int], freeable: Sequence[bool],
                 owner: Sequence[str | None], release: Callable[[list, int, tuple], None], n_vars: int,
                 n_fetches: int, record_stream: bool, priority: Sequence[int],
                 pooled: dict[int, tuple[int, tuple[int, ...], Any]],
                 non_strict: dict[int, tuple[frozenset[int], ...]] | None = None,
                 predicate: dict[int, int] | None = None):
        n = len(contexts)
        self.n_ops, self.n_vars, self.n_fetches = n, n_vars, n_fetches
        self.dep_count = tuple(dep_count)
        self.device = tuple(c.is_device for c in contexts)
        self.stream_of = tuple(c.stream if c.is_device else None for c in contexts)
        self.succ = tuple(tuple((j, _KINDS[next_kind[(i, j)]]) for j in sorted(ds)) for i, ds in enumerate(downstream))
        self.waits = event_waits(downstream, next_kind)
        self.records = tuple(any(k != _DIRECT for _, k in self.succ[i]) for i in range(n))
        self.gc = tuple(tuple(v for v in vs if freeable[v]) for vs in gc_check_vars)
        self.ref_count = ref_counts(ref_count, n_vars)
        self.owner = tuple(owner)
        self.record_stream = record_stream
        self._release_slot = release
        self.priority = tuple(priority)
        self.roots = tuple(sorted((i for i in range(n) if self.dep_count[i] == 0), key=self._rank))
        self.pooled = dict(pooled)
        self.pooled_var = frozenset(v for v, _, _ in pooled.values())
        self.allocators = {self.stream_of[i]: StreamAllocator(self.stream_of[i]) for i in sorted(pooled)}
        self._init_non_strict(non_strict or {}, predicate or {}, downstream)

    def _init_non_strict(self, non_strict: dict[int, tuple[frozenset[int], ...]], predicate: dict[int, int],
                         downstream: Sequence[frozenset[int]]) -> None:
        """Non-strict ops: a cond op starts once its required inputs (its predicate's among them) are
        there and then waits only for the optional producers of the branch the predicate picks. Only
        ops whose producers all finish on host threads are non-strict (a device producer's value
        exists only when its stream ran it, which its host consumer waits for inside the op)."""
        upstream: list[set[int]] = [set() for _ in range(self.n_ops)]
        for i, ds in enumerate(downstream):
            for j in ds:
                upstream[j].add(i)
        ops = {j: needs for j, needs in non_strict.items() if not any(self.device[u] for u in upstream[j])}
        self.branch_needs = ops
        self.optional_up = {j: frozenset().union(*needs) for j, needs in ops.items()}
        self.required_count = {j: len(upstream[j] - self.optional_up[j]) for j in ops}
        self.predicate = {j: predicate[j] for j in ops}
        self.lenient_after = tuple(any(j in ops for j in ds) for ds in downstream)
        self.early = tuple(j for j in ops if self.required_count[j] == 0)

    def _rank(self, i: int) -> tuple[int, int]:
        """Paddle's instruction_scheduling_priority_less: lower priority value first, then op index."""
        return (self.priority[i], i)

    # ------------------------------------------------------------ the caller's side
    def run(self, fns: Sequence[Callable], feeds: Sequence[Any], snaps: list, hook: Hook | None,
            load: Callable[[list], None], commit: Callable[[list], None], serial: bool = False) -> list:
        """Run every op once with `fns` (one per op, the core's generated code); the fetches.
        Raises the first op error (with its traceback). `serial` (FLAGS_benchmark): the same
        schedule, but each op runs alone, a device op's launch waiting until its stream ran it."""
        run = _Run(self, fns, feeds, snaps, hook, serial)
        load(run.s)
        if self.n_ops == 0:
            commit(run.s)
            return run.r
        for i in self.roots:
            self._enqueue(run, i)
        for j in self.early:   # non-strict ops whose required inputs are all loaded values
            with run.lock:
                ready = self._lenient_ready(run, j, run.lenient[j])
            if ready:
                self._enqueue(run, j)
        try:
            while not run.done.wait(0.1):   # a SIGINT that lands just before a blocking wait is only
                pass                        # handled when the wait returns: so wait in slices
        except BaseException:  # KeyboardInterrupt while waiting: stop dispatching, let running ops end
            run.cancel = True
            run.done.wait()
            self._drain(run)
            raise
        self._drain(run)
        if run.error is not None:
            raise run.error[1]
        commit(run.s)
        return run.r

    def _drain(self, run: _Run) -> None:
        """Wait until every stream this run launched onto has run what it was given."""
        for name in sorted(run.used):
            marker = AsyncValue()
            stream(name).record(marker)
            marker.wait()

    # ------------------------------------------------------------ workers
    def _enqueue(self, run: _Run, i: int) -> None:
        queue: WorkQueue = launch_queue() if self.device[i] else host_pool()
        queue.submit(self._task, (run, i))

    def _task(self, arg: tuple[_Run, int]) -> None:
        """RunInstructionAsync: op `i`, then the successors this thread keeps, until none is left.
        The hot loop of the parallel run, so its lookups are hoisted into locals."""
        run, i = arg
        fns, device, waits, succ, gc = run.fns, self.device, self.waits, self.succ, self.gc
        s, snaps, feeds, r, hook, lock, dep = run.s, run.snaps, run.feeds, run.r, run.hook, run.lock, run.dep
        lenient, lenient_after = run.lenient, self.lenient_after   # non-strict ops: usually none
        ready = [self._rank(i)]   # this worker's ready ops (a priority queue, Paddle's SchedulingQueue)
        while ready:
            i = heappop(ready)[1]
            try:
                if device[i]:
                    self._launch(run, i)
                else:
                    for p in waits[i]:   # a host waiter: block on the device producer (synchronize_run)
                        run.events[p].wait()
                    if hook is not None:
                        hook("wait", i, s)
                    if run.error is None and not run.cancel:
                        if run.serial is not None:
                            run.serial.acquire()
                        try:
                            if hook is not None:
                                hook("start", i, s)
                            fns[i](s, snaps, feeds, r)
                            if hook is not None:
                                hook("end", i, s)
                        except BaseException as e:  # noqa: BLE001 - errors are values: raised in the caller
                            self._fail(run, i, e)
                        finally:
                            if run.serial is not None:
                                run.serial.release()
                        if gc[i] and run.error is None and not (lenient and i in lenient):
                            self._check_gc(run, i, None)
            except BaseException as e:  # noqa: BLE001 - bookkeeping failed: keep it as the run's error
                self._fail(run, i, e)
            # Paddle's RunNextInstructions; while op i has a successor left, unfinished stays > 0
            settled: list[int] = []
            with lock:
                if lenient_after[i]:
                    nxt = self._arrive(run, i, settled)
                else:
                    nxt = [jk for jk in succ[i] if _dec(dep, jk[0])]
                if lenient and i in lenient:   # finished (GC, count) once every input arrived: below or later
                    last = False
                    if self._ran_lenient(run, i):
                        settled.append(i)
                else:
                    run.unfinished -= 1
                    last = run.unfinished == 0
            if settled:
                for j in settled:
                    last = self._settle(run, j) or last
            if last:
                run.done.set_value()
            elif nxt:
                self._dispatch(run, i, nxt, ready)

    # ------------------------------------------------------------ non-strict ops
    def _arrive(self, run: _Run, i: int, settled: list[int]) -> list[tuple[int, int]]:
        """Op i finished: decrement its successors; a non-strict one notes which input arrived
        and is ready once its required inputs and its branch's optional ones are there. Adds to
        `settled` the non-strict ops that ran already and now have every input (lock held)."""
        dep, nxt = run.dep, []
        for j, kind in self.succ[i]:
            dep[j] -= 1
            st = run.lenient.get(j)
            if st is None:
                if dep[j] == 0:
                    nxt.append((j, kind))
                continue
            if i in self.optional_up[j]:
                st.arrived.add(i)
            else:
                st.required_left -= 1
            if self._lenient_ready(run, j, st):
                nxt.append((j, kind))
            if st.ran and dep[j] == 0:
                settled.append(j)
        return nxt

    def _lenient_ready(self, run: _Run, j: int, st: _Lenient) -> bool:
        """Whether non-strict op j may be handed to a worker now (at most once per run; lock held)."""
        if st.dispatched or st.required_left:
            return False
        if st.branch is None:
            st.branch = self._branch(run, j)
        needs = self.optional_up[j] if st.branch < 0 else self.branch_needs[j][st.branch]
        if needs <= st.arrived:
            st.dispatched = True
        return st.dispatched

    def _branch(self, run: _Run, j: int) -> int:
        """The branch op j's predicate picks (its producer finished); -1 (wait for every input)
        once the run failed or was cancelled, or when the predicate cannot be read."""
        if run.error is not None or run.cancel:
            return -1
        try:
            return 0 if bool(run.s[self.predicate[j]].reshape(())) else 1
        except Exception:  # noqa: BLE001 - the op itself raises the error, naming itself, when it runs
            return -1

    @staticmethod
    def _ran_lenient(run: _Run, i: int) -> bool:
        """Non-strict op i ran: True when every input arrived too (it is finished; lock held)."""
        run.lenient[i].ran = True
        return run.dep[i] == 0

    def _settle(self, run: _Run, j: int) -> bool:
        """Non-strict op j ran before some optional producer finished; now every one did: its GC
        check (only now: a var it read may have been written after it ran), then it counts as
        finished. True when it was the run's last op."""
        if self.gc[j] and run.error is None:
            self._check_gc(run, j, None)
        with run.lock:
            run.unfinished -= 1
            return run.unfinished == 0

    def _dispatch(self, run: _Run, i: int, nxt: list[tuple[int, int]], ready: list) -> None:
        """Where the ready successors of op `i` run, in priority order."""
        rank = self._rank
        if len(nxt) == 1 and nxt[0][1] == _DIRECT:
            heappush(ready, rank(nxt[0][0]))
            return
        nxt = sorted(nxt, key=lambda jk: rank(jk[0]))
        if self.device[i]:   # launching never blocks: keep direct and event successors, move sync ones
            for j, kind in nxt:
                if kind == _SYNC:
                    host_pool().submit(self._task, (run, j))
                else:
                    heappush(ready, rank(j))
            return
        keep = [j for j, kind in nxt if kind != _EVENT]
        for j, kind in nxt:
            if kind == _EVENT:
                launch_queue().submit(self._task, (run, j))
        if keep:           # exactly one (the first by priority) stays on this thread, the rest are enqueued
            heappush(ready, rank(keep[0]))
            for j in keep[1:]:
                self._enqueue(run, j)

    def _launch(self, run: _Run, i: int) -> None:
        if run.serial is None:
            self._launch_async(run, i)
            return
        with run.serial:   # FLAGS_benchmark: the op is the only one running until its stream passed it
            self._launch_async(run, i)
            passed = AsyncValue()
            stream(self.stream_of[i]).record(passed)
            passed.wait()

    def _launch_async(self, run: _Run, i: int) -> None:
        name = self.stream_of[i]
        st = stream(name)
        if name not in run.used:
            with run.lock:
                run.used.add(name)
        for p in self.waits[i]:
            st.wait_event(run.events[p])
        alloc = self.pooled.get(i)
        if alloc is not None:   # allocate on the host at launch, from this stream's pool
            v, shape, dtype = alloc
            run.blocks[v] = self.allocators[name].allocate(shape, dtype)
        st.submit(self._device_body, (run, i))
        if run.events[i] is not None:
            if run.hook is None:
                st.record(run.events[i])
            else:
                st.submit(self._record_hooked, (run, i))
        if self.gc[i] and run.error is None and not run.cancel:
            self._check_gc(run, i, name)

    def _device_body(self, arg: tuple[_Run, int]) -> None:
        run, i = arg
        if run.error is not None or run.cancel:
            return
        hook = run.hook
        alloc = self.pooled.get(i)
        if alloc is not None:   # the kernel writes into the block allocated at launch
            run.s[alloc[0]] = run.blocks[alloc[0]]
        try:
            if hook is not None:
                hook("wait", i, run.s)       # the stream passed the waits enqueued before this op
                hook("start", i, run.s)
            run.fns[i](run.s, run.snaps, run.feeds, run.r)
            if hook is not None:
                hook("end", i, run.s)
        except BaseException as e:  # noqa: BLE001 - errors are values: kept, raised in the caller
            self._fail(run, i, e)

    @staticmethod
    def _record_hooked(arg: tuple[_Run, int]) -> None:
        """Record op i's completion event (on its stream), logged to the run's hook first."""
        run, i = arg
        try:
            run.hook("record", i, run.s)
        finally:
            run.events[i].set_value()

    def _fail(self, run: _Run, i: int, e: BaseException) -> None:
        with run.lock:
            if run.error is None:
                run.error = (i, e)

    # ------------------------------------------------------------ GC across streams
    def _check_gc(self, run: _Run, i: int, on: str | None) -> None:
        """CheckGC of op `i` (run on a host thread, or just launched onto stream `on`)."""
        recorded = []
        if on is not None and self.record_stream:
            for v in self.gc[i]:
                if self.owner[v] != on:             # RecordStream: this stream's use of v
                    used = AsyncValue()
                    stream(on).record(used)
                    recorded.append((v, used))
        ref, zero = run.ref, []
        with run.lock:
            for v, used in recorded:
                run.outstanding.setdefault(v, []).append(used)
            for v in self.gc[i]:
                ref[v] -= 1
                if ref[v] == 0:
                    zero.append((v, run.outstanding.pop(v, [])))
        for v, pending in zero:
            self._release(run, v, pending)

    def _release(self, run: _Run, v: int, pending: list[AsyncValue]) -> None:
        owner = self.owner[v]
        if owner is not None:
            if v in self.pooled_var:                # FastGC into the owner stream's own pool
                self._after(run, list(pending), lambda: self._to_pool(run, v, owner))
            marker = AsyncValue()                   # stream-ordered: after the owner's queued uses
            stream(owner).record(marker)
            pending.append(marker)
        elif not pending:                           # the host path, per freed var: kept lean
            self._free(run, v)
            return
        self._after(run, pending, lambda: self._free(run, v))

    @staticmethod
    def _after(run: _Run, pending: list[AsyncValue], fn: Callable[[], None]) -> None:
        """fn() once every event in `pending` completed (at once when there is none)."""
        if not pending:
            fn()
            return
        left = [len(pending)]

        def passed(_: AsyncValue) -> None:
            with run.lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                fn()
        for ev in pending:
            ev.add_done_callback(passed)

    def _to_pool(self, run: _Run, v: int, owner: str) -> None:
        """Var v's last use is launched and every other stream passed its uses: its block goes
        back to `owner`'s pool now, while that stream may still be busy with the queued uses;
        only ops launched on `owner` from now on get it, and they run after those uses. (Its
        slot is released in `owner`'s order, as every device var's is.)"""
        if run.error is None:
            self.allocators[owner].free(run.blocks[v])
            if run.hook is not None:
                run.hook("pool", v, run.s)

    def _free(self, run: _Run, v: int) -> None:
        if run.error is not None:  # a failed run keeps its values: the error names its inputs' shapes,
            return                 # and a launched op's inputs are released only after it ran (and failed)
        self._release_slot(run.s, v, (run.feeds, run.r))
        if run.hook is not None:
            run.hook("free", v, run.s)


def _dec(dep: list[int], j: int) -> bool:
    """CheckAndDecrease: always decrement; True when it reached zero. Caller holds the lock."""
    dep[j] -= 1
    return dep[j] == 0
