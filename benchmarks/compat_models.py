"""The compat corpus (tests/compat/models) under the JIT: eager vs compiled eval-mode forward, from one run.

For every corpus model (fixed weights and inputs from tests/compat/compat_api.py), in eval mode
and under no_grad: the first compiled call of a fresh model (`sot.explain` of its forward: the
translation, compile and run; it must translate and give the eager result), then the per-call
median of the eager forward (a second copy of the model: `sot.to_static` translates a Layer's forward
in place) and of the compiled one (`sot.to_static`, a cache hit), their ratio
(eager / compiled: above 1 the compiled call is faster), and the graphs, breaks and fallbacks of
the compiled call. A model that falls back runs eagerly behind the frame hook: its ratio is the
hook's overhead, not a compiled figure.
"""
import importlib
import os
import sys
import time

from _harness import bench, describe, fmt_time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "compat"))

import sot  # noqa: E402
from compat_api import paddle, to_tensors  # noqa: E402
from models import MODELS  # noqa: E402
from reference import outputs_of, prepared  # noqa: E402


def measure(name: str) -> dict:
    """First-call time, steady-state times and counts of one corpus model."""
    module = importlib.import_module(f"models.{name}")
    eager, arrays = prepared(module)
    layer, _ = prepared(module)  # to_static translates a Layer's forward in place: a second copy stays eager
    eager.eval()
    layer.eval()
    xs = to_tensors(arrays)
    with paddle.no_grad():
        want = outputs_of(eager(*xs))
        t0 = time.perf_counter()
        report = sot.explain(layer, *xs)
        first = time.perf_counter() - t0
        assert report.translations or report.fallbacks, f"{name}: the first compiled call was a cache hit"
        jit = sot.to_static(layer)
        for got in (outputs_of(report.result), outputs_of(jit(*xs))):
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w, err_msg=name)
        t = bench({"eager": lambda: eager(*xs), "compiled": lambda: jit(*xs)})
    return {"first": first, **t, "graphs": report.graph_count, "breaks": report.break_count,
            "fallbacks": len(report.fallbacks)}


def main() -> None:
    print(describe())
    print(f"{'model':24s} {'eager':>12s} {'compiled':>12s} {'ratio':>6s} {'first call':>12s} "
          f"{'graphs':>6s} {'breaks':>6s} {'fallbacks':>9s}")
    for name in MODELS:
        r = measure(name)
        print(f"{name:24s} {fmt_time(r['eager'])} {fmt_time(r['compiled'])} {r['eager'] / r['compiled']:5.2f}x "
              f"{fmt_time(r['first'])} {r['graphs']:6d} {r['breaks']:6d} {r['fallbacks']:9d}")


if __name__ == "__main__":
    main()
