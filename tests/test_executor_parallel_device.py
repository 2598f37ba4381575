"""The parallel run on an emulated device:
host/device copies in the plan, the edge kinds they produce, the priority ready queue, the
per-op order of every run under random injected delays, and poisoned freed buffers.

Device memory is emulated on this CPU-only machine: kernels placed on a device stream read and
write NumPy arrays, and the build's memcpy ops copy into new buffers, so a read of the wrong
side's buffer or of a freed one shows up as a wrong value."""
import threading

import numpy as np
import pytest
from executor_helpers import Recorder, default_executor_flags, no_passes, op, random_dag, linear_mse_training_program, var, writer  # noqa: F401,E501

import runtime as paddle
from runtime import static
from runtime.executor import analysis
from runtime.executor.gc import Lifetimes

pytestmark = pytest.mark.usefixtures("default_executor_flags")

N = 64
H2D_X = "x_device_Place(cpu)_Place(gpu:0)"


@pytest.fixture
def flags():
    """Set executor flags for one test (restored after it)."""
    saved = {}

    def set_(**values):
        names = [f"FLAGS_{k}" for k in values]
        saved.update({n: v for n, v in paddle.get_flags(names).items() if n not in saved})
        paddle.set_flags({f"FLAGS_{k}": v for k, v in values.items()})
    yield set_
    paddle.set_flags(saved)


def _core(prog, feed, fetch, scope=None):
    return static.Executor().core_for(prog, feed, fetch, scope=scope or static.Scope())


