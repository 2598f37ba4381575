"""The InterpreterCore's parallel run on the host pool: overlap of independent ops, Paddle's
dispatch rule (RunNextInstructions), hazards under
random injected delays, bit-equality with the sequential mode, errors raised in the caller,
cancellation, futures, no leaks, two executors at once, and the cost-based choice of mode.

Every scheduling test repeats its run with seeded random delays injected before the kernels
(executor_helpers.Recorder); concurrency is asserted from gates, barriers and the recorded
start/end order of the instrumented kernels, never from wall-clock speed."""
import gc
import signal
import sys
import threading
import time

import numpy as np
import pytest
from executor_helpers import (Recorder, chain_program, default_executor_flags, no_passes, op,  # noqa: F401
                              random_dag, linear_mse_training_program, var, writer)

import runtime as paddle
from runtime import static
from runtime.executor import streams


# each test states the mode it wants (`parallel=`) or asserts the default choice and placement
pytestmark = pytest.mark.usefixtures("default_executor_flags")

N = 64


def _core(prog, feed, fetch, scope=None):
    return static.Executor().core_for(prog, feed, fetch, scope=scope or static.Scope())


def _diamond(stream_b=None, stream_c=None):
    """a = exp(x); b = tanh(a); c = sin(a); d = b + c."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    for n in "abcd":
        var(blk, n, (N,))
    op(blk, "exp", ["x"], ["a"])
    op(blk, "tanh", ["a"], ["b"], **({"execution_stream": stream_b} if stream_b else {}))
    op(blk, "sin", ["a"], ["c"], **({"execution_stream": stream_c} if stream_c else {}))
    op(blk, "add", ["b", "c"], ["d"])
    return prog


def _diamond_ref(xs):
    a = np.exp(xs)
    return np.tanh(a) + np.sin(a)


@pytest.mark.parametrize("streams_bc", [(None, None), ("s1", "s2")], ids=["host-pool", "two-streams"])
def test_diamond_branches_overlap_and_results_equal_sequential(no_passes, streams_bc):
    # b and c meet at a barrier, so the run completes only if they run at the same time
    core = _core(_diamond(*streams_bc), ["x"], ["d"])
    plan = core.plan
    a, b, c, d = writer(plan, "a"), writer(plan, "b"), writer(plan, "c"), writer(plan, "d")
    assert plan.dep_count[d] == 2
    xs = np.linspace(-2, 2, N)
    (want,) = core.run([xs], parallel=False)
    np.testing.assert_allclose(want, _diamond_ref(xs), rtol=1e-12)
    for seed in range(20):
        rec = Recorder(seed=seed, barrier_ops=(b, c), barrier=threading.Barrier(2, timeout=60))
        (got,) = core.run([xs], parallel=True, hook=rec)
        np.testing.assert_array_equal(got, want)
        start, end = rec.entries("start"), rec.entries("end")
        assert start[b][0] < end[c][0] and start[c][0] < end[b][0]       # overlapping intervals
        assert start[d][0] > max(end[b][0], end[c][0])
        if streams_bc[0]:   # device ops run on their stream's thread, host ops on the host pool
            assert start[b][1] in streams.stream("s1").thread_ids and start[c][1] in streams.stream("s2").thread_ids
            assert {start[a][1], start[d][1]} <= streams.host_pool().thread_ids


@pytest.mark.parametrize("streams_bc", [(None, None), ("s1", "s2")], ids=["host-pool", "two-streams"])
def test_flags_benchmark_runs_one_op_at_a_time_with_the_same_results(no_passes, streams_bc):
    # waiting after every op (Paddle's FLAGS_benchmark), read per run
    core = _core(_diamond(*streams_bc), ["x"], ["d"])
    xs = np.linspace(-2, 2, N)
    (want,) = core.run([xs], parallel=False)
    paddle.set_flags({"FLAGS_benchmark": True})
    try:
        for seed in range(10):
            rec = Recorder(seed=seed)
            (got,) = core.run([xs], parallel=True, hook=rec)
            np.testing.assert_array_equal(got, want)
            start, end = rec.entries("start"), rec.entries("end")
            spans = sorted((start[i][0], end[i][0]) for i in start)
            assert len(spans) == len(core.plan.instructions)   # feed, exp, tanh, sin, add, fetch
            assert all(prev_end <= next_start for (_, prev_end), (next_start, _) in zip(spans, spans[1:]))
    finally:
        paddle.set_flags({"FLAGS_benchmark": False})
    b, c = writer(core.plan, "b"), writer(core.plan, "c")
    rec = Recorder(barrier_ops=(b, c), barrier=threading.Barrier(2, timeout=60))
    (got,) = core.run([xs], parallel=True, hook=rec)  # off again: b and c meet at the barrier, overlapping
    np.testing.assert_array_equal(got, want)


def test_no_op_runs_on_the_callers_thread_and_a_chain_stays_on_one_thread(no_passes):
    # the caller only waits; a chain never hops; a fan-out keeps its first ready
    # successor on the producer's thread
    prog, last = chain_program(8)
    core = _core(prog, ["x"], [last])
    rec = Recorder()
    core.run([np.ones(4)], parallel=True, hook=rec)
    threads = {th for _, th in rec.entries("start").values()}
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert threads <= streams.host_pool().thread_ids
    core = _core(_diamond(), ["x"], ["d"])
    a, b = writer(core.plan, "a"), writer(core.plan, "b")
    for seed in range(10):
        rec = Recorder(seed=seed)
        core.run([np.ones(N)], parallel=True, hook=rec)
        start = rec.entries("start")
        assert start[b][1] == start[a][1]


def _war_program(stream_a=None, stream_b=None):
    """t = sin(x); A: y = exp(t); B: t = tanh(x) (rewrites t after A read it); fetch y and t."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    for n in "ty":
        var(blk, n, (N,))
    op(blk, "sin", ["x"], ["t"])
    op(blk, "exp", ["t"], ["y"], **({"execution_stream": stream_a} if stream_a else {}))
    op(blk, "tanh", ["x"], ["t"], **({"execution_stream": stream_b} if stream_b else {}))
    return prog


