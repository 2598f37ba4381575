"""The Executor façade and the InterpreterCore's runs: feeds, fetches, caching, build once, errors
and atomicity."""
import threading

import numpy as np
import pytest
from executor_helpers import no_passes, op, var  # noqa: F401 - fixtures

import runtime as paddle
from runtime import static
from runtime.executor import Scope
from runtime.ops import registry


def _linear_mse_example(batch=None):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[batch, 16], name="x")
        label = static.data(shape=[batch, 1], name="label")
        out = paddle.nn.Linear(in_features=16, out_features=1)(x)
        loss = paddle.nn.MSELoss()(out, label)
    return main, startup, out, loss


def _params(main, scope):
    return [scope.find_var(p.name).get_tensor() for p in main.global_block().all_parameters()]


def _feed(batch, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.normal(size=(batch, 16)).astype(np.float32),
            "label": rng.normal(size=(batch, 1)).astype(np.float32)}


# ---------------------------------------------------------------- the Linear + MSELoss example
def test_first_run_is_correct_and_startup_starts_no_threads(static_mode):
    # Executor(place) builds nothing; the first run of a fresh core is right
    main, startup, out, loss = _linear_mse_example(16)
    exe = static.Executor(paddle.CPUPlace())
    assert exe.stats["builds"] == 0
    scope = Scope()
    threads = threading.active_count()
    exe.run(startup, scope=scope)
    assert threading.active_count() == threads
    w, b = _params(main, scope)
    assert w.shape == (16, 1) and b.shape == (1,)
    feed = _feed(16)
    value, o = exe.run(main, feed=feed, fetch_list=[loss, out], scope=scope)
    ref = feed["x"] @ w + b
    np.testing.assert_allclose(o, ref, rtol=1e-5)
    np.testing.assert_allclose(value, ((ref - feed["label"]) ** 2).mean(), rtol=1e-5)
    assert value.shape == () and isinstance(value, np.ndarray)


def test_build_once_run_many(static_mode):
    # after 10 runs one build and one kernel lookup per op; another fetch
    # list, another scope or an appended op make exactly one new core each
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    ops_before = [o.type for o in main.global_block().ops]
    for k in range(10):
        exe.run(main, feed=_feed(4, k), fetch_list=[loss], scope=scope)
    core = exe.core_for(main, ["x", "label"], [loss], scope=scope)
    kernels = sum(ins.kind == "kernel" for ins in core.plan.instructions)
    assert core.stats == {"builds": 1, "kernel_lookups": kernels, "runs": 10}
    builds = exe.stats["builds"]
    exe.run(main, feed=_feed(4), fetch_list=[loss, out], scope=scope)
    assert exe.stats["builds"] == builds + 1
    other = Scope()
    exe.run(startup, scope=other)
    exe.run(main, feed=_feed(4), fetch_list=[loss], scope=other)
    assert exe.stats["builds"] == builds + 3  # startup and main, in the other scope
    with static.program_guard(main, startup):
        paddle.exp(loss)
    exe.run(main, feed=_feed(4), fetch_list=[loss], scope=scope)
    assert exe.stats["builds"] == builds + 4
    # the user's Program never gains feed or fetch ops; the cached copy has them
    assert [o.type for o in main.global_block().ops] == ops_before + ["exp"]
    assert "feed" not in main.global_block().vars
    plan = exe.plan_for(main, ["x", "label"], [loss], scope=scope)
    assert plan.op_types[:2] == ["feed", "feed"] and plan.op_types[-1] == "fetch"


def test_lru_evicts_the_oldest_core(static_mode):
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.cache_capacity = 2
    exe.run(startup, scope=scope)                                           # core 1
    exe.run(main, feed=_feed(2), fetch_list=[loss], scope=scope)          # core 2
    exe.run(main, feed=_feed(2), fetch_list=[out], scope=scope)           # core 3: evicts startup's
    assert exe.stats["evictions"] == 1 and exe.stats["builds"] == 3
    exe.run(main, feed=_feed(2), fetch_list=[loss], scope=scope)          # still cached
    assert exe.stats["builds"] == 3
    exe.run(startup, scope=scope)                                           # evicted: built again
    assert exe.stats["builds"] == 4


def test_build_then_run_equals_build_by_running(static_mode):
    # build() without executing, then run(), gives what the first run gives
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    from runtime.executor import InterpreterCore
    from runtime.executor.executor import prepare_program
    prepared, pairs = prepare_program(main, ["label", "x"], [loss.name])
    a = InterpreterCore(prepared, scope, None, ["label", "x"], [loss.name], ("feed", "fetch"), (), pairs)
    b = InterpreterCore(prepared, scope, None, ["label", "x"], [loss.name], ("feed", "fetch"), (), pairs)
    a.build()
    assert a.stats["runs"] == 0
    feed = _feed(3)
    np.testing.assert_array_equal(a.run([feed["label"], feed["x"]])[0], b.run([feed["label"], feed["x"]])[0])
    with pytest.raises(RuntimeError, match="already built"):
        a.build()


