"""Static training: Linear + MSELoss + Adam and fc + mean + SGD, optimizer ops and
their state, learning-rate schedulers, Program.clone(for_test=True) and inference models.

Every static run is compared with the SAME model trained eagerly from the same initial values
(copied from the scope after `exe.run(startup)`), or with hand-written NumPy."""
import json

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from runtime import static
from runtime.static.io import program_from_dict, program_to_dict


def _value(scope, name):
    return np.array(scope.find_var(name).get_tensor(), copy=True)


def _eager(fn):
    """Run fn() in dynamic mode and come back to static mode."""
    paddle.disable_static()
    try:
        return fn()
    finally:
        paddle.enable_static()


# ---------------------------------------------------------------- Linear + MSELoss + Adam
def _linear_mse_example(opt_factory=paddle.optimizer.Adam):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[16, 16], name="x")
        label = static.data(shape=[16, 1], name="label")
        linear = paddle.nn.Linear(in_features=16, out_features=1)
        out = linear(x)
        loss = paddle.nn.MSELoss()(out, label)
        n_forward = len(main.global_block().ops)
        optimizer = opt_factory()
        result = optimizer.minimize(loss)
    return main, startup, linear, loss, n_forward, result


def test_linear_mse_example_trains_like_eager_for_ten_steps(static_mode):
    main, startup, linear, loss, _, _ = _linear_mse_example()
    exe = static.Executor(paddle.CPUPlace())
    scope = static.Scope()
    exe.run(startup, scope=scope)
    w0, b0 = _value(scope, linear.weight.name), _value(scope, linear.bias.name)
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.normal(size=(16, 16)).astype(np.float32), "label": rng.normal(size=(16, 1)).astype(np.float32)}
             for _ in range(10)]
    static_losses = [float(exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0]) for f in feeds]

    def eager():
        model = paddle.nn.Linear(16, 1)
        model.weight.set_value(w0)
        model.bias.set_value(b0)
        opt = paddle.optimizer.Adam(parameters=model.parameters())
        losses = []
        for f in feeds:
            value = paddle.nn.MSELoss()(model(paddle.to_tensor(f["x"])), paddle.to_tensor(f["label"]))
            value.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(value))
        return losses, model.weight.numpy(), model.bias.numpy()

    eager_losses, w, b = _eager(eager)
    np.testing.assert_allclose(static_losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(_value(scope, linear.weight.name), w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_value(scope, linear.bias.name), b, rtol=1e-5, atol=1e-7)


def test_linear_mse_example_matches_numpy_adam_and_loss_falls(static_mode):
    main, startup, linear, loss, _, _ = _linear_mse_example()
    exe = static.Executor(paddle.CPUPlace())
    scope = static.Scope()
    exe.run(startup, scope=scope)
    w, b = _value(scope, linear.weight.name).astype(np.float64), _value(scope, linear.bias.name).astype(np.float64)
    xs, ys = np.ones((16, 16), np.float32), np.ones((16, 1), np.float32)
    m = {k: 0.0 for k in ("mw", "vw", "mb", "vb")}
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.001
    losses = []
    for t in range(1, 21):
        (value,) = exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
        err = xs @ w + b - ys
        np.testing.assert_allclose(value, (err ** 2).mean(), rtol=1e-5)
        gw, gb = xs.T @ (2 * err / err.size), (2 * err / err.size).sum(0)
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for p, g, mk, vk in ((w, gw, "mw", "vw"), (b, gb, "mb", "vb")):
            m[mk] = b1 * m[mk] + (1 - b1) * g
            m[vk] = b2 * m[vk] + (1 - b2) * g * g
            p -= lr_t * m[mk] / (np.sqrt(m[vk]) + eps * np.sqrt(1 - b2 ** t))
        np.testing.assert_allclose(_value(scope, linear.weight.name), w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_value(scope, linear.bias.name), b, rtol=1e-5, atol=1e-6)
        losses.append(float(value))
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))


