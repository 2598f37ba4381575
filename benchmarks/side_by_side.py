"""Every system in ONE process, timed round robin on the same workloads (benchmarks/_workloads.py):
one table whose figures are ratios to `runtime` eager from the same run (below 1: faster).

Columns: the NumPy floor; `runtime` eager (its time, the base of the row's ratios); `sot.to_static`;
and, where they are installed in the running interpreter (never project dependencies),
PaddlePaddle eager and `paddle.jit.to_static(full_graph=False)`, PyTorch eager and `torch.compile`.
Every variant's first result is checked against `runtime` eager's before it is timed; a variant
that fails or differs shows its error instead of a figure. BLAS/OpenMP and the peers' own pools
run one thread.

    python benchmarks/side_by_side.py [--only W1,W3] [--rounds N] [--block-s S] [--no-peers] [--clock cpu]

`--clock cpu` times the process's CPU time instead of wall time, for a machine shared with other
jobs (every variant runs on one thread, so the two agree on an idle machine).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any, Callable

from _harness import bench, describe, fmt_time

import numpy as np
from _workloads import WORKLOADS, System, Workload, silenced, to_numpy

import runtime
import sot

COLUMNS = ("numpy", "runtime eager", "sot", "paddle eager", "paddle SOT", "torch eager", "torch.compile")
BASE = "runtime eager"
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def peers() -> list[System]:
    """The installed peers, pinned to one thread."""
    os.environ.setdefault("GLOG_minloglevel", "2")   # Paddle's executor logs to stderr otherwise
    warnings.filterwarnings("ignore")
    found = []
    try:
        import paddle  # noqa: PLC0415 - optional
        paddle.set_device("cpu")
        paddle.base.core.set_num_threads(1)
        found += [System("paddle eager", paddle), System("paddle SOT",
                                                         paddle, lambda f: paddle.jit.to_static(f, full_graph=False))]
    except ImportError:
        pass
    try:
        import torch  # noqa: PLC0415 - optional
        torch.set_num_threads(1)
        found += [System("torch eager", torch), System("torch.compile", torch, torch.compile)]
    except ImportError:
        pass
    return found


def systems(with_peers: bool) -> list[System]:
    ours = [System(BASE, runtime), System("sot", runtime, sot.to_static)]
    return ours + (peers() if with_peers else [])


def checked(workload: Workload, system: System, want: np.ndarray) -> Callable[[], Any]:
    """The workload's call on `system`, after its first results matched runtime eager's."""
    call = workload.make(system)
    with silenced(workload.quiet):
        for _ in range(3):   # a JIT's first calls translate, the next ones hit its cache
            got = to_numpy(call())
            if want.ndim == 0 or workload.key in ("W3", "W5t"):
                break   # a training step's later results differ from the first (the weights moved)
    np.testing.assert_allclose(got, want, rtol=workload.rtol, atol=workload.rtol)
    return call


def row(workload: Workload, all_systems: list[System], rounds: int, block_s: float,
        clock: Callable[[], float]) -> dict[str, Any]:
    """column -> seconds per call, or the error that kept the variant out."""
    base = workload.make(all_systems[0])
    with silenced(workload.quiet):
        want = to_numpy(base())
    variants: dict[str, Callable[[], Any]] = {BASE: base}
    out: dict[str, Any] = {}
    if workload.floor is not None:
        variants["numpy"] = workload.floor()
    for system in all_systems[1:]:
        try:
            variants[system.name] = checked(workload, system, want)
        except Exception as e:  # noqa: BLE001 - a variant that fails is reported, the others still run
            out[system.name] = f"{type(e).__name__}: {str(e).splitlines()[0][:60] if str(e) else ''}"
    with silenced(workload.quiet):
        out.update(bench(variants, rounds=rounds, block_s=block_s, clock=clock))
    return out


def table(results: dict[str, dict[str, Any]], columns: list[str]) -> str:
    """Markdown: the base's time, then every column as a ratio to it."""
    head = ["workload", f"{BASE} (time)"] + [c for c in columns if c != BASE]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, res in results.items():
        base = res[BASE]
        cells = [key, fmt_time(base).strip()]
        for c in columns:
            if c == BASE:
                continue
            v = res.get(c)
            cells.append("—" if v is None else f"error ({v})" if isinstance(v, str) else f"{v / base:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="", help="comma-separated workload keys (default: all)")
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--block-s", type=float, default=0.05, help="seconds per timed block of calls")
    p.add_argument("--no-peers", action="store_true", help="leave PaddlePaddle and PyTorch out")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="wall time, or the process's CPU time (on a machine other jobs load)")
    args = p.parse_args(argv)
    only = set(filter(None, args.only.split(",")))
    chosen = [w for w in WORKLOADS if not only or w.key in only]
    all_systems = systems(not args.no_peers)
    versions = {s.lib.__name__: getattr(s.lib, "__version__", "?") for s in all_systems}
    print(describe())
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          + ", ".join(f"{k} {v}" for k, v in versions.items()))
    results = {}
    for w in chosen:
        results[w.key] = row(w, all_systems, args.rounds, args.block_s, CLOCKS[args.clock])
        print(f"  {w.key} done", file=sys.stderr, flush=True)
    columns = [c for c in COLUMNS if any(c in r for r in results.values())]
    print(f"\n{'CPU' if args.clock == 'cpu' else 'Wall'} time per call of runtime eager, and every other column as a ratio to it"
          " (below 1: faster); medians of round-robin blocks from this one run:")
    print(table(results, columns))
    print()
    for w in chosen:
        print(f"{w.key}: {w.title}")


if __name__ == "__main__":
    main()
