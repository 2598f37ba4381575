"""One allocator per (place, stream) for the emulated device streams (Paddle's
RecordStream GC and CUDAAllocatorMap): a block freed on the host as soon as its last user is
launched (FastGC) goes back to the pool of its own stream, and is handed out again only to ops
launched on that stream afterwards, which run after the queued use. Interleavings are driven
with gates (threading.Event) and every run repeats with seeded random delays before kernels."""
import threading

import numpy as np
import pytest
from executor_helpers import Recorder, default_executor_flags, no_passes, op, var, writer  # noqa: F401

import runtime as paddle
from runtime import static

pytestmark = pytest.mark.usefixtures("default_executor_flags")

N = 64


def _core(prog, feed, fetch):
    return static.Executor().core_for(prog, feed, fetch, scope=static.Scope())


def _two_streams():
    """A: Y = exp(X) on s1; B: M = tanh(Y) on s1 (Y's last user); C: N = sin(X) on s2, which
    needs nothing from s1; D: K = cos(M) on s1."""
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "X", (N,), need_check_feed=True)
    for name in "YMNK":
        var(blk, name, (N,))
    op(blk, "exp", ["X"], ["Y"], execution_stream="s1")
    op(blk, "tanh", ["Y"], ["M"], execution_stream="s1")
    op(blk, "sin", ["X"], ["N"], execution_stream="s2")
    op(blk, "cos", ["M"], ["K"], execution_stream="s1")
    return prog


XS = np.linspace(-1, 1, N)


def _run_with_b_held(core, seed):
    """Run with C (on s2) held until A (on s1) ended, and B held until C ended: so C computes
    after Y was written and before B read it. (fetches, recorder, the blocks of Y, N and K as
    the kernels wrote them, whether B had started when C ended)."""
    plan = core.plan
    a, b, c, d = (writer(plan, n) for n in "YMNK")
    y, n_, k = (plan.var_ids[n] for n in "YNK")
    gate, a_ended, c_ended = threading.Event(), threading.Event(), threading.Event()
    rec = Recorder(seed=seed, gates={b: gate, c: a_ended})
    blocks, b_started = {}, []

    def hook(event, index, slots):
        rec(event, index, slots)
        if event == "end" and index in (a, c, d):
            blocks[index] = slots[{a: y, c: n_, d: k}[index]]
            if index == a:
                a_ended.set()
            if index == c:
                b_started.append(b in rec.entries("start"))
                c_ended.set()
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("fetches", core.run([XS], parallel=True, hook=hook)))
    t.start()
    assert c_ended.wait(5), "C on s2 never ran while B was held"
    gate.set()
    t.join(5)
    return out["fetches"], rec, (blocks[a], blocks[c], blocks[d]), b_started[0]


def test_a_buffer_freed_while_stream_1_is_busy_is_not_handed_to_stream_2(no_passes):
    core = _core(_two_streams(), ["X"], ["M", "N", "K"])
    plan = core.plan
    a, b, c, d = (writer(plan, n) for n in "YMNK")
    assert a < b < c < d and set(plan.pooled) == {a, b, c, d}   # launched in this order, one thread
    want = core.run([XS], parallel=False)
    np.testing.assert_array_equal(want[0], np.tanh(np.exp(XS)))
    y = plan.var_ids["Y"]
    for seed in range(10):
        got, rec, (y_block, n_block, k_block), b_started = _run_with_b_held(core, seed)
        # Y went back to s1's pool when B, its last user, was launched: s1 was still busy (B held)
        assert rec.position("pool", y) < rec.position("start", b) and not b_started
        assert n_block is not y_block     # C on s2, launched after that, got a block of its own
        assert k_block is y_block         # D, launched on s1 after B, got Y's block: reuse
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    pools = core.allocators
    assert (pools["s1"].allocated, pools["s2"].allocated) == (2, 1)   # the first run's; then only reuse
    assert pools["s1"].reused == 3 * 10 - 2 and pools["s2"].reused == 10 - 1


def test_one_pool_for_both_streams_would_hand_the_buffer_to_stream_2(no_passes):
    # the negative control: the same schedule with one allocator shared by s1 and s2 gives C
    # Y's block, C overwrites it while B is held, and B reads sin(X) instead of exp(X)
    core = _core(_two_streams(), ["X"], ["M", "N", "K"])
    want = core.run([XS], parallel=False)
    core.run([XS], parallel=True)
    pools = core.allocators
    pools["s2"] = pools["s1"]
    got, _, (y_block, n_block, _), _ = _run_with_b_held(core, 0)
    assert n_block is y_block
    np.testing.assert_array_equal(got[1], want[1])                       # C itself is right ...
    np.testing.assert_array_equal(got[0], np.tanh(np.sin(XS)))           # ... but B read C's values
    assert not np.array_equal(got[0], want[0])


@pytest.mark.parametrize("poison", [False, True], ids=["plain", "poisoned"])
def test_a_chain_on_one_stream_runs_in_two_blocks_and_equals_the_sequential_run(no_passes, poison):
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    prev = "x"
    for i in range(8):
        var(blk, f"t{i}", (N,))
        op(blk, ("exp", "tanh", "sin", "cos")[i % 4], [prev], [f"t{i}"], execution_stream="s1")
        prev = f"t{i}"
    paddle.set_flags({"FLAGS_executor_poison_freed": poison})
    try:
        core = _core(prog, ["x"], [prev])
    finally:
        paddle.set_flags({"FLAGS_executor_poison_freed": False})
    assert len(core.plan.pooled) == 8
    (want,) = core.run([XS], parallel=False)
    for seed in range(10):
        (got,) = core.run([XS], parallel=True, hook=Recorder(seed=seed))
        np.testing.assert_array_equal(got, want)
    pool = core.allocators["s1"]
    # t_i is freed when t_(i+1) is launched, so t_(i+2) gets its block: two blocks serve the chain
    assert pool.allocated == 2 and pool.reused == 8 * 10 - 2


def test_which_outputs_a_stream_pool_provides(no_passes):
    # only outputs no view can outlive, of a static float shape, made by an out= capable device op
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (N,), need_check_feed=True)
    var(blk, "y", (-1,), need_check_feed=True)
    for name in ("a", "v", "w", "b", "h"):
        var(blk, name, (N,))
    var(blk, "q", (-1,))
    op(blk, "exp", ["x"], ["a"], execution_stream="s1")          # read by reshape: a view may outlive it
    op(blk, "reshape", ["a"], ["v"], shape=[N], execution_stream="s1")   # not an elementwise out= op
    op(blk, "tanh", ["v"], ["w"], execution_stream="s1")         # pooled
    op(blk, "sin", ["w"], ["b"], execution_stream="s1")          # pooled: read only by its d2h copy
    op(blk, "exp", ["x"], ["h"])                                 # a host kernel
    op(blk, "exp", ["y"], ["q"], execution_stream="s1")          # no static shape
    core = _core(prog, ["x", "y"], ["b", "h", "q"])
    plan = core.plan
    assert plan.pooled == {writer(plan, "w"): "w", writer(plan, "b"): "b"}
    feeds = [XS, np.arange(3.0)]
    want = core.run(feeds, parallel=False)
    for seed in range(5):
        for g, w in zip(core.run(feeds, parallel=True, hook=Recorder(seed=seed)), want):
            np.testing.assert_array_equal(g, w)