# ---------------------------------------------------------------- fc, mean, SGD
def test_fc_mean_sgd_trains_like_eager(static_mode):
    exe = static.Executor()
    train_program, startup_program = static.Program(), static.Program()
    with static.program_guard(train_program, startup_program):
        data = static.data(name="X", shape=[None, 1], dtype="float32")
        hidden = static.nn.fc(data, 10)
        loss = paddle.mean(hidden)
        paddle.optimizer.SGD(learning_rate=0.01).minimize(loss)
    scope = static.Scope()
    exe.run(startup_program, scope=scope)
    w_name, b_name = [p.name for p in train_program.global_block().all_parameters()]
    w0, b0 = _value(scope, w_name), _value(scope, b_name)
    rng = np.random.default_rng(3)
    xs = [rng.random(size=(10 if i % 2 else 7, 1)).astype("float32") for i in range(10)]
    static_losses = []
    for x in xs:
        (loss_data,) = exe.run(train_program, feed={"X": x}, fetch_list=[loss.name], scope=scope)
        static_losses.append(float(loss_data))

    def eager():
        fc = paddle.nn.Linear(1, 10)
        fc.weight.set_value(w0)
        fc.bias.set_value(b0)
        opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=fc.parameters())
        losses = []
        for x in xs:
            value = paddle.mean(fc(paddle.to_tensor(x)))
            value.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(value))
        return losses, fc.weight.numpy(), fc.bias.numpy()

    eager_losses, w, b = _eager(eager)
    np.testing.assert_allclose(static_losses, eager_losses, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_value(scope, w_name), w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_value(scope, b_name), b, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- optimizer ops and their state
def test_b1_minimize_returns_ops_and_params_grads_after_the_forward_ops(static_mode):
    main, startup, linear, loss, n_forward, (ops, params_grads) = _linear_mse_example()
    block_ops = main.global_block().ops
    assert [p.name for p, _ in params_grads] == sorted([linear.weight.name, linear.bias.name])
    assert all(g.name == p.name + "@GRAD" for p, g in params_grads)
    assert [op.type for op in ops] == ["adam", "adam"] and block_ops[-2:] == ops
    added = block_ops[n_forward:]
    # three kinds of new ops: the fill_constant seed, the gradient ops, the optimizer ops
    assert added[0].type == "full" and added[0].attrs["fill_value"] == 1.0
    assert added[0].outputs == [loss.name + "@GRAD"]
    assert {op.type for op in added[1:-2]}.isdisjoint({"adam", "full"})


def test_b4_optimizer_ops_in_param_name_order_after_clip_ops(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 4])
        s1, s2 = paddle.nn.Linear(4, 3), paddle.nn.Linear(3, 2)
        out = s2(paddle.tanh(s1(x)))
        loss = paddle.mean(out * out)
        clip = paddle.nn.ClipGradByGlobalNorm(0.05)
        ops, params_grads = paddle.optimizer.Momentum(0.1, grad_clip=clip).minimize(loss)
    names = [op.inputs[0] for op in ops]
    assert names == sorted(names) == [p.name for p, _ in params_grads]
    block_ops = main.global_block().ops
    first_update = block_ops.index(ops[0])
    sqrt_at = [i for i, op in enumerate(block_ops) if op.type == "sqrt"]
    assert sqrt_at and max(sqrt_at) < first_update
    # each update reads the clipped gradient, not the raw @GRAD var
    assert all(not op.inputs[1].endswith("@GRAD") for op in ops)
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    init = {p.name: _value(scope, p.name) for p, _ in params_grads}
    xs = np.random.default_rng(4).normal(size=(5, 4)).astype(np.float32)
    for _ in range(3):
        exe.run(main, feed={"x": xs}, fetch_list=[loss], scope=scope)

    static_params = [s1.weight, s1.bias, s2.weight, s2.bias]

    def eager():
        l1, l2 = paddle.nn.Linear(4, 3), paddle.nn.Linear(3, 2)
        params = [l1.weight, l1.bias, l2.weight, l2.bias]
        for p, sp in zip(params, static_params):
            p.set_value(init[sp.name])
        opt = paddle.optimizer.Momentum(0.1, parameters=params, grad_clip=paddle.nn.ClipGradByGlobalNorm(0.05))
        for _ in range(3):
            o = l2(paddle.tanh(l1(paddle.to_tensor(xs))))
            paddle.mean(o * o).backward()
            opt.step()
            opt.clear_grad()
        return {sp.name: p.numpy() for p, sp in zip(params, static_params)}

    for name, v in _eager(eager).items():
        np.testing.assert_allclose(_value(scope, name), v, rtol=1e-5, atol=1e-7, err_msg=name)


