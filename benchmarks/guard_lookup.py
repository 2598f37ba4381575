"""Guard lookup cost: µs per `CodeCache.lookup` hit, from one run.

Guard growth: a tensor input `x` plus N guarded global Python floats
`g_i = 0.001*(i+1)` (N = 1, 10, 100), each a `value_eq` guard; then a single tensor guard alone,
and a cache of two entries that differ only in the tensor's shape (the hit is the entry checked
second). "raw" calls the generated guard function directly; "lookup" is what the frame hook pays
(the method call and the hit bookkeeping added). "rebound" is the lookup after every global was
reassigned an equal float (a new object): the identity shortcut of `value_eq` fails and the
typed comparison runs. "share" compares the lookup with the function's own eager work (N
statements `x = x + g_i` on a float32 [1] tensor), which the guards exist to skip re-translating.
"""
from _harness import bench, describe, fmt_time

import runtime as paddle
from sot.guards import CodeCache, FrameLike, Guard, tensor_guards


def _eager_w1b(x, glb: dict):
    for v in glb.values():
        x = x + v
    return x


def _w1b(n: int) -> tuple[CodeCache, FrameLike, FrameLike]:
    x = paddle.ones([1], dtype="float32")
    glb = {f"g_{i}": 0.001 * (i + 1) for i in range(n)}
    cache = CodeCache(_w1b.__code__)
    guards = tensor_guards("f_locals['x']", x)
    guards += [Guard(f"f_globals['{k}']", "value_eq", v) for k, v in glb.items()]
    cache.insert(guards, "translated")
    rebound = {k: float(repr(v)) for k, v in glb.items()}
    return cache, FrameLike({"x": x}, glb), FrameLike({"x": x}, rebound)


def _tensor_only() -> tuple[CodeCache, FrameLike, None]:
    x = paddle.ones([1], dtype="float32")
    cache = CodeCache(_tensor_only.__code__)
    cache.insert(tensor_guards("f_locals['x']", x), "translated")
    return cache, FrameLike({"x": x}), None


def _two_shapes() -> tuple[CodeCache, FrameLike, None]:
    x1, x2 = paddle.ones([1]), paddle.ones([2])
    cache = CodeCache(_two_shapes.__code__)
    cache.insert(tensor_guards("f_locals['x']", x2), "second")
    cache.insert(tensor_guards("f_locals['x']", x1), "first")
    return cache, FrameLike({"x": x2}), None


def main() -> None:
    print(describe())
    cases = {f"x + {n} globals": (lambda n=n: _w1b(n)) for n in (1, 10, 100)}
    cases["single tensor guard"] = _tensor_only
    cases["2 entries, hit the 2nd"] = _two_shapes
    print(f"{'case':24s} {'guards':>6s} {'raw':>12s} {'lookup':>12s} {'rebound':>12s} {'eager work':>12s} "
          f"{'share':>6s}")
    for name, make in cases.items():
        cache, frame, rebound = make()
        assert cache.lookup(frame) is not None and cache.lookup(rebound or frame) is not None
        f_locals, f_globals, f_builtins = frame.f_locals, frame.f_globals, frame.f_builtins
        check = cache._check
        variants = {"raw": lambda: check(f_locals, f_globals, f_builtins),
                    "lookup": lambda: cache.lookup(frame)}
        if rebound is not None:
            variants["rebound"] = lambda: cache.lookup(rebound)
            variants["eager"] = lambda: _eager_w1b(f_locals["x"], f_globals)
        r = bench(variants)
        n_guards = sum(len(e.guards) for e in cache.entries)
        dash = f"{'-':>12s}"
        again = fmt_time(r["rebound"]) if "rebound" in r else dash
        work = fmt_time(r["eager"]) if "eager" in r else dash
        share = f"{r['lookup'] / r['eager']:6.1%}" if "eager" in r else f"{'-':>6s}"
        print(f"{name:24s} {n_guards:6d} {fmt_time(r['raw'])} {fmt_time(r['lookup'])} {again} {work} {share}")
    cache, _, _ = _w1b(3)
    print("\nthe generated function for x + 3 globals:")
    print(cache.guard_source())


if __name__ == "__main__":
    main()
