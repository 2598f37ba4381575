"""Optimizers, LR schedulers, regularizers and gradient clipping against NumPy references of
the same formulas (written here in textbook form), plus state round trips and atomic steps."""
import math

import numpy as np
import pytest

import runtime as paddle
from runtime.nn import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from runtime.ops import optimizer_ops as oo
from runtime.optimizer import lr as sched
from runtime.regularizer import L1Decay, L2Decay

RNG = np.random.default_rng(42)
SHAPES = [(3, 4), (5,)]
W = [RNG.uniform(0.5, 2.0, s) for s in SHAPES]
C = [RNG.normal(size=s) for s in SHAPES]
P0 = [RNG.normal(size=s) for s in SHAPES]


def _params(names=("w0", "w1")):
    return [paddle.Parameter(p.copy(), name=n) for p, n in zip(P0, names)]


def _grad(i, p):
    """d/dp of sum(W * p * p) + sum(C * p)."""
    return 2 * W[i] * p + C[i]


def _loss(params):
    total = None
    for i, p in enumerate(params):
        term = (paddle.to_tensor(W[i]) * p * p).sum() + (paddle.to_tensor(C[i]) * p).sum()
        total = term if total is None else total + term
    return total


def _train(opt, params, steps=3):
    for _ in range(steps):
        _loss(params).backward()
        opt.step()
        opt.clear_grad()


# ---------------------------------------------------------------- NumPy references
def ref_sgd(lr, steps=3, decay=None):
    ps = [p.copy() for p in P0]
    for _ in range(steps):
        for i, p in enumerate(ps):
            g = _grad(i, p)
            if decay is not None:
                g = g + decay(p)
            p -= lr * g
    return ps


def ref_momentum(lr, mu, nesterov, steps=3):
    ps = [p.copy() for p in P0]
    vs = [np.zeros_like(p) for p in ps]
    for _ in range(steps):
        for i, (p, v) in enumerate(zip(ps, vs)):
            g = _grad(i, p)
            v[...] = mu * v + g
            p -= lr * (g + mu * v) if nesterov else lr * v
    return ps


