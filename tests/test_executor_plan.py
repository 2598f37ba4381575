"""Dependency analysis of the InterpreterCore's plan, asserted edge by edge on hand-built programs."""
import numpy as np
import pytest
from executor_helpers import host_placement, no_passes, op, var, writer  # noqa: F401 - fixtures

import runtime as paddle
from runtime import static
from runtime.executor.dependency import DependencyBuilder


def _plan(prog, feed, fetch):
    return static.Executor().plan_for(prog, feed, fetch, scope=static.Scope())


def _kernel_edges(plan):
    """Edges between the program's own ops, as (output name of src, output name of dst)."""
    out = {ins.index: plan.var_names[ins.outputs[0]] for ins in plan.instructions if ins.kind == "kernel"}
    return {(out[i], out[j]) for i, j in plan.edges() if i in out and j in out}


# ---------------------------------------------------------------- the builder on its own
def test_builder_three_access_cases_and_no_edge_for_shared_reads():
    # op0 writes 0; op1 reads 0 (RAW); op2 reads 0 (shares a read with op1: no edge 1-2);
    # op3 writes 0 (WAR from 1 and 2, WAW from 0, the latter shrunk away)
    deps = DependencyBuilder().build(reads=[set(), {0}, {0}, set()], writes=[{0}, {1}, {2}, {0}])
    assert deps.downstream == (frozenset({1, 2}), frozenset({3}), frozenset({3}), frozenset())
    assert deps.dep_count == (0, 1, 1, 2)


def test_builder_happens_before_is_the_transitive_closure():
    deps = DependencyBuilder().build(reads=[set(), {0}, {1}], writes=[{0}, {1}, {2}])
    reach = deps.reach
    assert reach[0] >> 2 & 1 and not reach[2] >> 0 & 1 and not reach[1] >> 0 & 1


def test_builder_refuses_to_build_twice():
    b = DependencyBuilder()
    b.build([set()], [{0}])
    with pytest.raises(RuntimeError, match="already been built"):
        b.build([set()], [{0}])


def test_builder_random_chain_skips_implied_edges():
    # 0 -> 1 already by data; 2 is independent: the chain adds only 1 -> 2
    deps = DependencyBuilder().build(reads=[set(), {0}, set()], writes=[{0}, {1}, {2}],
                                     random=[True, True, True])
    assert deps.extra_edges == ((1, 2),)
    assert deps.downstream[1] == frozenset({2}) and deps.reach[0] >> 2 & 1


def test_builder_sequential_run_chains_every_op():
    deps = DependencyBuilder().build(reads=[set()] * 3, writes=[{0}, {1}, {2}], sequential_run=True)
    assert deps.downstream == (frozenset({1}), frozenset({2}), frozenset())


# ---------------------------------------------------------------- plans of hand-built programs
def test_raw_chain_and_shrink_of_transitive_edge(no_passes):
    # a -> b -> c where c also reads a's output: downstream[a] == {b}
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", need_check_feed=True)
    for n in ("ta", "tb", "tc"):
        var(blk, n)
    op(blk, "exp", ["x"], ["ta"])
    op(blk, "tanh", ["ta"], ["tb"])
    op(blk, "add", ["ta", "tb"], ["tc"])
    plan = _plan(prog, ["x"], ["tc"])
    a, b, c = writer(plan, "ta"), writer(plan, "tb"), writer(plan, "tc")
    assert plan.downstream[a] == {b} and plan.downstream[b] == {c}
    assert plan.dep_count[c] == 1
    assert plan.happens_before(a, c) and not plan.happens_before(c, a)
    assert _kernel_edges(plan) == {("ta", "tb"), ("tb", "tc")}
    xs = np.linspace(-1, 1, 4)
    (out,) = static.Executor().run(prog, feed={"x": xs}, fetch_list=["tc"], scope=static.Scope())
    np.testing.assert_allclose(out, np.exp(xs) + np.tanh(np.exp(xs)))


def test_war_edge_and_values_over_200_runs(host_placement, no_passes):
    # A reads X, then B writes X (assign into X): A sees the old X in every run
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", need_check_feed=True)
    var(blk, "z", need_check_feed=True)
    var(blk, "y")
    op(blk, "scale", ["x"], ["y"], scale=2.0)      # A
    op(blk, "assign", ["z"], ["x"])                # B
    exe, scope = static.Executor(), static.Scope()
    plan = exe.plan_for(prog, ["x", "z"], ["y", "x"], scope=scope)
    a, b = writer(plan, "y"), writer(plan, "x")
    assert b in plan.downstream[a]
    for k in range(200):
        xs, zs = np.full(4, float(k)), np.full(4, -1.0 - k)
        y, x = exe.run(prog, feed={"x": xs, "z": zs}, fetch_list=["y", "x"], scope=scope)
        np.testing.assert_array_equal(y, 2 * xs)
        np.testing.assert_array_equal(x, zs)
    assert xs[0] == 199.0  # the caller's array was not written
    assert exe.stats["builds"] == 1


