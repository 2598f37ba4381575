"""Cache-hit cost of `sot.to_static` (one tensor op; N guarded globals): per-call medians, eager vs compiled, from one run.

The one-op case: `def f(x): return x + 1` on a float32 [1] tensor of ones, after warm-up (the compiled call is
a hit served by the code cache in C). The globals case: N statements `x = x + g_i` with N = 1, 10, 100 global
Python floats `g_i = 0.001*(i+1)` (each one a guard). The compiled call is split into its parts:
"guards" is the cache's lookup alone on the same frame contents ("share" its part of the call),
"runner" the generated code's runner alone (the compiled program and its result tensor), and
"hook" what is left: the to_static wrapper, the eval-frame hook and the generated code's frame.
Compiled == eager is checked first; a workload the JIT cannot capture yet is reported as a
fallback instead of a figure.
"""
from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
import sot
from sot.guards import FrameLike


def w1(x):
    return x + 1


def _w1b(n: int):
    """A function of N statements `x = x + g_i` over its own module-like globals."""
    glb = {f"g_{i}": 0.001 * (i + 1) for i in range(n)}
    body = "".join(f"    x = x + g_{i}\n" for i in range(n))
    exec(f"def f(x):\n{body}    return x\n", glb)  # noqa: S102 - the workload is generated
    return glb["f"], glb


def _compiled(fn, x):
    """The compiled wrapper after checking it captured the frame and equals eager; None on a fallback."""
    jit = sot.to_static(fn)
    with sot.disable():
        want = fn(x)
    got = jit(x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    translator = jit.sot_translator
    if translator.fallbacks:
        print(f"  {fn.__name__}: FALLBACK (runs eagerly): {translator.fallbacks[0].reason}")
        return None
    np.testing.assert_array_equal(jit(x).numpy(), want.numpy())  # the hit path too
    return jit


def _runner(custom):
    """The callable a cache hit's generated code calls (its first callable constant; the other re-runs
    the frame eagerly when the compiled call fails, see sot.codegen.rerun)."""
    return next(c for c in custom.code.co_consts if callable(c))


def main() -> None:
    print(describe())
    x = paddle.ones([1], dtype="float32")
    print(f"{'workload':22s} {'eager':>12s} {'compiled':>12s} {'ratio':>6s} {'added':>12s} {'guards':>12s} "
          f"{'share':>6s} {'runner':>12s} {'hook':>12s}")
    cases = [("x + 1", w1, None)] + [(f"globals N={n}",) + _w1b(n) for n in (1, 10, 100)]
    for name, fn, glb in cases:
        jit = _compiled(fn, x)
        if jit is None:
            print(f"{name:22s} fallback: no compiled figure")
            continue
        variants = {"eager": lambda: fn(x), "compiled": lambda: jit(x)}
        cache = jit.sot_translator.cache
        frame = FrameLike({"x": x}, glb if glb is not None else w1.__globals__)
        runner = _runner(cache.lookup(frame))
        variants["guards"] = lambda: cache.lookup(frame)
        variants["runner"] = lambda: runner(x)
        t = bench(variants)
        added = t["compiled"] - t["eager"]
        hook = t["compiled"] - t["guards"] - t["runner"]
        print(f"{name:22s} {fmt_time(t['eager'])} {fmt_time(t['compiled'])} {t['compiled'] / t['eager']:6.2f} "
              f"{fmt_time(added)} {fmt_time(t['guards'])} {t['guards'] / t['compiled']:6.1%} "
              f"{fmt_time(t['runner'])} {fmt_time(hook)}")


if __name__ == "__main__":
    main()
