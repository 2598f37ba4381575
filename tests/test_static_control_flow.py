"""Control flow in static programs: `static.nn.cond` and `static.nn.while_loop`
build their functions into sub-blocks, and the executor runs each sub-block with its own
InterpreterCore, built when first needed and cached with the op. Every result is compared with
the same code run eagerly and with a NumPy reference."""
import os
import threading

import numpy as np
import pytest

import runtime as paddle
from runtime import static
from runtime.static.nn import case, cond, switch_case, while_loop


def _run(main, startup, feed, fetch, scope=None, exe=None):
    exe = exe or static.Executor()
    scope = scope or static.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope), scope


def _affine_branches(x, p, w):
    """A cond whose true branch reads a parameter and returns a tuple and a dict."""
    return cond(p, lambda: (paddle.matmul(x, w) * 2.0, {"s": x.sum(axis=1)}),
                lambda: (x - 1.0, {"s": x.max(axis=1)}))


@pytest.mark.parametrize("pred", [True, False])
def test_cond_runs_the_branch_the_predicate_picks_as_eager_does(static_mode, pred):
    xv = np.random.rand(4, 3).astype("float32")
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [4, 3], "float32")
        p = static.data("p", [1], "bool")
        w = paddle.create_parameter([3, 3], "float32")
        a, d = _affine_branches(x, p, w)
    assert [op.type for op in main.global_block().ops] == ["cond"]
    assert main.num_blocks == 3 and main.block(1).parent_idx == 0 and main.block(2).parent_idx == 0
    (got_a, got_s), scope = _run(main, startup, {"x": xv, "p": np.array([pred])}, [a, d["s"]])
    wv = scope.find_var(w.name).value
    paddle.disable_static()
    try:
        ea, ed = _affine_branches(paddle.to_tensor(xv), paddle.to_tensor([pred]), paddle.to_tensor(wv))
    finally:
        paddle.enable_static()
    ref_a = xv @ wv * 2.0 if pred else xv - 1.0
    ref_s = xv.sum(axis=1) if pred else xv.max(axis=1)
    np.testing.assert_allclose(ea.numpy(), ref_a, rtol=1e-6)
    np.testing.assert_allclose(ed["s"].numpy(), ref_s, rtol=1e-6)
    np.testing.assert_allclose(got_a, ea.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got_s, ed["s"].numpy(), rtol=1e-6)


def _doubling(x, limit):
    """Double x until its sum exceeds limit; also count the trips."""
    i = paddle.zeros([1], "int64")
    return while_loop(lambda i, y: y.sum() <= limit, lambda i, y: [i + 1, y * 2.0], [i, x])


@pytest.mark.parametrize("limit", [0.5, 10.0, 1000.0])
def test_while_loop_trip_count_comes_from_the_data(static_mode, limit):
    xv = np.full((2, 2), 0.25, "float32")
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 2], "float32")
        lim = static.data("lim", [], "float32")
        trips, y = _doubling(x, lim)
    got_trips, got_y = _run(main, startup, {"x": xv, "lim": np.float32(limit)}, [trips, y])[0]
    ref_y, ref_trips = xv.copy(), 0
    while ref_y.sum() <= limit:
        ref_y, ref_trips = ref_y * 2, ref_trips + 1
    paddle.disable_static()
    try:
        e_trips, e_y = _doubling(paddle.to_tensor(xv), paddle.to_tensor(np.float32(limit)))
    finally:
        paddle.enable_static()
    assert int(e_trips.numpy()[0]) == ref_trips and int(got_trips[0]) == ref_trips
    np.testing.assert_array_equal(e_y.numpy(), ref_y)
    np.testing.assert_array_equal(got_y, ref_y)


