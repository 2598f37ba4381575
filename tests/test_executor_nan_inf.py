"""The per-op nan/inf check of the InterpreterCore (FLAGS_check_nan_inf):
with the flag set, every run mode (sequential, traced, scheduler, parallel on the host pool and
on emulated device streams) checks each op's outputs right after the op ran and raises, in the
caller's thread, a RuntimeError naming the op, its plan index and the var; nothing downstream
of that op starts, the scope is left as it was, and the next run works. Off (the default) a NaN
flows through as NumPy computes it. The parallel runs repeat with seeded random delays."""
import numpy as np
import pytest
from executor_helpers import Recorder, default_executor_flags, no_passes, op, var, writer  # noqa: F401

import runtime as paddle
from runtime import static

# NumPy warns about the NaN and Inf it makes (on worker threads too, where np.errstate does not reach)
pytestmark = [pytest.mark.usefixtures("default_executor_flags"), pytest.mark.filterwarnings("ignore::RuntimeWarning")]

N = 16
MODES = {"sequential": {}, "scheduler": {"scheduler": True}, "parallel": {"parallel": True}}


@pytest.fixture
def check_nan_inf():
    paddle.set_flags({"FLAGS_check_nan_inf": True})
    try:
        yield
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": False})


def _diamond(streams=(None, None)):
    """a = tanh(x); b = log(a); c = sin(a); d = b + c (b and c optionally on device streams)."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    for n in "abcd":
        var(blk, n, (N,))
    op(blk, "tanh", ["x"], ["a"])
    op(blk, "log", ["a"], ["b"], **({"execution_stream": streams[0]} if streams[0] else {}))
    op(blk, "sin", ["a"], ["c"], **({"execution_stream": streams[1]} if streams[1] else {}))
    op(blk, "add", ["b", "c"], ["d"])
    return prog


def _core(prog, feed, fetch, scope=None):
    return static.Executor().core_for(prog, feed, fetch, scope=scope or static.Scope())


def _want(xs):
    a = np.tanh(xs)
    return np.log(a) + np.sin(a)


GOOD = np.linspace(0.1, 2.0, N)
BAD = np.where(np.arange(N) % 4 == 0, -1.0, 1.0) * GOOD   # 4 negative entries: log gives NaN there


def test_off_by_default_a_nan_flows_through(no_passes):
    assert paddle.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": False}
    core = _core(_diamond(), ["x"], ["d"])
    for mode in MODES.values():
        (d,) = core.run([BAD], **mode)
        np.testing.assert_array_equal(d, _want(BAD))
        assert np.isnan(d).sum() == 4


@pytest.mark.parametrize("mode", ["sequential", "traced", "scheduler", "parallel-host", "parallel-streams"])
def test_the_check_names_the_op_its_index_and_the_var_and_the_next_run_works(no_passes, mode):
    streams = ("s1", "s2") if mode == "parallel-streams" else (None, None)
    core = _core(_diamond(streams), ["x"], ["d"])   # built before the flag is set: it is read per run
    (want,) = core.run([GOOD])
    np.testing.assert_array_equal(want, _want(GOOD))
    plan = core.plan
    log, add = writer(plan, "b"), writer(plan, "d")
    kwargs = {"sequential": {}, "traced": {}, "scheduler": {"scheduler": True}}.get(mode, {"parallel": True})
    paddle.set_flags({"FLAGS_check_nan_inf": True})
    try:
        for seed in range(10 if mode.startswith("parallel") else 1):
            rec = Recorder(seed=seed) if mode != "sequential" else None
            with pytest.raises(RuntimeError) as info:
                core.run([BAD], hook=rec, **kwargs)
            msg = str(info.value)
            assert (f"There are NAN or INF (num_nan=4, num_inf=0) in output 'b' of operator 'log' (#{log} of the plan)"
                    in msg)
            assert f"[operator 'log' (#{log} of the plan) failed with input shapes ([{N}])" in msg
            assert isinstance(info.value.__cause__, RuntimeError)    # the check's own error, chained
            if rec is not None:
                # the check is part of the op: it started and never ended; nothing after it started
                assert log in rec.entries("start") and log not in rec.entries("end")
                assert add not in rec.entries("start")
            (got,) = core.run([GOOD], hook=rec, **kwargs)
            np.testing.assert_array_equal(got, want)
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": False})


def test_an_inf_is_caught_too_and_integer_outputs_are_not_checked(no_passes, check_nan_inf):
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    var(blk, "k", (N,), dtype="int64")
    var(blk, "e", (N,))
    op(blk, "cast", ["x"], ["k"], dtype=np.dtype("int64"))
    op(blk, "exp", ["x"], ["e"])
    core = _core(prog, ["x"], ["k", "e"])
    big = np.where(np.arange(N) < 3, 1000.0, 1.0)
    for mode in MODES.values():
        with pytest.raises(RuntimeError, match=r"num_nan=0, num_inf=3\) in output 'e' of operator 'exp'"):
            core.run([big], **mode)
        k, e = core.run([np.arange(N, dtype=np.float64)], **mode)
        np.testing.assert_array_equal(k, np.arange(N))
        np.testing.assert_array_equal(e, np.exp(np.arange(N, dtype=np.float64)))


def _sgd_step():
    """Two in-place sgd updates of persistables p and q at the end of the program (the optimizer
    tail, whose updates the core normally makes without a copy)."""
    prog = static.Program()
    blk = prog.global_block()
    for n in ("p", "q"):
        var(blk, n, (4,), persistable=True)
    var(blk, "lr", (1,), persistable=True)
    for n in ("g", "h"):
        var(blk, n, (4,), need_check_feed=True)
    op(blk, "sgd", ["p", "g", "lr"], ["p"])
    op(blk, "sgd", ["q", "h", "lr"], ["q"])
    scope = static.Scope()
    for n, v in (("p", np.arange(4.0)), ("q", -np.arange(4.0)), ("lr", [4.0])):
        scope.var(n).set(np.asarray(v, dtype=np.float64))
    return prog, scope


@pytest.mark.parametrize("mode", list(MODES))
def test_a_nan_made_by_an_in_place_update_leaves_the_scope_as_it_was(no_passes, check_nan_inf, mode):
    # the second update overflows (q - 4 * 1e308 = -inf) after the first one changed p in place:
    # under the check every in-place update of a scope array is undoable, so p is restored
    prog, scope = _sgd_step()
    core = _core(prog, ["g", "h"], [], scope=scope)
    p, q = scope.var("p").value, scope.var("q").value
    for seed in range(5 if mode == "parallel" else 1):
        with pytest.raises(RuntimeError, match=r"num_inf=\d\) in output 'q' of operator 'sgd'"):
            core.run([np.ones(4), np.full(4, 1e308)], hook=Recorder(seed=seed) if mode == "parallel" else None,
                     **MODES[mode])
        assert scope.var("p").value is p and scope.var("q").value is q
        np.testing.assert_array_equal(p, np.arange(4.0))
        np.testing.assert_array_equal(q, -np.arange(4.0))
    core.run([np.ones(4), np.ones(4)], **MODES[mode])
    np.testing.assert_array_equal(p, np.arange(4.0) - 4.0)
    np.testing.assert_array_equal(q, -np.arange(4.0) - 4.0)


def test_executor_run_honours_the_flag_set_after_its_first_run(no_passes):
    exe, scope = static.Executor(), static.Scope()
    prog = _diamond()
    (d,) = exe.run(prog, feed={"x": BAD}, fetch_list=["d"], scope=scope)
    assert np.isnan(d).sum() == 4
    paddle.set_flags({"FLAGS_check_nan_inf": True})
    try:
        with pytest.raises(RuntimeError, match=r"in output 'b' of operator 'log'"):
            exe.run(prog, feed={"x": BAD}, fetch_list=["d"], scope=scope)
        (d,) = exe.run(prog, feed={"x": GOOD}, fetch_list=["d"], scope=scope)
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": False})
    np.testing.assert_array_equal(d, _want(GOOD))