def ref_adam(lr, b1=0.9, b2=0.999, eps=1e-8, steps=3, decoupled=0.0, lrs=None, decay_mask=(True, True)):
    ps = [p.copy() for p in P0]
    ms = [np.zeros_like(p) for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    for t in range(1, steps + 1):
        for i, (p, m, v) in enumerate(zip(ps, ms, vs)):
            plr = lr if lrs is None else lrs[i]
            g = _grad(i, p)
            if decoupled and decay_mask[i]:
                p *= 1 - plr * decoupled
            m[...] = b1 * m + (1 - b1) * g
            v[...] = b2 * v + (1 - b2) * g * g
            m_hat = m / (1 - b1 ** t)
            v_hat = v / (1 - b2 ** t)
            p -= plr * m_hat / (np.sqrt(v_hat) + eps)
    return ps, ms, vs


def ref_rmsprop(lr, rho, eps, momentum, centered, steps=3):
    ps = [p.copy() for p in P0]
    ms = [np.zeros_like(p) for p in ps]
    mg = [np.zeros_like(p) for p in ps]
    mom = [np.zeros_like(p) for p in ps]
    for _ in range(steps):
        for i, p in enumerate(ps):
            g = _grad(i, p)
            ms[i] = rho * ms[i] + (1 - rho) * g * g
            if centered:
                mg[i] = rho * mg[i] + (1 - rho) * g
                denom = np.sqrt(ms[i] - mg[i] ** 2 + eps)
            else:
                denom = np.sqrt(ms[i] + eps)
            mom[i] = momentum * mom[i] + lr * g / denom
            p -= mom[i]
    return ps


def _close(params, expected):
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.numpy(), e, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- trajectories
def test_sgd_trajectory():
    params = _params()
    _train(paddle.optimizer.SGD(learning_rate=0.05, parameters=params), params)
    _close(params, ref_sgd(0.05))


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_trajectory(nesterov):
    params = _params()
    opt = paddle.optimizer.Momentum(learning_rate=0.02, momentum=0.8, parameters=params, use_nesterov=nesterov)
    _train(opt, params)
    _close(params, ref_momentum(0.02, 0.8, nesterov))


def test_adam_trajectory_and_moments():
    params = _params()
    opt = paddle.optimizer.Adam(learning_rate=0.01, beta1=0.8, beta2=0.95, epsilon=1e-6, parameters=params)
    _train(opt, params)
    ps, ms, vs = ref_adam(0.01, 0.8, 0.95, 1e-6)
    _close(params, ps)
    state = opt.state_dict()
    np.testing.assert_allclose(state["w0_moment1_0"].numpy(), ms[0], rtol=1e-10)
    np.testing.assert_allclose(state["w1_moment2_0"].numpy(), vs[1], rtol=1e-10)
    np.testing.assert_allclose(state["w0_beta1_pow_acc_0"].numpy(), [0.8 ** 4], rtol=1e-12)
    np.testing.assert_allclose(state["w0_beta2_pow_acc_0"].numpy(), [0.95 ** 4], rtol=1e-12)


def test_adam_float32_parameters_stay_float32():
    p = paddle.Parameter(P0[0].astype(np.float32), name="f32")
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=[p])
    (p * p).sum().backward()
    opt.step()
    assert p.dtype == paddle.float32
    expected = P0[0] - 0.01 * np.sign(2 * P0[0])  # first Adam step moves each entry by lr
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_adamw_trajectory_with_lr_ratio_and_decay_filter():
    params = _params()
    opt = paddle.optimizer.AdamW(learning_rate=0.01, parameters=params, weight_decay=0.1,
                                 lr_ratio=lambda p: 0.5 if p.name == "w1" else 1.0,
                                 apply_decay_param_fun=lambda name: name != "w1")
    _train(opt, params)
    ps, _, _ = ref_adam(0.01, decoupled=0.1, lrs=[0.01, 0.005], decay_mask=(True, False))
    _close(params, ps)


def test_adamw_decay_is_decoupled():
    params = _params()
    _train(paddle.optimizer.AdamW(learning_rate=0.01, parameters=params, weight_decay=0.3), params)
    ps, _, _ = ref_adam(0.01, decoupled=0.3)
    _close(params, ps)


@pytest.mark.parametrize("momentum,centered", [(0.0, False), (0.7, True), (0.5, False)])
def test_rmsprop_trajectory(momentum, centered):
    params = _params()
    opt = paddle.optimizer.RMSProp(learning_rate=0.01, rho=0.9, epsilon=1e-6, momentum=momentum,
                                   centered=centered, parameters=params)
    _train(opt, params)
    _close(params, ref_rmsprop(0.01, 0.9, 1e-6, momentum, centered))


# ---------------------------------------------------------------- weight decay
@pytest.mark.parametrize("wd,decay", [
    (0.1, lambda p: 0.1 * p),
    (L2Decay(0.2), lambda p: 0.2 * p),
    (L1Decay(0.3), lambda p: 0.3 * np.sign(p)),
])
def test_sgd_weight_decay(wd, decay):
    params = _params()
    _train(paddle.optimizer.SGD(learning_rate=0.05, parameters=params, weight_decay=wd), params)
    _close(params, ref_sgd(0.05, decay=decay))


def test_parameter_regularizer_overrides_optimizer_weight_decay():
    params = _params()
    params[1].regularizer = L2Decay(0.5)
    _train(paddle.optimizer.SGD(learning_rate=0.05, parameters=params, weight_decay=0.1), params, steps=1)
    np.testing.assert_allclose(params[0].numpy(), P0[0] - 0.05 * (_grad(0, P0[0]) + 0.1 * P0[0]), rtol=1e-12)
    np.testing.assert_allclose(params[1].numpy(), P0[1] - 0.05 * (_grad(1, P0[1]) + 0.5 * P0[1]), rtol=1e-12)