def test_dynamic_batch_runs_on_the_same_core(static_mode):
    # a None batch dim fed 4 then 16 rows: one core, both results right
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    w, b = _params(main, scope)
    for batch in (4, 16, 1):
        feed = _feed(batch, batch)
        (o,) = exe.run(main, feed=feed, fetch_list=[out], scope=scope)
        np.testing.assert_allclose(o, feed["x"] @ w + b, rtol=1e-5)
    assert exe.core_for(main, ["x", "label"], [out], scope=scope).stats["builds"] == 1
    assert exe.stats["builds"] == 2  # startup and main


def test_no_registry_or_scope_lookups_after_the_build(static_mode, monkeypatch):
    # run 2 looks up no kernel in the registry and no name in a scope
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed=_feed(4), fetch_list=[loss], scope=scope)
    calls = []
    real = registry.get_op
    monkeypatch.setattr(registry, "get_op", lambda name: calls.append(name) or real(name))
    before = Scope.lookups
    exe.run(main, feed=_feed(4), fetch_list=[loss], scope=scope)
    assert calls == [] and Scope.lookups == before


# ---------------------------------------------------------------- scopes
def test_persistables_in_the_scope_temporaries_in_the_local_scope(static_mode):
    # a Program holds no arrays; parameters live in the run's scope, temporaries are
    # declared in the core's local child scope and hold nothing after a run
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed=_feed(4), fetch_list=[loss], scope=scope)
    params = {p.name for p in main.global_block().all_parameters()}
    assert params <= set(scope.vars) and out.name not in scope.vars and loss.name not in scope.vars
    local = exe.core_for(main, ["x", "label"], [loss], scope=scope).local_scope
    assert local.parent is scope and local in scope.kids
    assert out.name in local.vars and local.vars[out.name].value is None
    assert local.find_var(next(iter(params))) is scope.find_var(next(iter(params)))
    assert all(v._data is None for v in main.list_vars())


def test_one_program_runs_in_two_scopes_independently(static_mode):
    main, startup, out, loss = _linear_mse_example()
    exe, s1, s2 = static.Executor(), Scope(), Scope()
    exe.run(startup, scope=s1)
    exe.run(startup, scope=s2)
    (w1, b1), (w2, b2) = _params(main, s1), _params(main, s2)
    assert not np.array_equal(w1, w2)  # two draws of the initialiser
    feed = _feed(4)
    (o1,) = exe.run(main, feed=feed, fetch_list=[out], scope=s1)
    (o2,) = exe.run(main, feed=feed, fetch_list=[out], scope=s2)
    np.testing.assert_allclose(o1, feed["x"] @ w1 + b1, rtol=1e-5)
    np.testing.assert_allclose(o2, feed["x"] @ w2 + b2, rtol=1e-5)


def test_scope_guard_switches_the_default_scope(static_mode):
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    with static.scope_guard(scope):
        exe.run(startup)
        assert static.global_scope() is scope
    assert all(scope.find_var(p.name) is not None for p in main.global_block().all_parameters())
    assert static.global_scope() is not scope


# ---------------------------------------------------------------- feeds and fetches
def test_fetch_order_duplicates_names_and_empty_program(static_mode):
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    feed = _feed(4)
    a, b, c, d = exe.run(main, feed=feed, fetch_list=[out, loss.name, out, "x"], scope=scope)
    np.testing.assert_array_equal(a, c)
    assert b.shape == () and a.shape == (4, 1)
    np.testing.assert_array_equal(d, feed["x"])
    assert exe.run(static.Program()) == []
    assert exe.run(main, feed=feed, scope=scope) == []
    (t,) = exe.run(main, feed=feed, fetch_list=[loss], scope=scope, return_numpy=False)
    assert isinstance(t, paddle.Tensor) and t.shape == []


def test_fetched_parameter_is_a_copy(static_mode):
    main, startup, out, loss = _linear_mse_example()
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    w_name = main.global_block().all_parameters()[0].name
    (w,) = exe.run(main, feed=_feed(2), fetch_list=[w_name], scope=scope)
    w[...] = 123.0
    assert not np.any(scope.find_var(w_name).get_tensor() == 123.0)


