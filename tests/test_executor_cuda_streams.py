"""The InterpreterCore on CUDA streams (executor/cuda_streams.py), on the CuPy stand-in.

The stand-in (tests/fake_cupy.py) runs every kernel at once on the host, so a missing wait could
never show as a wrong value: these tests read its log of records, waits, launches and host syncs
instead (`fake_cupy.trace`), with the run's hook writing op markers ("op", event, index) into it. Values are
compared with the CPU core's run of the same program (bit-identical: the stand-in computes with
NumPy); the value tests run on a real GPU too where there is one (`any_gpu`)."""
import threading

import numpy as np
import pytest
from executor_helpers import no_passes, op, var  # noqa: F401

import runtime as paddle
from runtime import static

N = 128   # matmuls of this size cost more than a hand-off: the "auto" policy gives each branch a stream
FEEDS = ("w1", "w2", "x")   # a core's feed order (sorted names)


@pytest.fixture
def streams_flags():
    """Set the stream policy and the parallel mode for one test (restored after it)."""
    names = ["FLAGS_executor_stream_policy", "FLAGS_executor_parallel"]
    before = paddle.get_flags(names)

    def set_(policy: str, parallel: str = "auto") -> None:
        paddle.set_flags({names[0]: policy, names[1]: parallel})
    yield set_
    paddle.set_flags(before)


def _branches():
    """c = x @ w1 + x @ w2: two independent matmul branches joined by an add."""
    prog = static.Program()
    blk = prog.global_block()
    for n in FEEDS:
        var(blk, n, (N, N), "float32", need_check_feed=True)
    for n in "abc":
        var(blk, n, (N, N), "float32")
    op(blk, "matmul", ["x", "w1"], ["a"])
    op(blk, "matmul", ["x", "w2"], ["b"])
    op(blk, "add", ["a", "b"], ["c"])
    return prog


def _feeds(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(N, N)).astype(np.float32) for _ in FEEDS]


def _core(prog, fetch, place, scope=None, feeds=FEEDS):
    return static.Executor(place).core_for(prog, list(feeds), fetch, scope=scope or static.Scope())


def _cpu_values(prog, fetch, feeds):
    return _core(prog, fetch, paddle.CPUPlace()).run(feeds)


def _logged_run(fake, core, feeds):
    """Run `core` with a hook writing op markers into the stand-in's log; (fetches, log)."""
    fake.trace.clear()

    def hook(event, i, slots):
        fake.trace.append(("op", event, i))
    out = core.run(feeds, hook=hook)
    return out, list(fake.trace)


def _split(core, log):
    """(per device op: the waits enqueued right before its launch, then its markers, launches,
    copies and records, in log order; the fork: the entries before the first op; the join: those
    after the last op). Host ops run on other threads; they write syncs and markers only."""
    device = {ins.index for ins in core.plan.instructions if ins.queue == "device"}
    marks = [k for k, e in enumerate(log) if e[0] == "op" and e[1] != "free"]
    first, last = marks[0], marks[-1]
    ops, waits, owner = {i: [] for i in device}, [], None
    for e in log[first:last + 1]:
        if e[0] == "op" and e[2] in device and e[1] != "free":
            if e[1] == "wait":
                owner = e[2]
                ops[owner] += waits
                waits = []
            ops[e[2]].append(e)
        elif e[0] == "wait":
            waits.append(e)
        elif e[0] in ("record", "launch", "h2d"):
            ops[owner].append(e)
    assert not waits
    return ops, log[:first], log[last + 1:]


def _edges(core, kind):
    return {e for e, k in core.plan.next_kind.items() if k == kind}


