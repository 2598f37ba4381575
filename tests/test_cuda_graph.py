"""CUDA graphs of static runs (FLAGS_cuda_graph): each test runs the same program with graphs and
with plain device runs and compares. `graphs` tests run on the CuPy stand-in (tests/fake_cupy.py),
whose capture runs nothing that stays (the arrays a capture made are poisoned at its end) and whose
graph launch re-runs the captured calls, and also on a real GPU where there is one (`any_gpu`);
`stand_in` tests read the stand-in's trace of streams, captures and launches.

The programs are hand-built with the static passes off (`no_passes`), so each test's plan has
exactly the ops it wrote."""
import threading

import numpy as np
import pytest
from executor_helpers import no_passes, op, var  # noqa: F401 - fixtures

import runtime as paddle
from runtime import static
from runtime.executor import Scope, cuda_graph, mode_trial
from runtime.ops import registry
from sot_helpers import assert_same_result, jit_of


def _flags_kept(xp):
    before = paddle.get_flags(["FLAGS_cuda_graph", "FLAGS_cuda_graph_warmup"])
    try:
        yield xp
    finally:
        paddle.set_flags(before)


@pytest.fixture
def graphs(any_gpu, no_passes):
    """The stand-in, or a real GPU, and the graph flags back to their values after the test."""
    yield from _flags_kept(any_gpu)


@pytest.fixture
def stand_in(fake_gpu, no_passes):
    """The stand-in (its trace), and the graph flags back to their values after the test."""
    yield from _flags_kept(fake_gpu)