def test_bad_feeds_and_fetches_name_the_var_and_change_nothing(static_mode):
    # each a ValueError naming the var, raised before anything runs
    main, startup, out, loss = _linear_mse_example(16)
    exe, scope = static.Executor(), Scope()
    exe.run(startup, scope=scope)
    snapshot = {n: v.value.copy() for n, v in scope.vars.items()}
    names = set(scope.vars)
    good = _feed(16)
    cases = [
        ({**good, "lable": good["label"]}, [loss], "feed key 'lable'"),
        ({**good, "x": good["x"][:, :15]}, [loss], "variable 'x' has shape \\[16, 15\\]"),
        ({**good, "x": good["x"][:8]}, [loss], "variable 'x' has shape \\[8, 16\\]"),
        ({**good, "x": good["x"].astype(np.float64)}, [loss], "variable 'x' has dtype float64"),
        ({"x": good["x"]}, [loss], "variable 'label' is read by op"),
        (good, ["nope"], "fetch target 'nope'"),
    ]
    for feed, fetch, msg in cases:
        with pytest.raises(ValueError, match=msg):
            exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
        assert set(scope.vars) == names
        for n, v in snapshot.items():
            np.testing.assert_array_equal(scope.vars[n].value, v)
    with pytest.raises(TypeError, match="feed"):
        exe.run(main, feed=[good["x"]], fetch_list=[loss], scope=scope)
    with pytest.raises(ValueError, match="has no value in the scope"):
        exe.run(main, feed=good, fetch_list=[loss], scope=Scope())
    (v,) = exe.run(main, feed={**good, "label": good["label"].tolist()}, fetch_list=[loss], scope=scope)
    assert np.isfinite(v)  # lists are converted to the var's dtype