def _collatz_steps(n):
    """Steps of the Collatz walk from n to 1: a cond inside a while body."""
    steps = paddle.zeros([1], "int64")

    def body(n, steps):
        n = cond((n % 2) == 0, lambda: n // 2, lambda: n * 3 + 1)
        return [n, steps + 1]
    return while_loop(lambda n, steps: n > 1, body, [n, steps])[1]


def _sum_to_or_negate(k, x):
    """A while_loop inside one branch of a cond."""
    def count():
        return while_loop(lambda i, acc: i < k, lambda i, acc: [i + 1, acc + x], [paddle.zeros([1], "int64"),
                                                                                  paddle.zeros_like(x)])[1]
    return cond(k > 0, count, lambda: -x)


@pytest.mark.parametrize("start", [1, 6, 27])
def test_nested_constructs_match_eager_and_python(static_mode, start):
    xv = np.arange(3, dtype="float32")
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        n = static.data("n", [1], "int64")
        x = static.data("x", [3], "float32")
        steps = _collatz_steps(n)
        k = static.data("k", [1], "int64")
        summed = _sum_to_or_negate(k, x)
    assert main.num_blocks == 7   # global; loop body, its cond's 2 branches; cond's 2 branches, a loop body
    kv = start % 5 - 1
    got_steps, got_sum = _run(main, startup, {"n": np.array([start]), "x": xv, "k": np.array([kv])},
                              [steps, summed])[0]
    ref, m = 0, start
    while m > 1:
        m, ref = (m // 2 if m % 2 == 0 else 3 * m + 1), ref + 1
    paddle.disable_static()
    try:
        e_steps = _collatz_steps(paddle.to_tensor([start]))
        e_sum = _sum_to_or_negate(paddle.to_tensor([kv]), paddle.to_tensor(xv))
    finally:
        paddle.enable_static()
    assert int(e_steps.numpy()[0]) == ref == int(got_steps[0])
    np.testing.assert_array_equal(e_sum.numpy(), xv * kv if kv > 0 else -xv)
    np.testing.assert_array_equal(got_sum, e_sum.numpy())


def test_sub_block_cores_are_built_when_first_needed_and_cached(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        p = static.data("p", [1], "bool")
        out = cond(p, lambda: x * 2.0, lambda: x + 1.0)
    exe, scope = static.Executor(), static.Scope()
    xv = np.ones(3, "float32")
    core = exe.core_for(main, ["p", "x"], [out], scope=scope)
    (i, true_block), (_, false_block) = sorted(core.sub_cores)
    assert core.sub_cores == {(i, true_block): None, (i, false_block): None}
    exe.run(main, feed={"x": xv, "p": np.array([True])}, fetch_list=[out], scope=scope)
    assert core.sub_cores[(i, true_block)] is not None and core.sub_cores[(i, false_block)] is None
    for k in range(6):
        got = exe.run(main, feed={"x": xv, "p": np.array([k % 2 == 0])}, fetch_list=[out], scope=scope)[0]
        np.testing.assert_array_equal(got, xv * 2 if k % 2 == 0 else xv + 1)
    subs = core.sub_cores
    assert [subs[(i, b)].stats["builds"] for b in (true_block, false_block)] == [1, 1]
    assert [subs[(i, b)].stats["runs"] for b in (true_block, false_block)] == [4, 3]
    for b in (true_block, false_block):   # one lookup per op of the sub-block: none per run
        sub = subs[(i, b)]
        assert sub.stats["kernel_lookups"] == sum(ins.kind == "kernel" for ins in sub.plan.instructions) == 2


def test_an_error_inside_a_branch_names_both_ops_and_the_next_run_succeeds(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [-1, 3], "float32")
        p = static.data("p", [1], "bool")
        w = paddle.create_parameter([3, 3], "float32")
        out = cond(p, lambda: paddle.reshape(paddle.matmul(x, w), [2, 6]), lambda: paddle.zeros([2, 6]))
        total = out.sum()
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    before = scope.find_var(w.name).value.copy()
    with pytest.raises(ValueError, match=r"(?s)reshape.*operator 'cond'") as info:
        exe.run(main, feed={"x": np.ones((5, 3), "float32"), "p": np.array([True])}, fetch_list=[total], scope=scope)
    assert "test_static_control_flow.py" in str(info.value)
    np.testing.assert_array_equal(scope.find_var(w.name).value, before)
    got = exe.run(main, feed={"x": np.ones((4, 3), "float32"), "p": np.array([True])}, fetch_list=[total],
                  scope=scope)[0]
    np.testing.assert_allclose(got, (np.ones((4, 3), "float32") @ before).sum(), rtol=1e-5)


def _bad_constructs(x, p, total):
    return {
        "pred not bool": (ValueError, "argument 'pred'", lambda: cond(total, lambda: x, lambda: x)),
        "pred eager": (TypeError, "argument 'pred'", lambda: cond(True, lambda: x, lambda: x)),
        "not callable": (TypeError, "argument 'true_fn'", lambda: cond(p, x, lambda: x)),
        "structure": (ValueError, "same structure", lambda: cond(p, lambda: (x, x), lambda: x)),
        "dtype": (TypeError, "dtype", lambda: cond(p, lambda: x, lambda: paddle.cast(x, "int64"))),
        "outer write": (ValueError, "defined outside it", lambda: cond(p, lambda: x.add_(x), lambda: x)),
        "body count": (ValueError, "as many values", lambda: while_loop(lambda a: a.sum() < 1.0,
                                                                       lambda a: [a, a], [x])),
        "body shape": (ValueError, r"shape \[6\]", lambda: while_loop(lambda a: a.sum() < 1.0,
                                                                      lambda a: paddle.concat([a, a]), [x])),
        "no loop vars": (ValueError, "loop_vars", lambda: while_loop(lambda: p, lambda: [], [])),
        "cond not bool": (ValueError, "argument 'cond'", lambda: while_loop(lambda a: a.sum(), lambda a: a, [x])),
    }


@pytest.mark.parametrize("case", sorted(_bad_constructs(None, None, None)))
def test_bad_constructs_raise_naming_the_argument_and_leave_the_program_unchanged(static_mode, case):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        p = static.data("p", [1], "bool")
        total = x.sum()
        before = str(main)
        error, message, build = _bad_constructs(x, p, total)[case]
        with pytest.raises(error, match=message):
            build()
        assert str(main) == before and main.num_blocks == 1


def test_bad_eager_predicates_raise_naming_the_argument():
    x = paddle.ones([3])
    with pytest.raises(ValueError, match="cond: argument 'pred'"):
        cond(x, lambda: x, lambda: x)
    with pytest.raises(ValueError, match="while_loop: argument 'cond'"):
        while_loop(lambda a: a, lambda a: a, [x])
    assert cond(paddle.to_tensor([False]), lambda: x, None) is None


def test_outputs_never_alias_inputs(static_mode):
    xv = np.arange(3, dtype="float32")
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        p = static.data("p", [1], "bool")
        same = cond(p, lambda: x, lambda: x * 2.0)
        (unrun,) = while_loop(lambda a: a.sum() < -1.0, lambda a: a + 1.0, [x])
        same.add_(paddle.ones([3]))
        unrun.add_(paddle.ones([3]))
        seen = x * 1.0
    got = _run(main, startup, {"x": xv, "p": np.array([True])}, [same, unrun, seen, x])[0]
    np.testing.assert_array_equal(got[0], xv + 1)
    np.testing.assert_array_equal(got[1], xv + 1)
    np.testing.assert_array_equal(got[2], xv)
    np.testing.assert_array_equal(got[3], xv)


def _branchy_loss(x, p, q, linear):
    """A loss through nested conds: the outer true branch holds a cond of its own, one branch
    returns a captured var unchanged, and x is read by the false branch only."""
    h = linear(x)
    inner = lambda: cond(q, lambda: (paddle.tanh(h) * h).mean(), lambda: h.max())  # noqa: E731
    picked = cond(p, inner, lambda: (h * h).sum() + (x * x).sum())
    same = cond(q, lambda: h, lambda: h * 3.0)
    return picked + same.mean()


def _eager_grads(xv, pred, qv, weights):
    paddle.disable_static()
    try:
        linear = paddle.nn.Linear(3, 2)
        linear.weight.set_value(weights[0])
        linear.bias.set_value(weights[1])
        x = paddle.to_tensor(xv, stop_gradient=False)
        loss = _branchy_loss(x, paddle.to_tensor([pred]), paddle.to_tensor([qv]), linear)
        loss.backward()
        return loss.numpy(), x.grad.numpy(), linear.weight.grad.numpy(), linear.bias.grad.numpy()
    finally:
        paddle.enable_static()


@pytest.mark.parametrize("pred,qv", [(True, True), (True, False), (False, True), (False, False)])
def test_gradients_through_nested_conds_equal_eager_autograd(static_mode, pred, qv):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 3], "float32")
        x.stop_gradient = False
        p = static.data("p", [1], "bool")
        q = static.data("q", [1], "bool")
        linear = paddle.nn.Linear(3, 2)
        loss = _branchy_loss(x, p, q, linear)
        params_grads = static.append_backward(loss)
        (dx,) = static.gradients([loss], [x])
    grads = dict((p.name, g) for p, g in params_grads)
    xv = np.random.rand(2, 3).astype("float32") - 0.5
    got, scope = _run(main, startup, {"x": xv, "p": np.array([pred]), "q": np.array([qv])},
                      [loss, dx, grads[linear.weight.name], grads[linear.bias.name]])
    weights = (scope.find_var(linear.weight.name).value, scope.find_var(linear.bias.name).value)
    for g, e in zip(got, _eager_grads(xv, pred, qv, weights)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_a_branch_not_reading_an_input_gives_it_zeros(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        y = static.data("y", [3], "float32")
        x.stop_gradient = y.stop_gradient = False
        p = static.data("p", [1], "bool")
        loss = cond(p, lambda: (x * x).sum(), lambda: (y * 2.0).sum())
        dx, dy = static.gradients([loss], [x, y])
    xv = np.arange(3, dtype="float32")
    for pred in (True, False):
        gx, gy = _run(main, startup, {"x": xv, "y": xv, "p": np.array([pred])}, [dx, dy])[0]
        np.testing.assert_array_equal(gx, 2 * xv if pred else np.zeros(3))
        np.testing.assert_array_equal(gy, np.zeros(3) if pred else np.full(3, 2.0))


@pytest.mark.parametrize("kind", ["random branch", "random body", "second order"])
def test_gradients_that_are_not_built_raise_naming_the_op(static_mode, kind):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 3], "float32")
        x.stop_gradient = False
        p = static.data("p", [1], "bool")
        h = paddle.nn.Linear(3, 3)(x)
        if kind == "random branch":
            out = cond(p, lambda: paddle.nn.functional.dropout(h, 0.5), lambda: h)
            match = r"op #\d+ \(cond, built at .*test_static_control_flow.*random numbers"
        elif kind == "random body":
            (out,) = while_loop(lambda v: v.sum() < 10.0, lambda v: paddle.nn.functional.dropout(v, 0.5) * 2.0, [h])
            match = r"op #\d+ \(while, built at .*test_static_control_flow.*random numbers"
        else:
            (v,) = while_loop(lambda v: v.sum() < 10.0, lambda v: v * v, [h])
            (out,) = static.gradients([v.sum()], [x])
            match = r"op #\d+ \(while_grad, .*gradient are not built"
        with pytest.raises(NotImplementedError, match=match):
            static.gradients([out.mean()], [x])


def _looped_loss(x, trips, linear):
    """A while_loop over an int counter and a float state that reads a parameter (sliced) and a
    captured activation every trip, with a cond in its body; and a loop var passed on unchanged."""
    h = linear(x)

    def body(i, s, keep):
        s = cond(i % 2 == 0, lambda: paddle.tanh(s) * linear.weight[0] + h, lambda: s * 0.5 + h)
        return [i + 1, s, keep]
    _, s, keep = while_loop(lambda i, s, keep: i < trips, body, [paddle.zeros([1], "int64"), h, x * 2.0])
    return (s * s).mean() + keep.sum()


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_gradients_through_while_loop_equal_eager_autograd(static_mode, trips):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 3], "float32")
        x.stop_gradient = False
        n = static.data("n", [1], "int64")
        linear = paddle.nn.Linear(3, 3)
        loss = _looped_loss(x, n, linear)
        grads = dict((p.name, g) for p, g in static.append_backward(loss))
        (dx,) = static.gradients([loss], [x])
    xv = np.random.rand(2, 3).astype("float32") - 0.5
    got, scope = _run(main, startup, {"x": xv, "n": np.array([trips])},
                      [loss, dx, grads[linear.weight.name], grads[linear.bias.name]])
    paddle.disable_static()
    try:
        eager = paddle.nn.Linear(3, 3)
        eager.weight.set_value(scope.find_var(linear.weight.name).value)
        eager.bias.set_value(scope.find_var(linear.bias.name).value)
        xt = paddle.to_tensor(xv, stop_gradient=False)
        value = _looped_loss(xt, paddle.to_tensor([trips]), eager)
        value.backward()
        want = [value.numpy(), xt.grad.numpy(), eager.weight.grad.numpy(), eager.bias.grad.numpy()]
    finally:
        paddle.enable_static()
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_the_forward_values_while_grad_needs_live_until_it_ran(static_mode):
    # the loop's initial values and captured vars are while_grad's own inputs, so
    # the GC keeps them until it ran (they are not freed after the forward while)
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 3], "float32")
        n = static.data("n", [1], "int64")
        linear = paddle.nn.Linear(3, 3)
        loss = _looped_loss(x, n, linear)
        static.append_backward(loss)
    plan = static.Executor().plan_for(main, ["n", "x"], [loss])
    forward, backward = plan.index_of("while"), plan.index_of("while_grad")
    read = [plan.var_names[s] for s in plan.instructions[forward].inputs]
    temporaries = [name for name in read[1:] if name in plan.last_live]   # not fed, not persistable
    assert temporaries   # the linear's output h, captured by the body
    for name in temporaries:
        assert any(u == backward or plan.happens_before(backward, u) for u in plan.last_live[name]), name


