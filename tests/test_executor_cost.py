"""The executor's parallel-or-sequential decision: the estimate (executor/cost.py) on programs
whose tiny ops cannot repay a thread (chains fed by many constant-producing ops, built as static
programs and through sot.to_static), and the trial runs that check a choice of threads on the
machine as it is (executor/mode_trial.py, timed by a scripted clock here). Every test asserts a
decision, never a timing, and checks the default mode's result against NumPy or eager."""
import numpy as np
import pytest
from executor_helpers import default_executor_flags  # noqa: F401

import runtime as paddle
import sot
from runtime import static
from runtime.executor import cost, mode_trial
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


def _branches_program(size: int) -> tuple[static.Program, str]:
    """x @ x @ x + y @ y @ y on float64 [size, size]: two independent matmul chains."""
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [size, size], "float64")
            y = static.data("y", [size, size], "float64")
            out = paddle.matmul(paddle.matmul(x, x), x) + paddle.matmul(paddle.matmul(y, y), y)
    finally:
        paddle.disable_static()
    return main, out.name


def _scripted_clock(monkeypatch, threaded_s: float, single_s: float) -> None:
    """The trial's clock: a threaded run lasts threaded_s, a single-threaded one single_s (the
    trial alternates, threaded first, and reads the clock before and after each run)."""
    ticks = []
    now = 0.0
    for k in range(2 * mode_trial.RUNS_EACH):
        ticks += [now, now + (threaded_s if k % 2 == 0 else single_s)]
        now = ticks[-1]
    it = iter(ticks)
    monkeypatch.setattr(mode_trial, "_clock", lambda: next(it))


@pytest.mark.parametrize("threaded_s, single_s, keeps_threads", [(5.0, 1.0, False), (1.0, 5.0, True)])
def test_the_trial_runs_keep_threads_only_when_the_threaded_runs_were_faster(monkeypatch, threaded_s, single_s,
                                                                            keeps_threads):
    program, out = _branches_program(256)
    rng = np.random.default_rng(0)
    feed = {k: rng.standard_normal((256, 256)) / 16 for k in ("x", "y")}
    want = feed["x"] @ feed["x"] @ feed["x"] + feed["y"] @ feed["y"] @ feed["y"]
    exe = static.Executor()
    core = exe.core_for(program, ["x", "y"], [out])
    assert core.plan.parallel and core.runs_parallel   # the estimate threads it
    _scripted_clock(monkeypatch, threaded_s, single_s)
    for _ in range(1 + 2 * mode_trial.RUNS_EACH):   # the build run, then the trial runs
        np.testing.assert_allclose(exe.run(program, feed=feed, fetch_list=[out])[0], want, rtol=1e-12)
    assert core.runs_parallel is keeps_threads
    monkeypatch.setattr(mode_trial, "_clock", lambda: pytest.fail("a run after the trial read its clock"))
    np.testing.assert_allclose(exe.run(program, feed=feed, fetch_list=[out])[0], want, rtol=1e-12)


def test_forced_threads_run_no_trial(monkeypatch):
    program, out = _branches_program(64)
    feed = {k: np.eye(64) for k in ("x", "y")}
    monkeypatch.setattr(mode_trial, "_clock", lambda: pytest.fail("a forced mode ran a trial"))
    saved = paddle.get_flags(["FLAGS_executor_parallel"])
    paddle.set_flags({"FLAGS_executor_parallel": "always"})
    try:
        exe = static.Executor()
        for _ in range(1 + 2 * mode_trial.RUNS_EACH):
            np.testing.assert_array_equal(exe.run(program, feed=feed, fetch_list=[out])[0], 2 * np.eye(64))
        assert exe.core_for(program, ["x", "y"], [out]).runs_parallel
    finally:
        paddle.set_flags(saved)