def test_waw_with_a_reader_between(no_passes):
    # W1 writes X, R reads X, W2 writes X: edges W1 -> R -> W2 (W1 -> W2 shrunk)
    prog = static.Program()
    blk = prog.global_block()
    for n in ("a", "b"):
        var(blk, n, need_check_feed=True)
    var(blk, "X")
    var(blk, "r")
    op(blk, "assign", ["a"], ["X"])       # W1
    op(blk, "scale", ["X"], ["r"], scale=3.0)   # R
    op(blk, "assign", ["b"], ["X"])       # W2
    scope = static.Scope()
    plan = static.Executor().plan_for(prog, ["a", "b"], ["r", "X"], scope=scope)
    w1, r, w2 = writer(plan, "X", 0), writer(plan, "r"), writer(plan, "X", 1)
    kernel_edges = {(i, j) for i, j in plan.edges() if {i, j} <= {w1, r, w2}}
    assert kernel_edges == {(w1, r), (r, w2)}
    assert plan.happens_before(w1, w2)
    av, bv = np.arange(4.0), -np.arange(4.0)
    rv, xv = static.Executor().run(prog, feed={"a": av, "b": bv}, fetch_list=["r", "X"], scope=scope)
    np.testing.assert_array_equal(rv, 3 * av)
    np.testing.assert_array_equal(xv, bv)


def test_random_ops_are_chained_and_seeded_runs_agree(no_passes):
    # sequential: two independent dropouts get an edge in program order; with one
    # seed the compiled sequential run and the dependency-counter scheduler draw the same numbers
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", (50,), need_check_feed=True)
    for n in ("d1", "m1", "d2", "m2"):
        var(blk, n, (50,))
    op(blk, "dropout", ["x"], ["d1", "m1"], p=0.5)
    op(blk, "dropout", ["x"], ["d2", "m2"], p=0.5)
    exe, scope = static.Executor(), static.Scope()
    plan = exe.plan_for(prog, ["x"], ["d1", "d2"], scope=scope)
    first, second = writer(plan, "d1"), writer(plan, "d2")
    assert (first, second) in plan.extra_edges and second in plan.downstream[first]
    core = exe.core_for(prog, ["x"], ["d1", "d2"], scope=scope)
    xs = np.ones(50)
    paddle.seed(7)
    seq = core.run([xs])
    paddle.seed(7)
    sched = core.run([xs], scheduler=True)
    for a, b in zip(seq, sched):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(seq[0], seq[1])  # two draws, not one


def test_ops_sharing_only_reads_get_no_edge_and_side_effect_ops_are_chained(no_passes):
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "x", need_check_feed=True)
    for n in ("p", "q"):
        var(blk, n, persistable=True)
    var(blk, "lr", (1,), persistable=True)
    var(blk, "u")
    var(blk, "v")
    op(blk, "exp", ["x"], ["u"])
    op(blk, "tanh", ["x"], ["v"])
    op(blk, "sgd", ["p", "u", "lr"], ["p"])
    op(blk, "sgd", ["q", "v", "lr"], ["q"])
    plan = _plan(prog, ["x"], [])
    u, v = writer(plan, "u"), writer(plan, "v")
    s1, s2 = writer(plan, "p"), writer(plan, "q")
    assert not plan.happens_before(u, v) and not plan.happens_before(v, u)
    assert plan.downstream[u] == {s1} and plan.downstream[v] == {s2}
    assert (s1, s2) in plan.extra_edges  # both flagged side_effect: kept in program order
    assert plan.dep_count[s2] == 2


def test_in_place_kernel_counts_as_a_write_of_its_input(no_passes):
    # the reader of p must run before sgd updates p in place (WAR through the in-place input)
    prog = static.Program()
    blk = prog.global_block()
    var(blk, "g", need_check_feed=True)
    var(blk, "p", persistable=True)
    var(blk, "lr", (1,), persistable=True)
    var(blk, "seen")
    var(blk, "p_out")
    op(blk, "scale", ["p"], ["seen"])
    op(blk, "sgd", ["p", "g", "lr"], ["p_out"])  # outputs named anew: every input counts as updated
    plan = _plan(prog, ["g"], ["seen"])
    assert writer(plan, "p_out") in plan.downstream[writer(plan, "seen")]
    assert plan.var_ids["p"] in plan.instructions[writer(plan, "p_out")].inplace


def test_plan_exposes_groups_and_integer_slots(host_placement, static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 3])
        y = paddle.nn.Linear(3, 2)(x)
        loss = paddle.mean(y)
    plan = static.Executor().plan_for(main, {"x": None}, [loss])
    for field in ("downstream", "dep_count", "gc_check_vars", "ref_count", "next_kind", "events",
                  "last_live", "instructions", "var_names", "var_ids"):
        assert hasattr(plan, field)
    assert plan.op_types[0] == "feed" and plan.op_types[-1] == "fetch"
    for ins in plan.instructions:  # every instruction refers to its vars by integer id
        for s in (*ins.inputs, *ins.outputs):
            assert isinstance(s, int) and plan.var_names[s] in plan.var_ids
        assert ins.place == "cpu" and ins.queue == "host" and ins.stream == "default"
    assert set(plan.next_kind.values()) == {"direct"} and plan.events == {}
    assert plan.dep_count == tuple(len(u) for u in plan.upstream)
    m = plan.happens_before_matrix()
    n = len(plan.instructions)
    assert m.shape == (n, n) and all(m[a, b] == plan.happens_before(a, b) for a in range(n) for b in range(n))
    assert plan.order == tuple(range(n))
    for i, j in plan.edges():
        assert i < j  # every edge points forward: program order is a valid schedule