def _cond_loss(x, p, linear):
    h = linear(x)
    return cond(p, lambda: (h * h).mean(), lambda: paddle.abs(h).sum())


@pytest.mark.parametrize("loss_of,dtype", [(_cond_loss, "bool"), (_looped_loss, "int64")], ids=["cond", "while_loop"])
def test_sgd_training_through_control_flow_equals_eager_training(static_mode, loss_of, dtype):
    rng = np.random.default_rng(2)
    batches = [(rng.random((2, 3), dtype=np.float32) - 0.5, np.array([k % 3], dtype)) for k in range(5)]
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 3], "float32")
        e = static.data("e", [1], dtype)
        linear = paddle.nn.Linear(3, 3)
        loss = loss_of(x, e, linear)
        paddle.optimizer.SGD(learning_rate=0.05).minimize(loss)
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    w0, b0 = (scope.find_var(v.name).value.copy() for v in (linear.weight, linear.bias))
    static_losses = [exe.run(main, feed={"x": xb, "e": eb}, fetch_list=[loss], scope=scope)[0] for xb, eb in batches]
    paddle.disable_static()
    try:
        eager = paddle.nn.Linear(3, 3)
        eager.weight.set_value(w0)
        eager.bias.set_value(b0)
        opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=eager.parameters())
        eager_losses = []
        for xb, eb in batches:
            value = loss_of(paddle.to_tensor(xb), paddle.to_tensor(eb), eager)
            value.backward()
            opt.step()
            opt.clear_grad()
            eager_losses.append(value.numpy())
        eager_w = eager.weight.numpy()
    finally:
        paddle.enable_static()
    np.testing.assert_allclose(static_losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(scope.find_var(linear.weight.name).value, eager_w, rtol=1e-5)


def _two_conds_and_a_loop(x, y, p):
    a = cond(p, lambda: paddle.nn.functional.dropout(paddle.matmul(x, x), 0.5), lambda: x * 3.0)
    b = cond(p, lambda: paddle.tanh(y), lambda: paddle.nn.functional.dropout(y, 0.3))
    (c,) = while_loop(lambda v: v.sum() < 50.0, lambda v: v * 2.0 + 1.0, [paddle.abs(y)])
    return a, b, c


@pytest.mark.parametrize("policy", ["host", "single"])
@pytest.mark.parametrize("pred", [True, False])
def test_parallel_and_sequential_runs_agree_bit_for_bit(static_mode, policy, pred):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [8, 8], "float32")
        y = static.data("y", [8, 8], "float32")
        p = static.data("p", [1], "bool")
        outs = _two_conds_and_a_loop(x, y, p)
    feed = {"x": np.random.rand(8, 8).astype("float32"), "y": np.random.rand(8, 8).astype("float32"),
            "p": np.array([pred])}
    results = {}
    saved = paddle.get_flags(["FLAGS_executor_parallel", "FLAGS_executor_stream_policy"])
    try:
        for mode in ("never", "always"):
            paddle.set_flags({"FLAGS_executor_parallel": mode, "FLAGS_executor_stream_policy": policy})
            paddle.seed(7)
            results[mode] = [_run(main, startup, feed, list(outs))[0] for _ in range(3)]
    finally:
        paddle.set_flags(saved)
    for seq, par in zip(results["never"], results["always"]):
        for s, q in zip(seq, par):
            np.testing.assert_array_equal(s, q)
    drawn = 0 if pred else 1   # the output of the branch that drew random numbers: each run draws anew
    assert not np.array_equal(results["never"][0][drawn], results["never"][1][drawn])