def test_scenario_22_accumulators_are_persistable_and_reset_by_startup(static_mode):
    main, startup, linear, loss, _, (ops, _) = _linear_mse_example()
    acc_names = [n for op in ops for n in op.inputs[3:]]
    assert len(acc_names) == 8 and any(n.endswith("beta1_pow_acc_0") for n in acc_names)
    lr_names = {op.inputs[2] for op in ops}
    for name in acc_names + sorted(lr_names):
        assert main.global_block().var(name).persistable
        assert [op.type for op in startup.global_block().ops if op.outputs == [name]] == ["full"]
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((16, 16), np.float32), "label": np.zeros((16, 1), np.float32)}
    for _ in range(2):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    moment = next(n for n in acc_names if n.startswith(linear.weight.name) and "moment1" in n)
    beta1 = next(n for n in acc_names if n.startswith(linear.weight.name) and "beta1_pow" in n)
    assert np.abs(_value(scope, moment)).max() > 0
    np.testing.assert_allclose(_value(scope, beta1), [0.9 ** 3], rtol=1e-6)
    exe.run(startup, scope=scope)
    assert not _value(scope, moment).any()
    np.testing.assert_allclose(_value(scope, beta1), [0.9], rtol=1e-6)


# ---------------------------------------------------------------- every optimizer, regularisers
def _mlp(x, l1, l2):
    return paddle.mean(paddle.square(l2(F.relu(l1(x)))))


_OPTIMIZERS = {
    "sgd": lambda params: paddle.optimizer.SGD(0.1, parameters=params),
    "momentum_nesterov": lambda params: paddle.optimizer.Momentum(0.05, 0.9, params, use_nesterov=True),
    "adam_l2": lambda params: paddle.optimizer.Adam(0.01, parameters=params, weight_decay=0.1),
    "adam_l1": lambda params: paddle.optimizer.Adam(0.01, parameters=params,
                                                    weight_decay=paddle.regularizer.L1Decay(0.05)),
    "adamw": lambda params: paddle.optimizer.AdamW(0.01, parameters=params, weight_decay=0.1),
    "rmsprop_centered": lambda params: paddle.optimizer.RMSProp(0.01, momentum=0.5, centered=True,
                                                                parameters=params),
}