def test_regularization_leaves_the_gradient_untouched():
    params = _params()
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=params, weight_decay=0.1)
    _loss(params).backward()
    g = params[0].grad.numpy()
    opt.step()
    np.testing.assert_array_equal(params[0].grad.numpy(), g)


# ---------------------------------------------------------------- groups and per-parameter lr
def test_param_groups_scale_lr_and_weight_decay():
    params = _params()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[
        {"params": [params[0]]},
        {"params": [params[1]], "learning_rate": 0.5, "weight_decay": 0.2},
    ])
    _train(opt, params, steps=1)
    np.testing.assert_allclose(params[0].numpy(), P0[0] - 0.1 * _grad(0, P0[0]), rtol=1e-12)
    np.testing.assert_allclose(params[1].numpy(), P0[1] - 0.05 * (_grad(1, P0[1]) + 0.2 * P0[1]), rtol=1e-12)


def test_param_group_overrides_adam_hyperparameters():
    params = _params()
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=[
        {"params": params[:1], "beta1": 0.5},
        {"params": params[1:]},
    ])
    _train(opt, params, steps=2)
    ps_default, _, _ = ref_adam(0.01, steps=2)
    ps_b1, _, _ = ref_adam(0.01, b1=0.5, steps=2)
    np.testing.assert_allclose(params[0].numpy(), ps_b1[0], rtol=1e-10)
    np.testing.assert_allclose(params[1].numpy(), ps_default[1], rtol=1e-10)


def test_optimize_attr_learning_rate_multiplier():
    params = _params()
    params[1].optimize_attr["learning_rate"] = 0.1
    _train(paddle.optimizer.SGD(learning_rate=0.05, parameters=params), params, steps=1)
    np.testing.assert_allclose(params[1].numpy(), P0[1] - 0.005 * _grad(1, P0[1]), rtol=1e-12)


def test_step_skips_params_without_grad_or_stop_gradient():
    params = _params()
    frozen = paddle.Parameter(np.ones(3), name="frozen")
    frozen.stop_gradient = True
    unused = paddle.Parameter(np.ones(2), name="unused")
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=[*params, frozen, unused])
    _train(opt, params, steps=1)
    np.testing.assert_array_equal(frozen.numpy(), np.ones(3))
    np.testing.assert_array_equal(unused.numpy(), np.ones(2))
    assert "unused_moment1_0" not in opt.state_dict()


def test_clear_grad_zeroes_or_drops():
    params = _params()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=params)
    _loss(params).backward()
    opt.clear_grad()
    np.testing.assert_array_equal(params[0].grad.numpy(), np.zeros(SHAPES[0]))
    opt.clear_grad(set_to_zero=False)
    assert params[0].grad is None


def test_minimize_runs_backward_once():
    params = _params()
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=params)
    ops, params_grads = opt.minimize(_loss(params))
    assert ops is None and [p for p, _ in params_grads] == params
    _close(params, ref_sgd(0.05, steps=1))
    opt.clear_grad()
    loss = _loss(params)
    loss.backward()
    opt.minimize(loss)  # backward already ran: gradients are not accumulated twice
    _close(params, ref_sgd(0.05, steps=2))


def test_minimize_with_no_grad_set():
    params = _params()
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=params)
    opt.minimize(_loss(params), no_grad_set={"w1"})
    np.testing.assert_array_equal(params[1].numpy(), P0[1])
    np.testing.assert_allclose(params[0].numpy(), P0[0] - 0.05 * _grad(0, P0[0]), rtol=1e-12)


