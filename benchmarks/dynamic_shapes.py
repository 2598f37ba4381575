"""Dynamic shapes: what a dynamic dim costs on a hit, and what it saves in translations.

1. Guard lookup, µs per `CodeCache.lookup` hit of one tensor input [4, 8]: the specialised
   guards (exact shape) vs the dynamic ones (`shape [-1, 8]` plus `min(size, 2) == 2`).
2. A to_static call of `tanh(x @ w) + 1` with x [4, 8]: eager, a hit of a specialised entry, a
   hit of the dynamic entry (ratios to eager).
3. Batches of 16 sizes (2..17) through one function: translations and total time with automatic
   dynamic dims vs every dim `mark_static` (one translation per size).
"""
import time
import types

from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
import sot
from sot.dynamic.shapes import dynamic_tensor_guards
from sot.guards import CodeCache, FrameLike, tensor_guards
from sot.ir import Meta


def step(x, w):
    return (x @ w).tanh() + 1.0


def fresh(fn):
    """A copy of `fn` with its own code object (its own cache and dynamic-dims decisions)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__)


def _lookups() -> None:
    x = paddle.ones([4, 8])
    frame = FrameLike({"x": x})
    caches = {}
    for name, guards in (("specialised", tensor_guards("f_locals['x']", x)),
                         ("dynamic", dynamic_tensor_guards("f_locals['x']", x, Meta.make([-1, 8], "float32")))):
        cache = CodeCache(fresh(step).__code__)
        cache.insert(guards, name)
        assert cache.lookup(frame) == name
        caches[name] = cache
    times = bench({name: (lambda c=c: c.lookup(frame)) for name, c in caches.items()})
    for name, t in times.items():
        print(f"  lookup hit, {name:12s} {fmt_time(t)}")


def _hits() -> None:
    w = paddle.to_tensor(np.random.rand(8, 8).astype("float32"))
    x = paddle.to_tensor(np.random.rand(4, 8).astype("float32"))
    specialised, dynamic = sot.to_static(fresh(step)), sot.to_static(fresh(step))
    specialised(x, w)
    for n in (2, 3, 4):
        dynamic(paddle.to_tensor(np.random.rand(n, 8).astype("float32")), w)
    assert dynamic.sot_translator.translations == 2 and "-1" in str(dynamic.sot_translator.cache.entries[0].guards[1])
    times = bench({"eager": lambda: step(x, w), "specialised hit": lambda: specialised(x, w),
                   "dynamic hit": lambda: dynamic(x, w)})
    for name, t in times.items():
        print(f"  {name:16s} {fmt_time(t)}  ({t / times['eager']:.2f}x eager)")


def _sizes() -> None:
    w = paddle.to_tensor(np.random.rand(8, 8).astype("float32"))
    batches = [paddle.to_tensor(np.random.rand(n, 8).astype("float32")) for n in range(2, 18)]
    for name, mark in (("automatic", False), ("mark_static", True)):
        jit = sot.to_static(fresh(step), cache_size_limit=32)
        start = time.perf_counter()
        for x in batches:
            if mark:
                sot.mark_static(x, 0)
            jit(x, w)
        took = time.perf_counter() - start
        print(f"  16 sizes, {name:12s} {jit.sot_translator.translations:2d} translations, {took * 1e3:7.1f} ms")


def main() -> None:
    print(describe())
    _lookups()
    _hits()
    _sizes()


if __name__ == "__main__":
    main()