@pytest.mark.parametrize("kind", sorted(_OPTIMIZERS))
def test_each_optimizer_matches_eager(static_mode, kind):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 4])
        l1, l2 = paddle.nn.Linear(4, 5), paddle.nn.Linear(5, 2)
        loss = _mlp(x, l1, l2)
        _OPTIMIZERS[kind]([l1.weight, l1.bias, l2.weight, l2.bias]).minimize(loss)
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    pairs = [(l1.weight, "w1"), (l1.bias, "b1"), (l2.weight, "w2"), (l2.bias, "b2")]
    init = {key: _value(scope, p.name) for p, key in pairs}
    rng = np.random.default_rng(6)
    xs = [rng.normal(size=(3 + i, 4)).astype(np.float32) for i in range(5)]
    losses = [float(exe.run(main, feed={"x": x}, fetch_list=[loss], scope=scope)[0]) for x in xs]

    def eager():
        e1, e2 = paddle.nn.Linear(4, 5), paddle.nn.Linear(5, 2)
        eager_params = {"w1": e1.weight, "b1": e1.bias, "w2": e2.weight, "b2": e2.bias}
        for key, p in eager_params.items():
            p.set_value(init[key])
        opt = _OPTIMIZERS[kind]([e1.weight, e1.bias, e2.weight, e2.bias])
        out = []
        for x in xs:
            value = _mlp(paddle.to_tensor(x), e1, e2)
            value.backward()
            opt.step()
            opt.clear_grad()
            out.append(float(value))
        return out, {k: p.numpy() for k, p in eager_params.items()}

    eager_losses, final = _eager(eager)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5, atol=1e-7)
    for p, key in pairs:
        np.testing.assert_allclose(_value(scope, p.name), final[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_lr_scheduler_step_updates_the_lr_var_in_the_global_scope(static_mode):
    def build(sched):
        main, startup = static.Program(), static.Program()
        with static.program_guard(main, startup):
            x = static.data("x", [None, 4])
            lin = paddle.nn.Linear(4, 2)
            loss = paddle.mean(paddle.square(lin(x)))
            ops, _ = paddle.optimizer.SGD(sched).minimize(loss)
        return main, startup, lin, loss, ops[0].inputs[2]

    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5)
    main, startup, lin, loss, lr_name = build(sched)
    assert main.lr_scheduler is sched
    scope = static.Scope()
    xs = np.random.default_rng(7).normal(size=(3, 4)).astype(np.float32)
    with static.scope_guard(scope):
        exe = static.Executor()
        exe.run(startup)
        w0, b0 = _value(scope, lin.weight.name), _value(scope, lin.bias.name)
        seen = []
        for _ in range(5):
            exe.run(main, feed={"x": xs}, fetch_list=[loss])
            sched.step()
            seen.append(float(_value(scope, lr_name)[0]))
    np.testing.assert_allclose(seen, [0.1, 0.05, 0.05, 0.025, 0.025], rtol=1e-6)

    def eager():
        e = paddle.nn.Linear(4, 2)
        e.weight.set_value(w0)
        e.bias.set_value(b0)
        s = paddle.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5)
        opt = paddle.optimizer.SGD(s, parameters=e.parameters())
        for _ in range(5):
            paddle.mean(paddle.square(e(paddle.to_tensor(xs)))).backward()
            opt.step()
            opt.clear_grad()
            s.step()
        return e.weight.numpy()

    np.testing.assert_allclose(_value(scope, lin.weight.name), _eager(eager), rtol=1e-5, atol=1e-7)


def test_set_lr_writes_the_lr_var_and_step_is_refused_in_static_mode(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 4])
        loss = paddle.mean(paddle.nn.Linear(4, 1)(x))
        opt = paddle.optimizer.SGD(0.1)
        ops, _ = opt.minimize(loss)
    scope = static.Scope()
    with static.scope_guard(scope):
        static.Executor().run(startup)
        opt.set_lr(0.25)
        np.testing.assert_allclose(_value(scope, ops[0].inputs[2]), [0.25])
    with pytest.raises(RuntimeError, match="static mode call minimize"):
        opt.step()
    with pytest.raises(TypeError, match="must be a static Variable"):
        opt.minimize("loss")


