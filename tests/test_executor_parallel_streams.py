"""Stream analysis and GC across emulated device streams, with the four multi-stream cases of
Paddle's multi-stream sync examples.

Ops are put on streams with Paddle's `execution_stream` attribute; every scheduling test runs
many times with random delays injected before the kernels, and drives interleavings with
gates (threading.Event) rather than sleeps."""
import threading

import numpy as np
import pytest
from executor_helpers import Recorder, default_executor_flags, no_passes, op, var, writer  # noqa: F401

import runtime as paddle
from runtime import static
from runtime.executor.asyncvalue import AsyncValue
from runtime.executor.stream_analysis import Context, StreamAnalyzer, edge_kind, place
from runtime.executor.streams import Stream, stream


# each test states the mode it wants (`parallel=`) or asserts the default choice and placement
pytestmark = pytest.mark.usefixtures("default_executor_flags")

CPU, D2H = Context("cpu", "default"), Context("d2h", "default")
H2D, S1, S2 = Context("h2d", "copy"), Context("gpu", "s1"), Context("gpu", "s2")


# ---------------------------------------------------------------- AsyncValue and emulated streams
def test_async_value_callbacks_run_once_before_or_after_completion_and_errors_reach_every_waiter():
    v = AsyncValue()
    seen = []
    v.add_done_callback(lambda a: seen.append(("early", a.result())))
    assert not v.done()
    v.set_value(3)
    v.add_done_callback(lambda a: seen.append(("late", a.result())))   # runs at once
    assert seen == [("early", 3), ("late", 3)] and v.done()
    with pytest.raises(RuntimeError, match="already completed"):
        v.set_value(4)
    e = AsyncValue()
    e.set_error(KeyError("k"))
    for _ in range(2):
        with pytest.raises(KeyError):
            e.result()
    assert isinstance(e.exception(), KeyError)
    with pytest.raises(TimeoutError):
        AsyncValue().result(timeout=0.001)


def test_a_stream_runs_in_order_and_a_wait_holds_it_until_the_event_is_recorded():
    s1, s2 = Stream("t-a"), Stream("t-b")
    order, ev, gate = [], AsyncValue(), threading.Event()
    s1.submit(lambda _: gate.wait(5))
    s1.submit(lambda _: order.append("producer"))
    s1.record(ev)
    s2.wait_event(ev)
    s2.submit(lambda _: order.append("consumer"))
    assert s2.quiesce(0.02) is False and order == []   # held by the wait while s1 is gated
    gate.set()
    assert s1.quiesce(5) and s2.quiesce(5)
    assert order == ["producer", "consumer"] and s1.pending() == s2.pending() == 0


# ---------------------------------------------------------------- classification
@pytest.mark.parametrize("producer, consumer, kind", [
    (CPU, CPU, "direct"), (CPU, H2D, "direct"), (D2H, CPU, "direct"), (S1, S1, "direct"),
    (S1, S2, "event"), (H2D, S1, "event"), (S1, D2H, "sync"), (S1, CPU, "sync"), (CPU, S1, "direct"),
])
def test_edge_kinds_follow_the_dependency_table(producer, consumer, kind):
    assert edge_kind(producer, consumer) == kind


def test_events_only_for_vars_the_consumer_reads_and_none_on_direct_edges():
    # op0 (s1) writes vars 0 and 1; op1 (s2) reads only 1; op2 (s1) reads 0 (same stream)
    sched = StreamAnalyzer([S1, S2, S1], reads=[frozenset(), frozenset({1}), frozenset({0})],
                           writes=[frozenset({0, 1}), frozenset({2}), frozenset({3})]
                           ).analyse([frozenset({1, 2}), frozenset(), frozenset()])
    assert sched.next_kind == {(0, 1): "event", (0, 2): "direct"}
    assert sched.events == {(0, 1): (1,)}
    assert sched.output_event == (True, False, False)


