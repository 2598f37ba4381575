"""Non-strict cond ops in the parallel run (TFRT's non-strict kernels): a cond op
starts once its predicate (and the inputs both branches read) exist and then waits only for the
producers of the branch the predicate picks; the other branch's producers may still be running.
Concurrency is asserted with gates (executor_helpers.Recorder), never with wall-clock time."""
import threading

import numpy as np
import pytest
from executor_helpers import Recorder, default_executor_flags  # noqa: F401 - fixture

import runtime as paddle
from runtime import static
from runtime.executor.dependency import DependencyBuilder
from runtime.executor.interpreter import InterpreterCore
from runtime.static.nn import cond, while_loop

pytestmark = pytest.mark.usefixtures("default_executor_flags")
FEEDS = ["p", "x", "y"]


def _program():
    """slow = exp(y) only the false branch reads, fast = x * 2 only the true branch reads."""
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        y = static.data("y", [3], "float32")
        p = static.data("p", [1], "bool")
        slow = paddle.exp(y)
        fast = x * 2.0
        out = cond(p, lambda: fast + x, lambda: slow - 1.0)
        after = out * 3.0
    return main, after


def _reference(pred, xv, yv):
    return (xv * 2 + xv if pred else np.exp(yv) - 1) * 3


def _indices(plan):
    return plan.index_of("cond"), plan.index_of("exp"), plan.index_of("multiply"), plan.index_of("multiply", 1)


def test_the_plan_marks_the_branch_only_producers_optional(static_mode):
    main, after = _program()
    plan = static.Executor().plan_for(main, FEEDS, [after])
    j, slow, fast, _ = _indices(plan)
    feed = {plan.var_names[ins.outputs[0]]: ins.index for ins in plan.instructions if ins.type == "feed"}
    # the true branch reads fast and x, the false one slow; both wait for the predicate
    assert plan.non_strict == {j: (frozenset({fast, feed["x"]}), frozenset({slow}))}
    assert {(slow, j), (fast, j), (feed["x"], j), (feed["p"], j)} <= plan.edges()
    assert not any(plan.happens_before(u, j) for u in (slow, fast, feed["x"]))
    assert plan.happens_before(feed["p"], j)


@pytest.mark.parametrize("seed", range(8))
def test_cond_starts_without_the_other_branchs_producer(static_mode, seed):
    # the slow producer is held at a gate that only the cond's CONSUMER opens: a strict cond
    # would wait for it forever (the gate times out and the run fails)
    main, after = _program()
    exe, scope = static.Executor(), static.Scope()
    core = exe.core_for(main, FEEDS, [after], scope=scope)
    j, slow, fast, consumer = _indices(core.plan)
    gate = threading.Event()
    rec = Recorder(seed=seed, gates={slow: gate}, on_start=lambda i: gate.set() if i == consumer else None)
    xv, yv = np.arange(3, dtype="float32"), np.ones(3, "float32")
    (got,) = core.run([np.array([True]), xv, yv], parallel=True, hook=rec)
    np.testing.assert_array_equal(got, _reference(True, xv, yv))
    assert rec.position("end", j) < rec.position("start", slow)
    assert rec.position("end", fast) < rec.position("start", j)


@pytest.mark.parametrize("seed", range(8))
def test_the_taken_branchs_producer_is_awaited(static_mode, seed):
    main, after = _program()
    core = static.Executor().core_for(main, FEEDS, [after], scope=static.Scope())
    j, slow, fast, _ = _indices(core.plan)
    rec = Recorder(seed=seed)
    xv, yv = np.arange(3, dtype="float32"), np.linspace(0, 1, 3).astype("float32")
    (got,) = core.run([np.array([False]), xv, yv], parallel=True, hook=rec)
    np.testing.assert_array_equal(got, _reference(False, xv, yv))
    assert rec.position("end", slow) < rec.position("start", j)


def test_a_var_the_cond_did_not_wait_for_is_freed_only_after_it_was_written(static_mode):
    main, after = _program()
    core = static.Executor().core_for(main, FEEDS, [after], scope=static.Scope())
    j, slow, _, consumer = _indices(core.plan)
    slow_var = core.plan.instructions[slow].outputs[0]
    gate = threading.Event()
    rec = Recorder(gates={slow: gate}, on_start=lambda i: gate.set() if i == consumer else None)
    xv, yv = np.arange(3, dtype="float32"), np.ones(3, "float32")
    for _ in range(20):
        gate.clear()
        rec.log.clear()
        (got,) = core.run([np.array([True]), xv, yv], parallel=True, hook=rec)
        np.testing.assert_array_equal(got, _reference(True, xv, yv))
        assert rec.position("end", slow) < rec.position("free", slow_var)