# ---------------------------------------------------------------- clone(for_test) and inference models
def test_clone_for_test_turns_dropout_into_its_inference_form(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = static.data("x", [4, 5])
        up = F.dropout(x, p=0.4, training=True)
        down = F.dropout(x, p=0.4, training=True, mode="downscale_in_infer")
        alpha = F.alpha_dropout(x, p=0.2, training=True)
    test = main.clone(for_test=True)
    assert [op.type for op in test.global_block().ops] == ["assign", "scale", "assign"]
    assert [op.type for op in main.global_block().ops] == ["dropout", "dropout", "alpha_dropout"]
    xs = np.random.default_rng(8).normal(size=(4, 5)).astype(np.float32)
    a, b, c = static.Executor().run(test, feed={"x": xs}, fetch_list=[up, down, alpha], scope=static.Scope())
    np.testing.assert_array_equal(a, xs)
    np.testing.assert_allclose(b, xs * 0.6, rtol=1e-6)
    np.testing.assert_array_equal(c, xs)


def test_save_and_load_inference_model(static_mode, tmp_path):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 4])
        label = static.data("label", [None, 2])
        lin = paddle.nn.Linear(4, 2)
        out = paddle.tanh(lin(F.dropout(x, 0.5, training=True)))
        loss = F.mse_loss(out, label)
        paddle.optimizer.Adam(0.01).minimize(loss)
    scope = static.Scope()
    rng = np.random.default_rng(9)
    with static.scope_guard(scope):
        exe = static.Executor()
        exe.run(startup)
        for _ in range(3):
            exe.run(main, feed={"x": rng.normal(size=(6, 4)).astype(np.float32),
                                "label": rng.normal(size=(6, 2)).astype(np.float32)}, fetch_list=[loss])
        w, b = _value(scope, lin.weight.name), _value(scope, lin.bias.name)
        prefix = str(tmp_path / "model" / "lin")
        static.save_inference_model(prefix, [x], [out], exe, program=main)
    with open(prefix + ".pdmodel", encoding="utf-8") as f:
        desc = json.load(f)
    with np.load(prefix + ".pdiparams", allow_pickle=False) as arrays:
        assert sorted(arrays.files) == sorted([lin.weight.name, lin.bias.name])
    loaded_scope = static.Scope()
    with static.scope_guard(loaded_scope):
        program, feed_names, fetch_targets = static.load_inference_model(prefix, exe)
        assert feed_names == ["x"] and [v.name for v in fetch_targets] == [out.name]
        types = [op.type for op in program.global_block().ops]
        assert types == ["assign", "linear", "tanh"]  # dropout in inference form, no loss/grad/optimizer ops
        assert "label" not in program.global_block().vars
        xs = rng.normal(size=(3, 4)).astype(np.float32)
        (got,) = exe.run(program, feed={"x": xs}, fetch_list=fetch_targets)
    np.testing.assert_allclose(got, np.tanh(xs @ w + b), rtol=1e-5)
    assert program_to_dict(program)["blocks"] == desc["blocks"]


def test_attributes_round_trip_exactly_without_pickle(static_mode):
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = static.data("x", [3, 4, 6], "float64")
        y = paddle.clip(x[..., ::2], min=-np.inf, max=0.5)
        z = paddle.cast(paddle.sum(y, axis=[0, 2]), "float32")
    desc = json.loads(json.dumps(program_to_dict(main), allow_nan=False))
    again = program_from_dict(desc)
    assert again.structural_hash() == main.structural_hash()
    ops = again.global_block().ops
    assert any(isinstance(a, tuple) for op in ops for a in op.attrs.values())
    xs = np.random.default_rng(10).normal(size=(3, 4, 6))
    (got,) = static.Executor().run(again, feed={"x": xs}, fetch_list=[z.name], scope=static.Scope())
    np.testing.assert_allclose(got, np.clip(xs[..., ::2], -np.inf, 0.5).sum(axis=(0, 2)).astype(np.float32),
                               rtol=1e-6)


def test_inference_model_bad_inputs(static_mode, tmp_path):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [2, 4])
        out = paddle.nn.Linear(4, 1)(x)
    other = static.Program()
    with static.program_guard(other, static.Program()):
        stranger = static.data("stranger", [2])
    exe = static.Executor()
    prefix = str(tmp_path / "m")
    with pytest.raises(ValueError, match=r"fetch_vars\[0\] \('stranger'\) is not a variable"):
        static.save_inference_model(prefix, [x], [stranger], exe, program=main)
    with pytest.raises(ValueError, match="path_prefix"):
        static.save_inference_model(str(tmp_path), [x], [out], exe, program=main)
    with static.scope_guard(static.Scope()):
        with pytest.raises(ValueError, match="no value in the global scope"):
            static.save_inference_model(prefix, [x], [out], exe, program=main)
        exe.run(startup)
        static.save_inference_model(prefix, [x], [out], exe, program=main)
    with pytest.raises(ValueError, match="no file"):
        static.load_inference_model(str(tmp_path / "missing"), exe)
    with open(prefix + ".pdmodel", "w", encoding="utf-8") as f:
        json.dump({"format": "pickle"}, f)
    with pytest.raises(ValueError, match="not a saved program"):
        static.load_inference_model(prefix, exe)