def _mixed(streams=True):
    """a = exp(x) on s1; b = tanh(a) a CPU kernel; c = sin(b) on s1; d = a * c on s2."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    for n in "abcd":
        var(blk, n, (N,))
    on = (lambda s: {"execution_stream": s}) if streams else (lambda s: {})
    op(blk, "exp", ["x"], ["a"], **on("s1"))
    op(blk, "tanh", ["a"], ["b"])
    op(blk, "sin", ["b"], ["c"], **on("s1"))
    op(blk, "multiply", ["a", "c"], ["d"], **on("s2"))
    return prog


# ---------------------------------------------------------------- copies
def test_a_cpu_kernel_inside_a_device_program_gets_an_h2d_d2h_pair_and_values_equal_the_cpu_run(no_passes):
    core = _core(_mixed(), ["x"], ["d"])
    plan = core.plan
    assert plan.op_types == ["feed", "memcpy_h2d", "exp", "memcpy_d2h", "tanh", "memcpy_h2d", "sin", "multiply",
                             "memcpy_d2h", "fetch"]
    kinds = [(ins.type, ins.context) for ins in plan.instructions]
    assert kinds[1] == ("memcpy_h2d", "h2d") and kinds[3] == ("memcpy_d2h", "d2h") and kinds[4] == ("tanh", "cpu")
    # named as Paddle names copies; a copy serves every later reader on its side: d's multiply
    # reads exp's a on the device, tanh reads its host copy
    d2h_a = "a_device_Place(gpu:0)_Place(cpu)"
    names = [[plan.var_names[v] for v in ins.inputs] for ins in plan.instructions]
    assert names[2] == [H2D_X] and names[4] == [d2h_a] and names[7] == ["a", "c"]
    assert plan.next_kind[(plan.index_of("multiply"), plan.index_of("memcpy_d2h", 1))] == "sync"
    xs = np.linspace(-1, 1, N)
    (want,) = _core(_mixed(streams=False), ["x"], ["d"]).run([xs], parallel=False)   # all on the CPU
    np.testing.assert_allclose(want, np.exp(xs) * np.sin(np.tanh(np.exp(xs))), rtol=1e-15)
    copies = {i for i, ins in enumerate(plan.instructions) if ins.type.startswith("memcpy")}
    for seed in range(20):
        shared = []

        def hook(event, i, slots, rec=Recorder(seed=seed)):
            rec(event, i, slots)
            if event == "end" and i in copies:   # a copy is a new buffer, never the source's
                ins = plan.instructions[i]
                shared.append(np.shares_memory(slots[ins.inputs[0]], slots[ins.outputs[0]]))
        (got,) = core.run([xs], parallel=True, hook=hook)
        np.testing.assert_array_equal(got, want)
        assert shared == [False] * len(copies)
    np.testing.assert_array_equal(core.run([xs], parallel=False)[0], want)


def test_edge_kinds_of_a_device_program_follow_the_dependency_table(no_passes):
    # stream classification on a whole program: each of the seven producer/consumer pairs
    # appears, with the kind Paddle's StreamAnalyzer gives it, and events exist exactly for the
    # vars a non-direct edge carries
    plan = _core(_mixed(), ["x"], ["d"]).plan
    table = {("cpu", "cpu"): "direct", ("cpu", "h2d"): "direct", ("d2h", "cpu"): "direct",
             ("gpu", "gpu", True): "direct", ("gpu", "gpu", False): "event", ("h2d", "gpu"): "event",
             ("gpu", "d2h"): "sync"}
    seen = set()
    for (i, j), kind in plan.next_kind.items():
        a, b = plan.instructions[i], plan.instructions[j]
        key = (a.context, b.context) + ((a.stream == b.stream,) if a.context == b.context == "gpu" else ())
        if key in table:
            assert kind == table[key], (a, b)
            seen.add(key)
        if kind == "direct":
            assert (i, j) not in plan.events
        else:
            want = {plan.var_names[v] for v in a.writes & (b.reads | b.shape_reads)}
            assert set(plan.events[(i, j)]) == want
    assert seen == set(table) - {("cpu", "cpu"), ("gpu", "gpu", True)}   # this program has neither
    host = _core(_mixed(streams=False), ["x"], ["d"]).plan                    # a CPU chain has CPU -> CPU
    assert {host.next_kind[e] for e in host.edges()} == {"direct"}
    one = _core(_abc_single_stream(), ["x"], ["c"]).plan                     # and one stream GPU -> GPU
    e, t = one.index_of("exp"), one.index_of("tanh")
    assert one.instructions[e].stream == one.instructions[t].stream and one.next_kind[(e, t)] == "direct"


def _abc_single_stream():
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    for n in "bc":
        var(blk, n, (N,))
    op(blk, "exp", ["x"], ["b"], execution_stream="s1")
    op(blk, "tanh", ["b"], ["c"], execution_stream="s1")
    return prog


def test_gc_table_on_a_device_has_the_d2h_copy_before_the_fetch(no_passes, static_mode, flags):
    # the shrunk GC table in its GPU shape: the loss is checked at memcpy_d2h, its host copy at
    # the fetch; the fed vars reach the device through h2d copies, which their readers check
    flags(executor_stream_policy="single")
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[16, 16], name="x")
        label = static.data(shape=[16, 1], name="label")
        loss = paddle.nn.MSELoss()(paddle.nn.Linear(in_features=16, out_features=1)(x), label)
    plan = static.Executor().plan_for(main, {"x": None, "label": None}, [loss])
    lin, sub, sq, mean, d2h, fetch = (plan.index_of(t) for t in ("linear", "subtract", "square", "mean",
                                                                  "memcpy_d2h", "fetch"))
    assert d2h == fetch - 1 and plan.downstream[d2h] == {fetch}
    tmp = {i: plan.var_names[plan.instructions[i].outputs[0]] for i in (lin, sub, sq, mean)}
    w, b = (p.name for p in main.global_block().all_parameters())
    h2d_x, h2d_label = (plan.index_of("memcpy_h2d", k) for k in (0, 1))
    expected = {"x": {h2d_x}, "label": {h2d_label}, H2D_X: {lin}, "label_device_Place(cpu)_Place(gpu:0)": {sub},
                w: {lin}, b: {lin}, tmp[lin]: {sub}, tmp[sub]: {sq}, tmp[sq]: {mean}, tmp[mean]: {d2h},
                f"{tmp[mean]}_device_Place(gpu:0)_Place(cpu)": {fetch}}
    assert plan.last_live == expected


def test_a_training_step_on_the_emulated_device_equals_the_cpu_run(static_mode, flags):
    # copies of fed values and results, parameters updated in place on the device side
    main, startup, loss, feeds = linear_mse_training_program(5)
    results = []
    for mode, policy in (("never", "host"), ("always", "single"), ("always", "auto")):
        flags(executor_parallel=mode, executor_stream_policy=policy)
        exe, scope = static.Executor(), static.Scope()
        paddle.seed(1)
        exe.run(startup, scope=scope)
        losses = [exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0] for f in feeds]
        plan = exe.plan_for(main, feeds[0], [loss], scope=scope)
        assert ("memcpy_d2h" in plan.op_types) == (policy != "host")
        results.append(losses + [scope.find_var(p.name).get_tensor().copy()
                                 for p in main.global_block().all_parameters()])
    for other in results[1:]:
        for got, want in zip(other, results[0]):
            np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- the priority ready queue
def _fan_out(priorities, stream=None):
    """a = exp(x), then one op per priority reading a, each fetched."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    var(blk, "a", (N,))
    where = {"execution_stream": stream} if stream else {}
    op(blk, "exp", ["x"], ["a"], **where)
    for k, p in enumerate(priorities):
        var(blk, f"y{k}", (N,))
        op(blk, ("tanh", "sin", "abs", "cos")[k % 4], ["a"], [f"y{k}"], scheduling_priority=p, **where)
    return prog


