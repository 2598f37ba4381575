"""The executor's parallel-or-sequential decision (executor/cost.py) on programs whose tiny ops
cannot repay a thread: chains fed by many constant-producing ops, built as static programs and
through sot.to_static. Every test asserts the build's choice (the plan), never a timing, and
checks the default mode's result against NumPy or eager."""
import numpy as np
import pytest
from executor_helpers import default_executor_flags  # noqa: F401

import runtime as paddle
import sot
from runtime import static
from runtime.executor import cost
from runtime.executor import executor as executor_module

pytestmark = pytest.mark.usefixtures("default_executor_flags")

N_STATEMENTS = 300   # the estimate before the fix threaded such a chain from ~100 statements on


def _scalar_chain_program(n: int) -> tuple[static.Program, str]:
    """x -> x * 1.0001 + 0.0001, n times: each scalar is an op of its own with no input."""
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            t = static.data("x", [1], "float32")
            for _ in range(n):
                t = t * 1.0001 + 0.0001
    finally:
        paddle.disable_static()
    return main, t.name


def _numpy_chain(x: np.ndarray, n: int) -> np.ndarray:
    for _ in range(n):
        x = x * np.float32(1.0001) + np.float32(0.0001)
    return x


def test_a_static_chain_of_tiny_ops_with_scalar_constants_is_planned_on_one_thread():
    program, out = _scalar_chain_program(N_STATEMENTS)
    roots = [op for op in program.global_block().ops if not op.inputs]
    assert len(roots) >= 2 * N_STATEMENTS   # the constants really are ops with no input
    exe = static.Executor()
    x = np.full([1], 0.5, np.float32)
    core = exe.core_for(program, ["x"], [out])
    assert not core.plan.parallel and not core.runs_parallel
    for _ in range(2):   # the second run is the one an 'auto' parallel choice would thread
        got = exe.run(program, feed={"x": x}, fetch_list=[out])[0]
        np.testing.assert_allclose(got, _numpy_chain(x, N_STATEMENTS), rtol=1e-6)


def test_a_to_static_chain_of_tiny_ops_with_scalar_constants_is_planned_on_one_thread(monkeypatch):
    cores = []
    core_for = executor_module.Executor.core_for

    def recording_core_for(self, *args, **kwargs):
        core = core_for(self, *args, **kwargs)
        cores.append(core)
        return core
    monkeypatch.setattr(executor_module.Executor, "core_for", recording_core_for)
    namespace = {}
    exec("def chain(x):\n" + "    x = x * 1.0001 + 0.0001\n" * N_STATEMENTS + "    return x\n", namespace)
    chain = namespace["chain"]
    jit = sot.to_static(chain)
    x = paddle.full([1], 0.5)
    for _ in range(2):
        np.testing.assert_allclose(jit(x).numpy(), chain(x).numpy(), rtol=1e-6)
    assert cores, "to_static ran no static program"
    assert not any(c.plan.parallel or c.runs_parallel for c in cores)


def test_large_independent_branches_scaled_by_scalar_constants_are_still_planned_parallel():
    # two chains of 4 x (matmul [1024]^2, then * 0.01), summed: the constants must not hide the overlap
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [1024, 1024], "float64")
            y = static.data("y", [1024, 1024], "float64")
            a, b = x, y
            for _ in range(4):
                a, b = paddle.matmul(a, x) * 0.01, paddle.matmul(b, y) * 0.01
            out = a + b
    finally:
        paddle.disable_static()
    core = static.Executor().core_for(main, ["x", "y"], [out.name])
    assert core.plan.parallel and core.runs_parallel


def test_every_root_but_the_first_and_every_extra_successor_counts_as_a_hand_off():
    # ops 0, 1, 2 have no producer; 0 feeds 3 and 4; 1 and 2 feed 4; 3 and 4 feed 5
    downstream = [frozenset({3, 4}), frozenset({4}), frozenset({4}), frozenset({5}), frozenset({5}), frozenset()]
    assert cost.hand_offs(downstream) == 2 + 1
    assert cost.hand_offs([frozenset({1}), frozenset({2}), frozenset()]) == 0
    assert cost.hand_offs([]) == 0


def test_tiny_independent_ops_are_not_worth_threading_however_many():
    # n independent 1 us ops then one join: the old estimate saved half the work and threaded them
    for n in (10, 1000, 10000):
        downstream = [frozenset({n})] * n + [frozenset()]
        assert not cost.prefer_parallel([cost.OP_OVERHEAD_US] * n + [cost.OP_OVERHEAD_US], downstream, threads=2)
