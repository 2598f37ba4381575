"""Helpers of the executor tests: hand-built programs, pass-free plans and live-byte counting."""
import os
import random
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

import runtime as paddle
from runtime import flags as _flags
from runtime.ops.registry import get_op

PASS_FLAGS = ("FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion", "FLAGS_enable_inplace")


def pytest_configure(config) -> None:
    """Loaded as a plugin (`PYTHONPATH=tests pytest -p executor_helpers ...`), this forces every
    static run of the session through the parallel runner, with the stream
    policy EXECUTOR_STREAM_POLICY (host, single or auto): the whole suite becomes an oracle for the
    parallel mode (only tests that assert the default choice of mode or placement must differ).
    EXECUTOR_POISON=1 also poisons every freed buffer, so a read after free gives NaN."""
    paddle.set_flags({"FLAGS_executor_parallel": "always",
                      "FLAGS_executor_stream_policy": os.environ.get("EXECUTOR_STREAM_POLICY", "host"),
                      "FLAGS_executor_poison_freed": os.environ.get("EXECUTOR_POISON") == "1"})


@pytest.fixture
def no_passes():
    """Plans of exactly the ops a test wrote (no dead-op elimination, fusion or in-place marks)."""
    known = [f for f in PASS_FLAGS if f in _flags._DEFAULTS]  # the passes may not be there yet
    before = paddle.get_flags(known)
    paddle.set_flags({f: False for f in known})
    try:
        yield
    finally:
        paddle.set_flags(before)


@pytest.fixture(autouse=False)
def default_executor_flags():
    """The default mode choice and placement (for tests asserting them, whatever a plugin forced)."""
    names = ["FLAGS_executor_parallel", "FLAGS_executor_stream_policy"]
    before = paddle.get_flags(names)
    paddle.set_flags({"FLAGS_executor_parallel": "auto", "FLAGS_executor_stream_policy": "host"})
    try:
        yield
    finally:
        paddle.set_flags(before)


@pytest.fixture
def host_placement():
    """Kernels on the host pool (the CPU default), for tests asserting the plan of a host program
    (a device placement adds memcpy copies); a plugin's forced parallel mode stays on."""
    before = paddle.get_flags(["FLAGS_executor_stream_policy"])
    paddle.set_flags({"FLAGS_executor_stream_policy": "host"})
    try:
        yield
    finally:
        paddle.set_flags(before)


def var(block, name: str, shape=(4,), dtype="float64", **flags: Any):
    return block.create_var(name, shape, dtype, **flags)


def op(block, type_: str, inputs: list, outputs: list, **attrs: Any):
    """Append a registry op with its default attributes (overridden by `attrs`), built at the caller's line."""
    caller = sys._getframe(1)
    return block.append_op(type_, inputs, outputs, {**get_op(type_).attrs, **attrs},
                           f"{caller.f_code.co_filename}:{caller.f_lineno}")


def writer(plan, name: str, nth: int = -1) -> int:
    """The plan index of the (nth) op that writes `name`."""
    hits = [ins.index for ins in plan.instructions if plan.var_ids[name] in ins.outputs]
    return hits[nth]


def live_bytes(slots: list, plan, exclude: set) -> int:
    """Bytes of the distinct buffers held by the slots of vars not in `exclude`."""
    owners = {}
    for name, value in zip(plan.var_names, slots):
        if value is None or name in exclude:
            continue
        base = value
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        owners[id(base)] = base.nbytes
    return sum(owners.values())


class Recorder:
    """A thread-safe run hook for the parallel tests: logs (event, index, time, thread) and can
    hold an op at a gate (a threading.Event, opened by the test) or in `on_start`, make ops meet
    at a barrier, and shake the schedule (a random short delay or GIL yield before each kernel,
    seeded). An op's "start" is logged after its gate and before its barrier and delay."""

    def __init__(self, seed: int | None = None, gates: dict | None = None, barrier_ops: tuple = (),
                 barrier: Any = None, on_start: Any = None):
        self.log: list[tuple[str, int, float, int]] = []
        self._rng = random.Random(seed) if seed is not None else None
        self._lock = threading.Lock()
        self.gates = gates or {}
        self.barrier_ops, self.barrier = barrier_ops, barrier
        self.on_start = on_start

    def __call__(self, event: str, index: int, slots: list) -> None:
        if event != "start":
            self.log.append((event, index, time.perf_counter(), threading.get_ident()))
            return
        gate = self.gates.get(index)
        if gate is not None:
            assert gate.wait(5), f"gate of op {index} never opened"
        if self.on_start is not None:
            self.on_start(index)
        self.log.append((event, index, time.perf_counter(), threading.get_ident()))
        if index in self.barrier_ops:
            self.barrier.wait()
        if self._rng is not None:
            with self._lock:
                pick = self._rng.random()
            if pick < 0.2:
                time.sleep(0.00005)
            elif pick < 0.6:
                time.sleep(0)   # yield the GIL: another thread may run first

    def entries(self, event: str) -> dict[int, tuple[float, int]]:
        """index -> (time, thread) of every `event` ("start", "end", "free")."""
        return {i: (t, th) for e, i, t, th in list(self.log) if e == event}

    def position(self, event: str, index: int) -> int:
        """Where (event, index) sits in the log (the order events happened)."""
        return [(e, i) for e, i, _, _ in self.log].index((event, index))


def linear_mse_training_program(n_feeds: int):
    """The training example: Linear(16->1) + MSELoss + Adam on batches of 8;
    returns (main, startup, loss, feeds) with `n_feeds` seeded batches."""
    import runtime.static as static  # noqa: PLC0415
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[8, 16], name="x")
        label = static.data(shape=[8, 1], name="label")
        loss = paddle.nn.MSELoss()(paddle.nn.Linear(16, 1)(x), label)
        paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.normal(size=(8, 16)).astype(np.float32), "label": rng.normal(size=(8, 1)).astype(np.float32)}
             for _ in range(n_feeds)]
    return main, startup, loss, feeds


def chain_program(n: int, shape=(4,)):
    """x -> exp -> tanh -> exp ... (n ops); returns (program, name of the last var)."""
    import runtime.static as static  # noqa: PLC0415
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", shape, need_check_feed=True)
    prev = "x"
    for i in range(n):
        var(blk, f"t{i}", shape)
        op(blk, ("exp", "tanh", "sin")[i % 3], [prev], [f"t{i}"])
        prev = f"t{i}"
    return prog, prev


def random_dag(rng, n_ops=40, with_random=True, streams=(), size=64):
    """A seeded random DAG of unary/binary ops (dropouts included) over [size] vars fed from "x";
    with `streams`, each op is put on one of them or (None) left to the policy: (program, the
    last 8 vars as fetch targets)."""
    import runtime.static as static  # noqa: PLC0415
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (size,), need_check_feed=True)
    names = ["x"]
    for i in range(n_ops):
        out = f"v{i}"
        var(blk, out, (size,))
        kind = rng.integers(0, 5)
        where = {}
        if streams:
            pick = streams[rng.integers(len(streams))]
            where = {} if pick is None else {"execution_stream": pick}
        if kind == 0 and with_random:
            var(blk, f"m{i}", (size,))
            op(blk, "dropout", [names[rng.integers(len(names))]], [out, f"m{i}"], p=0.3, **where)
        elif kind <= 2:
            op(blk, ("tanh", "sin")[kind - 1], [names[rng.integers(len(names))]], [out], **where)
        else:
            a, b = rng.integers(len(names), size=2)
            op(blk, ("add", "multiply")[kind - 3], [names[a], names[b]], [out], **where)
        names.append(out)
    return prog, names[-8:]