@pytest.mark.parametrize("streams_ab", [(None, None), ("s1", "s2")], ids=["host-pool", "two-streams"])
def test_write_after_read_hazard_holds_under_every_injected_delay(no_passes, streams_ab):
    # B rewrites t, which A reads; A must always see the old t (edge A -> B)
    core = _core(_war_program(*streams_ab), ["x"], ["y", "t"])
    plan = core.plan
    b, t = writer(plan, "t", -1), plan.var_ids["t"]
    # A reads t (on two streams through its h2d copy, which then is the reader of t)
    readers = [ins.index for ins in plan.instructions if t in ins.reads and ins.index < b]
    assert readers and all(plan.happens_before(r, b) for r in readers)
    xs = np.linspace(-1, 1, N)
    for seed in range(40):
        y, t = core.run([xs], parallel=True, hook=Recorder(seed=seed))
        np.testing.assert_array_equal(y, np.exp(np.sin(xs)))
        np.testing.assert_array_equal(t, np.tanh(xs))


def test_random_dag_with_random_ops_equals_sequential_bit_for_bit(no_passes):
    # seeded random ops draw the same numbers in any schedule; every run
    # (random delays, a shared core) gives the sequential result
    rng = np.random.default_rng(3)
    prog, fetch = random_dag(rng)
    core = _core(prog, ["x"], fetch)
    xs = np.linspace(-1, 1, N)
    paddle.seed(11)
    want = core.run([xs], parallel=False)
    assert any(not np.array_equal(want[0], w) for w in want[1:])
    for seed in range(25):
        paddle.seed(11)
        got = core.run([xs], parallel=True, hook=Recorder(seed=seed))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def _two_branch_failure_program():
    """u = matmul(x, w1) and v = matmul(x, w2) in parallel, then their sum."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (-1, 3))
    var(blk, "w1", (3, 3))
    var(blk, "w2", (-1, 3))
    for n in ("u", "v", "s", "after_u"):
        var(blk, n, (-1, 3))
    op(blk, "matmul", ["x", "w1"], ["u"])
    op(blk, "matmul", ["x", "w2"], ["v"])
    op(blk, "tanh", ["u"], ["after_u"])
    op(blk, "add", ["after_u", "v"], ["s"])
    return prog


def test_an_op_error_in_a_worker_is_raised_in_the_caller_and_the_next_run_works(no_passes):
    # the same exception type, the op named with its index and line, the original
    # traceback chained; no op downstream of the failure starts; the core keeps working
    core = _core(_two_branch_failure_program(), ["x", "w1", "w2"], ["s"])
    plan = core.plan
    u, after_u = writer(plan, "u"), writer(plan, "after_u")
    good = [np.eye(3), np.eye(3), np.ones((2, 3))]      # feeds in sorted name order: w1, w2, x
    bad = [np.ones((4, 3)), np.eye(3), np.ones((2, 3))]
    for seed in range(10):
        rec = Recorder(seed=seed)
        with pytest.raises(ValueError, match=rf"operator 'matmul' \(#{u} of the plan\) failed with input shapes "
                                             r"\(\[2, 3\], \[4, 3\]\); it was built at .*test_executor_parallel.py"
                           ) as ei:
            core.run(bad, parallel=True, hook=rec)
        assert isinstance(ei.value.__cause__, ValueError) and ei.value.__cause__.__traceback__ is not None
        assert after_u not in rec.entries("start")
        (s,) = core.run(good, parallel=True, hook=Recorder(seed=seed))
        np.testing.assert_array_equal(s, np.tanh(np.ones((2, 3))) + np.ones((2, 3)))


def test_two_failures_at_once_raise_exactly_one_error_and_leave_no_work(no_passes):
    # both matmuls fail at the same time (they meet at a barrier first)
    core = _core(_two_branch_failure_program(), ["x", "w1", "w2"], ["s"])
    u, v = writer(core.plan, "u"), writer(core.plan, "v")
    bad = [np.ones((4, 3)), np.ones((5, 3)), np.ones((2, 3))]
    for seed in range(10):
        rec = Recorder(seed=seed, barrier_ops=(u, v), barrier=threading.Barrier(2, timeout=60))
        with pytest.raises(ValueError, match=r"operator 'matmul' \(#(\d+) of the plan\)") as ei:
            core.run(bad, parallel=True, hook=rec)
        assert f"#{u} " in str(ei.value) or f"#{v} " in str(ei.value)
        assert streams.quiesce(5)
        assert streams.host_pool().pending() == 0


def _run_of_this_worker():
    """The parallel run whose op the calling worker thread is running (its `run` local)."""
    frame = sys._getframe(1)
    while frame is not None and not hasattr(frame.f_locals.get("run"), "cancel"):
        frame = frame.f_back
    assert frame is not None, "not called from a parallel run's worker"
    return frame.f_locals["run"]


def test_keyboard_interrupt_in_the_caller_cancels_the_run_cleanly(no_passes):
    # SIGINT reaches the waiting caller; no new op starts after the cancel, the core still works
    prog, last = chain_program(60)
    core = _core(prog, ["x"], [last])
    interrupted = threading.Event()

    def on_sigint(signum, frame):
        if not interrupted.is_set():
            interrupted.set()
            raise KeyboardInterrupt

    def on_start(i):
        if i == 5:   # hold op 5 until the caller took the signal (sent again if it was lost) and cancelled
            # (the bounds only matter when something is wrong: generous, as a loaded machine may not
            # schedule the caller for seconds)
            for _ in range(600):
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                if interrupted.wait(0.1):
                    break
            assert interrupted.is_set()
            # the handler ran, but the caller may not have reached its cancel yet: were op 5 let go now,
            # the next op could start in between (the worker can take the GIL first on a loaded machine)
            run, pause = _run_of_this_worker(), threading.Event()
            deadline = time.monotonic() + 60
            while not run.cancel and time.monotonic() < deadline:
                pause.wait(0.001)
            assert run.cancel
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        rec, op5_ended = Recorder(on_start=on_start), threading.Event()

        def hook(event, index, slots):
            rec(event, index, slots)
            if (event, index) == ("end", 5):
                op5_ended.set()

        with pytest.raises(KeyboardInterrupt):
            core.run([np.ones(4)], parallel=True, hook=hook)
    finally:
        signal.signal(signal.SIGINT, previous)
    # op 5's end is logged by its worker, which may still be in the hook when the caller returns
    assert op5_ended.wait(60)
    (out,) = core.run([np.ones(4)], parallel=True)
    (want,) = core.run([np.ones(4)], parallel=False)
    np.testing.assert_array_equal(out, want)
    assert sorted(rec.entries("start")) == list(range(6))  # op 5 ran; nothing after the cancel started


def test_futures_overlap_the_callers_work_and_carry_results_or_errors(no_passes):
    # return_futures: the caller holds the run at a gate while it goes on; results equal
    # the synchronous run; a callback added before or after completion runs exactly once
    exe, scope = static.Executor(), static.Scope()
    prog = _two_branch_failure_program()
    feed = {"x": np.ones((2, 3)), "w1": np.eye(3), "w2": np.eye(3)}
    want = exe.run(prog, feed=feed, fetch_list=["s"], scope=scope)
    gate, calls = threading.Event(), []
    streams.run_queue().submit(lambda _: gate.wait(60))   # the queued run waits behind this
    fut = exe.run(prog, feed=feed, fetch_list=["s"], scope=scope, return_futures=True)
    fut.add_done_callback(lambda f: calls.append("before"))
    assert not fut.done()
    gate.set()
    np.testing.assert_array_equal(fut.result(timeout=60)[0], want[0])
    fut.add_done_callback(lambda f: calls.append("after"))
    assert fut.done() and calls == ["before", "after"]
    bad = exe.run(prog, feed={**feed, "w1": np.ones((4, 3))}, fetch_list=["s"], scope=scope, return_futures=True)
    with pytest.raises(ValueError, match=r"operator 'matmul'"):
        bad.result(timeout=60)
    np.testing.assert_array_equal(
        exe.run(prog, feed=feed, fetch_list=["s"], scope=scope, return_futures=True).result(timeout=60)[0], want[0])


def test_many_runs_of_a_200_op_program_leak_no_threads_and_no_memory(no_passes):
    # 1,000 runs of a 200-op program: the thread count and the number of live allocations stay flat
    prog, fetch = random_dag(np.random.default_rng(5), n_ops=200, with_random=False)
    core = _core(prog, ["x"], fetch)
    xs = np.linspace(-1, 1, N)
    want = core.run([xs], parallel=False)
    for _ in range(20):
        core.run([xs], parallel=True)
    threads = threading.active_count()
    gc.collect()
    before = sys.getallocatedblocks()
    same = 0
    for _ in range(1000):
        got = core.run([xs], parallel=True)
        same += all(np.array_equal(g, w) for g, w in zip(got, want))
    del got
    gc.collect()
    assert threading.active_count() == threads
    assert sys.getallocatedblocks() - before < 500   # objects: 200 ops x 1,000 runs would be 200,000
    assert same == 1000                              # every run gives the same results


def test_two_threads_running_two_executors_at_once_stay_correct(no_passes):
    progs = [random_dag(np.random.default_rng(s), n_ops=30, with_random=False) for s in (7, 8)]
    cores = [_core(p, ["x"], f) for p, f in progs]
    xs = np.linspace(-1, 1, N)
    wants = [c.run([xs], parallel=False) for c in cores]
    errors = []

    def work(k):
        try:
            for seed in range(30):
                got = cores[k].run([xs], parallel=True, hook=Recorder(seed=seed))
                for g, w in zip(got, wants[k]):
                    np.testing.assert_array_equal(g, w)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors


# ---------------------------------------------------------------- choosing the mode
def _branches(size, per_branch=2):
    """Two independent chains of `per_branch` matmuls on [size, size] inputs, then their sum."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (size, size), need_check_feed=True)
    tails = []
    for br in "ab":
        prev = "x"
        for k in range(per_branch):
            name = f"{br}{k}"
            var(blk, name, (size, size))
            op(blk, "matmul", [prev, "x"], [name])
            prev = name
        tails.append(prev)
    var(blk, "out", (size, size))
    op(blk, "add", tails, ["out"])
    return prog