# ---------------------------------------------------------------- learning rates
def test_get_lr_set_lr():
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=_params())
    assert opt.get_lr() == 0.1
    opt.set_lr(0.01)
    assert opt.get_lr() == 0.01
    with pytest.raises(TypeError, match="set_lr must be float"):
        opt.set_lr("0.1")
    opt.set_lr_scheduler(sched.StepDecay(0.5, step_size=2))
    assert opt.get_lr() == 0.5
    with pytest.raises(RuntimeError, match="can't be LRScheduler"):
        opt.set_lr(0.1)
    with pytest.raises(TypeError, match="must be LRScheduler"):
        opt.set_lr_scheduler(0.1)


def _values(s, n=8):
    out = []
    for _ in range(n):
        out.append(s())
        s.step()
    return out


@pytest.mark.parametrize("make,formula", [
    (lambda: sched.StepDecay(0.5, step_size=3, gamma=0.5), lambda e: 0.5 * 0.5 ** (e // 3)),
    (lambda: sched.MultiStepDecay(0.5, milestones=[2, 5], gamma=0.1),
     lambda e: 0.5 * 0.1 ** ((e >= 2) + (e >= 5))),
    (lambda: sched.ExponentialDecay(0.5, gamma=0.9), lambda e: 0.5 * 0.9 ** e),
    (lambda: sched.NaturalExpDecay(0.5, gamma=0.2), lambda e: 0.5 * math.exp(-0.2 * e)),
    (lambda: sched.InverseTimeDecay(0.5, gamma=0.3), lambda e: 0.5 / (1 + 0.3 * e)),
    (lambda: sched.CosineAnnealingDecay(0.5, T_max=5, eta_min=0.1),
     lambda e: 0.1 + 0.4 * (1 + math.cos(math.pi * e / 5)) / 2),
    (lambda: sched.PiecewiseDecay(boundaries=[2, 4], values=[1.0, 0.5, 0.1]),
     lambda e: 1.0 if e < 2 else (0.5 if e < 4 else 0.1)),
    (lambda: sched.NoamDecay(d_model=16, warmup_steps=3),
     lambda e: 16 ** -0.5 * min(1.0 if e == 0 else e ** -0.5, 3 ** -1.5 * e)),
    (lambda: sched.LambdaDecay(0.5, lr_lambda=lambda e: 0.95 ** e), lambda e: 0.5 * 0.95 ** e),
    (lambda: sched.MultiplicativeDecay(0.5, lr_lambda=lambda e: 0.9), lambda e: 0.5 * 0.9 ** e),
    (lambda: sched.PolynomialDecay(0.5, decay_steps=4, end_lr=0.1, power=2.0),
     lambda e: 0.4 * (1 - min(e, 4) / 4) ** 2 + 0.1),
    (lambda: sched.PolynomialDecay(0.5, decay_steps=3, end_lr=0.1, cycle=True),
     lambda e: 0.4 * (1 - e / (3 * max(1, math.ceil(e / 3)))) + 0.1),
    (lambda: sched.LinearWarmup(0.5, warmup_steps=4, start_lr=0.0, end_lr=0.5),
     lambda e: 0.5 * e / 4 if e < 4 else 0.5),
    (lambda: sched.LinearWarmup(sched.ExponentialDecay(0.5, gamma=0.9), warmup_steps=2, start_lr=0.1, end_lr=0.5),
     lambda e: 0.1 + 0.2 * e if e < 2 else 0.5 * 0.9 ** (e - 2)),
])
def test_schedulers_match_closed_forms(make, formula):
    np.testing.assert_allclose(_values(make(), 12), [formula(e) for e in range(12)], rtol=1e-12, atol=1e-15)


def test_scheduler_step_to_epoch_uses_closed_form():
    s = sched.CosineAnnealingDecay(1.0, T_max=4)
    s.step(3)
    assert s.last_epoch == 3
    assert s() == pytest.approx((1 + math.cos(math.pi * 3 / 4)) / 2)


def test_multiplicative_decay_get_lr_is_the_current_rate():
    # Paddle's get_lr is the closed-form product, so code that logs scheduler.get_lr() between steps
    # reads the current rate and leaves the schedule alone
    s = sched.MultiplicativeDecay(0.5, lr_lambda=lambda e: 1 - 0.1 * e)
    rates = []
    for _ in range(5):
        rates.append(s.get_lr())
        assert s.get_lr() == s()
        s.step()
    np.testing.assert_allclose(rates, [0.5 * math.prod(1 - 0.1 * k for k in range(1, e + 1)) for e in range(5)],
                               rtol=1e-12)


def test_reduce_on_plateau():
    s = sched.ReduceOnPlateau(1.0, patience=1, factor=0.5, cooldown=1)
    lrs = []
    for metric in [5.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]:
        s.step(paddle.to_tensor(metric))
        lrs.append(s())
    # 5 best, 4 best, then bad epochs 1, 2 (> patience: halve, cooldown 1), cooldown, 1, 2 (halve)
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]
    with pytest.raises(ValueError, match="mode"):
        sched.ReduceOnPlateau(1.0, mode="up")


def test_scheduler_state_dict_round_trip():
    s = sched.LinearWarmup(sched.StepDecay(0.5, step_size=2), warmup_steps=2, start_lr=0.0, end_lr=0.5)
    for _ in range(5):
        s.step()
    t = sched.LinearWarmup(sched.StepDecay(0.5, step_size=2), warmup_steps=2, start_lr=0.0, end_lr=0.5)
    t.set_state_dict(s.state_dict())
    assert _values(s, 4) == _values(t, 4)
    with pytest.raises(RuntimeError, match="last_lr"):
        sched.StepDecay(0.5, step_size=2).set_state_dict({"last_epoch": 3})


def test_scheduler_argument_errors():
    with pytest.raises(TypeError, match="step_size"):
        sched.StepDecay(0.5, step_size=1.5)
    with pytest.raises(ValueError, match="gamma"):
        sched.StepDecay(0.5, step_size=2, gamma=1.5)
    with pytest.raises(ValueError, match="increasing"):
        sched.MultiStepDecay(0.5, milestones=[3, 2])
    with pytest.raises(ValueError, match="len\\(values\\)"):
        sched.PiecewiseDecay([1, 2], [0.1])
    with pytest.raises(TypeError, match="lr_lambda"):
        sched.LambdaDecay(0.5, lr_lambda=3)
    with pytest.raises(TypeError, match="learning_rate"):
        sched.ExponentialDecay("0.5", gamma=0.5)


def test_optimizer_follows_scheduler():
    params = _params()
    s = sched.StepDecay(0.1, step_size=1, gamma=0.5)
    opt = paddle.optimizer.SGD(learning_rate=s, parameters=params)
    for _ in range(3):
        _loss(params).backward()
        opt.step()
        opt.clear_grad()
        s.step()
    ps = [p.copy() for p in P0]
    for lr in (0.1, 0.05, 0.025):
        for i, p in enumerate(ps):
            p -= lr * _grad(i, p)
    _close(params, ps)


# ---------------------------------------------------------------- gradient clipping
def _pairs(grads, need_clip=(True, True, True)):
    out = []
    for i, g in enumerate(grads):
        p = paddle.Parameter(np.zeros_like(g), name=f"c{i}")
        p.need_clip = need_clip[i]
        out.append((p, paddle.to_tensor(g)))
    return out


GRADS = [RNG.normal(size=(3, 4)) * 3, RNG.normal(size=5), RNG.normal(size=(2, 2)) * 0.01]


def test_clip_by_global_norm():
    pairs = _pairs(GRADS, need_clip=(True, True, False))
    out = ClipGradByGlobalNorm(clip_norm=1.0)(pairs)
    norm = math.sqrt(sum((g ** 2).sum() for g in GRADS[:2]))
    for (p, g), ref in zip(out, [GRADS[0] / norm, GRADS[1] / norm, GRADS[2]]):
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-12)
    assert out[2][1] is pairs[2][1]  # need_clip=False passes through
    np.testing.assert_array_equal(pairs[0][1].numpy(), GRADS[0])  # inputs untouched