# ---------------------------------------------------------------- streams and events
def test_two_independent_matmul_branches_run_on_two_streams_joined_by_exactly_the_planned_events(
        fake_gpu, no_passes, streams_flags):
    streams_flags("auto")
    prog, feeds = _branches(), _feeds()
    core = _core(prog, ["c"], paddle.CUDAPlace(0))
    plan = core.plan
    mm = [i for i, t in enumerate(plan.op_types) if t == "matmul"]
    add = plan.index_of("add")
    assert [plan.instructions[i].stream for i in (*mm, add)] == ["compute", "compute1", "compute"]
    assert core.runs_parallel
    (got,), log = _logged_run(fake_gpu, core, feeds)
    (want,) = _cpu_values(prog, ["c"], feeds)
    np.testing.assert_array_equal(got.get(), want)   # a device core fetches device arrays

    seg, fork, join = _split(core, log)
    launches = {i: {e[1] for e in seg[i] if e[0] == "launch"} for i in (*mm, add)}
    assert launches[mm[0]] == launches[add] == {"null"}   # "compute" is the caller's stream
    assert len(launches[mm[1]]) == 1 and launches[mm[1]] != {"null"}
    # every event edge: a record on the producer's stream right after its launch, a wait on the
    # consumer's stream right before its launch; no other wait inside the run
    recorded = {}
    for i, entries in seg.items():
        if ("op", "record", i) in entries:
            rec = entries[entries.index(("op", "record", i)) - 1]
            assert rec[0] == "record" and rec[1] in launches.get(i, {rec[1]})
            recorded[rec[2]] = i
    waited = {(recorded[e[2]], j) for j, entries in seg.items() for e in entries if e[0] == "wait"}
    assert waited == _edges(core, "event")
    assert sum(e[0] == "wait" for entries in seg.values() for e in entries) == len(waited)
    # fork: one record on the caller's stream, waited on by each side stream; join: the reverse
    assert [e[:2] for e in fork if e[0] == "record"] == [("record", "null")]
    assert {e[0] for e in join if e[0] != "op"} == {"record", "wait"}
    assert {e[1] for e in join if e[0] == "wait"} == {"null"}
    # one host thread, the caller's, launched every device op
    started = []
    core.run(feeds, hook=lambda event, i, slots: started.append((i, threading.get_ident())) if event == "start" else 0)
    assert {t for i, t in started if plan.instructions[i].queue == "device"} == {threading.get_ident()}
    side = {e[1] for e in fork if e[0] == "wait"}
    assert len(side) == 3 and launches[mm[1]] < side   # compute1 and the copy streams in and out
    assert {e[1] for e in join if e[0] == "record"} == side


def test_a_single_stream_plan_runs_the_sequential_code_on_the_callers_stream(fake_gpu, no_passes, streams_flags):
    for policy, parallel in (("host", "auto"), ("single", "auto"), ("auto", "never")):
        streams_flags(policy, parallel)
        prog, feeds = _branches(), _feeds()
        core = _core(prog, ["c"], paddle.CUDAPlace(0))
        assert not core.runs_parallel
        (got,), log = _logged_run(fake_gpu, core, feeds)
        np.testing.assert_array_equal(got.get(), _cpu_values(prog, ["c"], feeds)[0])
        assert not [e for e in log if e[0] in ("record", "wait")]
        # one stream asked for: the feed ops convert (with "auto", memcpy ops do, in program order)
        assert ("memcpy_h2d" in core.plan.op_types) == (policy == "auto")
        assert {e[1] for e in log if e[0] in ("launch", "h2d")} == {"null"}


def test_the_stream_runner_on_one_stream_converts_feeds_on_the_callers_stream(fake_gpu, no_passes, streams_flags):
    # no copy ops (one stream asked for): the feed ops move their values, on the stream that
    # then runs every kernel, so program order on that stream orders them
    streams_flags("single", "always")
    prog, feeds = _branches(), _feeds()
    core = _core(prog, ["c"], paddle.CUDAPlace(0))
    assert core.runs_parallel and "memcpy_h2d" not in core.plan.op_types
    with fake_gpu.cuda.Stream(non_blocking=True) as caller:
        (got,), log = _logged_run(fake_gpu, core, feeds)
    np.testing.assert_array_equal(got.get(), _cpu_values(prog, ["c"], feeds)[0])
    assert [e[1] for e in log if e[0] == "h2d"] == [caller.name] * 3
    assert {e[1] for e in log if e[0] == "launch"} == {caller.name}