def test_save_and_load_inference_model_keeps_the_sub_blocks(static_mode, tmp_path):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [4, 3], "float32")
        p = static.data("p", [1], "bool")
        w = paddle.create_parameter([3, 3], "float32")
        out, _ = _affine_branches(x, p, w)
    exe, scope = static.Executor(), static.global_scope()
    exe.run(startup)
    xv = np.random.rand(4, 3).astype("float32")
    feed = {"x": xv, "p": np.array([True])}
    want = exe.run(main, feed=feed, fetch_list=[out])[0]
    prefix = os.path.join(tmp_path, "model")
    static.save_inference_model(prefix, [x, p], [out], exe, program=main)
    scope.find_var(w.name).value = np.zeros((3, 3), "float32")
    program, feeds, fetches = static.load_inference_model(prefix, exe)
    assert program.num_blocks == 3 and [op.type for op in program.global_block().ops] == ["cond"]
    np.testing.assert_array_equal(exe.run(program, feed=feed, fetch_list=fetches)[0], want)


def test_a_construct_whose_result_is_unused_is_dropped(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        p = static.data("p", [1], "bool")
        cond(p, lambda: x * 2.0, lambda: x)
        kept = cond(p, lambda: paddle.nn.functional.dropout(x, 0.5), lambda: x)   # random: always kept
        y = x + 1.0
    plan = static.Executor().plan_for(main, ["p", "x"], [y])
    assert [i.type for i in plan.instructions].count("cond") == 1
    assert kept.name in plan.var_names


def test_two_threads_running_one_program_with_constructs_stay_correct(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [4], "float32")
        p = static.data("p", [1], "bool")
        lim = static.data("lim", [], "float32")
        y = cond(p, lambda: x * 2.0, lambda: x - 1.0)
        (z,) = while_loop(lambda v: v.sum() < lim, lambda v: v + 1.0, [y])
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(50):
                xv, pred, limit = rng.random(4, dtype=np.float32), bool(rng.integers(2)), np.float32(rng.integers(1, 30))
                got = exe.run(main, feed={"x": xv, "p": np.array([pred]), "lim": limit}, fetch_list=[z], scope=scope)[0]
                want = xv * 2 if pred else xv - 1
                while want.sum() < limit:
                    want = want + 1
                np.testing.assert_array_equal(got, want)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]