def test_clip_by_global_norm_below_threshold_is_identity():
    out = ClipGradByGlobalNorm(clip_norm=1e6)(_pairs(GRADS))
    for (_, g), ref in zip(out, GRADS):
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-12)


def test_clip_by_norm_and_value():
    out = ClipGradByNorm(clip_norm=0.5)(_pairs(GRADS))
    for (_, g), ref in zip(out, GRADS):
        n = np.sqrt((ref ** 2).sum())
        np.testing.assert_allclose(g.numpy(), ref * 0.5 / max(n, 0.5), rtol=1e-12)
    out = ClipGradByValue(max=0.5)(_pairs(GRADS))
    for (_, g), ref in zip(out, GRADS):
        np.testing.assert_allclose(g.numpy(), np.clip(ref, -0.5, 0.5))
    out = ClipGradByValue(max=0.5, min=0.0)(_pairs(GRADS))
    np.testing.assert_allclose(out[1][1].numpy(), np.clip(GRADS[1], 0.0, 0.5))


def test_clip_errors():
    with pytest.raises(ValueError, match="clip_norm"):
        ClipGradByGlobalNorm(clip_norm=0)
    with pytest.raises(TypeError, match="clip_norm"):
        ClipGradByNorm(clip_norm="1")
    with pytest.raises(ValueError, match="min"):
        ClipGradByValue(max=0.1, min=0.5)
    with pytest.raises(TypeError, match="pair"):
        ClipGradByValue(max=1.0)([1, 2])


