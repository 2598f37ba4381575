"""Per-op scheduling overhead of the static executor: a 1,000-op chain of tiny ops.

The program is x -> (+ c, * c, + c, ...) on [1]-shaped float32 vars, built in static mode
and run with `Executor.run(main, feed, fetch_list)`. With the passes off every op really
runs (µs per op is the executor's cost per op; aim <= 3 µs); with the passes on (the default)
the executor runs the chain as one fused op, which shows what fusion saves. The floor is the
same 1,000 NumPy calls.
"""
from typing import Callable

from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
from runtime import static
from runtime.flags import get_flags, set_flags

N_OPS = 1000
PASS_FLAGS = ("FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion", "FLAGS_enable_inplace")


def build() -> tuple[static.Program, str]:
    """The chain program and the name of its last var."""
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            t = static.data("x", [1], "float32")
            c = static.data("c", [1], "float32")
            for i in range(N_OPS):
                t = t + c if i % 2 == 0 else t * c
    finally:
        paddle.disable_static()
    assert len(main.global_block().ops) == N_OPS
    return main, t.name


def numpy_chain(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    t = x
    for i in range(N_OPS):
        t = np.add(t, c) if i % 2 == 0 else np.multiply(t, c)
    return t


def with_flags(on: bool, fn: Callable[..., object]) -> Callable[..., object]:
    """fn run with every pass flag set to `on` (the executor keys its cores by the flags)."""
    def run(*args):
        saved = get_flags(list(PASS_FLAGS))
        set_flags({f: on for f in PASS_FLAGS})
        try:
            return fn(*args)
        finally:
            set_flags(saved)
    return run


def main() -> None:
    print(describe())
    program, out = build()
    feed = {"x": np.full([1], 0.5, np.float32), "c": np.full([1], 0.999, np.float32)}
    exe = static.Executor(paddle.CPUPlace())
    plain = with_flags(False, lambda: exe.run(program, feed=feed, fetch_list=[out]))
    fused = with_flags(True, lambda: exe.run(program, feed=feed, fetch_list=[out]))
    want = numpy_chain(feed["x"], feed["c"])
    np.testing.assert_array_equal(plain()[0], want)
    np.testing.assert_array_equal(fused()[0], want)
    kinds = with_flags(True, lambda: [i.type for i in exe.plan_for(program, feed, [out]).instructions])()
    assert kinds.count("fused_elementwise") == 1 and len(kinds) < 10, kinds
    r = bench({"numpy": lambda: numpy_chain(feed["x"], feed["c"]), "passes off": plain, "fused": fused})
    for name, t in r.items():
        print(f"{name:10s} {fmt_time(t)} per run  {t / N_OPS * 1e6:6.2f} us per op  "
              f"({t / r['numpy']:.2f}x numpy, {(t - r['numpy']) / N_OPS * 1e6:+.2f} us/op over it)")


if __name__ == "__main__":
    main()