def test_a_dimension_the_branches_disagree_on_becomes_unknown(static_mode):
    xv = np.arange(4, dtype="float32")
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [4], "float32")
        p = static.data("p", [1], "bool")
        out = cond(p, lambda: x[:2], lambda: x)
    assert out.shape == [-1]
    for pred, want in ((True, xv[:2]), (False, xv)):
        np.testing.assert_array_equal(_run(main, startup, {"x": xv, "p": np.array([pred])}, [out])[0][0], want)


def _picked(kind, index, x):
    """case / switch_case over four fns (one default); index selects which predicate holds."""
    fns = [lambda: x + 1.0, lambda: x * 2.0, lambda: x - 3.0]
    if kind == "case":
        return case([(index == 0, fns[0]), (index == 1, fns[1]), (index == 2, fns[2])], default=lambda: -x)
    if kind == "switch dict":
        return switch_case(index, {2: fns[2], 0: fns[0], 1: fns[1]}, default=lambda: -x)
    if kind == "switch list":
        return switch_case(index, fns + [lambda: -x])    # no default: the largest key's fn
    return case([(index == 0, fns[0]), (index == 1, fns[1]), (index == 2, fns[2]), (index >= 3, lambda: -x)])


@pytest.mark.parametrize("kind", ["case", "switch dict", "switch list", "case without default"])
def test_case_and_switch_case_pick_as_eager_and_python_do(static_mode, kind):
    xv = np.arange(3, dtype="float32")
    want = [xv + 1, xv * 2, xv - 3, -xv, -xv]
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3], "float32")
        index = static.data("index", [1], "int64")
        out = _picked(kind, index, x)
    assert [op.type for op in main.global_block().ops].count("cond") == 1   # the rest nest in its false branch
    exe = static.Executor()
    for k in range(5):
        got = exe.run(main, feed={"x": xv, "index": np.array([k])}, fetch_list=[out])[0]
        paddle.disable_static()
        try:
            eager = _picked(kind, paddle.to_tensor([k]), paddle.to_tensor(xv)).numpy()
        finally:
            paddle.enable_static()
        if kind == "switch list" and k == 4:
            k = 3   # no default given: an index past the keys takes the largest key's fn
        np.testing.assert_array_equal(eager, want[k])
        np.testing.assert_array_equal(got, eager)


@pytest.mark.parametrize("build,error,message", [
    (lambda i, x: case([], None), TypeError, "pred_fn_pairs"),
    (lambda i, x: case([(True, x)], None), TypeError, r"pred_fn_pairs\[0\]"),
    (lambda i, x: switch_case(i, [lambda: x, lambda: (x, x)]), ValueError, "same structure"),
    (lambda i, x: switch_case(i, {0: lambda: x, "a": lambda: x}), TypeError, r"branch_fns\[1\]"),
    (lambda i, x: switch_case(i, [(0, lambda: x), (0, lambda: x)]), ValueError, "unique"),
    (lambda i, x: switch_case(x, [lambda: x]), TypeError, "branch_index"),
    (lambda i, x: switch_case(i, [lambda: x], default=1), TypeError, "default"),
])
def test_bad_case_and_switch_case_arguments_are_named(static_mode, build, error, message):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = static.data("x", [3], "float32")
        i = static.data("i", [1], "int64")
        before = str(main)
        with pytest.raises(error, match=message):
            build(i, x)
        assert str(main) == before
