"""append_backward / gradients in static programs (gradient accumulation included), and gradients
of programs whose batch dimension is unknown (None), fed two batch sizes."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from runtime import static

from helpers import fd_grad


def _run(main, feed, fetch, scope=None):
    exe = static.Executor(paddle.CPUPlace())
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope or static.Scope())


def _data(name, shape, dtype="float64", grad=True):
    v = static.data(name, shape, dtype)
    v.stop_gradient = not grad
    return v


def test_grad_accumulation_is_one_add_n_and_matches_finite_differences(static_mode):
    """Gradient accumulation: z = sum(x*a + x*b) gives x@GRAD = a + b through ONE sum op."""
    rng = np.random.default_rng(0)
    xv, av, bv = (rng.normal(size=(3, 4)) for _ in range(3))
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [3, 4])
        a = _data("a", [3, 4], grad=False)
        b = _data("b", [3, 4], grad=False)
        z = paddle.sum(x * a + x * b)
        n_forward = len(main.global_block().ops)
        static.append_backward(z)
    ops = main.global_block().ops
    first = ops[n_forward]
    assert first.type == "full" and first.attrs["fill_value"] == 1.0 and tuple(first.attrs["shape"]) == ()
    assert first.outputs == [z.name + "@GRAD"]
    assert [op.type for op in ops[n_forward:]].count("add_n") == 1
    (add_n,) = [op for op in ops if op.type == "add_n"]
    assert add_n.outputs == ["x@GRAD"]
    block = main.global_block()
    assert not block.has_var("a@GRAD") and not block.has_var("b@GRAD")
    (gx,) = _run(main, {"x": xv, "a": av, "b": bv}, ["x@GRAD"])
    np.testing.assert_allclose(gx, av + bv, rtol=1e-12)
    numeric = fd_grad(lambda: float((xv * av + xv * bv).sum()), xv)
    np.testing.assert_allclose(gx, numeric, rtol=1e-6, atol=1e-8)


def test_ops_off_the_loss_path_and_stop_gradient_inputs_get_no_grad_ops(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [2, 3])
        c = _data("c", [2, 3], grad=False)
        side = paddle.exp(x)  # not used by the loss
        loss = paddle.mean(paddle.tanh(x) * c)
        n_forward = len(main.global_block().ops)
        static.append_backward(loss)
    block = main.global_block()
    grad_ops = block.ops[n_forward:]
    assert not block.has_var(side.name + "@GRAD")
    assert not block.has_var("c@GRAD")
    assert block.has_var("x@GRAD")
    # the exp op's output is read by no grad op, and no grad op is an exp gradient
    assert all(side.name not in op.input_arg_names for op in grad_ops)
    xv, cv = np.random.default_rng(1).normal(size=(2, 3)), np.random.default_rng(2).normal(size=(2, 3))
    (gx,) = _run(main, {"x": xv, "c": cv}, ["x@GRAD"])
    np.testing.assert_allclose(gx, (1 - np.tanh(xv) ** 2) * cv / 6, rtol=1e-12)


def test_no_grad_set_by_var_or_name_prunes_the_branch(static_mode):
    for how in ("var", "name"):
        main = static.Program()
        with static.program_guard(main, static.Program()):
            x = _data("x", [3])
            y = _data("y", [3])
            h = x * y
            loss = paddle.sum(h + paddle.square(y))
            static.append_backward(loss, no_grad_set={h} if how == "var" else {h.name})
        block = main.global_block()
        assert not block.has_var("x@GRAD"), how
        xv, yv = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
        (gy,) = _run(main, {"x": xv, "y": yv}, ["y@GRAD"])
        np.testing.assert_allclose(gy, 2 * yv)


def test_detach_stops_the_gradient(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [3])
        loss = paddle.sum(x * x.detach())
        static.append_backward(loss)
    xv = np.array([1.0, -2.0, 3.0])
    (gx,) = _run(main, {"x": xv}, ["x@GRAD"])
    np.testing.assert_allclose(gx, xv)


def test_params_grads_sorted_by_name_and_parameter_list_filters(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [4, 3])
        h = paddle.nn.Linear(3, 5)(x)
        out = paddle.nn.Linear(5, 2)(paddle.tanh(h))
        loss = paddle.mean(out)
        pg = static.append_backward(loss)
    names = [p.name for p, _ in pg]
    assert names == sorted(names) and len(names) == 4
    assert all(g.name == p.name + "@GRAD" for p, g in pg)
    main2 = static.Program()
    with static.program_guard(main2, static.Program()):
        x = static.data("x", [4, 3])
        lin = paddle.nn.Linear(3, 2)
        loss = paddle.mean(lin(x))
        pg = static.append_backward(loss, parameter_list=[lin.weight])
    assert [p.name for p, _ in pg] == [lin.weight.name]


def test_callbacks_are_called_per_grad_op_group(static_mode):
    seen = []
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [3])
        loss = paddle.sum(paddle.exp(x))
        static.append_backward(loss, callbacks=[lambda block, context: seen.append(context["__current_op_desc__"])])
    assert len(seen) == 2 and all(op is not None for op in seen)


def test_gradients_of_targets_wrt_inputs(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [2, 2])
        y = _data("y", [2, 2])
        unused = _data("u", [2])
        z = paddle.matmul(x, y)
        w = paddle.sum(paddle.sin(z))
        gx, gy, gu = static.gradients([w], [x, y, unused])
        seed = _data("seed", [2, 2], grad=False)
        (gz_x,) = static.gradients(z, x, target_gradients=seed)
    assert gu is None
    rng = np.random.default_rng(3)
    xv, yv, sv = rng.normal(size=(2, 2)), rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    vx, vy, vzx = _run(main, {"x": xv, "y": yv, "seed": sv}, [gx, gy, gz_x])
    c = np.cos(xv @ yv)
    np.testing.assert_allclose(vx, c @ yv.T, rtol=1e-12)
    np.testing.assert_allclose(vy, xv.T @ c, rtol=1e-12)
    np.testing.assert_allclose(vzx, sv @ yv.T, rtol=1e-12)
    # a second backward over the same vars picks fresh names
    assert gz_x.name != gx.name


def test_bad_inputs(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [3])
        frozen = _data("f", [3], grad=False)
        with pytest.raises(TypeError, match="'loss' must be a static Variable"):
            static.append_backward(1.0)
        with pytest.raises(ValueError, match="stop_gradient=True"):
            static.append_backward(paddle.sum(frozen))
        with pytest.raises(TypeError, match="floating target"):
            static.append_backward(paddle.argmax(x))
        with pytest.raises(ValueError, match=r"inputs\[0\] \('f'\) has stop_gradient=True"):
            static.gradients(paddle.sum(x * frozen), [frozen])
        with pytest.raises(ValueError, match="target_gradients"):
            static.gradients([paddle.sum(x)], [x], target_gradients=[None, None])
        with pytest.raises(TypeError, match="no_grad_set"):
            static.append_backward(paddle.sum(x), no_grad_set=[3])
    with pytest.raises(TypeError, match="backward: in static mode"):
        x.backward()


# ---------------------------------------------------------------- unknown (None) batch dims
def _dynamic_model(x, y, lab, lin1, lin2):
    """An MLP with flatten, reshape, sum, mean, var, MSE and cross entropy on a batch of unknown size."""
    h = paddle.flatten(x, 1)
    h = F.relu(lin1(h))
    h = paddle.reshape(h, [-1, 2, 3])
    h = paddle.sum(h, axis=1) + paddle.mean(h, axis=[0, 1]) + paddle.var(h, axis=[0, 1])
    out = lin2(h)
    return (F.mse_loss(out, y) + F.cross_entropy(out, lab) + paddle.mean(paddle.sum(out, axis=1))
            + paddle.mean(paddle.reshape(out, [-1])))


def test_none_batch_dim_grads_match_eager_for_two_batch_sizes(static_mode):
    paddle.set_default_dtype("float64")
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 2, 4], "float64")
        y = static.data("y", [None, 3], "float64")
        lab = static.data("lab", [None, 1], "int64")
        lin1, lin2 = paddle.nn.Linear(8, 6), paddle.nn.Linear(3, 3)
        loss = _dynamic_model(x, y, lab, lin1, lin2)
        pg = static.append_backward(loss)
    scope = static.Scope()
    exe = static.Executor(paddle.CPUPlace())
    exe.run(startup, scope=scope)
    values = {p.name: scope.find_var(p.name).get_tensor().copy() for p, _ in pg}
    paddle.disable_static()
    try:
        e1, e2 = paddle.nn.Linear(8, 6), paddle.nn.Linear(3, 3)
        for eager, static_lin in ((e1, lin1), (e2, lin2)):
            eager.weight.set_value(values[static_lin.weight.name])
            eager.bias.set_value(values[static_lin.bias.name])
        by_static_name = {lin1.weight.name: e1.weight, lin1.bias.name: e1.bias,
                          lin2.weight.name: e2.weight, lin2.bias.name: e2.bias}
        for batch in (4, 7):
            rng = np.random.default_rng(batch)
            feed = {"x": rng.normal(size=(batch, 2, 4)), "y": rng.normal(size=(batch, 3)),
                    "lab": rng.integers(0, 3, (batch, 1))}
            paddle.enable_static()
            got = exe.run(main, feed=feed, fetch_list=[loss] + [g for _, g in pg], scope=scope)
            paddle.disable_static()
            for p in by_static_name.values():
                p.clear_gradient()
            ref = _dynamic_model(*(paddle.to_tensor(feed[k]) for k in ("x", "y", "lab")), e1, e2)
            ref.backward()
            np.testing.assert_allclose(got[0], ref.numpy(), rtol=1e-12)
            for (p, _), g in zip(pg, got[1:]):
                np.testing.assert_allclose(g, by_static_name[p.name].grad.numpy(), rtol=1e-10, atol=1e-12,
                                           err_msg=f"{p.name} at batch {batch}")
    finally:
        paddle.enable_static()


def _sized_program():
    """x [None, 6] reshaped to [B, 2, 3] with B = paddle.shape(x)[0], a [1, 3] weight expanded to
    [B, 2, -1], zeros([B, 1]) and ones([B, 1]) added: shape lists holding run-time sizes."""
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [None, 6])
        w = _data("w", [1, 3])
        b = paddle.shape(x)[0]
        y = x.reshape([b, 2, 3]) * paddle.expand(w, [b, 2, -1]) + paddle.zeros([b, 2, 1], "float64")
        out = y.reshape([b * 2, -1]) + paddle.full([b * 2, 1], 0.5, "float64") + paddle.ones([b * 2, 3], "float64")
        static.append_backward(paddle.sum(out * out))
    return main, x, w, out


def test_shape_lists_with_run_time_sizes_run_and_differentiate_for_each_batch(static_mode):
    main, x, w, out = _sized_program()
    types = [op.type for op in main.global_block().ops]
    assert {"reshape_sizes", "expand_sizes", "full_sizes"} <= set(types)
    assert out.shape == [-1, 3]
    rng = np.random.default_rng(3)
    wv = rng.normal(size=(1, 3))
    for n in (2, 5):
        xv = rng.normal(size=(n, 6))
        got, gx, gw = _run(main, {"x": xv, "w": wv}, [out, "x@GRAD", "w@GRAD"])
        paddle.disable_static()
        try:
            xe, we = paddle.to_tensor(xv, stop_gradient=False), paddle.to_tensor(wv, stop_gradient=False)
            b = paddle.shape(xe)[0]  # eagerly a tensor in a shape list is read as its value
            ye = xe.reshape([b, 2, 3]) * paddle.expand(we, [b, 2, -1]) + paddle.zeros([b, 2, 1], "float64")
            oute = ye.reshape([b * 2, -1]) + paddle.full([b * 2, 1], 0.5, "float64") + paddle.ones([b * 2, 3],
                                                                                                 "float64")
            paddle.sum(oute * oute).backward()
        finally:
            paddle.enable_static()
        want = (xv.reshape(n * 2, 3) * wv + 1.5)
        np.testing.assert_allclose(oute.numpy(), want, rtol=1e-12)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(gx, xe.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gw, we.grad.numpy(), rtol=1e-12)


def test_tile_and_split_with_run_time_sizes_run_and_differentiate(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [None, 4])
        b = paddle.shape(x)[0]
        tiled = paddle.tile(x[:1], [b, 2])  # [B, 8]
        first, rest = paddle.split(tiled * x.tile([1, 2]), [b, -1], axis=1)
        static.append_backward(paddle.sum(first * first) + paddle.sum(rest))
    assert {"tile_sizes", "split_sizes"} <= {op.type for op in main.global_block().ops}
    rng = np.random.default_rng(5)
    for n in (2, 3):
        xv = rng.normal(size=(n, 4))
        got_first, got_rest, gx = _run(main, {"x": xv}, [first, rest, "x@GRAD"])
        paddle.disable_static()
        try:
            xe = paddle.to_tensor(xv, stop_gradient=False)
            be = paddle.shape(xe)[0]
            fe, re = paddle.split(paddle.tile(xe[:1], [be, 2]) * xe.tile([1, 2]), [be, -1], axis=1)
            (paddle.sum(fe * fe) + paddle.sum(re)).backward()
        finally:
            paddle.enable_static()
        product = np.tile(xv[:1], (n, 2)) * np.tile(xv, (1, 2))
        np.testing.assert_allclose(fe.numpy(), product[:, :n], rtol=1e-12)
        np.testing.assert_allclose(got_first, product[:, :n], rtol=1e-12)
        np.testing.assert_allclose(got_rest, re.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gx, xe.grad.numpy(), rtol=1e-12)


def test_arange_to_a_run_time_size_runs_for_each_batch(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [None, 3])
        rows = paddle.arange(paddle.shape(x)[0])
        odd = paddle.arange(1, paddle.shape(x)[0], 2, dtype="float64")
        out = x * paddle.cast(rows, "float64").unsqueeze(1)
    assert "arange_sizes" in {op.type for op in main.global_block().ops}
    assert rows.shape == [-1] and rows.dtype == paddle.int64
    for n in (2, 5):
        xv = np.random.default_rng(n).normal(size=(n, 3))
        got_rows, got_odd, got = _run(main, {"x": xv}, [rows, odd, out])
        np.testing.assert_array_equal(got_rows, np.arange(n))
        np.testing.assert_array_equal(got_odd, np.arange(1, n, 2, dtype="float64"))
        np.testing.assert_allclose(got, xv * np.arange(n)[:, None], rtol=1e-12)


def test_a_run_time_size_must_be_one_integer(static_mode):
    with static.program_guard(static.Program(), static.Program()):
        x = _data("x", [None, 6])
        with pytest.raises(TypeError, match="reshape: argument 'shape' must hold ints or 1-element int tensors"):
            x.reshape([paddle.shape(x), -1])
        with pytest.raises(TypeError, match="zeros: argument 'shape' must hold ints or 1-element int tensors"):
            paddle.zeros([paddle.sum(x), 2])
        with pytest.raises(ValueError, match="full: argument 'shape' must hold non-negative ints, got -2"):
            paddle.full([paddle.shape(x)[0], -2], 1.0)


def test_the_gradient_of_basic_indexing_with_an_unknown_batch(static_mode):
    """x[:, 0] of x with an unknown batch: the gradient is written into zeros of x's run-time shape."""
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = _data("x", [None, 3, 2])
        static.append_backward(paddle.sum(x[:, 0] * x[:, 0]))
    rng = np.random.default_rng(4)
    for n in (2, 5):
        xv = rng.normal(size=(n, 3, 2))
        (gx,) = _run(main, {"x": xv}, ["x@GRAD"])
        want = np.zeros_like(xv)
        want[:, 0] = 2 * xv[:, 0]
        np.testing.assert_allclose(gx, want, rtol=1e-12)
