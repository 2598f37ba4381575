"""The InterpreterCore's parallel run: threads where they pay, one thread where they don't.

1. Two independent branches of 4 matmuls each on [1024, 1024] float64 (BLAS pinned to one thread
   per call, so any speed-up comes from the executor running the branches on two threads):
   sequential (FLAGS_executor_parallel='never') vs the default ('auto', which must pick parallel).
   Aim >= 1.7x on 2 cores. The same matmuls as plain NumPy, on one and on two Python threads,
   are timed in the same round-robin rounds: the ceiling the machine gives at that moment (the
   cores may be shared with other jobs).
2. The break-even: the same program at smaller sizes, sequential vs forced parallel ('always'),
   next to what 'auto' picks.
3. A 1,000-op chain of tiny ops (benchmarks/static_overhead.py's, passes off): 'auto' must pick
   sequential and be within 5% of 'never'; 'always' shows what threads would cost.
4. Memory: one MLP training step (benchmarks/static_step.py's, passes off so that no buffer is
   shared by two vars) run sequential and parallel with a hook measuring the bytes held by the
   run's temporaries after each op; both peaks against the live-set minimum of program order
   (each temporary held from its writer to its last user, nothing longer). Aim <= 1.05x.
Every variant is checked against the sequential result before timing.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

from _harness import bench, describe, fmt_time
from static_overhead import build as build_chain
from static_step import build_static

import numpy as np

import runtime as paddle
from runtime import static
from runtime.flags import get_flags, set_flags

PASS_FLAGS = ("FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion", "FLAGS_enable_inplace")


def branches(size: int, per_branch: int = 4, dtype: str = "float64") -> tuple[static.Program, str]:
    """out = x^(per_branch+1) + y^(per_branch+1), each power a chain of matmuls."""
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [size, size], dtype)
            y = static.data("y", [size, size], dtype)
            a, b = x, y
            for _ in range(per_branch):
                a, b = paddle.matmul(a, x), paddle.matmul(b, y)
            out = a + b
    finally:
        paddle.disable_static()
    return main, out.name


def with_flags(flags: dict[str, Any], fn: Callable[[], Any]) -> Callable[[], Any]:
    """fn run with `flags` set (the executor keys its cores by the flag values)."""
    def run() -> Any:
        saved = get_flags(list(flags))
        set_flags(flags)
        try:
            return fn()
        finally:
            set_flags(saved)
    return run


def modes(exe: static.Executor, program: static.Program, feed: dict, fetch: list,
          extra: dict | None = None) -> dict[str, Callable[[], Any]]:
    """One run function per FLAGS_executor_parallel value, checked equal to the sequential one."""
    extra = extra or {}
    runs = {m: with_flags({**extra, "FLAGS_executor_parallel": m},
                          lambda: exe.run(program, feed=feed, fetch_list=fetch))
            for m in ("never", "auto", "always")}
    want = runs["never"]()
    for m, fn in runs.items():
        fn()  # the first run of a core builds it (sequentially); the second uses its mode
        for got, ref in zip(fn(), want):
            np.testing.assert_array_equal(got, ref)
    return runs


def picks(exe: static.Executor, program: static.Program, feed: dict, fetch: list, extra: dict | None = None) -> str:
    core = with_flags({**(extra or {}), "FLAGS_executor_parallel": "auto"},
                      lambda: exe.core_for(program, list(feed), fetch))()
    return "parallel" if core.runs_parallel else "sequential"


def numpy_branches(x: np.ndarray, y: np.ndarray, per_branch: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """The same matmuls as plain NumPy: one after the other, and on two Python threads."""
    def branch(m: np.ndarray) -> None:
        a = m
        for _ in range(per_branch):
            a = a @ m

    def two_threads() -> None:
        ts = [threading.Thread(target=branch, args=(m,)) for m in (x, y)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return (lambda: (branch(x), branch(y))), two_threads


def section_branches() -> None:
    rng = np.random.default_rng(0)
    size = 1024
    x, y = rng.standard_normal((size, size)) / 32, rng.standard_normal((size, size)) / 32
    program, out = branches(size)
    exe = static.Executor()
    feed = {"x": x, "y": y}
    runs = modes(exe, program, feed, [out])
    np_seq, np_threads = numpy_branches(x, y, 4)
    # one round-robin bench, so the four variants see the same load on the (possibly shared) cores
    r = bench({"sequential": runs["never"], "auto": runs["auto"], "numpy": np_seq, "numpy 2 threads": np_threads},
              rounds=7, block_s=0.3)
    print(f"1. two branches x 4 matmuls [{size}]^2 float64   auto picks {picks(exe, program, feed, [out])}")
    for name, t in r.items():
        print(f"   {name:16s} {fmt_time(t)}")
    print(f"   speed-up auto vs sequential: {r['sequential'] / r['auto']:.2f}x   "
          f"(plain NumPy, two threads vs one, same rounds: {r['numpy'] / r['numpy 2 threads']:.2f}x)")


def section_break_even() -> None:
    print("2. break-even: the same two branches at smaller sizes (sequential / forced parallel)")
    rng = np.random.default_rng(1)
    for size in (16, 32, 64, 128, 256, 512):
        x, y = rng.standard_normal((size, size)) / size ** 0.5, rng.standard_normal((size, size)) / size ** 0.5
        program, out = branches(size)
        exe = static.Executor()
        feed = {"x": x, "y": y}
        runs = modes(exe, program, feed, [out])
        r = bench({"never": runs["never"], "always": runs["always"]}, rounds=9, block_s=0.05)
        print(f"   [{size:3d}]^2  sequential {fmt_time(r['never'])}  parallel {fmt_time(r['always'])}  "
              f"ratio {r['never'] / r['always']:.2f}x   auto picks {picks(exe, program, feed, [out])}")


def section_tiny_chain() -> None:
    program, out = build_chain()
    feed = {"x": np.full([1], 0.5, np.float32), "c": np.full([1], 0.999, np.float32)}
    exe = static.Executor()
    off = {f: False for f in PASS_FLAGS}
    runs = modes(exe, program, feed, [out], off)
    r = bench({"never": runs["never"], "auto": runs["auto"], "always": runs["always"]})
    n = len(program.global_block().ops)
    print(f"3. {n}-op chain of tiny ops (passes off)   auto picks {picks(exe, program, feed, [out], off)}")
    for name, t in r.items():
        print(f"   {name:7s} {fmt_time(t)} per run  {t / n * 1e6:6.2f} us per op  ({t / r['never']:.3f}x never)")


def _peak_hook(core: Any) -> tuple[Callable, dict]:
    """A hook recording, after each op, the bytes of distinct buffers held by temporaries."""
    plan = core.plan
    exclude = set(plan.feed_names) | set(plan.persistable) | set(plan.holder_vars)
    idx = [i for i, n in enumerate(plan.var_names) if n not in exclude]
    state = {"peak": 0, "sizes": {}}
    lock = threading.Lock()

    def hook(event: str, index: int, slots: list) -> None:
        if event != "end":
            return
        owners = {}
        for v in idx:
            a = slots[v]
            if a is None:
                continue
            base = a
            while getattr(base, "base", None) is not None:
                base = base.base
            owners[id(base)] = base.nbytes
            if a.base is None:
                state["sizes"].setdefault(v, a.nbytes)
        with lock:
            state["peak"] = max(state["peak"], sum(owners.values()))
    return hook, state


def live_set_minimum(plan: Any, sizes: dict[int, int]) -> int:
    """Peak over program order of the bytes of temporaries between their writer and last user."""
    first: dict[int, int] = {}
    for ins in plan.instructions:
        for v in ins.writes:
            first.setdefault(v, ins.index)
    live = [0] * len(plan.instructions)
    for v, nbytes in sizes.items():
        users = plan.last_live.get(plan.var_names[v])
        if not users or v not in first:
            continue
        for t in range(first[v], max(users) + 1):
            live[t] += nbytes
    return max(live, default=0)


def section_memory() -> None:
    main, startup, loss, names = build_static()
    off = {f: False for f in PASS_FLAGS}
    rng = np.random.default_rng(2)
    feed = {"x": rng.standard_normal((128, 784)).astype(np.float32), "y": rng.integers(0, 10, 128)}
    results = {}
    for mode in (False, True):
        scope = static.Scope()
        exe = static.Executor()
        exe.run(startup, scope=scope)
        core = with_flags(off, lambda: exe.core_for(main, list(feed), [loss], scope=scope))()
        feeds = [feed[n] for n in core.feed_names]
        core.run(feeds)
        hook, state = _peak_hook(core)
        core.run(feeds, parallel=mode, hook=hook)
        results[mode] = (state["peak"], live_set_minimum(core.plan, state["sizes"]))
    print("4. MLP training step (passes off): peak bytes of temporaries vs the live-set minimum")
    for mode, (peak, minimum) in results.items():
        print(f"   {'parallel' if mode else 'sequential':10s} peak {peak / 2**20:7.3f} MiB   live-set minimum "
              f"{minimum / 2**20:7.3f} MiB   ratio {peak / minimum:.3f}x")


def main() -> None:
    print(describe())
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start (other jobs may share them)")
    section_branches()
    section_break_even()
    section_tiny_chain()
    section_memory()


if __name__ == "__main__":
    main()