def test_the_cost_estimate_picks_parallel_for_large_branches_and_sequential_for_tiny_ops(no_passes):
    big = _core(_branches(1024), ["x"], ["out"])
    assert big.plan.parallel and big.runs_parallel
    small = _core(_branches(4), ["x"], ["out"])
    assert not small.plan.parallel and not small.runs_parallel
    prog, last = chain_program(1000, shape=(1,))
    assert not _core(prog, ["x"], [last]).runs_parallel
    assert all(big.plan.op_cost[i] > 100 * small.plan.op_cost[i]
               for i, ins in enumerate(big.plan.instructions) if ins.type == "matmul")


def test_flags_force_a_mode_and_the_sequential_flag_wins(no_passes):
    saved = paddle.get_flags(["FLAGS_executor_parallel", "FLAGS_new_executor_sequential_run"])
    try:
        paddle.set_flags({"FLAGS_executor_parallel": "always"})
        assert _core(_branches(4), ["x"], ["out"]).runs_parallel
        paddle.set_flags({"FLAGS_new_executor_sequential_run": True})
        core = _core(_branches(1024), ["x"], ["out"])
        assert not core.runs_parallel
        paddle.set_flags({"FLAGS_new_executor_sequential_run": False, "FLAGS_executor_parallel": "never"})
        assert not _core(_branches(1024), ["x"], ["out"]).runs_parallel
        paddle.set_flags({"FLAGS_executor_parallel": "sometimes"})
        with pytest.raises(ValueError, match="FLAGS_executor_parallel"):
            _core(_branches(4), ["x"], ["out"])
    finally:
        paddle.set_flags(saved)


