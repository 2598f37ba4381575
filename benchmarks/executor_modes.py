"""The executor's default mode against its sequential mode on the programs the benchmarks run.

For every program: the same work built and run under FLAGS_new_executor_sequential_run=True
(one thread, by construction) and under the defaults (FLAGS_executor_parallel='auto': the cost
estimate of executor/cost.py picks threads or one thread per InterpreterCore). Printed: which mode
the default picked for the program's cores, both times and default / sequential, from one
round-robin run after the trial runs that check an 'auto' choice of threads
(executor/mode_trial.py): the fastest of many short blocks of each (on a machine shared with other jobs,
the block least disturbed by them; a median there mostly measures the other jobs). The default must never be more than 5% slower than sequential: where it threads
some core, a ratio above 1.05 fails the run (exit status 1); where every core stayed on one
thread both variants run the same generated code, so their ratio only shows the noise. First,
the ceiling the machine gives threads at that moment: plain NumPy matmuls on two Python threads
against one (on cores other jobs keep busy, no threaded program can beat one thread).

Programs: the static ones of static_overhead.py, executor_parallel.py and static_step.py, a
1,000-statement chain with scalar constants (static and through sot.to_static), and the
`sot.to_static` workloads of the side-by-side table (_workloads.py) that compile a graph.
    python benchmarks/executor_modes.py [--rounds N] [--block-s S]
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from _harness import bench, describe, fmt_time
from executor_parallel import branches, numpy_branches
from static_overhead import build as build_fed_chain
from static_step import build_static

import numpy as np
from _workloads import WORKLOADS, System, fresh, to_numpy

import runtime as paddle
import sot
from runtime import static
from runtime.executor.interpreter import InterpreterCore
from runtime.executor.mode_trial import RUNS_EACH
from runtime.flags import get_flags, set_flags

MODES = {"sequential": {"FLAGS_new_executor_sequential_run": True},
         "default": {"FLAGS_new_executor_sequential_run": False}}
PASSES_OFF = {f: False for f in ("FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion", "FLAGS_enable_inplace")}
LIMIT = 1.05
SCALAR_CHAIN = 1000


@contextlib.contextmanager
def flags(values: dict[str, Any]) -> Iterator[None]:
    saved = get_flags(list(values))
    set_flags(values)
    try:
        yield
    finally:
        set_flags(saved)


@contextlib.contextmanager
def cores_built() -> Iterator[list[InterpreterCore]]:
    """Every InterpreterCore built in the block (the cores a workload's calls made)."""
    built: list[InterpreterCore] = []
    build = InterpreterCore.build

    def recording(self: InterpreterCore) -> Any:
        built.append(self)
        return build(self)
    InterpreterCore.build = recording
    try:
        yield built
    finally:
        InterpreterCore.build = build


@dataclass(frozen=True)
class Case:
    """A program to compare: `make()` gives a fresh call (its own executor or JIT cache)."""

    name: str
    make: Callable[[], Callable[[], Any]]
    extra_flags: dict[str, Any] | None = None


def _static_run(program: static.Program, feed: dict[str, np.ndarray], fetch: list[str],
                startup: static.Program | None = None) -> Callable[[], Callable[[], Any]]:
    def make() -> Callable[[], Any]:
        exe, scope = static.Executor(), static.Scope()
        if startup is not None:
            paddle.seed(0)
            exe.run(startup, scope=scope)
        return lambda: exe.run(program, feed=feed, fetch_list=fetch, scope=scope)[0]
    return make


def _scalar_chain_program() -> tuple[static.Program, str]:
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            t = static.data("x", [1], "float32")
            for _ in range(SCALAR_CHAIN):
                t = t * 1.0001 + 0.0001
    finally:
        paddle.disable_static()
    return main, t.name


def _sot_scalar_chain() -> Callable[[], Any]:
    fn = sot.to_static(fresh("def f(x):\n" + "    x = x * 1.0001 + 0.0001\n" * SCALAR_CHAIN + "    return x\n",
                             "f", {}))
    x = paddle.full([1], 0.5)
    return lambda: fn(x)


def cases() -> list[Case]:
    fed_chain, fed_out = build_fed_chain()
    fed = {"x": np.full([1], 0.5, np.float32), "c": np.full([1], 0.999, np.float32)}
    scalar_chain, scalar_out = _scalar_chain_program()
    out = [Case("1,000-op chain, fed constant, passes off", _static_run(fed_chain, fed, [fed_out]), PASSES_OFF),
           Case("1,000-op chain, fed constant", _static_run(fed_chain, fed, [fed_out])),
           Case(f"{SCALAR_CHAIN} x `x * 1.0001 + 0.0001`, static", _static_run(
               scalar_chain, {"x": np.full([1], 0.5, np.float32)}, [scalar_out])),
           Case(f"{SCALAR_CHAIN} x `x * 1.0001 + 0.0001`, sot.to_static", _sot_scalar_chain)]
    rng = np.random.default_rng(0)
    for size in (64, 128, 256, 512):
        program, name = branches(size)
        feed = {k: rng.standard_normal((size, size)) / size ** 0.5 for k in ("x", "y")}
        out.append(Case(f"two branches x 4 matmuls [{size}]^2", _static_run(program, feed, [name])))
    main, startup, loss, _ = build_static()
    rng = np.random.default_rng(2)
    feed = {"x": rng.standard_normal((128, 784)).astype(np.float32), "y": rng.integers(0, 10, 128)}
    out.append(Case("MLP training step, static program", _static_run(main, feed, [loss], startup)))
    jit = System("sot", paddle, sot.to_static)
    for w in WORKLOADS:
        if w.key in ("W2", "W3", "W5", "W5t"):   # the others compile no graph, or one of a single op
            out.append(Case(f"{w.key} under sot.to_static: {w.title}", lambda w=w: w.make(jit)))
    return out


def compare(case: Case, rounds: int, block_s: float) -> tuple[float, float, bool, bool]:
    """(sequential seconds, default seconds, whether the default threads any core, whether the
    trial runs took some core the estimate threaded back to one thread)."""
    runs, firsts, threaded, dropped = {}, {}, False, False
    for mode, values in MODES.items():
        values = {**(case.extra_flags or {}), **values}
        with flags(values), cores_built() as built:
            call = case.make()
            firsts[mode] = to_numpy(call())
            for _ in range(2 * RUNS_EACH + 1):   # an 'auto' choice of threads applies from a core's
                call()                           # second run on, checked by the trial runs after it
        if mode == "default":   # a core run once (a startup program) never threads
            ran = [c for c in built if c.stats["runs"] > 1]
            threaded = any(c.runs_parallel for c in ran)
            dropped = any(c.plan.parallel and not c.runs_parallel for c in ran)

        def run(call: Callable[[], Any] = call, values: dict = values) -> Any:
            with flags(values):
                return call()
        runs[mode] = run
    np.testing.assert_allclose(firsts["default"], firsts["sequential"], rtol=1e-6)
    r = bench(runs, rounds=rounds, block_s=block_s, statistic=min)
    return r["sequential"], r["default"], threaded, dropped


def ceiling(rounds: int, block_s: float) -> float:
    """One thread's time / two threads' time for two independent chains of 4 NumPy [256]^2 matmuls."""
    rng = np.random.default_rng(3)
    one, two = numpy_branches(rng.standard_normal((256, 256)) / 16, rng.standard_normal((256, 256)) / 16, 4)
    r = bench({"one": one, "two": two}, rounds=rounds, block_s=block_s, statistic=min)
    return r["one"] / r["two"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=41)
    p.add_argument("--block-s", type=float, default=0.01)
    args = p.parse_args(argv)
    print(describe())
    print(f"default / sequential, one round-robin run each; the default must stay within {LIMIT:.2f}x where it threads")
    print(f"the machine now: two Python threads of NumPy matmuls run {ceiling(args.rounds, args.block_s):.2f}x "
          "as fast as one")
    slower = []
    for case in cases():
        seq, default, threaded, dropped = compare(case, args.rounds, args.block_s)
        ratio = default / seq
        verdict = (("threads, ok" if ratio <= LIMIT else "threads, SLOWER") if threaded else
                   "one thread (same code; the trial runs dropped threads)" if dropped else "one thread (same code)")
        if threaded and ratio > LIMIT:
            slower.append(case.name)
        print(f"  {case.name:64s} sequential {fmt_time(seq)}  default {fmt_time(default)}  {ratio:5.2f}x  {verdict}")
    if slower:
        print(f"default mode more than {LIMIT:.2f}x sequential on: {', '.join(slower)}")
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main())