def _cond_on_a_device_value():
    """a = exp(x) on the device; c = cond(p, a * 2, a + 1): the cond, a host op, reads a."""
    from runtime.static.nn import cond  # noqa: PLC0415
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x, p = static.data("x", [4], "float32"), static.data("p", [1], "bool")
        a = paddle.exp(x)
        c = cond(p, lambda: a * 2.0, lambda: a + 1.0)
    return main, c


def test_a_device_to_host_op_synchronizes_its_producers_event_before_it_runs(fake_gpu, static_mode, no_passes,
                                                                            streams_flags):
    streams_flags("auto", "always")
    main, c = _cond_on_a_device_value()
    core = _core(main, [c.name], paddle.CUDAPlace(0), feeds=["p", "x"])
    plan = core.plan
    exp, d2h, cond_op = (plan.index_of(t) for t in ("exp", "memcpy_d2h", "cond"))
    assert plan.next_kind[(exp, d2h)] == "sync" and plan.next_kind[(d2h, cond_op)] == "direct"
    xv = np.linspace(-1, 1, 4, dtype=np.float32)
    (got,), log = _logged_run(fake_gpu, core, [np.array([True]), xv])
    np.testing.assert_array_equal(got.get(), np.exp(xv) * 2.0)
    exp_event = log[log.index(("op", "record", exp)) - 1][2]
    synced = log.index(("sync", f"event{exp_event}.synchronize"))
    assert log.index(("op", "record", exp)) < synced < log.index(("op", "start", d2h))
    assert log.index(("sync", "ndarray.get")) < log.index(("op", "end", d2h)) < log.index(("op", "start", cond_op))
    # every event the host synchronizes is a sync edge's producer's
    events = {e[1] for e in log if e[0] == "sync" and e[1].startswith("event")}
    producers = {log[log.index(("op", "record", i)) - 1][2] for i, _ in _edges(core, "sync")}
    assert events == {f"event{k}.synchronize" for k in producers}


def test_host_feeds_cross_on_copy_ops_on_the_copy_stream_and_fetches_stay_on_the_device(fake_gpu, no_passes,
                                                                                        streams_flags):
    streams_flags("auto")
    prog, feeds = _branches(), _feeds()
    kept = [f.copy() for f in feeds]
    exe = static.Executor(paddle.CUDAPlace(0))
    core = exe.core_for(prog, list(FEEDS), ["c"], scope=static.global_scope())
    plan = core.plan
    assert plan.op_types.count("memcpy_h2d") == 3 and plan.op_types[-2:] == ["add", "fetch"]
    assert {ins.stream for ins in plan.instructions if ins.type == "memcpy_h2d"} == {"h2d"}
    (got,), log = _logged_run(fake_gpu, core, feeds)
    seg = _split(core, log)[0]
    h2d = [i for i, t in enumerate(plan.op_types) if t == "memcpy_h2d"]
    copy_streams = {e[1] for i in h2d for e in seg[i] if e[0] == "h2d"}
    kernel_streams = {e[1] for i, es in seg.items() if i not in h2d for e in es if e[0] == "launch"}
    assert len(copy_streams) == 1 and not copy_streams & kernel_streams
    assert type(got) is fake_gpu.ndarray   # the core hands out device arrays; Executor.run brings them home
    (host,) = exe.run(prog, feed=dict(zip(FEEDS, feeds)), fetch_list=["c"])
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, got.get())
    for f, k in zip(feeds, kept):
        np.testing.assert_array_equal(f, k)