# ---------------------------------------------------------------- errors and atomicity
def _sgd_program(tail: bool):
    """p, q persistable; grads from fed g (unchecked shape); sgd updates in place; optionally an op
    after the updates that reads a fed `bad` (unchecked) and can fail."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "g", (-1,))
    var(blk, "h", (-1,))
    for n in ("p", "q", "staged"):
        var(blk, n, (4,), persistable=True)
    var(blk, "lr", (1,), persistable=True)
    for n in ("gp", "gq"):
        var(blk, n, (-1,))
    op(blk, "scale", ["g"], ["gp"], scale=2.0)
    op(blk, "scale", ["h"], ["gq"], scale=1.0)
    op(blk, "scale", ["p"], ["staged"], scale=10.0)   # a new value for a persistable: staged
    op(blk, "sgd", ["p", "gp", "lr"], ["p"])
    op(blk, "sgd", ["q", "gq", "lr"], ["q"])
    if not tail:
        var(blk, "bad", (-1, 3))
        var(blk, "m", (-1, 3))
        var(blk, "w", (3, 3))
        op(blk, "assign_value", [], ["w"], shape=(3, 3), dtype=np.dtype("float64"), values=(1.0,) * 9)
        op(blk, "matmul", ["bad", "w"], ["m"])
    return prog


def _sgd_scope():
    scope = Scope()
    for n, v in (("p", np.arange(4.0)), ("q", -np.arange(4.0)), ("staged", np.zeros(4)), ("lr", [0.5])):
        scope.var(n).set(np.asarray(v, dtype=np.float64))
    return scope


def _state(scope):
    return {n: (v.value, v.value.copy()) for n, v in scope.vars.items()}


def _assert_unchanged(scope, state):
    assert set(scope.vars) == set(state)
    for n, (arr, copy) in state.items():
        assert scope.vars[n].value is arr
        np.testing.assert_array_equal(arr, copy)


@pytest.mark.parametrize("scheduler", [False, True])
def test_updates_are_committed_only_after_a_successful_run(no_passes, scheduler):
    prog = _sgd_program(tail=False)
    exe, scope = static.Executor(), _sgd_scope()
    core = exe.core_for(prog, ["bad", "g", "h"], ["m"], scope=scope)
    state = _state(scope)
    g, h = np.ones(4), np.full(4, 2.0)
    # the in-place updates are followed by an op that fails: they are undone
    with pytest.raises(ValueError, match=r"operator 'matmul' \(#\d+ of the plan\) failed with input shapes "
                                         r"\(\[2, 2\], \[3, 3\]\); it was built at .*test_executor.py"):
        core.run([np.ones((2, 2)), g, h], scheduler=scheduler)
    _assert_unchanged(scope, state)
    (m,) = core.run([np.ones((2, 3)), g, h], scheduler=scheduler)
    np.testing.assert_array_equal(m, np.full((2, 3), 3.0))
    np.testing.assert_array_equal(scope.vars["p"].value, np.arange(4.0) - 0.5 * 2 * g)
    np.testing.assert_array_equal(scope.vars["q"].value, -np.arange(4.0) - 0.5 * h)
    np.testing.assert_array_equal(scope.vars["staged"].value, 10 * np.arange(4.0))
    assert scope.vars["p"].value is state["p"][0]  # updated in place, not replaced


@pytest.mark.parametrize("scheduler", [False, True])
def test_trailing_updates_are_checked_before_the_first_one_runs(no_passes, scheduler):
    # the second sgd gets a gradient of the wrong shape: the first sgd must not have run either
    prog = _sgd_program(tail=True)
    exe, scope = static.Executor(), _sgd_scope()
    core = exe.core_for(prog, ["g", "h"], [], scope=scope)
    state = _state(scope)
    with pytest.raises(ValueError, match=r"sgd: argument .grad. has shape \[5\].*operator .sgd. \(#\d+ of the plan\) "
                                         r"failed with input shapes \(\[4\], \[5\], \[1\]\)"):
        core.run([np.ones(4), np.ones(5)], scheduler=scheduler)
    _assert_unchanged(scope, state)
    core.run([np.ones(4), np.ones(4)], scheduler=scheduler)
    np.testing.assert_array_equal(scope.vars["p"].value, np.arange(4.0) - 1.0)
    np.testing.assert_array_equal(scope.vars["q"].value, -np.arange(4.0) - 0.5)


def test_error_in_first_run_leaves_no_new_scope_vars(no_passes, static_mode):
    # a failing first run of startup-like code adds nothing to the scope, and the next run works
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "bad", (-1, 2))
    var(blk, "w", (2, 2), persistable=True)
    var(blk, "m", (-1, 2))
    op(blk, "assign_value", [], ["w"], shape=(2, 2), dtype=np.dtype("float64"), values=(1.0, 0.0, 0.0, 1.0))
    op(blk, "matmul", ["bad", "w"], ["m"])
    exe, scope = static.Executor(), Scope()
    with pytest.raises(ValueError, match="matmul"):
        exe.run(prog, feed={"bad": np.ones((2, 3))}, fetch_list=["m"], scope=scope)
    assert scope.vars == {}
    (m,) = exe.run(prog, feed={"bad": np.ones((2, 2))}, fetch_list=["m"], scope=scope)
    np.testing.assert_array_equal(m, np.ones((2, 2)))
    np.testing.assert_array_equal(scope.find_var("w").get_tensor(), np.eye(2))


def test_in_place_update_of_a_fed_var_never_writes_the_callers_array(no_passes):
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "p", (4,), need_check_feed=True)
    var(blk, "g", (4,), need_check_feed=True)
    var(blk, "lr", (1,), persistable=True)
    op(blk, "sgd", ["p", "g", "lr"], ["p"])
    exe, scope = static.Executor(), Scope()
    scope.var("lr").set(np.array([1.0]))
    p = np.arange(4.0)
    (out,) = exe.run(prog, feed={"p": p, "g": np.ones(4)}, fetch_list=["p"], scope=scope)
    np.testing.assert_array_equal(out, np.arange(4.0) - 1)
    np.testing.assert_array_equal(p, np.arange(4.0))
    assert "p" in exe.plan_for(prog, ["g", "p"], ["p"], scope=scope).skip_inplace


def test_error_type_is_kept_for_exceptions_needing_more_arguments():
    from runtime.executor.errors import op_error
    instrs = [type("I", (), {"type": "t", "index": 0, "inputs": (), "callsite": "here"})()]
    e = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")
    assert op_error(instrs, e, 0, lambda s: None) is e and "operator 't'" in e.__notes__[0]


# ---------------------------------------------------------------- training on this core
def test_adam_training_updates_in_place_and_both_run_modes_agree(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[16, 16], name="x")
        label = static.data(shape=[16, 1], name="label")
        linear = paddle.nn.Linear(in_features=16, out_features=1)
        loss = paddle.nn.MSELoss()(linear(x), label)
        paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
    exe, s1, s2 = static.Executor(), Scope(), Scope()
    exe.run(startup, scope=s1)
    for name, cell in s1.vars.items():
        s2.var(name).set(cell.value)
    feed = {"x": np.ones((16, 16), np.float32), "label": np.ones((16, 1), np.float32)}
    c1 = exe.core_for(main, feed, [loss], scope=s1)
    c2 = exe.core_for(main, feed, [loss], scope=s2)
    w = s1.find_var(linear.weight.name).get_tensor()
    losses = []
    for _ in range(20):
        (l1,) = c1.run([feed["label"], feed["x"]])
        (l2,) = c2.run([feed["label"], feed["x"]], scheduler=True)
        assert l1 == l2
        losses.append(float(l1))
    assert all(b < a for a, b in zip(losses[:6], losses[1:6])) and losses[-1] < 0.01 * losses[0]
    assert s1.find_var(linear.weight.name).get_tensor() is w  # optimizer updates happen in place
    for name in s1.vars:
        np.testing.assert_array_equal(s1.vars[name].value, s2.vars[name].value)
