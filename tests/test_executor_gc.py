"""Variable lifetimes of the InterpreterCore: last users, reference counts, the shrunk GC table of
Paddle's GC table example, and peak live bytes measured through the slots."""
import numpy as np
import pytest
from executor_helpers import host_placement, live_bytes, no_passes, op, var, writer  # noqa: F401 - fixtures

import runtime as paddle
from runtime import static
from runtime.executor import InterpreterCore
from runtime.executor.executor import prepare_program

N = 1000  # elements per activation (float64: 8000 bytes)
ACT = N * 8


def _chain(k: int):
    """x -> exp -> tanh -> exp -> ... (k ops), fetching the last."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    prev = "x"
    for i in range(k):
        var(blk, f"t{i}", (N,))
        op(blk, "exp" if i % 2 == 0 else "tanh", [prev], [f"t{i}"])
        prev = f"t{i}"
    return prog, prev


def _diamond():
    """a = exp(x); b = tanh(a); c = sin(a); d = b + c."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    for n in "abcd":
        var(blk, n, (N,))
    op(blk, "exp", ["x"], ["a"])
    op(blk, "tanh", ["a"], ["b"])
    op(blk, "sin", ["a"], ["c"])
    op(blk, "add", ["b", "c"], ["d"])
    return prog


def _measure(core, feeds, **kw):
    """(fetches, peak live intermediate bytes, event log) of one instrumented run."""
    plan = core.plan
    exclude = set(plan.feed_names) | set(plan.persistable)
    peak, log = [0], []

    def hook(event, index, slots):
        log.append((event, index if event != "free" else plan.var_names[index]))
        if event == "end":
            peak[0] = max(peak[0], live_bytes(slots, plan, exclude))
    out = core.run(feeds, hook=hook, **kw)
    return out, peak[0], log


@pytest.mark.parametrize("scheduler", [False, True])
def test_chain_peak_is_two_activations_and_each_temp_dies_after_its_last_user(host_placement, no_passes, scheduler):
    prog, last = _chain(6)
    exe = static.Executor()
    core = exe.core_for(prog, ["x"], [last], scope=static.Scope())
    xs = np.linspace(-1, 1, N)
    out, peak, log = _measure(core, [xs], scheduler=scheduler)
    ref = xs
    for i in range(6):
        ref = np.exp(ref) if i % 2 == 0 else np.tanh(ref)
    np.testing.assert_allclose(out[0], ref)
    assert peak == 2 * ACT  # the live-set minimum of a chain: one op's input and output
    plan = core.plan
    for i in range(5):  # t_i (last used by op k) is freed after k ends, before k+1 starts
        k = writer(plan, f"t{i + 1}")
        pos = log.index(("free", f"t{i}"))
        assert log.index(("end", k)) < pos < log.index(("start", k + 1))
    assert ("free", last) not in log and ("free", "x") not in log


@pytest.mark.parametrize("scheduler", [False, True])
def test_diamond_peak_and_ref_count(no_passes, scheduler):
    prog = _diamond()
    core = static.Executor().core_for(prog, ["x"], ["d"], scope=static.Scope())
    plan = core.plan
    b, c = writer(plan, "b"), writer(plan, "c")
    assert plan.last_live["a"] == {b, c} and plan.ref_count["a"] == 2  # read by parallel b and c
    assert "a" in plan.gc_check_vars[b] and "a" in plan.gc_check_vars[c]
    assert plan.free_after[c] == ("a",) and "a" not in plan.free_after[b]
    xs = np.linspace(-1, 1, N)
    out, peak, log = _measure(core, [xs], scheduler=scheduler)
    np.testing.assert_allclose(out[0], np.tanh(np.exp(xs)) + np.sin(np.exp(xs)))
    assert peak == 3 * ACT  # the live-set minimum of a diamond: a, b and c at op c
    assert log.count(("free", "a")) == 1 and log.index(("free", "a")) > log.index(("end", c))


def test_gc_table_shape(host_placement, no_passes, static_mode):
    # the shrunk last-live table of the Linear + MSELoss example's forward part (on CPU there is
    # no memcpy_d2h, so the loss is checked at the fetch op; feed ops and producers drop out)
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[16, 16], name="x")
        label = static.data(shape=[16, 1], name="label")
        out = paddle.nn.Linear(in_features=16, out_features=1)(x)
        loss = paddle.nn.MSELoss()(out, label)
    plan = static.Executor().plan_for(main, {"x": None, "label": None}, [loss])
    ops = [op_.type for op_ in main.global_block().ops]
    assert ops == ["linear", "subtract", "square", "mean"]
    w, b = (p.name for p in main.global_block().all_parameters())
    lin, sub, sq, mean = (plan.index_of(t) for t in ops)
    fetch = plan.index_of("fetch")
    tmp = {t: plan.var_names[plan.instructions[i].outputs[0]] for t, i in zip(ops, (lin, sub, sq, mean))}
    expected = {"x": {lin}, "label": {sub}, w: {lin}, b: {lin}, tmp["linear"]: {sub}, tmp["subtract"]: {sq},
                tmp["square"]: {mean}, tmp["mean"]: {fetch}}
    assert plan.last_live == expected
    assert all(plan.ref_count[n] == 1 for n in expected)
    # the feed/fetch holders never enter the GC plan; parameters sit in it but are never freed
    assert "feed" not in plan.last_live and "fetch" not in plan.last_live
    assert w in plan.gc_check_vars[lin] and all(w not in f and b not in f for f in plan.free_after)


