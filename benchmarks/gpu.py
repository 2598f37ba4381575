"""GPU benchmarks: `runtime` on CuPy, eager vs compiled vs CUDA graph, next to PyTorch on the same GPU.

1. W3 (MLP 784-512-512-10 training step, batch 128, Adam) and W5 (the CNN's inference, [32, 3, 32, 32]):
   runtime eager, `sot.to_static` (the forward compiled), the same with FLAGS_cuda_graph='on' (each
   compiled Program replayed as one CUDA graph), and torch eager / `torch.compile` on the GPU.
2. A 50-op elementwise chain on float32 [1024, 1024] under `sot.to_static`: fused into one generated
   kernel (FLAGS_enable_fusion, the default) vs one kernel per op; torch eager / `torch.compile` beside.
3. Two independent branches of 4 matmuls on float32 [2048, 2048], a static program: every kernel on one
   stream (FLAGS_executor_stream_policy='single') vs the branches on streams of their own ('auto').

Each call ends with a device synchronize, so a figure is the wall time of the whole step. Every variant's
first result is checked against the reference variant's (runtime eager, or the one-stream run) before
anything is timed. Ratios are to the reference in the same run. Exits 2 where CuPy or a GPU is missing;
a variant that fails or disagrees is reported as such, not timed.

    python benchmarks/gpu.py [--rounds N] [--no-torch-compile]
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from _harness import bench, describe, fmt_time
from executor_parallel import branches, with_flags
from _workloads import (_CNN_LAYERS, _CNN_SOURCE, _MLP_LAYERS, _MLP_SOURCE, _STEP_SOURCE, System, _batch, _weights,
                        fresh, to_numpy)

import numpy as np

import runtime as paddle
import sot
from runtime import static
from runtime.executor import cuda_graph

CHAIN_OPS = 50
Variant = Callable[[], Any]


# ---------------------------------------------------------------- systems on the GPU
class _Runtime:
    """runtime with its tensors and models on GPU 0."""

    lib = paddle
    system = System("runtime", paddle)

    @staticmethod
    def tensor(a: np.ndarray) -> Any:
        return paddle.to_tensor(a, place=paddle.CUDAPlace(0))

    @staticmethod
    def to_device(model: Any) -> Any:
        model.to(device="gpu")
        return model

    @staticmethod
    def sync() -> None:
        import cupy  # noqa: PLC0415 - only where a GPU is
        cupy.cuda.Device().synchronize()


class _Torch:
    """PyTorch with its tensors and models on cuda:0."""

    def __init__(self, torch: Any):
        self.lib = torch
        self.system = System("torch", torch)

    def tensor(self, a: np.ndarray) -> Any:
        return self.lib.from_numpy(np.ascontiguousarray(a)).cuda()

    def to_device(self, model: Any) -> Any:
        return model.cuda()

    def sync(self) -> None:
        self.lib.cuda.synchronize()


def _model(side: Any, source: str, layers: tuple[str, ...]) -> Any:
    model = fresh(source, "Net", side.system.model_namespace())()
    for name, (w, b) in _weights(layers, source).items():
        side.system.load(getattr(model, name), w, b)
    return side.to_device(model)


def _synced(side: Any, fn: Variant) -> Variant:
    def run() -> Any:
        out = fn()
        side.sync()
        return out
    return run


# ---------------------------------------------------------------- workloads
def w3(side: Any, jit: Callable[[Any], Any] | None) -> Variant:
    model = _model(side, _MLP_SOURCE, _MLP_LAYERS)
    model.train()
    x, y = _batch((128, 784), 10)
    opt, clear = side.system.optimizer("Adam", model.parameters(), 1e-3)
    step = fresh(_STEP_SOURCE, "f", {"F": side.system.functional, "model": jit(model) if jit else model,
                                     "x": side.tensor(x), "y": side.tensor(y), "opt": opt, "clear": clear})
    return _synced(side, step)


def w5(side: Any, jit: Callable[[Any], Any] | None) -> Variant:
    model = _model(side, _CNN_SOURCE, _CNN_LAYERS)
    model.eval()
    fn = jit(model) if jit else model
    x = side.tensor(_batch((32, 3, 32, 32), 10)[0])

    def call() -> Any:
        with side.lib.no_grad():
            return fn(x)
    return _synced(side, call)


_CHAIN_SOURCE = "def f(x):\n" + "".join(("    x = x * 1.01\n", "    x = x + 0.1\n", "    x = lib.tanh(x)\n")[i % 3]
                                        for i in range(CHAIN_OPS)) + "    return x\n"


def chain(side: Any, jit: Callable[[Any], Any] | None, size: int = 1024) -> Variant:
    fn = fresh(_CHAIN_SOURCE, "f", {"lib": side.lib})
    fn = jit(fn) if jit else fn
    x = side.tensor(np.random.default_rng(0).standard_normal((size, size)).astype(np.float32))
    return _synced(side, lambda: fn(x))


def matmul_branches(size: int = 2048, per_branch: int = 4) -> tuple[Variant, Variant]:
    """(one stream, the branches on streams of their own) runs of out = x^5 + y^5 by matmul chains."""
    main, out = branches(size, per_branch, "float32")
    exe = static.Executor(paddle.CUDAPlace(0))
    rng = np.random.default_rng(0)
    feed = {n: _Runtime.tensor(rng.standard_normal((size, size)).astype(np.float32) / size ** 0.5) for n in "xy"}

    def run() -> Any:
        return exe.run(main, feed=feed, fetch_list=[out], return_numpy=False)[0]
    return (with_flags({"FLAGS_executor_stream_policy": "single"}, _synced(_Runtime, run)),
            with_flags({"FLAGS_executor_stream_policy": "auto"}, _synced(_Runtime, run)))


# ---------------------------------------------------------------- table
def _section(title: str, variants: dict[str, Variant], rounds: int, rtol: float, block_s: float) -> None:
    """Check every variant's first result against the first variant's, then time them round robin."""
    print(f"\n{title}")
    graphs_before = cuda_graph.summary()
    reference, *others = variants
    want = to_numpy(variants[reference]())
    timed = {reference: variants[reference]}
    for name in others:
        try:
            np.testing.assert_allclose(to_numpy(variants[name]()), want, rtol=rtol, atol=rtol,
                                       err_msg=f"{name} differs from {reference}")
        except Exception as e:  # noqa: BLE001 - a variant that fails is reported, the others still run
            print(f"  {name:<34} failed: {type(e).__name__}: {str(e)[:160]}")
            continue
        timed[name] = variants[name]
    times = bench(timed, rounds=rounds, block_s=block_s)
    for name, t in times.items():
        print(f"  {name:<34} {fmt_time(t)}   {t / times[reference]:6.2f}x of {reference}")
    graphs = cuda_graph.summary()
    counts = {k: graphs[k] - graphs_before[k] for k in graphs if k != "plain_because"}
    if any(counts.values()):   # a graph row timing plain runs says so here
        plain = sorted(set(graphs["plain_because"]) - set(graphs_before["plain_because"]))
        print(f"  CUDA graphs in this section: {counts}" + (f"; plain because: {plain}" if plain else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="timing rounds per section (default 9)")
    parser.add_argument("--no-torch-compile", action="store_true", help="leave torch.compile out (its compiles "
                        "take about a minute per workload)")
    parser.add_argument("--quick", action="store_true", help="small shapes, one short round: checks that every "
                        "variant runs and agrees (the figures mean nothing)")
    args = parser.parse_args(argv)
    rounds, block_s, size = (1, 0.001, 64) if args.quick else (args.rounds, 0.05, 1024)
    if not paddle.is_compiled_with_cuda():
        print("benchmarks/gpu.py: CuPy with a usable GPU is not available")
        return 2
    import cupy  # noqa: PLC0415
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"GPU: {props['name'].decode()} | CuPy {cupy.__version__} | {describe()}")
    try:
        import torch  # noqa: PLC0415 - optional peer
        torch_side = _Torch(torch) if torch.cuda.is_available() else None
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False   # full float32, as CuPy
        print(f"torch {torch.__version__}" + ("" if torch_side else " (no CUDA)"))
    except ImportError:
        torch_side = None
        print("torch: not installed")

    graphs = {"FLAGS_cuda_graph": "on"}
    for title, make, rtol in ((f"{CHAIN_OPS}-op elementwise chain, float32 [{size}, {size}]",
                               lambda side, jit: chain(side, jit, size), 1e-4),
                              ("W5: CNN inference, [32, 3, 32, 32]", w5, 1e-4),
                              ("W3: MLP training step (Adam), batch 128", w3, 1e-4)):
        if make is w5:   # (the fast sections first: a run cut short still reports them)
            one, two = matmul_branches(2 * size)
            _section(f"two independent branches of 4 matmuls, float32 [{2 * size}, {2 * size}] (static program)",
                     {"one stream": one, "a stream per branch": two}, rounds, 1e-4, block_s)
        variants: dict[str, Variant] = {
            "runtime eager": make(_Runtime, None),
            "sot compiled": make(_Runtime, sot.to_static),
        }
        if "chain" in title:
            variants["sot compiled, unfused"] = with_flags({"FLAGS_enable_fusion": False},
                                                         make(_Runtime, sot.to_static))
        else:
            variants["sot compiled + CUDA graph"] = with_flags(graphs, make(_Runtime, sot.to_static))
        if torch_side is not None:
            variants["torch eager"] = make(torch_side, None)
            if not args.no_torch_compile:
                variants["torch.compile"] = make(torch_side, torch.compile)
        _section(title, variants, rounds, rtol, block_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