# ---------------------------------------------------------------- GC
def test_a_buffer_read_on_two_streams_is_released_only_once_both_passed_it(fake_gpu, no_passes, streams_flags,
                                                                          monkeypatch):
    # events recorded on the caller's stream complete at once, those of the side streams never
    # during the run: x's copy (read on both) waits for the join, w1's (read on the caller's
    # stream only) goes as soon as the runner sees its reader's event done
    streams_flags("auto")
    record = fake_gpu.cuda.Event.record

    def recording(self, stream=None):
        self.on = (stream or fake_gpu.cuda.get_current_stream()).name
        record(self, stream)
    monkeypatch.setattr(fake_gpu.cuda.Event, "record", recording)
    monkeypatch.setattr(fake_gpu.cuda.Event, "done", property(lambda self: self.on == "null"))
    core = _core(_branches(), ["c"], paddle.CUDAPlace(0))
    plan = core.plan
    x, w1 = (plan.var_ids[f"{n}_device_Place(cpu)_Place(gpu:0)"] for n in ("x", "w1"))
    assert {plan.instructions[i].stream for i in plan.last_live[plan.var_names[x]]} == {"compute", "compute1"}
    assert {plan.instructions[i].stream for i in plan.last_live[plan.var_names[w1]]} == {"compute"}
    _, log = _logged_run(fake_gpu, core, _feeds())
    join = max(k for k, e in enumerate(log) if e[:2] == ("wait", "null"))
    assert log.index(("op", "free", w1)) < log.index(("op", "start", plan.index_of("add"))) < join
    assert log.index(("op", "free", x)) > join


def test_a_release_waits_while_a_reader_stream_has_not_passed_it(fake_gpu, no_passes, streams_flags, monkeypatch):
    # events never complete during the run: every buffer a device op used last is held until the
    # caller's stream joined the side streams, and released then (each later allocation is
    # ordered after the join)
    streams_flags("auto")
    monkeypatch.setattr(fake_gpu.cuda.Event, "done", property(lambda self: False))
    prog, feeds = _branches(), _feeds()
    core = _core(prog, ["c"], paddle.CUDAPlace(0))
    (got,), log = _logged_run(fake_gpu, core, feeds)
    np.testing.assert_array_equal(got.get(), _cpu_values(prog, ["c"], feeds)[0])
    plan = core.plan
    freed = {n for names in plan.free_after for n in names}
    held = {plan.var_ids[n] for n in freed   # a device op is among its last users
            if any(plan.instructions[i].queue == "device" for i in plan.last_live[n])}
    frees = [k for k, e in enumerate(log) if e[:2] == ("op", "free")]
    joins = [k for k, e in enumerate(log) if e[:2] == ("wait", "null")]
    assert {log[k][2] for k in frees} == {plan.var_ids[n] for n in freed} and len(held) == 5
    assert all(k > max(joins) for k in frees if log[k][2] in held)