def _assert_same(xp, got, want):
    """On the stand-in a replay re-runs NumPy's kernels, so it has the plain run's bits; on CUDA the
    comparison has the tolerance of the other GPU tests."""
    if xp.__name__ == "fake_cupy":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _forward_program():
    """y = tanh(x @ w + b), x fed with any batch size; w, b persistable."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (-1, 4), "float32", need_check_feed=True)
    var(blk, "w", (4, 3), "float32", persistable=True)
    var(blk, "b", (3,), "float32", persistable=True)
    for name in ("h", "z", "y"):
        var(blk, name, (-1, 3), "float32")
    op(blk, "matmul", ["x", "w"], ["h"])
    op(blk, "add", ["h", "b"], ["z"])
    op(blk, "tanh", ["z"], ["y"])
    return prog


def _scope(xp, seed=0):
    rng = np.random.default_rng(seed)
    scope = Scope()
    scope.var("w").value = xp.asarray(rng.normal(size=(4, 3)).astype(np.float32))
    scope.var("b").value = xp.asarray(rng.normal(size=(3,)).astype(np.float32))
    return scope


def _x(batch, seed):
    return np.random.default_rng(seed).normal(size=(batch, 4)).astype(np.float32)


def _run(exe, prog, scope, x, mode, fetch=("y",)):
    """One run under FLAGS_cuda_graph=`mode` (each mode has its own cached core), and that core."""
    paddle.set_flags({"FLAGS_cuda_graph": mode})
    out = exe.run(prog, feed={"x": x}, fetch_list=list(fetch), scope=scope)
    return out, exe.core_for(prog, {"x": x}, list(fetch), scope)


def _numpy_forward(xp, scope, x):
    w, b = scope.find_var("w").value.get(), scope.find_var("b").value.get()
    return np.tanh(x @ w + b)


def _events(log, kind):
    return [e for e in log if e[0] == kind]


def test_replays_give_the_plain_runs_values_for_new_feed_values(graphs):
    prog, scope, exe = _forward_program(), _scope(graphs), static.Executor(paddle.CUDAPlace(0))
    for seed in range(3):
        x = _x(2, seed)
        plain, _ = _run(exe, prog, scope, x, "off")
        got, core = _run(exe, prog, scope, x, "on")
        assert isinstance(got[0], np.ndarray)
        _assert_same(graphs, got[0], plain[0])
        np.testing.assert_allclose(plain[0], _numpy_forward(graphs, scope, x), rtol=1e-5, atol=1e-6)
    status = core.cuda_graph_status()
    assert (status["captures"], status["replays"], status["plain_runs"]) == (1, 3, 0)
    assert status["signatures"] == {"[2, 4] <f4": "graph"} and status["reason"] is None


def test_the_run_that_captures_computes_by_launching_the_graph(stand_in):
    # the capture runs nothing (its arrays are poisoned at its end): the result comes from the launch
    prog, scope, exe = _forward_program(), _scope(stand_in), static.Executor(paddle.CUDAPlace(0))
    x = _x(3, 0)
    got, _ = _run(exe, prog, scope, x, "on")
    kinds = [e[0] for e in stand_in.trace]
    assert kinds.index("end_capture") < kinds.index("graph_launch")
    np.testing.assert_array_equal(got[0], _run(exe, prog, scope, x, "off")[0][0])


def test_a_device_feed_is_copied_into_the_static_buffer_on_the_device(stand_in):
    prog, scope, exe = _forward_program(), _scope(stand_in), static.Executor(paddle.CUDAPlace(0))
    paddle.set_flags({"FLAGS_cuda_graph": "on"})
    core = exe.core_for(prog, ["x"], ["y"], scope)
    for seed in range(2):
        x = _x(2, seed)
        on_device = stand_in.asarray(x)
        stand_in.trace.clear()
        got = core.run([on_device])
        assert not _events(stand_in.trace, "h2d") and ("setitem",) in {e[2:] for e in _events(stand_in.trace, "launch")}
        np.testing.assert_allclose(got[0].get(), _numpy_forward(stand_in, scope, x), rtol=1e-5, atol=1e-6)
    assert core.cuda_graph_status()["replays"] == 2


def test_a_new_feed_shape_captures_its_own_graph_and_each_shape_replays_its_own(graphs):
    prog, scope, exe = _forward_program(), _scope(graphs), static.Executor(paddle.CUDAPlace(0))
    for batch, seed in ((2, 0), (5, 1), (2, 2), (5, 3)):
        x = _x(batch, seed)
        got, core = _run(exe, prog, scope, x, "on")
        assert got[0].shape == (batch, 3)
        _assert_same(graphs, got[0], _run(exe, prog, scope, x, "off")[0][0])
    status = core.cuda_graph_status()
    assert status["signatures"] == {"[2, 4] <f4": "graph", "[5, 4] <f4": "graph"}
    assert (status["captures"], status["replays"]) == (2, 4)


def test_a_0d_host_feed_is_copied_into_a_0d_buffer(graphs):
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "s", (), "float32", need_check_feed=True)
    var(blk, "y", (), "float32")
    op(blk, "tanh", ["s"], ["y"])
    exe, scope = static.Executor(paddle.CUDAPlace(0)), Scope()
    for value in (0.5, -2.0):
        paddle.set_flags({"FLAGS_cuda_graph": "on"})
        got = exe.run(prog, feed={"s": np.float32(value)}, fetch_list=["y"], scope=scope)
        core = exe.core_for(prog, ["s"], ["y"], scope)
        paddle.set_flags({"FLAGS_cuda_graph": "off"})
        want = exe.run(prog, feed={"s": np.float32(value)}, fetch_list=["y"], scope=scope)
        assert got[0].shape == ()
        _assert_same(graphs, got[0], want[0])
    assert core.cuda_graph_status()["signatures"] == {"[] <f4": "graph"}


def test_graphs_are_kept_for_the_most_recent_signatures_only(graphs, monkeypatch):
    monkeypatch.setattr(cuda_graph, "GRAPH_CAPACITY", 2)
    prog, scope, exe = _forward_program(), _scope(graphs), static.Executor(paddle.CUDAPlace(0))
    for batch in (1, 2, 3, 1):
        x = _x(batch, batch)
        got, core = _run(exe, prog, scope, x, "on")
        _assert_same(graphs, got[0], _run(exe, prog, scope, x, "off")[0][0])
    status = core.cuda_graph_status()
    assert set(status["signatures"]) == {"[3, 4] <f4", "[1, 4] <f4"}
    assert status["captures"] == 4   # batch 1 was dropped for batch 3, and captured again


def test_a_random_program_is_never_captured_and_says_why(graphs):
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (2, 4), "float32", need_check_feed=True)
    var(blk, "r", (2, 4), "float32")
    var(blk, "y", (2, 4), "float32")
    op(blk, "uniform", [], ["r"], shape=[2, 4], dtype=np.dtype("float32"))
    op(blk, "add", ["x", "r"], ["y"])
    exe, scope = static.Executor(paddle.CUDAPlace(0)), Scope()
    x = _x(2, 0)
    for _ in range(2):
        got, core = _run(exe, prog, scope, x, "on")
        assert got[0].shape == (2, 4)
    status = core.cuda_graph_status()
    assert "'uniform'" in status["reason"] and "random" in status["reason"]
    assert (status["captures"], status["failed_captures"], status["plain_runs"]) == (0, 0, 2)


def test_a_persistable_stored_anew_each_run_is_never_captured_and_says_why(graphs):
    prog = _forward_program()
    blk = prog.global_block()
    var(blk, "count", (3,), "float32", persistable=True)
    op(blk, "scale", ["b"], ["count"], scale=2.0)
    exe, scope = static.Executor(paddle.CUDAPlace(0)), _scope(graphs)
    scope.var("count").value = graphs.zeros((3,), np.float32)
    x = _x(2, 0)
    got, core = _run(exe, prog, scope, x, "on")
    assert "'count'" in core.cuda_graph_status()["reason"]
    np.testing.assert_allclose(scope.find_var("count").value.get(), 2 * scope.find_var("b").value.get())
    np.testing.assert_allclose(got[0], _numpy_forward(graphs, scope, x), rtol=1e-5, atol=1e-6)
    assert (core.cuda_graph_status()["captures"], core.cuda_graph_status()["failed_captures"]) == (0, 0)


def _register_item_scale(monkeypatch):
    """A test-only op whose kernel reads a [1] input on the host (`.item()`): a device-to-host wait."""
    def kernel(xp, x, s):
        return x * s.item()
    opdef = registry.OpDef(name="item_scale", kernel=kernel, meta=lambda x, s: x, inputs=("x", "s"))
    monkeypatch.setitem(registry._REGISTRY, opdef.name, opdef)


def test_a_host_sync_in_a_kernel_leaves_that_signature_on_plain_runs_for_good_with_the_reason(graphs, monkeypatch):
    _register_item_scale(monkeypatch)
    prog = _forward_program()
    blk = prog.global_block()
    var(blk, "s", (1,), "float32", persistable=True)
    var(blk, "ys", (-1, 3), "float32")
    op(blk, "item_scale", ["y", "s"], ["ys"])
    exe = static.Executor(paddle.CUDAPlace(0))
    graph_scope, plain_scope = _scope(graphs), _scope(graphs)
    for sc in (graph_scope, plain_scope):
        sc.var("s").value = graphs.asarray(np.full(1, 0.5, np.float32))
    for seed in range(3):
        x = _x(2, seed)
        got, core = _run(exe, prog, graph_scope, x, "on", fetch=("ys",))
        want, _ = _run(exe, prog, plain_scope, x, "off", fetch=("ys",))
        _assert_same(graphs, got[0], want[0])
    status = core.cuda_graph_status()
    why = status["signatures"]["[2, 4] <f4"]
    assert why.startswith("plain: capture failed: CUDARuntimeError") and "cudaErrorStreamCaptureUnsupported" in why
    assert (status["captures"], status["failed_captures"], status["plain_runs"]) == (0, 1, 3)   # never tried again


@pytest.mark.parametrize("opt", ["sgd", "adam", "lamb"])
def test_a_static_optimizer_step_is_captured_and_its_replays_update_as_plain_runs_do(graphs, opt):
    # the optimizer kernels read a device learning rate and beta powers as device scalars, never on the host
    prog = _forward_program()
    blk = prog.global_block()
    var(blk, "g", (4, 3), "float32")
    op(blk, "scale", ["w"], ["g"], scale=0.5)
    names = {"sgd": ["w", "g", "lr"], "adam": ["w", "g", "lr", "m1", "m2", "b1p", "b2p"],
             "lamb": ["w", "g", "lr", "m1", "m2", "b1p", "b2p"]}[opt]
    outs = {"sgd": ["w"], "adam": ["w", "m1", "m2", "b1p", "b2p"], "lamb": ["w", "m1", "m2", "b1p", "b2p"]}[opt]
    state = {"lr": np.full(1, 0.1, np.float32), "m1": np.zeros((4, 3), np.float32), "m2": np.zeros((4, 3), np.float32),
             "b1p": np.full(1, 0.9, np.float32), "b2p": np.full(1, 0.999, np.float32)}
    for n in names[2:]:
        var(blk, n, state[n].shape, "float32", persistable=True)
    attrs = {"lamb": {"weight_decay": 0.01}}.get(opt, {})
    op(blk, opt, names, outs, **attrs)
    exe, cpu_exe = static.Executor(paddle.CUDAPlace(0)), static.Executor(paddle.CPUPlace())
    graph_scope, plain_scope, cpu_scope = _scope(graphs), _scope(graphs), _scope(np)
    for sc, xp in ((graph_scope, graphs), (plain_scope, graphs), (cpu_scope, np)):
        for n in names[2:]:
            sc.var(n).value = xp.asarray(state[n]).copy()
    for seed in range(3):
        x = _x(2, seed)
        got, core = _run(exe, prog, graph_scope, x, "on")
        want, _ = _run(exe, prog, plain_scope, x, "off")
        on_cpu, _ = _run(cpu_exe, prog, cpu_scope, x, "off")
        _assert_same(graphs, got[0], want[0])
        _assert_same(graphs, got[0], on_cpu[0])   # device scalars round as the host's Python floats do
        for n in ("w", *names[3:]):
            _assert_same(graphs, graph_scope.find_var(n).value.get(), plain_scope.find_var(n).value.get())
            _assert_same(graphs, graph_scope.find_var(n).value.get(), cpu_scope.find_var(n).value)
    status = core.cuda_graph_status()
    assert (status["captures"], status["failed_captures"], status["replays"]) == (1, 0, 3), status


def _register_scaled_subtract(monkeypatch):
    """A test-only in-place op: param -= 0.5 * delta, on the device, with no host sync."""
    def kernel(xp, param, delta):
        xp.subtract(param, delta * 0.5, out=param)
        return param
    opdef = registry.OpDef(name="scaled_subtract_", kernel=kernel, meta=lambda param, delta: param,
                           inputs=("param", "delta"), inplace=True, side_effect=True)
    monkeypatch.setitem(registry._REGISTRY, opdef.name, opdef)


def _update_program():
    """y = tanh(x @ w + b); then b -= 0.5 * (y summed over the batch), in place."""
    prog = _forward_program()
    blk = prog.global_block()
    var(blk, "d", (3,), "float32")
    op(blk, "sum", ["y"], ["d"], axis=0)
    op(blk, "scaled_subtract_", ["b", "d"], ["b"])
    return prog


def test_in_place_updates_of_the_run_that_captures_apply_once_and_replays_see_them(graphs, monkeypatch):
    _register_scaled_subtract(monkeypatch)
    prog, exe = _update_program(), static.Executor(paddle.CUDAPlace(0))
    graph_scope, plain_scope = _scope(graphs), _scope(graphs)
    for seed in range(3):
        x = _x(2, seed)
        got, core = _run(exe, prog, graph_scope, x, "on", fetch=("y", "b"))
        want, _ = _run(exe, prog, plain_scope, x, "off", fetch=("y", "b"))
        for g, w in zip(got, want):
            _assert_same(graphs, g, w)
        _assert_same(graphs, graph_scope.find_var("b").value.get(), plain_scope.find_var("b").value.get())
    status = core.cuda_graph_status()
    assert (status["captures"], status["recaptures"], status["replays"]) == (1, 0, 3)


def test_a_parameter_updated_in_place_is_read_by_the_next_replay(graphs):
    prog, scope, exe = _forward_program(), _scope(graphs), static.Executor(paddle.CUDAPlace(0))
    x = _x(2, 0)
    _run(exe, prog, scope, x, "on")
    w = scope.find_var("w").value
    w[...] = graphs.asarray(np.full((4, 3), 0.25, np.float32))
    got, core = _run(exe, prog, scope, x, "on")
    assert scope.find_var("w").value is w
    np.testing.assert_allclose(got[0], _numpy_forward(graphs, scope, x), rtol=1e-5, atol=1e-6)
    assert (core.cuda_graph_status()["captures"], core.cuda_graph_status()["replays"]) == (1, 2)


def test_a_rebound_parameter_captures_again(graphs):
    prog, scope, exe = _forward_program(), _scope(graphs), static.Executor(paddle.CUDAPlace(0))
    x = _x(2, 0)
    first, _ = _run(exe, prog, scope, x, "on")
    scope.find_var("w").value = graphs.asarray(np.full((4, 3), 0.25, np.float32))
    got, core = _run(exe, prog, scope, x, "on")
    np.testing.assert_allclose(got[0], _numpy_forward(graphs, scope, x), rtol=1e-5, atol=1e-6)
    assert not np.array_equal(got[0], first[0])
    status = core.cuda_graph_status()
    assert (status["captures"], status["recaptures"], status["replays"]) == (2, 1, 2)


def test_fetched_arrays_are_not_overwritten_by_the_next_replay(graphs):
    prog, scope, exe = _forward_program(), _scope(graphs), static.Executor(paddle.CUDAPlace(0))
    paddle.set_flags({"FLAGS_cuda_graph": "on"})
    core = exe.core_for(prog, ["x"], ["y"], scope)
    first = core.run([_x(2, 0)])[0]          # a device array, as a device core fetches
    kept = first.get()
    second = core.run([_x(2, 1)])[0]
    np.testing.assert_array_equal(first.get(), kept)
    np.testing.assert_allclose(second.get(), _numpy_forward(graphs, scope, _x(2, 1)), rtol=1e-5, atol=1e-6)
    assert core.cuda_graph_status()["replays"] == 2


def test_a_run_from_another_thread_waits_for_the_replay_in_progress(stand_in, monkeypatch):
    # the other thread's run starts while this one is inside its launch; it must not copy its feeds
    # into the buffers the launch is reading (it gets in only when the first run has its result)
    prog, scope, exe = _forward_program(), _scope(stand_in), static.Executor(paddle.CUDAPlace(0))
    paddle.set_flags({"FLAGS_cuda_graph": "on"})
    core = exe.core_for(prog, ["x"], ["y"], scope)
    core.run([_x(2, 0)])                      # captured
    copied, results = threading.Event(), {}
    copy_in = cuda_graph.CudaGraphRunner._copy_in

    def copy_in_and_tell(self, buffers, feeds):
        copy_in(self, buffers, feeds)
        if threading.current_thread() is not threading.main_thread():
            copied.set()
    monkeypatch.setattr(cuda_graph.CudaGraphRunner, "_copy_in", copy_in_and_tell)
    launch = stand_in.cuda.Graph.launch
    other = threading.Thread(target=lambda: results.setdefault("other", core.run([_x(2, 2)])[0].get()))

    def launch_with_a_run_beside(graph, stream=None):
        if not other.is_alive() and "other" not in results:
            other.start()
            copied.wait(0.5)                  # without the lock the other run copies its feeds now
        launch(graph, stream)
    monkeypatch.setattr(stand_in.cuda.Graph, "launch", launch_with_a_run_beside)
    mine = core.run([_x(2, 1)])[0].get()
    other.join()
    np.testing.assert_allclose(mine, _numpy_forward(stand_in, scope, _x(2, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results["other"], _numpy_forward(stand_in, scope, _x(2, 2)), rtol=1e-5, atol=1e-6)


def test_the_capture_allocates_from_a_private_pool(stand_in, monkeypatch):
    allocations = []

    class RecordingPool(stand_in.cuda.MemoryPool):
        def malloc(self, size):
            allocations.append((self, stand_in.cuda.get_current_stream().is_capturing()))
            return super().malloc(size)
    monkeypatch.setattr(stand_in.cuda, "MemoryPool", RecordingPool)
    prog, scope, exe = _forward_program(), _scope(stand_in), static.Executor(paddle.CUDAPlace(0))
    _run(exe, prog, scope, _x(2, 0), "on")
    pools = {id(pool) for pool, _ in allocations}
    assert len(pools) == 1 and pools != {id(stand_in.get_default_memory_pool())}
    assert any(capturing for _, capturing in allocations)


class _LogClock:
    """A clock for the 'auto' trial: each run lasts `graph` if it launched a graph, else `plain`."""

    def __init__(self, log, graph, plain):
        self.log, self.graph, self.plain = log, graph, plain
        self.seen, self.now = 0, 0.0

    def __call__(self):
        new, self.seen = self.log[self.seen:], len(self.log)
        self.now += self.graph if any(e[0] == "graph_launch" for e in new) else self.plain
        return self.now


@pytest.mark.parametrize("graph_cost, keeps", [(1.0, "graph"), (10.0, "plain")])
def test_auto_times_replays_against_plain_runs_and_keeps_the_faster(stand_in, monkeypatch, graph_cost, keeps):
    monkeypatch.setattr(mode_trial, "_clock", _LogClock(stand_in.trace, graph_cost, 5.0))
    paddle.set_flags({"FLAGS_cuda_graph_warmup": 2})
    prog, scope, exe = _forward_program(), _scope(stand_in), static.Executor(paddle.CUDAPlace(0))
    trial = 2 * mode_trial.RUNS_EACH
    for i in range(2 + trial + 2):
        x = _x(2, i)
        stand_in.trace.clear()
        got, core = _run(exe, prog, scope, x, "auto")
        np.testing.assert_array_equal(got[0], _run(exe, prog, scope, x, "off")[0][0])
        status = core.cuda_graph_status()["signatures"]["[2, 4] <f4"]
        if i < 2:
            assert status == f"warming up {i + 1}/2" and not _events(stand_in.trace, "begin_capture")
        elif i < 2 + trial - 1:
            assert status == "timing"
        # a timed run lasts until its device work is done; other runs do not wait for it
        assert (("sync", "null.synchronize") in stand_in.trace) == (2 <= i < 2 + trial)
    launched = bool(_events(stand_in.trace, "graph_launch"))
    if keeps == "graph":
        assert status == "graph" and launched
    else:
        assert status == "plain: plain runs measured faster than graph replays" and not launched


def test_a_bad_flag_value_fails_the_build_naming_the_flag(graphs):
    paddle.set_flags({"FLAGS_cuda_graph": "yes"})
    with pytest.raises(ValueError, match="FLAGS_cuda_graph"):
        static.Executor(paddle.CUDAPlace(0)).run(_forward_program(), feed={"x": _x(2, 0)}, fetch_list=["y"],
                                                 scope=_scope(graphs))


def test_off_and_cpu_cores_say_why_they_have_no_graphs(graphs):
    prog, scope = _forward_program(), _scope(graphs)
    _, core = _run(static.Executor(paddle.CUDAPlace(0)), prog, scope, _x(2, 0), "off")
    assert core.cuda_graph_status() == {"mode": "off", "reason": "FLAGS_cuda_graph was 'off' when the core was "
                                        "built", "signatures": {}}
    paddle.set_flags({"FLAGS_cuda_graph": "on"})
    cpu_scope = Scope()
    for name in ("w", "b"):
        cpu_scope.var(name).value = scope.find_var(name).value.get()
    cpu = static.Executor(paddle.CPUPlace()).core_for(prog, ["x"], ["y"], cpu_scope)
    assert cpu.cuda_graph_status()["reason"] == "the core does not run on a GPU"


def test_to_static_on_the_gpu_replays_a_graph_and_matches_eager(fake_gpu, monkeypatch):
    # w requires grad, so the forward fetches what the gradient needs, the constant of `* 2.0`
    # included: the core does not fold a fetched constant but makes it from host data each run,
    # which a capture refuses; the graph makes it from a device copy
    gpu = paddle.CUDAPlace(0)

    def on_gpu(*shape, seed):
        return paddle.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype("float32"), place=gpu)
    w = on_gpu(4, 3, seed=9)
    w.stop_gradient = False
    monkeypatch.setattr(cuda_graph, "_live", cuda_graph.weakref.WeakSet())   # this test's runners only

    def f(x):
        return paddle.tanh(paddle.matmul(x, w)) * 2.0
    before = paddle.get_flags(["FLAGS_cuda_graph"])
    paddle.set_flags({"FLAGS_cuda_graph": "on"})
    try:
        jit = jit_of(f)
        for seed in range(3):
            x = on_gpu(2, 4, seed=seed)
            assert_same_result(jit(x), f(x))
        with paddle.no_grad():
            w.set_value(paddle.full([4, 3], 0.5).cuda())
        x = on_gpu(2, 4, seed=5)
        assert_same_result(jit(x), f(x))
    finally:
        paddle.set_flags(before)
    assert len(_events(fake_gpu.trace, "begin_capture")) == 1
    assert len(_events(fake_gpu.trace, "graph_launch")) == 4
    assert cuda_graph.summary()["replays"] == 4


def test_to_static_conv_batch_norm_max_pool_on_the_gpu_replays_a_graph_and_matches_eager(fake_gpu, monkeypatch):
    # the fused epilogue pools first only after checking the batch norm's scale on the host, which a
    # capture refuses: under capture it keeps the steps before the pooling (the same bits)
    monkeypatch.setattr(cuda_graph, "_live", cuda_graph.weakref.WeakSet())
    gpu = paddle.CUDAPlace(0)
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3, padding=1), paddle.nn.BatchNorm2D(4), paddle.nn.ReLU(),
                                 paddle.nn.MaxPool2D(2))
    model.to(gpu)
    model.eval()

    def f(x):
        return model(x)
    before = paddle.get_flags(["FLAGS_cuda_graph"])
    paddle.set_flags({"FLAGS_cuda_graph": "on"})
    try:
        jit = jit_of(f)
        with paddle.no_grad():
            for seed in range(3):
                x = paddle.to_tensor(np.random.default_rng(seed).standard_normal((2, 3, 6, 6)).astype("float32"),
                                     place=gpu)
                assert_same_result(jit(x), f(x))
    finally:
        paddle.set_flags(before)
    got = cuda_graph.summary()
    assert (got["captures"], got["replays"], got["plain_because"]) == (1, 3, [])


def test_summary_adds_up_the_live_runners_and_lists_why_runs_were_plain(graphs, monkeypatch):
    monkeypatch.setattr(cuda_graph, "_live", cuda_graph.weakref.WeakSet())
    prog, scope, exe = _forward_program(), _scope(graphs), static.Executor(paddle.CUDAPlace(0))
    for seed in range(2):
        _run(exe, prog, scope, _x(2, seed), "on")
    random_prog = static.Program()
    blk = random_prog.global_block()
    var(blk, "x", (2, 4), "float32", need_check_feed=True)
    var(blk, "y", (2, 4), "float32")
    op(blk, "dropout", ["x"], ["y"], p=0.5)
    _run(exe, random_prog, Scope(), _x(2, 0), "on")
    got = cuda_graph.summary()
    assert (got["captures"], got["replays"], got["plain_runs"]) == (1, 2, 1)
    assert len(got["plain_because"]) == 1 and "'dropout' is random" in got["plain_because"][0]


def test_to_static_backward_on_the_gpu_replays_a_graph_and_matches_eager_gradients(fake_gpu):
    # the ReLU gradient selects against a 0-d zero made on the device (a host copy would fail the capture)
    gpu = paddle.CUDAPlace(0)
    w = paddle.to_tensor(np.random.default_rng(9).standard_normal((4, 3)).astype("float32"), place=gpu)
    w.stop_gradient = False

    def f(x):
        return paddle.nn.functional.relu(paddle.matmul(x, w)).sum()

    def grad_of(fn, x):
        fn(x).backward()
        g = w.grad.numpy()
        w.clear_gradient()
        return g
    before = paddle.get_flags(["FLAGS_cuda_graph"])
    paddle.set_flags({"FLAGS_cuda_graph": "on"})
    try:
        jit = jit_of(f)
        for seed in range(3):
            x = paddle.to_tensor(np.random.default_rng(seed).standard_normal((2, 4)).astype("float32"), place=gpu)
            np.testing.assert_array_equal(grad_of(jit, x), grad_of(f, x))
    finally:
        paddle.set_flags(before)
    assert len(_events(fake_gpu.trace, "begin_capture")) == 2    # the forward and the gradient
    assert len(_events(fake_gpu.trace, "graph_launch")) == 6