def test_optimizer_applies_global_norm_clip():
    params = _params()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=params, grad_clip=ClipGradByGlobalNorm(1.0))
    _train(opt, params, steps=1)
    gs = [_grad(i, p) for i, p in enumerate(P0)]
    norm = math.sqrt(sum((g ** 2).sum() for g in gs))
    scale = 1.0 / max(norm, 1.0)
    for p, p0, g in zip(params, P0, gs):
        np.testing.assert_allclose(p.numpy(), p0 - 0.1 * g * scale, rtol=1e-12)


# ---------------------------------------------------------------- state dict
def _make_adam(params, **kw):
    return paddle.optimizer.Adam(learning_rate=sched.ExponentialDecay(0.01, gamma=0.9), parameters=params, **kw)


def test_state_dict_round_trip_continues_identically(tmp_path):
    a_params = _params()
    a = _make_adam(a_params)
    for _ in range(2):
        _train(a, a_params, steps=1)
        a._learning_rate.step()
    paddle.save(a.state_dict(), str(tmp_path / "opt.pdopt"))
    paddle.save({p.name: p for p in a_params}, str(tmp_path / "m.pdparams"))

    b_params = _params()
    b = _make_adam(b_params)
    loaded = paddle.load(str(tmp_path / "m.pdparams"))
    for p in b_params:
        p.set_value(loaded[p.name])
    b.set_state_dict(paddle.load(str(tmp_path / "opt.pdopt")))
    assert b.get_lr() == a.get_lr()
    _train(a, a_params, steps=2)
    _train(b, b_params, steps=2)
    for p, q in zip(a_params, b_params):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        if k != "LR_Scheduler":
            np.testing.assert_array_equal(sa[k].numpy(), sb[k].numpy())


def test_set_state_dict_after_accumulators_exist():
    params = _params()
    opt = paddle.optimizer.Momentum(learning_rate=0.1, parameters=params)
    _train(opt, params, steps=1)
    state = {k: paddle.to_tensor(np.full(v.shape, 2.0)) for k, v in opt.state_dict().items()}
    opt.set_state_dict(state)
    np.testing.assert_array_equal(opt.state_dict()["w0_velocity_0"].numpy(), np.full(SHAPES[0], 2.0))
    with pytest.raises(ValueError, match="w0_velocity_0"):
        opt.set_state_dict({"w0_velocity_0": np.zeros(7)})
    np.testing.assert_array_equal(opt.state_dict()["w0_velocity_0"].numpy(), np.full(SHAPES[0], 2.0))


