"""Timing harness for benchmarks: round-robin blocks, median of means.

BLAS/OpenMP threads are pinned to one (override with BENCH_THREADS) BEFORE NumPy loads, so
the NumPy floor and `runtime` use the same number of threads, and glibc's allocator keeps freed
arrays (see `_steady_allocator`); both settings are printed.
"""
from __future__ import annotations

import ctypes
import os
import statistics
import time
from typing import Callable

THREADS = os.environ.get("BENCH_THREADS", "1")
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = THREADS


def _steady_allocator() -> str:
    """Keep glibc from handing freed arrays back to the OS (BENCH_MALLOC=default leaves it alone).

    By default glibc returns a large freed block (at the top of the heap, or mmapped) to the OS,
    so the next array of that size page-faults on every call. Whether that happens depends on the
    heap's layout left by everything the process did before, so one workload could measure 2x
    apart between two builds whose code for it is the same. Fixed thresholds make a figure measure
    the code, the same for every system in the process."""
    if os.environ.get("BENCH_MALLOC") == "default":
        return "glibc malloc defaults"
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return "malloc defaults (not glibc)"
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_trim_threshold, 1 << 30)
    libc.mallopt(m_mmap_threshold, 1 << 30)
    return "glibc trim/mmap thresholds 1 GiB (BENCH_MALLOC=default: off)"


_ALLOCATOR = _steady_allocator()


def describe() -> str:
    """A line naming the thread settings and library versions used for the run."""
    import numpy as np  # noqa: PLC0415 - must load after the thread variables are set
    import platform  # noqa: PLC0415
    return (f"python {platform.python_version()}, numpy {np.__version__}, "
            f"BLAS/OMP threads = {THREADS} (OMP/MKL/OPENBLAS_NUM_THREADS), {_ALLOCATOR}")


def _calls_per_block(fn: Callable[[], object], block_s: float, clock: Callable[[], float]) -> int:
    n = 1
    while True:
        t0 = clock()
        for _ in range(n):
            fn()
        dt = clock() - t0
        if dt >= block_s / 4 or n >= 1 << 22:
            return max(1, int(n * block_s / max(dt, 1e-9)))
        n *= 2


def bench(variants: dict[str, Callable[[], object]], rounds: int = 21, block_s: float = 0.05,
          clock: Callable[[], float] = time.perf_counter,
          statistic: Callable[[list[float]], float] = statistics.median) -> dict[str, float]:
    """Median (or `statistic`) over rounds of the per-call mean time (seconds) of each variant,
    timed round robin. `clock=time.process_time` counts the process's CPU time instead of wall
    time: on a machine shared with many jobs, the time this process waited for a core then stays
    out of the figures (only meaningful for variants that run on one thread); `statistic=min`
    keeps the round least disturbed by other jobs."""
    for fn in variants.values():  # warm up
        fn()
    sizes = {name: _calls_per_block(fn, block_s, clock) for name, fn in variants.items()}
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            n = sizes[name]
            t0 = clock()
            for _ in range(n):
                fn()
            samples[name].append((clock() - t0) / n)
    return {name: statistic(v) for name, v in samples.items()}


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:9.2f} us"
    return f"{seconds * 1e3:9.3f} ms"
