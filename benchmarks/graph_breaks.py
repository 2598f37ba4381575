"""Per-call cost of graph breaks: eager vs `sot.to_static`, medians from one run.

Workloads, each on float32 tensors of a small and a larger shape:
- foo: PaddleSOT's first example, `z = x + y; if z.mean() > 0: z * 2 else z - 1; tanh(z)`
  (a data-dependent branch: SOT-B001), called on inputs taking each branch in turn;
- fn: PaddleSOT's second example with `print(x)` replaced by `x.numpy()`, a call that cannot be
  captured (SOT-B002) but does no I/O, so the benchmark prints nothing per call;
- fn_print: PaddleSOT's second example as written: `print(x)` of a tensor is deferred to right
  after the one graph (no break); stdout goes to os.devnull while it is checked and timed;
- ops20: 20 elementwise ops with one `x.numpy()` break after the tenth.
Before timing, each compiled function is checked to equal eager on every input and to run the
expected number of graphs and breaks (`sot.explain`). Aim: compiled <= eager.

Where a compiled call's time goes: `graphs` is the time of the SIRs a call runs (each cached
translation's SIR compiled again and run directly on tensors of its input metas, weighted by how
often the calls hit that translation), `rest` the compiled time minus that: the breaking work
itself (`x.numpy()`, the branch's `z.mean() > 0`) and the dispatch around it (two cache hits, the
resume call, the generated code between them).
"""
import contextlib
import os

from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
import sot
from sot.ir import CompiledSIR, EagerSIR


def foo(x, y):
    z = x + y
    if z.mean() > 0:
        z = z * 2
    else:
        z = z - 1
    return paddle.tanh(z)


def fn(x):
    x = x + 1
    x.numpy()
    return x * 2


def fn_print(x):
    x = x + 1
    print(x)
    return x * 2


def ops20(x):
    h = x * 1.5 + 0.5
    h = paddle.tanh(h) * 0.9 - 0.1
    h = paddle.exp(h) / 2.0 + 1.0
    h = paddle.sqrt(h) * h - 0.3
    h = paddle.abs(h) + 0.2
    h.numpy()
    h = h * 0.7 + 0.1
    h = paddle.sin(h) * 1.1 - 0.2
    h = paddle.exp(h) - 1.0 + h
    h = paddle.tanh(h) / 3.0 + 0.5
    return paddle.abs(h) - 0.4


WORKLOADS = {  # name: (function, graphs and breaks per call)
    "foo": (foo, (2, 1)),
    "fn": (fn, (2, 1)),
    "fn_print": (fn_print, (1, 0)),
    "ops20": (ops20, (2, 1)),
}


def _inputs(name: str, shape: list[int]) -> list[tuple]:
    """Argument tuples a workload cycles through (foo: one per branch)."""
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.random(shape, dtype=np.float32))
    if name == "foo":
        y = paddle.zeros(shape)
        return [(x, y), (-x, y)]
    return [(x,)]


def _checked(name: str, args_list: list[tuple]):
    """to_static of the workload after checking it equals eager and runs the expected graphs and breaks."""
    fn, (graphs, breaks) = WORKLOADS[name]
    jit = sot.to_static(fn)
    for args in args_list * 2:  # translations, then cache hits
        want = fn(*args)
        report = sot.explain(jit, *args)
        np.testing.assert_array_equal(report.result.numpy(), want.numpy())
        assert report.fallbacks == [], report.fallbacks
        assert (report.graph_count, report.break_count) == (graphs, breaks), str(report)
    return jit


def _cycling(fn, args_list: list[tuple]):
    """A no-argument callable that calls fn on each argument tuple in turn, one per call."""
    state = {"i": 0}
    n = len(args_list)

    def call():
        i = state["i"]
        state["i"] = (i + 1) % n
        return fn(*args_list[i])

    return call


def _translators(translator) -> list:
    """The translator of a to_static function and those of the resume functions its breaks made, recursively."""
    out = [translator]
    for child in translator.children:
        out += _translators(child)
    return out


def _graph_runners(jit, args_list: list[tuple]) -> dict:
    """A runner per cached graph of the call path (a fresh CompiledSIR of its SIR, or EagerSIR when the
    translation runs it eagerly) on tensors of its input metas, with the share of calls that hit it."""
    translators = _translators(jit.sot_translator)
    before = {id(e): e.hits for t in translators for e in t.cache.entries}
    calls = 4 * len(args_list)
    call = _cycling(jit, args_list)
    for _ in range(calls):
        call()
    runners = {}
    for t in translators:
        for e in t.cache.entries:
            share = (e.hits - before.get(id(e), 0)) / calls
            if share and hasattr(e.payload, "statements"):
                sir = e.payload
                run = (EagerSIR if e.id in t.entry_eager else CompiledSIR)(sir).run_checked
                inputs = [paddle.ones(list(s.meta.shape), dtype=s.meta.dtype) for s in sir.inputs]
                runners[f"{t.code.co_name}/{e.id}"] = (share, lambda run=run, inputs=inputs: run(*inputs))
    return runners


def main() -> None:
    print(describe())
    print(f"{'workload':16s} {'eager':>12s} {'compiled':>12s} {'ratio':>6s}   {'graphs':>12s} {'rest':>12s}")
    for shape in ([8], [256, 256]):
        for name in WORKLOADS:
            args_list = _inputs(name, shape)
            fn = WORKLOADS[name][0]
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):  # fn_print's prints
                jit = _checked(name, args_list)
                runners = _graph_runners(jit, args_list)
                t = bench({"eager": _cycling(fn, args_list), "compiled": _cycling(jit, args_list),
                           **{k: run for k, (_, run) in runners.items()}})
            graphs = sum(share * t[k] for k, (share, _) in runners.items())
            label = f"{name} {'x'.join(map(str, shape))}"
            print(f"{label:16s} {fmt_time(t['eager'])} {fmt_time(t['compiled'])} {t['compiled'] / t['eager']:6.2f}   "
                  f"{fmt_time(graphs)} {fmt_time(t['compiled'] - graphs)}")


if __name__ == "__main__":
    main()