def test_placement_policies():
    kinds = ["feed", "kernel", "kernel", "kernel", "kernel", "fetch"]
    up = [frozenset(), frozenset({0}), frozenset({1}), frozenset({1}), frozenset({2, 3}), frozenset({4})]
    cost = [0, 500.0, 500.0, 500.0, 1.0, 0]
    none = [None] * 6
    host = place(kinds, none, "host", up, cost, 80.0, 2)
    assert host == [CPU, CPU, CPU, CPU, CPU, D2H]
    single = place(kinds, none, "single", up, cost, 80.0, 2)
    assert {c.stream for c in single[1:5]} == {"compute"} and single[0] == CPU and single[5] == D2H
    auto = place(kinds, none, "auto", up, cost, 80.0, 2)
    # the diamond's costly second branch gets a stream of its own; the join continues a branch
    assert auto[2].stream == auto[1].stream != auto[3].stream and auto[4].stream == auto[2].stream
    cheap = place(kinds, none, "auto", up, [0, 1.0, 1.0, 1.0, 1.0, 0], 80.0, 2)
    assert {c.stream for c in cheap[1:5]} == {"compute"}
    annotated = place(kinds, [None, None, "side", None, None, None], "host", up, cost, 80.0, 2)
    assert annotated[2] == Context("gpu", "side") and annotated[3] == CPU
    with pytest.raises(ValueError, match="policy"):
        place(kinds, none, "bogus", up, cost, 80.0, 2)