def test_the_first_run_of_an_auto_parallel_core_stays_on_the_callers_thread(no_passes):
    # the build run of a core the estimate made parallel stays on the caller's
    # thread; the second run goes to the pool; "always" threads the first run too
    core = _core(_branches(256), ["x"], ["out"])
    assert core.runs_parallel
    xs = np.eye(256)
    for expect_caller in (True, False):
        rec = Recorder()
        core.run([xs], hook=rec)
        assert ({th for _, th in rec.entries("start").values()} == {threading.get_ident()}) == expect_caller
    saved = paddle.get_flags(["FLAGS_executor_parallel"])
    paddle.set_flags({"FLAGS_executor_parallel": "always"})
    try:
        core = _core(_diamond(), ["x"], ["d"])
    finally:
        paddle.set_flags(saved)
    rec = Recorder()
    core.run([np.ones(N)], hook=rec)
    assert threading.get_ident() not in {th for _, th in rec.entries("start").values()}


def test_the_linear_mse_training_example_trains_identically_threaded_and_sequential(static_mode):
    # Linear(16->1) + MSELoss + Adam, 10 steps forced parallel (on two
    # emulated-stream policies) and sequential from the same start: losses and parameters equal
    main, startup, loss, feeds = linear_mse_training_program(10)
    params = [p.name for p in main.global_block().all_parameters()]
    saved = paddle.get_flags(["FLAGS_executor_parallel", "FLAGS_executor_stream_policy"])
    results = []
    try:
        for mode, policy in (("never", "host"), ("always", "host"), ("always", "auto")):
            paddle.set_flags({"FLAGS_executor_parallel": mode, "FLAGS_executor_stream_policy": policy})
            exe, scope = static.Executor(), static.Scope()
            paddle.seed(1)
            exe.run(startup, scope=scope)
            losses = [exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0] for f in feeds]
            assert exe.core_for(main, list(feeds[0]), [loss], scope=scope).runs_parallel == (mode == "always")
            results.append((losses, [scope.find_var(p).get_tensor().copy() for p in params]))
    finally:
        paddle.set_flags(saved)
    (want_losses, want_params), *others = results
    assert want_losses[-1] < want_losses[0]
    for losses, ps in others:
        for got, want in zip(losses + ps, want_losses + want_params):
            np.testing.assert_array_equal(got, want)