# ---------------------------------------------------------------- errors and values
def _sgd_then_matmul():
    """p -= lr * 2g (in place, on a persistable), then m = bad @ bad, which fails for a non-square bad."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "g", (4,), need_check_feed=True)
    var(blk, "bad", (-1, 3))
    for n in ("gp", "m"):
        var(blk, n, (-1,) if n == "gp" else (-1, 3))
    var(blk, "p", (4,), persistable=True)
    var(blk, "lr", (1,), persistable=True)
    op(blk, "scale", ["g"], ["gp"], scale=2.0, execution_stream="s1")
    op(blk, "sgd", ["p", "gp", "lr"], ["p"])
    op(blk, "matmul", ["bad", "bad"], ["m"], execution_stream="s2")
    return prog


def test_a_failing_op_leaves_the_scope_as_before_and_names_the_op(fake_gpu, no_passes, streams_flags):
    streams_flags("single")
    scope = static.Scope()
    for n, v in (("p", np.arange(4.0)), ("lr", [0.5])):
        scope.var(n).value = fake_gpu.asarray(np.asarray(v, dtype=np.float64))   # device parameters
    core = _core(_sgd_then_matmul(), ["m"], paddle.CUDAPlace(0), scope=scope, feeds=["bad", "g"])
    assert core.runs_parallel
    state = {n: (c.value, c.value.get()) for n, c in scope.vars.items()}
    with pytest.raises(ValueError, match=r"operator 'matmul' \(#\d+ of the plan\)"):
        core.run([np.ones((2, 3)), np.ones(4)])
    for n, (arr, before) in state.items():
        assert scope.vars[n].value is arr
        np.testing.assert_array_equal(arr.get(), before)
    (m,) = core.run([np.ones((3, 3)), np.ones(4)])
    np.testing.assert_array_equal(m.get(), np.full((3, 3), 3.0))
    np.testing.assert_array_equal(scope.vars["p"].value.get(), np.arange(4.0) - 1.0)


def _train_losses(place, steps=3):
    from executor_helpers import linear_mse_training_program  # noqa: PLC0415
    paddle.seed(0)
    main, startup, loss, feeds = linear_mse_training_program(steps)
    exe, scope = static.Executor(place), static.Scope()
    exe.run(startup, scope=scope)
    return [exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0] for f in feeds]


def _cond_and_loop(place, pred):
    """A cond whose branch reads a parameter, then a while loop over its result (host ops
    between device kernels); the fetched values."""
    from runtime.static.nn import cond, while_loop  # noqa: PLC0415
    paddle.seed(0)
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [4, 3], "float32")
        p = static.data("p", [1], "bool")
        w = paddle.create_parameter([3, 3], "float32")
        a = cond(p, lambda: paddle.matmul(x, w) * 2.0, lambda: x + 1.0)
        trips, y = while_loop(lambda i, y: i.sum() < 3, lambda i, y: [i + 1, paddle.exp(y) * 0.5],
                              [paddle.zeros([1], "int64"), a])
    exe, scope = static.Executor(place), static.Scope()
    exe.run(startup, scope=scope)
    xv = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    return exe.run(main, feed={"x": xv, "p": np.array([pred])}, fetch_list=[a, trips, y], scope=scope)


def _assert_matches(gpu, got, want):
    """Bit-identical on the stand-in (NumPy computes both sides); within 1e-5 on a real GPU."""
    if gpu.__name__ == "fake_cupy":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("policy", ["single", "auto"])
def test_two_matmul_branches_give_the_cpu_values_on_one_stream_and_on_two(any_gpu, no_passes, streams_flags, policy):
    streams_flags(policy)
    prog, feeds = _branches(), _feeds()
    core = _core(prog, ["c"], paddle.CUDAPlace(0))
    assert core.runs_parallel == (policy == "auto")
    (want,) = _cpu_values(prog, ["c"], feeds)
    for _ in range(3):   # later runs get blocks the earlier ones gave back to the pool
        (got,) = core.run(feeds)
        _assert_matches(any_gpu, got.get(), want)


@pytest.mark.parametrize("policy, parallel", [("single", "auto"), ("auto", "always")],
                         ids=["sequential", "streams"])
def test_a_training_step_and_control_flow_on_the_device_give_the_cpu_values(
        any_gpu, static_mode, streams_flags, policy, parallel):
    streams_flags(policy, parallel)
    for got, want in zip(_train_losses(paddle.CUDAPlace(0)), _train_losses(paddle.CPUPlace())):
        assert type(got) is np.ndarray
        _assert_matches(any_gpu, got, want)
    for pred in (True, False):
        for got, want in zip(_cond_and_loop(paddle.CUDAPlace(0), pred), _cond_and_loop(paddle.CPUPlace(), pred)):
            _assert_matches(any_gpu, got, want)


def test_an_op_updating_a_fed_device_array_in_place_leaves_the_callers_array_alone(any_gpu, no_passes):
    # as on the CPU, where the feed is copied first: sgd updates its param in place
    prog = static.Program()
    blk = prog.global_block()
    for n in ("p", "g"):
        var(blk, n, (4,), "float32", need_check_feed=True)
    var(blk, "lr", (1,), "float32", need_check_feed=True)
    op(blk, "sgd", ["p", "g", "lr"], ["p"])
    p = np.arange(4, dtype=np.float32)
    feeds = [paddle.to_tensor(a, place=paddle.CUDAPlace(0))._data
             for a in (np.ones(4, np.float32), np.full(1, 0.5, np.float32), p)]   # feed order: g, lr, p
    core = _core(prog, ["p"], paddle.CUDAPlace(0), feeds=("g", "lr", "p"))
    (out,) = core.run(feeds)
    np.testing.assert_array_equal(out.get(), p - 0.5)
    np.testing.assert_array_equal(feeds[2].get(), p)