# ---------------------------------------------------------------- programs on emulated streams
def _abc(stream_b="s2", stream_ac="s1", n=64):
    """The multi-stream example: A: Y = f(X); B: M = f(Y); C: N = f(Y); fetch M and N."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "X", (n,), need_check_feed=True)
    for name in "YMN":
        var(blk, name, (n,))
    op(blk, "exp", ["X"], ["Y"], execution_stream=stream_ac)
    op(blk, "tanh", ["Y"], ["M"], execution_stream=stream_b)
    op(blk, "sin", ["Y"], ["N"], execution_stream=stream_ac)
    return prog


def _core(prog, feed, fetch):
    exe = static.Executor()
    return exe.core_for(prog, feed, fetch, scope=static.Scope())


def _reference(xs):
    y = np.exp(xs)
    return [np.tanh(y), np.sin(y)]


def test_plan_of_two_streams_has_an_event_for_y_only_on_the_cross_stream_edge(no_passes):
    # case 3: A -> B crosses streams (an event for Y), A -> C stays on s1 (direct)
    plan = _core(_abc(), ["X"], ["M", "N"]).plan
    a, b, c = writer(plan, "Y"), writer(plan, "M"), writer(plan, "N")
    assert [plan.instructions[i].stream for i in (a, b, c)] == ["s1", "s2", "s1"]
    assert all(plan.instructions[i].queue == "device" and plan.instructions[i].context == "gpu" for i in (a, b, c))
    assert plan.next_kind[(a, b)] == "event" and plan.events[(a, b)] == ("Y",)
    assert plan.next_kind[(a, c)] == "direct" and (a, c) not in plan.events
    # the fed X reaches s1 through an h2d copy; M and N leave through d2h copies before the fetches
    h2d, d2h_m, fetch_m = plan.index_of("memcpy_h2d"), plan.index_of("memcpy_d2h", 0), plan.index_of("fetch", 0)
    assert plan.instructions[a].inputs == (plan.var_ids["X_device_Place(cpu)_Place(gpu:0)"],)
    assert plan.next_kind[(h2d, a)] == "event" and plan.events[(h2d, a)] == ("X_device_Place(cpu)_Place(gpu:0)",)
    assert plan.next_kind[(b, d2h_m)] == "sync"       # GPU -> D2H: a blocking wait on a host thread
    assert plan.next_kind[(d2h_m, fetch_m)] == "direct" and plan.downstream[d2h_m] == {fetch_m}
    assert "execution_stream" not in plan.instructions[a].attrs  # the annotation never reaches a kernel


def test_cross_stream_consumer_never_starts_before_its_producer_finished(no_passes):
    # A gated shut on s1; B (s2) must not start until A ended, and sees A's data
    core = _core(_abc(), ["X"], ["M", "N"])
    a, b = writer(core.plan, "Y"), writer(core.plan, "M")
    xs = np.linspace(-1, 1, 64)
    for seed in range(15):
        gate = threading.Event()
        rec = Recorder(seed=seed, gates={a: gate})
        result = {}
        t = threading.Thread(target=lambda: result.setdefault("out", core.run([xs], parallel=True, hook=rec)))
        t.start()
        assert not t.join(0.002) and b not in rec.entries("start")
        gate.set()
        t.join(5)
        assert rec.position("end", a) < rec.position("start", b)
        for got, want in zip(result["out"], _reference(xs)):
            np.testing.assert_array_equal(got, want)


def test_same_stream_fast_gc_frees_in_stream_order_after_the_last_user(no_passes):
    # case 1: A, B, C all on s1; the host frees Y as soon as C is launched, and the
    # release happens on s1 after C ran (stream order), never before
    core = _core(_abc(stream_b="s1"), ["X"], ["M", "N"])
    plan = core.plan
    b, c, y = writer(plan, "M"), writer(plan, "N"), plan.var_ids["Y"]
    xs = np.linspace(-1, 1, 64)
    for seed in range(15):
        rec = Recorder(seed=seed)
        out = core.run([xs], parallel=True, hook=rec)
        freed = rec.entries("free")
        assert y in freed
        assert rec.position("free", y) > max(rec.position("end", b), rec.position("end", c))
        assert freed[y][1] == rec.entries("end")[c][1]   # released on s1's own thread
        for got, want in zip(out, _reference(xs)):
            np.testing.assert_array_equal(got, want)


def _hold_b_until_c_ended(core, seed):
    """Run the A/B/C program with B (s2) held until C (s1) has ended and s1 has run everything
    it was given; (recorder, fetches or None, error or None)."""
    plan = core.plan
    b, c = writer(plan, "M"), writer(plan, "N")
    c_done = threading.Event()

    def on_start(i):
        if i == b:
            assert c_done.wait(5) and stream("s1").quiesce(5)

    rec = Recorder(seed=seed, on_start=on_start)
    original = rec.__call__

    def hook(event, index, slots):
        original(event, index, slots)
        if event == "end" and index == c:
            c_done.set()
    out, err = None, None
    try:
        out = core.run([np.linspace(-1, 1, 64)], parallel=True, hook=hook)
    except Exception as e:  # noqa: BLE001 - the hazard run reports what it saw
        err = e
    return rec, out, err


def test_record_stream_defers_the_free_until_the_other_stream_passed_its_use(no_passes):
    # cases 2 and 4: A and C on s1, B on s2; B is held until C ended, so fast GC
    # alone would free Y after C while B has not read it; RecordStream defers the release
    core = _core(_abc(), ["X"], ["M", "N"])
    plan = core.plan
    b, y = writer(plan, "M"), plan.var_ids["Y"]
    for seed in range(10):
        rec, out, err = _hold_b_until_c_ended(core, seed)
        assert err is None
        assert rec.position("free", y) > rec.position("end", b)
        assert not _freed_before_a_reader_started(plan, rec)
        for got, want in zip(out, _reference(np.linspace(-1, 1, 64))):
            np.testing.assert_array_equal(got, want)


def _freed_before_a_reader_started(plan, rec):
    """(var, reader) pairs where the var was released before an op reading it started."""
    frees = {i: rec.position("free", i) for i in rec.entries("free")}
    starts = {i: rec.position("start", i) for i in rec.entries("start")}
    return [(plan.var_names[v], j) for v, at in frees.items() for j, ins in enumerate(plan.instructions)
            if v in ins.reads and j in starts and starts[j] > at]


def test_without_record_stream_the_hazard_is_seen(no_passes):
    # the negative control: the same schedule with RecordStream off frees a var while a consumer
    # on another stream has not read it: Y before B (held until C ended), or, if that consumer's
    # stream was slower still, the h2d copy of X before A
    paddle.set_flags({"FLAGS_executor_record_stream": False})
    try:
        core = _core(_abc(), ["X"], ["M", "N"])
    finally:
        paddle.set_flags({"FLAGS_executor_record_stream": True})
    rec, out, err = _hold_b_until_c_ended(core, 0)
    early = _freed_before_a_reader_started(core.plan, rec)
    assert early and {v for v, _ in early} <= {"Y", "X_device_Place(cpu)_Place(gpu:0)"}
    # the consumer read a released buffer: an error, or NaN where freed buffers are poisoned
    assert err is not None or np.isnan(out[0]).all()


def test_an_error_on_a_stream_names_the_failed_ops_input_shapes(no_passes):
    # the stream-ordered release of a launched op's inputs must not empty them before the caller
    # reports the failure: a failed run keeps its values
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (-1, -1))
    var(blk, "w0", (3, 3))
    var(blk, "w", (3, 3))
    var(blk, "m", (-1, 3))
    op(blk, "exp", ["w0"], ["w"], execution_stream="s1")
    op(blk, "matmul", ["x", "w"], ["m"], execution_stream="s1")
    core = _core(prog, ["x", "w0"], ["m"])
    for seed in range(5):
        with pytest.raises(ValueError, match=r"operator 'matmul' \(#\d+ of the plan\) failed with input shapes "
                                             r"\(\[2, 2\], \[3, 3\]\)"):
            core.run([np.eye(3), np.ones((2, 2))], parallel=True, hook=Recorder(seed=seed))  # w0, x
    (m,) = core.run([np.zeros((3, 3)), np.ones((2, 3))], parallel=True)
    np.testing.assert_array_equal(m, np.full((2, 3), 3.0))