def test_loaded_state_with_wrong_shape_fails_at_step_without_changes():
    params = _params()
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=params)
    opt.set_state_dict({"w1_moment1_0": np.zeros(3)})
    _loss(params).backward()
    with pytest.raises(ValueError, match="w1_moment1_0"):
        opt.step()
    for p, p0 in zip(params, P0):
        np.testing.assert_array_equal(p.numpy(), p0)
    assert not any(k.endswith("_0") and not k.startswith("w1_moment1") for k in opt.state_dict())


# ---------------------------------------------------------------- atomic failing steps
def _trained_adam():
    params = _params()
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=params)
    _train(opt, params, steps=1)
    _loss(params).backward()
    return params, opt


def _snapshot(params, opt):
    return [p.numpy() for p in params], {k: v.numpy() for k, v in opt.state_dict().items()}


def _assert_unchanged(params, opt, snap):
    ps, state = snap
    for p, before in zip(params, ps):
        np.testing.assert_array_equal(p.numpy(), before)
    now = opt.state_dict()
    assert now.keys() == state.keys()
    for k, v in state.items():
        np.testing.assert_array_equal(now[k].numpy(), v)


def test_failing_step_wrong_grad_dtype_changes_nothing():
    params, opt = _trained_adam()
    snap = _snapshot(params, opt)
    params[1].grad = paddle.to_tensor(np.ones(5, np.float32))
    with pytest.raises(TypeError, match="adam: argument 'grad' has dtype float32"):
        opt.step()
    _assert_unchanged(params, opt, snap)


def test_failing_step_wrong_grad_shape_changes_nothing():
    params, opt = _trained_adam()
    snap = _snapshot(params, opt)
    params[1]._grad = paddle.to_tensor(np.ones(4))  # bypasses the setter's shape check
    with pytest.raises(ValueError, match="argument 'grad' has shape \\[4\\]"):
        opt.step()
    _assert_unchanged(params, opt, snap)


def test_failing_step_nan_learning_rate_changes_nothing():
    params, opt = _trained_adam()
    snap = _snapshot(params, opt)
    params[1].optimize_attr["learning_rate"] = float("nan")
    with pytest.raises(ValueError, match="learning rate of parameter 'w1'"):
        opt.step()
    _assert_unchanged(params, opt, snap)


def test_failing_first_step_creates_no_accumulators():
    params = _params()
    opt = paddle.optimizer.RMSProp(learning_rate=sched.LambdaDecay(0.1, lambda e: float("inf")), parameters=params)
    _loss(params).backward()
    with pytest.raises(ValueError, match="finite"):
        opt.step()
    assert opt.state_dict() == {"LR_Scheduler": {"last_epoch": 0, "last_lr": float("inf")}}
    for p, p0 in zip(params, P0):
        np.testing.assert_array_equal(p.numpy(), p0)


# ---------------------------------------------------------------- constructor errors
def test_constructor_errors():
    params = _params()
    with pytest.raises(ValueError, match="beta1"):
        paddle.optimizer.Adam(beta1=1.0, parameters=params)
    with pytest.raises(ValueError, match="epsilon"):
        paddle.optimizer.Adam(epsilon=-1.0, parameters=params)
    with pytest.raises(TypeError, match="learning rate should be float or LRScheduler"):
        paddle.optimizer.SGD(learning_rate="0.1", parameters=params)
    with pytest.raises(TypeError, match="grad_clip"):
        paddle.optimizer.SGD(parameters=params, grad_clip=1.0)
    with pytest.raises(TypeError, match="iterable"):
        paddle.optimizer.SGD(parameters=params[0])
    with pytest.raises(ValueError, match="more than one parameter group"):
        paddle.optimizer.SGD(parameters=[{"params": params}, {"params": params[:1]}])
    with pytest.raises(TypeError, match="weight_decay"):
        paddle.optimizer.SGD(parameters=params, weight_decay="0.1")
    with pytest.raises(TypeError, match="lr_ratio"):
        paddle.optimizer.AdamW(parameters=params, lr_ratio=0.5)
    with pytest.raises(ValueError, match="rho"):
        paddle.optimizer.RMSProp(0.1, rho=-0.5, parameters=params)
    with pytest.raises(AttributeError, match="should not be None"):
        paddle.optimizer.SGD().step()