def test_fetched_fed_and_persistable_vars_are_never_freed(host_placement, no_passes, static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 8])
        h = paddle.tanh(paddle.nn.Linear(8, 8)(x))
        y = paddle.exp(h)
        loss = paddle.mean(y)
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    core = exe.core_for(main, ["x"], [h, loss], scope=scope)
    plan = core.plan
    never = {x.name, h.name, loss.name} | set(plan.persistable)
    assert all(never.isdisjoint(f) for f in plan.free_after)
    xs = np.random.default_rng(0).normal(size=(5, 8)).astype(np.float32)
    freed = []
    hv, lv = core.run([xs], hook=lambda e, i, s: freed.append(plan.var_names[i]) if e == "free" else None)
    assert freed and never.isdisjoint(freed)
    w, b = (scope.find_var(p.name).get_tensor() for p in main.global_block().all_parameters())
    np.testing.assert_allclose(hv, np.tanh(xs @ w + b), rtol=1e-5)
    np.testing.assert_allclose(lv, np.exp(np.tanh(xs @ w + b)).mean(), rtol=1e-5)


def test_written_never_read_var_is_freed_after_its_writer(no_passes):
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", need_check_feed=True)
    var(blk, "dead")
    var(blk, "y")
    op(blk, "exp", ["x"], ["dead"])
    op(blk, "tanh", ["x"], ["y"])
    plan = static.Executor().plan_for(prog, ["x"], ["y"], scope=static.Scope())
    w = writer(plan, "dead")
    assert plan.last_live["dead"] == {w} and plan.free_after[w] == ("dead",)


def test_shape_only_input_does_not_extend_a_life(no_passes):
    # `shape` reads only the shape of t: t dies after its last buffer user, and the shape op
    # still sees the right shape (a one-element broadcast stub replaces the freed array)
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (3, 5), need_check_feed=True)
    var(blk, "t", (3, 5))
    var(blk, "u", (3, 5))
    var(blk, "s", (2,), "int32")
    op(blk, "exp", ["x"], ["t"])
    op(blk, "tanh", ["t"], ["u"])
    op(blk, "shape", ["t"], ["s"])
    core = static.Executor().core_for(prog, ["x"], ["u", "s"], scope=static.Scope())
    plan = core.plan
    assert plan.last_live["t"] == {writer(plan, "u")}
    assert plan.happens_before(writer(plan, "t"), writer(plan, "s"))  # still ordered after the writer
    for scheduler in (False, True):
        u, s = core.run([np.ones((3, 5))], scheduler=scheduler)
        np.testing.assert_array_equal(s, [3, 5])
        np.testing.assert_allclose(u, np.tanh(np.exp(np.ones((3, 5)))))


def test_skip_gc_vars_leave_the_plan(no_passes):
    prog, last = _chain(3)
    prepared, pairs = prepare_program(prog, ["x"], [last])
    core = InterpreterCore(prepared, static.Scope(), feed_names=["x"], fetch_names=[last],
                           holder_vars=("feed", "fetch"), skip_gc_vars=("t0",))
    plan = core.build()
    assert "t0" not in plan.last_live and all("t0" not in f for f in plan.free_after)
    assert "t1" in plan.last_live
    out = core.run([np.zeros(N)])
    np.testing.assert_allclose(out[0], np.exp(np.tanh(np.exp(np.zeros(N)))))


def test_counters_do_not_drift_and_a_failed_run_does_not_poison_the_next(no_passes):
    # dependency and reference counts are reset from the plan every run
    prog = _diamond()
    blk = prog.global_block()
    var(blk, "bad", (-1, 2))  # fed without a shape check: a wrong shape fails inside matmul
    var(blk, "e")
    op(blk, "matmul", ["d", "bad"], ["e"])
    exe, scope = static.Executor(), static.Scope()
    core = exe.core_for(prog, ["x", "bad"], ["d"], scope=scope)
    xs = np.linspace(-1, 1, N)
    want = np.tanh(np.exp(xs)) + np.sin(np.exp(xs))
    for k in range(200):
        good = k % 7 != 3
        feeds = [np.ones((N, 2)) if good else np.ones((3, 2)), xs]  # feed order: sorted names
        if good:
            (d,) = core.run(feeds, scheduler=k % 2 == 0)
            np.testing.assert_allclose(d, want)
        else:
            with pytest.raises(ValueError, match="matmul"):
                core.run(feeds, scheduler=k % 2 == 0)


def test_in_place_marks_of_the_passes_are_honoured(static_mode):
    # with the in-place pass on, relu writes into the dead matmul output's buffer: that input
    # counts as written by relu in the plan, the result is unchanged, and fed arrays are untouched
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = static.data("x", [None, 4], "float64")
        w = static.data("w", [4, 4], "float64")
        t = paddle.matmul(x, w)
        y = paddle.nn.functional.relu(t)
    core = static.Executor().core_for(main, ["x", "w"], [y], scope=static.Scope())
    relu = core.plan.instructions[core.plan.index_of("relu")]
    assert relu.inplace_pair == (0, 0)
    assert relu.inplace == {core.plan.var_ids[t.name]} and relu.inplace <= relu.writes
    shared = []

    def hook(event, i, slots):
        if event == "end" and i == relu.index:
            shared.append(np.shares_memory(slots[relu.inputs[0]], slots[relu.outputs[0]]))
    rng = np.random.default_rng(1)
    xs, ws = rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
    keep = xs.copy(), ws.copy()
    (out,) = core.run([ws, xs], hook=hook)
    assert shared == [True]
    np.testing.assert_allclose(out, np.maximum(xs @ ws, 0))
    np.testing.assert_array_equal(xs, keep[0])
    np.testing.assert_array_equal(ws, keep[1])