def test_ops_ready_at_once_run_in_priority_order_on_one_thread(no_passes):
    priorities = [3, 1, 2, 0, 1]
    fetch = [f"y{k}" for k in range(len(priorities))]
    xs = np.linspace(-1, 1, N)
    want = [np.tanh(np.exp(xs)), np.sin(np.exp(xs)), np.abs(np.exp(xs)), np.cos(np.exp(xs)), np.tanh(np.exp(xs))]
    # lower priority value first, then program order (Paddle's instruction_scheduling_priority_less)
    by_priority = sorted(range(len(priorities)), key=lambda k: (priorities[k], k))
    core = _core(_fan_out(priorities), ["x"], fetch)
    plan = core.plan
    ops = [writer(plan, n) for n in fetch]
    assert [plan.instructions[i].priority for i in ops] == priorities
    assert "scheduling_priority" not in plan.instructions[ops[0]].attrs   # never reaches the kernel
    rec = Recorder()
    for got, w in zip(core.run([xs], scheduler=True, hook=rec), want):   # the single-threaded scheduler
        np.testing.assert_array_equal(got, w)
    started = [i for e, i, _, _ in rec.log if e == "start" and i in ops]
    assert started == [ops[k] for k in by_priority]
    # the parallel run, device ops on one stream: after the launch of a, all five are ready on the
    # launching thread, which launches them by priority, so the stream runs them in that order
    core = _core(_fan_out(priorities, stream="s1"), ["x"], fetch)
    ops = [writer(core.plan, n) for n in fetch]
    for seed in range(10):
        rec = Recorder(seed=seed)
        for got, w in zip(core.run([xs], parallel=True, hook=rec), want):
            np.testing.assert_array_equal(got, w)
        started = [i for e, i, _, _ in rec.log if e == "start" and i in ops]
        assert started == [ops[k] for k in by_priority]
    # a host fan-out keeps its best successor on the producer's thread, the rest are enqueued
    core = _core(_fan_out(priorities), ["x"], fetch)
    a, ops = writer(core.plan, "a"), [writer(core.plan, n) for n in fetch]
    for seed in range(10):
        rec = Recorder(seed=seed)
        core.run([xs], parallel=True, hook=rec)
        start = rec.entries("start")
        assert start[ops[by_priority[0]]][1] == start[a][1]