def test_an_error_in_the_untaken_branchs_producer_still_reaches_the_caller(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        y = static.data("y", [-1, 3], "float32")
        p = static.data("p", [1], "bool")
        bad = paddle.reshape(y, [2, 6])          # fails for any batch but 4
        out = cond(p, lambda: x + 1.0, lambda: x + bad.sum())
    exe, scope = static.Executor(), static.Scope()
    feed = {"p": np.array([True]), "x": np.zeros(3, "float32"), "y": np.ones((5, 3), "float32")}
    paddle.set_flags({"FLAGS_executor_parallel": "always"})
    with pytest.raises(ValueError, match="operator 'reshape'"):
        exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    feed["y"] = np.ones((4, 3), "float32")
    np.testing.assert_array_equal(exe.run(main, feed=feed, fetch_list=[out], scope=scope)[0], np.ones(3))


@pytest.mark.parametrize("pred", [True, False])
def test_threaded_runs_equal_sequential_runs_bit_for_bit(static_mode, pred):
    main, after = _program()
    rng = np.random.default_rng(0)
    feed = {"p": np.array([pred]), "x": rng.random(3, dtype=np.float32), "y": rng.random(3, dtype=np.float32)}
    core = static.Executor().core_for(main, FEEDS, [after], scope=static.Scope())
    want = core.run([feed[n] for n in FEEDS], parallel=False)[0]
    for seed in range(20):
        got = core.run([feed[n] for n in FEEDS], parallel=True, hook=Recorder(seed=seed))[0]
        np.testing.assert_array_equal(got, want)


def test_an_optional_edge_orders_nothing_after_the_op():
    # 0 writes v0; op 1 reads v0 only optionally and writes v1; op 2 reads v0 and v1: 0 -> 2 stays
    # (with a strict op 1 the shrink would drop it as implied by 0 -> 1 -> 2)
    deps = DependencyBuilder().build([set(), {0}, {0, 1}], [{0}, {1}, {2}], optional_reads=[set(), {0}, set()])
    assert deps.downstream == (frozenset({1, 2}), frozenset({2}), frozenset())
    assert deps.optional == (frozenset(), frozenset({0}), frozenset())
    assert deps.reach[0] >> 2 & 1 and not deps.reach[0] >> 1 & 1
    strict = DependencyBuilder().build([set(), {0}, {0, 1}], [{0}, {1}, {2}])
    assert strict.downstream == (frozenset({1}), frozenset({2}), frozenset())


@pytest.mark.parametrize("seed", range(4))
def test_a_loop_whose_predicate_fails_at_once_does_not_wait_for_its_captured_inputs(static_mode, seed):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        y = static.data("y", [3], "float32")
        slow = paddle.exp(y)                     # read by the body only
        (out,) = while_loop(lambda v: v.sum() < 10.0, lambda v: v + slow, [x * 1.0])
        after = out * 3.0
    core = static.Executor().core_for(main, ["x", "y"], [after], scope=static.Scope())
    plan = core.plan
    loop, producer, consumer = plan.index_of("while"), plan.index_of("exp"), plan.index_of("multiply", 1)
    assert plan.non_strict[loop] == (frozenset({producer}), frozenset())
    gate = threading.Event()
    rec = Recorder(seed=seed, gates={producer: gate}, on_start=lambda i: gate.set() if i == consumer else None)
    xv, yv = np.full(3, 5.0, "float32"), np.zeros(3, "float32")   # sum 15: no trip
    (got,) = core.run([xv, yv], parallel=True, hook=rec)
    np.testing.assert_array_equal(got, xv * 3)
    assert rec.position("end", loop) < rec.position("start", producer)
    xv = np.zeros(3, "float32")                                       # trips: waits for exp(y) = 1
    (got,) = core.run([xv, yv], parallel=True, hook=Recorder(seed=seed))
    np.testing.assert_array_equal(got, np.full(3, 4.0 * 3))
