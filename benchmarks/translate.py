"""Translation and steady-state cost of `sot.to_static` (100 chained ops on [64, 64]), from one run.

100 chained ops on a float32 [64, 64] tensor (randn, seed 0): op i is `x * 1.01` if i % 3 == 0,
`x + 0.1` if i % 3 == 1, `tanh(x)` if i % 3 == 2, as straight-line code. First call =
`to_static` + the first call (simulate, build the SIR, compile, codegen, guards) of a fresh
function, median of several fresh copies; steady state = per-call median of the compiled hit vs
eager vs a hand-written NumPy loop doing the same math. Compiled == eager is checked first; if the
JIT cannot capture the function it is reported as a fallback instead of a figure.
"""
import statistics
import time

from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
import sot

N_OPS = 100


def _source() -> str:
    ops = {0: "    x = x * 1.01\n", 1: "    x = x + 0.1\n", 2: "    x = paddle.tanh(x)\n"}
    return "def chain(x):\n" + "".join(ops[i % 3] for i in range(N_OPS)) + "    return x\n"


def _fresh_chain():
    """A new function (own code object, so an empty code cache) of the 100-op chain."""
    glb = {"paddle": paddle}
    exec(_source(), glb)  # noqa: S102 - the workload is generated
    return glb["chain"]


def numpy_chain(a: np.ndarray) -> np.ndarray:
    for i in range(N_OPS):
        a = a * np.float32(1.01) if i % 3 == 0 else a + np.float32(0.1) if i % 3 == 1 else np.tanh(a)
    return a


def main() -> None:
    print(describe())
    a = np.random.default_rng(0).standard_normal((64, 64)).astype("float32")
    x = paddle.to_tensor(a)
    eager = _fresh_chain()
    want = eager(x).numpy()
    firsts = []
    for _ in range(5):
        fn = _fresh_chain()
        t0 = time.perf_counter()
        jit = sot.to_static(fn)
        got = jit(x)
        firsts.append(time.perf_counter() - t0)
        np.testing.assert_array_equal(got.numpy(), want)
    if jit.sot_translator.fallbacks:
        print(f"100 ops: FALLBACK (runs eagerly): {jit.sot_translator.fallbacks[0].reason}; no compiled figures")
        return
    np.testing.assert_allclose(numpy_chain(a), want, rtol=1e-5, atol=1e-6)
    print(f"100 ops first call (translate + compile + run): {fmt_time(statistics.median(firsts))} (median of 5 fresh)")
    t = bench({"eager": lambda: eager(x), "compiled": lambda: jit(x), "numpy loop": lambda: numpy_chain(a)})
    for name, v in t.items():
        print(f"100 ops steady {name:10s} {fmt_time(v)}  {v / t['numpy loop']:5.2f}x numpy  {v / t['eager']:5.2f}x eager")


if __name__ == "__main__":
    main()