# ---------------------------------------------------------------- every edge in order
@pytest.mark.parametrize("placement", ["host", "streams"])
def test_every_run_respects_every_edge_and_the_per_op_order(no_passes, placement):
    # in each of many runs with random delays: a successor starts after its producer ended (and,
    # across streams, after the producer's event was recorded); per op wait < start < end
    # (< record); a var is released only after every one of its last users ended
    streams = (None, "s1", "s2") if placement == "streams" else ()
    prog, fetch = random_dag(np.random.default_rng(21), n_ops=30, streams=streams)
    core = _core(prog, ["x"], fetch)
    plan = core.plan
    assert ("memcpy_h2d" in plan.op_types) == (placement == "streams")
    xs = np.linspace(-1, 1, N)
    paddle.seed(5)
    want = core.run([xs], parallel=False)
    for seed in range(25):
        rec = Recorder(seed=seed)
        paddle.seed(5)
        got = core.run([xs], parallel=True, hook=rec)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        events = [(e, i) for e, i, _, _ in rec.log]
        assert len(events) == len(set(events))      # each op ran once, each var was freed once
        at = {(e, i): k for k, (e, i) in enumerate(events)}
        for i in range(len(plan.instructions)):
            assert at[("wait", i)] < at[("start", i)] < at[("end", i)]
            if ("record", i) in at:
                assert at[("end", i)] < at[("record", i)]
        for i, j in plan.edges():
            assert at[("end", i)] < at[("start", j)]
            if plan.next_kind[(i, j)] != "direct":
                assert at[("record", i)] < at[("wait", j)]
        for v in rec.entries("free"):
            assert all(at[("end", u)] < at[("free", v)] for u in plan.last_live[plan.var_names[v]])


