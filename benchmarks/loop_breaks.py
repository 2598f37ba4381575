"""Per-call cost of loops whose body breaks: eager vs `sot.to_static`, medians from one run.

Workloads on float32 [8] tensors, each loop body doing 4 elementwise ops around a data-dependent
`if` on a tensor (SOT-B001) that is never taken:
- for_N: a `for` over N items; N = 16 breaks once per iteration in nested resume functions
  (at most SOT_MAX_LOOP_BREAKS iterations left), N = 256 runs the loop for real, calling its
  compiled body once per item;
- while: a `while` on a tensor condition (about 60 iterations), run for real the same way.
Before timing, each compiled function is checked to equal eager and to run with no fallback.
"""
from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
import sot


def for_loop(x, items):
    for w in items:
        if x.sum() > 1e9:
            x = x - 1
        x = (x * w + 0.5) * 0.5 - 0.25
    return x


def while_loop(x):
    while x.sum() < 100:
        x = x * 1.05 + 0.1
    return x


def main() -> None:
    print(describe())
    x = paddle.to_tensor(np.linspace(0.1, 1.0, 8).astype("float32"))
    cases = {
        "for_16": (for_loop, (x, [1.01] * 16)),
        "for_256": (for_loop, (x, [1.01] * 256)),
        "while": (while_loop, (x,)),
    }
    print(f"{'workload':10s} {'eager':>12s} {'compiled':>12s}  compiled/eager")
    for name, (fn, args) in cases.items():
        jit = sot.to_static(fn)
        report = sot.explain(jit, *args)
        np.testing.assert_allclose(report.result.numpy(), fn(*args).numpy(), rtol=1e-5)
        assert report.fallbacks == [], report.fallbacks
        times = bench({"eager": lambda: fn(*args), "compiled": lambda: jit(*args)}, rounds=9)
        print(f"{name:10s} {fmt_time(times['eager'])} {fmt_time(times['compiled'])}  "
              f"{times['compiled'] / times['eager']:.2f}")


if __name__ == "__main__":
    main()