def _sgd_program(tail: bool):
    """g -> gp = 2g, h -> gq = h, p <- sgd(p, gp), q <- sgd(q, gq) in place; without `tail` a
    matmul on a fed (unchecked) value follows the updates and can fail."""
    prog = static.Program()
    blk = prog.global_block()
    for n in ("g", "h", "gp", "gq"):
        var(blk, n, (-1,))
    for n in ("p", "q"):
        var(blk, n, (4,), persistable=True)
    var(blk, "lr", (1,), persistable=True)
    op(blk, "scale", ["g"], ["gp"], scale=2.0)
    op(blk, "scale", ["h"], ["gq"], scale=1.0)
    op(blk, "sgd", ["p", "gp", "lr"], ["p"])
    op(blk, "sgd", ["q", "gq", "lr"], ["q"])
    if not tail:
        var(blk, "bad", (-1, 3))
        var(blk, "m", (-1, 3))
        op(blk, "matmul", ["bad", "bad"], ["m"])
    return prog


@pytest.mark.parametrize("tail", [True, False], ids=["checked-before-updates", "snapshot-undone"])
def test_a_failed_parallel_run_leaves_the_scope_as_it_was(no_passes, tail):
    # the atomicity of the sequential mode holds threaded: trailing in-place updates are all
    # checked (after a barrier: every input exists) before the first runs; an update followed by
    # a failing op is undone from its snapshot
    scope = static.Scope()
    for n, v in (("p", np.arange(4.0)), ("q", -np.arange(4.0)), ("lr", [0.5])):
        scope.var(n).set(np.asarray(v, dtype=np.float64))
    fetch = [] if tail else ["m"]
    feed = ["g", "h"] if tail else ["bad", "g", "h"]
    core = _core(_sgd_program(tail), feed, fetch, scope=scope)
    state = {n: (c.value, c.value.copy()) for n, c in scope.vars.items()}
    good = [np.ones(4), np.ones(4)] if tail else [np.ones((2, 2)), np.ones(4), np.ones(4)]
    bad = [np.ones(4), np.ones(5)] if tail else [np.ones((2, 3)), np.ones(4), np.ones(4)]
    for seed in range(10):
        with pytest.raises(ValueError, match=r"operator '(sgd|matmul)' \(#\d+ of the plan\)"):
            core.run(bad, parallel=True, hook=Recorder(seed=seed))
        for n, (arr, copy) in state.items():
            assert scope.vars[n].value is arr
            np.testing.assert_array_equal(arr, copy)
    core.run(good, parallel=True)
    np.testing.assert_array_equal(scope.vars["p"].value, np.arange(4.0) - 0.5 * 2)
    np.testing.assert_array_equal(scope.vars["q"].value, -np.arange(4.0) - 0.5)