# ---------------------------------------------------------------- the update ops themselves
def test_update_ops_write_in_place_and_return_the_same_arrays():
    p, g, m1, m2 = (RNG.normal(size=4) for _ in range(4))
    m2 = np.abs(m2)
    b1p, b2p, lr = np.array([0.9]), np.array([0.999]), np.array([0.1])
    arrays = (p, g, lr, m1, m2, b1p, b2p)
    expected_p = p - 0.1 * (0.9 * m1 + 0.1 * g) / (1 - 0.9) / (
        np.sqrt((0.999 * m2 + 0.001 * g * g) / (1 - 0.999)) + 1e-8)
    out = oo.ADAM.kernel(np, *arrays, beta1=0.9, beta2=0.999, epsilon=1e-8)
    assert all(o is a for o, a in zip(out, (p, m1, m2, b1p, b2p)))
    np.testing.assert_allclose(p, expected_p, rtol=1e-12)
    np.testing.assert_allclose(b1p, [0.81])


def test_update_op_meta_errors_name_the_argument():
    spec = oo.TensorSpec
    f64 = np.dtype("float64")
    p, one = spec((3, 4), f64), spec((1,), f64)
    with pytest.raises(ValueError, match="adam: argument 'moment1' has shape \\[4\\]"):
        oo.ADAM.meta(p, p, one, spec((4,), f64), p, one, one, beta1=0.9, beta2=0.999, epsilon=1e-8)
    with pytest.raises(TypeError, match="momentum: argument 'velocity' has dtype float32"):
        oo.MOMENTUM.meta(p, p, one, spec((3, 4), np.dtype("float32")), mu=0.9, use_nesterov=False)
    with pytest.raises(ValueError, match="sgd: argument 'learning_rate' must hold exactly one element"):
        oo.SGD.meta(p, p, spec((2,), f64))
    with pytest.raises(TypeError, match="sgd: argument 'param' must be a floating tensor"):
        oo.SGD.meta(spec((3,), np.dtype("int64")), spec((3,), np.dtype("int64")), one)
    with pytest.raises(ValueError, match="attribute 'beta2' must be in \\[0, 1\\)"):
        oo.ADAM.meta(p, p, one, p, p, one, one, beta1=0.9, beta2=1.0, epsilon=1e-8)
    with pytest.raises(ValueError, match="rmsprop: argument 'mean_grad' is required"):
        oo.RMSPROP.meta(p, p, one, p, p, None, epsilon=1e-6, decay=0.9, momentum=0.0, centered=False)


def test_param_group_option_errors():
    params = _params()
    with pytest.raises(TypeError, match="weight_decay"):
        paddle.optimizer.SGD(parameters=[{"params": params, "weight_decay": "x"}])
    with pytest.raises(TypeError, match="grad_clip"):
        paddle.optimizer.SGD(parameters=[{"params": params, "grad_clip": 1.0}])
    with pytest.raises(ValueError, match="beta2"):
        paddle.optimizer.Adam(parameters=[{"params": params, "beta2": 1.5}])
    with pytest.raises(TypeError, match="'params'"):
        paddle.optimizer.SGD(parameters=[{"params": params}, {"lr": 0.1}])