# ---------------------------------------------------------------- poisoning
def _abc():
    """The multi-stream example (after Paddle's multi-stream sync examples): A: Y = exp(X) on s1;
    B: M = tanh(Y) on s2; C: N = sin(Y) on s1."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    for name in "YMN":
        var(blk, name, (N,))
    op(blk, "exp", ["x"], ["Y"], execution_stream="s1")
    op(blk, "tanh", ["Y"], ["M"], execution_stream="s2")
    op(blk, "sin", ["Y"], ["N"], execution_stream="s1")
    return prog


class _PoisonWatch(Recorder):
    """A Recorder that also checks, as each op starts, that none of its inputs is poisoned (NaN
    everywhere: no input of these programs is NaN otherwise), and counts poisoned frees."""

    def __init__(self, plan, **kw):
        super().__init__(**kw)
        self.plan, self.bad_reads, self.poisoned = plan, [], []

    def __call__(self, event, index, slots):
        super().__call__(event, index, slots)
        if event == "start":
            for v in self.plan.instructions[index].reads:
                if isinstance(slots[v], np.ndarray) and np.isnan(slots[v]).all():
                    self.bad_reads.append((index, self.plan.var_names[v]))
        elif event == "free" and isinstance(slots[index], np.ndarray) and np.isnan(slots[index]).all():
            self.poisoned.append(self.plan.var_names[index])


def _run_holding_b(core, watch):
    """Run the A/B/C program with B held until C ended and s1 ran all it was given."""
    plan = core.plan
    b, c = writer(plan, "M"), writer(plan, "N")
    c_done = threading.Event()
    original_on_start = watch.on_start

    def on_start(i):
        if i == b:
            assert c_done.wait(5)
            from runtime.executor.streams import stream  # noqa: PLC0415
            assert stream("s1").quiesce(5)
        if original_on_start:
            original_on_start(i)
    watch.on_start = on_start

    def hook(event, index, slots):
        watch(event, index, slots)
        if event == "end" and index == c:
            c_done.set()
    return core.run([np.linspace(-1, 1, N)], parallel=True, hook=hook)


def _abc_reference():
    y = np.exp(np.linspace(-1, 1, N))
    return [np.tanh(y), np.sin(y)]


@pytest.mark.parametrize("stream_b", ["s2", "s1"], ids=["record-stream", "same-stream-fast-gc"])
def test_no_consumer_reads_a_poisoned_buffer(no_passes, flags, stream_b):
    # B on s2, held until C on s1 ended (RecordStream defers Y's release), and all on s1
    # (FastGC frees Y at C's launch, the stream releases it after C ran): with freed
    # buffers poisoned, every op reads intact inputs and the results are right
    flags(executor_poison_freed=True)
    prog = _abc()
    if stream_b == "s1":
        prog.global_block().ops[1].attrs["execution_stream"] = "s1"
    core = _core(prog, ["x"], ["M", "N"])
    for seed in range(15):
        watch = _PoisonWatch(core.plan, seed=seed)
        out = _run_holding_b(core, watch) if stream_b == "s2" else core.run(
            [np.linspace(-1, 1, N)], parallel=True, hook=watch)
        assert watch.bad_reads == []
        assert "Y" in watch.poisoned and H2D_X in watch.poisoned    # the poison did land
        for got, want in zip(out, _abc_reference()):
            np.testing.assert_array_equal(got, want)


def test_poison_shows_the_hazard_record_stream_prevents(no_passes, flags):
    # the negative control of the RecordStream test: with RecordStream off a var is released
    # while a consumer on another stream has not run; poisoned, that read gives NaN instead of values
    flags(executor_poison_freed=True, executor_record_stream=False)
    core = _core(_abc(), ["x"], ["M", "N"])
    watch = _PoisonWatch(core.plan, seed=0)
    m, n = _run_holding_b(core, watch)
    assert {v for _, v in watch.bad_reads} & {"Y", H2D_X}    # (and every value computed from it)
    assert np.isnan(m).all()


def _first_user_frees(uses, tracked, freeable, reach):
    """A deliberately broken GC plan: each var is freed after its FIRST user, not its last."""
    first: dict[int, int] = {}
    for i, vs in enumerate(uses):
        for v in vs:
            if tracked(v):
                first.setdefault(v, i)
    checks = [[] for _ in uses]
    frees = [[] for _ in uses]
    for v, i in first.items():
        checks[i].append(v)
        if freeable(v):
            frees[i].append(v)
    return Lifetimes({v: frozenset({i}) for v, i in first.items()}, {v: 1 for v in first},
                     tuple(map(tuple, checks)), tuple(map(tuple, frees)))


@pytest.mark.parametrize("placement", ["host", "streams"])
def test_poison_catches_a_gc_plan_that_frees_too_early(no_passes, flags, monkeypatch, placement):
    # a = exp(x); b = tanh(a); c = sin(b); d = a * c: a broken plan frees a after tanh, so the
    # multiply reads a poisoned a and d comes out NaN; the real plan under the same poison is exact
    flags(executor_poison_freed=True, executor_stream_policy="single" if placement == "streams" else "host")
    xs = np.linspace(-1, 1, N)
    want = np.exp(xs) * np.sin(np.tanh(np.exp(xs)))
    good = _core(_mixed(streams=False), ["x"], ["d"])
    monkeypatch.setattr(analysis, "analyse_lifetimes", _first_user_frees)
    broken = _core(_mixed(streams=False), ["x"], ["d"])
    for seed in range(10):
        (d,) = good.run([xs], parallel=True, hook=Recorder(seed=seed))
        np.testing.assert_allclose(d, want, rtol=1e-14)
        watch = _PoisonWatch(broken.plan, seed=seed)
        (d,) = broken.run([xs], parallel=True, hook=watch)
        assert np.isnan(d).all() and watch.bad_reads


def test_poison_leaves_shared_buffers_fed_arrays_and_fetches_alone(no_passes, flags):
    # a freed var whose buffer another live value still uses is not free memory: reshape's view
    # of x (fed) and an in-place output sharing its input's buffer stay intact
    flags(executor_poison_freed=True)
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (2, 3), need_check_feed=True)
    var(blk, "v", (6,))
    var(blk, "w", (6,))
    var(blk, "y", (6,))
    op(blk, "reshape", ["x"], ["v"], shape=[6])
    op(blk, "exp", ["v"], ["w"])
    op(blk, "reshape", ["w"], ["y"], shape=[6])
    core = _core(prog, ["x"], ["y"])
    xs = np.arange(6.0).reshape(2, 3)
    keep = xs.copy()
    for seed in range(5):
        (y,) = core.run([xs], parallel=True, hook=Recorder(seed=seed))
        np.testing.assert_array_equal(xs, keep)       # the caller's array: never poisoned
        np.testing.assert_array_equal(y, np.exp(keep.ravel()))
