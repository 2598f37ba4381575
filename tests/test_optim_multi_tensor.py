"""The multi-tensor optimizer step: small parameters that share their scalars are updated by one
kernel call over staged flat arrays, large ones one by one. Every elementwise update must give the
same bits as the one-parameter-at-a-time step (run here by making no parameter count as small),
with regularizers, lr multipliers, schedulers, gradient clipping, parameter groups, frozen
parameters and parameters whose first gradient comes late; Adam also against a NumPy reference."""
import numpy as np
import pytest

import runtime as paddle
from runtime.nn import ClipGradByGlobalNorm
from runtime.optimizer import lr as sched
from runtime.optimizer import multi_tensor
from runtime.regularizer import L1Decay, L2Decay

# the last shape is large enough to be updated on its own
SHAPES = [(3, 4), (5,), (2, 3, 2), (1,), (7,), (4, 1), (2, 2), (6,), (256, 260)]
LATE = 4  # this parameter gets no gradient in the first step
PAUSED = 2  # this one is frozen (stop_gradient) in the third step only


def _data(dtype="float32"):
    rng = np.random.default_rng(11)
    return ([rng.uniform(0.5, 2.0, s).astype(dtype) for s in SHAPES],
            [rng.normal(size=s).astype(dtype) for s in SHAPES],
            [rng.normal(size=s).astype(dtype) for s in SHAPES])


def _params(dtype="float32"):
    _, _, p0 = _data(dtype)
    params = [paddle.Parameter(p.copy(), name=f"w{i}") for i, p in enumerate(p0)]
    frozen = paddle.Parameter(np.ones(3, dtype), name="frozen")
    frozen.stop_gradient = True
    return params, frozen


def _loss(params, step, dtype="float32"):
    """sum(W * p * p) + sum(C * p) over the parameters (the late one only from the second step)."""
    w, c, _ = _data(dtype)
    total = None
    for i, p in enumerate(params):
        if i == LATE and step == 0:
            continue
        term = (paddle.to_tensor(w[i]) * p * p).sum() + (paddle.to_tensor(c[i]) * p).sum()
        total = term if total is None else total + term
    return total


OPTIMIZERS = {
    "sgd": lambda ps, fz: paddle.optimizer.SGD(learning_rate=0.05, parameters=[*ps, fz], weight_decay=0.01),
    "momentum": lambda ps, fz: paddle.optimizer.Momentum(learning_rate=0.02, momentum=0.8, parameters=[*ps, fz],
                                                         weight_decay=L1Decay(0.01)),
    "nesterov": lambda ps, fz: paddle.optimizer.Momentum(learning_rate=0.02, momentum=0.8, use_nesterov=True,
                                                         parameters=[*ps, fz]),
    "adam": lambda ps, fz: paddle.optimizer.Adam(learning_rate=sched.StepDecay(0.01, step_size=1, gamma=0.7),
                                                 parameters=[*ps, fz], grad_clip=ClipGradByGlobalNorm(1.0)),
    "adam_groups": lambda ps, fz: paddle.optimizer.Adam(learning_rate=0.01, parameters=[
        {"params": ps[:1]}, {"params": [*ps[1:], fz], "learning_rate": 0.5, "beta1": 0.8, "weight_decay": 0.1}]),
    "adamw": lambda ps, fz: paddle.optimizer.AdamW(learning_rate=0.01, weight_decay=0.1, parameters=[*ps, fz],
                                                   apply_decay_param_fun=lambda n: n != "w1",
                                                   lr_ratio=lambda p: 0.5 if p.name == "w2" else 1.0),
    "rmsprop": lambda ps, fz: paddle.optimizer.RMSProp(learning_rate=0.01, momentum=0.5, centered=True,
                                                       parameters=[*ps, fz]),
    "adagrad": lambda ps, fz: paddle.optimizer.Adagrad(learning_rate=0.1, initial_accumulator_value=0.1,
                                                       parameters=[*ps, fz]),
    "adamax": lambda ps, fz: paddle.optimizer.Adamax(learning_rate=0.01, parameters=[*ps, fz]),
}


def _train(name, steps, dtype="float32", calls=None):
    """Parameters and optimizer state after `steps` steps; `calls` counts the update kernel's calls."""
    params, frozen = _params(dtype)
    params[1].regularizer = L2Decay(0.3)
    params[2].optimize_attr["learning_rate"] = 0.25
    opt = OPTIMIZERS[name](params, frozen)
    if calls is not None:
        kernel = opt._op.kernel
        opt._op.kernel = lambda *a, **k: (calls.append(a[1].size), kernel(*a, **k))[1]
    try:
        for step in range(steps):
            params[PAUSED].stop_gradient = step == 2
            _loss(params, step, dtype).backward()
            opt.step()
            opt.clear_grad()
            if isinstance(opt._learning_rate, sched.LRScheduler):
                opt._learning_rate.step()
    finally:
        if calls is not None:
            opt._op.kernel = kernel
    np.testing.assert_array_equal(frozen.numpy(), np.ones(3, dtype))
    return [p.numpy() for p in params], {k: v.numpy() for k, v in opt.state_dict().items() if k != "LR_Scheduler"}


def _assert_bitwise(got, want):
    (gp, gs), (wp, ws) = got, want
    assert gs.keys() == ws.keys()
    for a, b in [*zip(gp, wp), *((gs[k], ws[k]) for k in ws)]:
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))


UPDATES = 4 * len(SHAPES) - 2  # parameter updates in 4 steps (LATE skips one, PAUSED another)


# float16 overflows in the loss and underflows in some moments (one by one alike): still compared bit for bit
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_batched_step_is_the_one_by_one_step_bit_for_bit(name, dtype, monkeypatch):
    calls = []
    batched = _train(name, 4, dtype, calls)
    assert len(calls) < UPDATES  # small parameters did share kernel calls
    assert max(calls) == 256 * 260  # the large one was updated on its own
    monkeypatch.setattr(multi_tensor, "BATCH", 0)
    one_by_one_calls = []
    _assert_bitwise(batched, _train(name, 4, dtype, one_by_one_calls))
    assert len(one_by_one_calls) == UPDATES


def test_batched_adam_matches_numpy_reference():
    """Adam with a step-decay schedule and global-norm clipping, float64 textbook formulas."""
    params, state = _train("adam", 4)
    w, c, p0 = _data()
    ps = [p.astype(np.float64) for p in p0]
    ms, vs = [np.zeros_like(p) for p in ps], [np.zeros_like(p) for p in ps]
    counts = [0] * len(ps)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for step in range(4):
        lr = 0.01 * 0.7 ** step
        live = [i for i in range(len(ps)) if not (i == LATE and step == 0) and not (i == PAUSED and step == 2)]
        grads = {i: 2 * w[i] * ps[i] + c[i] for i in live}
        norm = np.sqrt(sum((g ** 2).sum() for g in grads.values()))
        for i in live:
            g = grads[i] * (1.0 / max(norm, 1.0))
            if i == 1:
                g = g + 0.3 * ps[i]
            counts[i] += 1
            t = counts[i]
            ms[i] = b1 * ms[i] + (1 - b1) * g
            vs[i] = b2 * vs[i] + (1 - b2) * g * g
            plr = lr * (0.25 if i == 2 else 1.0)
            ps[i] = ps[i] - plr * (ms[i] / (1 - b1 ** t)) / (np.sqrt(vs[i] / (1 - b2 ** t)) + eps)
    for i, (got, want) in enumerate(zip(params, ps)):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=f"w{i}")
        np.testing.assert_allclose(state[f"w{i}_moment1_0"], ms[i], rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(state[f"w{i}_beta1_pow_acc_0"], [b1 ** (counts[i] + 1)], rtol=1e-6)


def test_state_dict_round_trip_through_flat_state():
    """Save after two steps, load into a fresh optimizer (state loaded into its flat buffers at its
    first step), continue: identical to never stopping."""
    params_a, frozen_a = _params()
    a = OPTIMIZERS["adam_groups"](params_a, frozen_a)
    params_b, frozen_b = _params()
    b = OPTIMIZERS["adam_groups"](params_b, frozen_b)
    for step in range(2):
        _loss(params_a, step).backward()
        a.step()
        a.clear_grad()
    b.set_state_dict({k: paddle.to_tensor(v.numpy()) for k, v in a.state_dict().items()})
    for p, q in zip(params_a, params_b):
        q.set_value(p.numpy())
    for step in range(2, 4):
        for params, opt in ((params_a, a), (params_b, b)):
            _loss(params, step).backward()
            opt.step()
            opt.clear_grad()
    for p, q in zip(params_a, params_b):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        np.testing.assert_array_equal(sa[k].numpy(), sb[k].numpy())


def test_set_state_dict_writes_into_live_flat_state():
    """Loading into accumulators that exist overwrites the flat buffers in place: the next step
    starts from the loaded velocity."""
    w, c, _ = _data()
    params, frozen = _params()
    params[1].regularizer = None
    opt = paddle.optimizer.Momentum(learning_rate=0.02, momentum=0.8, parameters=[*params, frozen])
    _loss(params, 1).backward()
    opt.step()
    opt.clear_grad()
    opt.set_state_dict({k: np.full(v.shape, 0.5, "float32") for k, v in opt.state_dict().items()})
    before = [p.numpy() for p in params]
    _loss(params, 1).backward()
    opt.step()
    for i, (p, p0) in enumerate(zip(params, before)):
        v = 0.8 * np.float32(0.5) + (2 * w[i] * p0 + c[i])
        np.testing.assert_allclose(p.numpy(), p0 - 0.02 * v, rtol=1e-5, atol=1e-6, err_msg=f"w{i}")
        np.testing.assert_allclose(opt.state_dict()[f"w{i}_velocity_0"].numpy(), v, rtol=1e-5, atol=1e-6)


def test_a_parameter_view_is_updated_on_its_own():
    """A parameter whose array is a view of another array may alias another parameter, so it is
    never staged (the one-by-one order of writes is kept)."""
    base = np.arange(12, dtype="float32") / 10
    views = [paddle.Parameter(base[:6].copy(), name="a"), paddle.Parameter(base[6:].copy(), name="b")]
    views[1]._data = base[6:]
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=views)
    calls = []
    kernel = opt._op.kernel
    opt._op.kernel = lambda *a, **k: (calls.append(a[1].size), kernel(*a, **k))[1]
    try:
        (views[0] * views[0]).sum().backward()
        (views[1] * views[1]).sum().backward()
        opt.step()
    finally:
        opt._op.kernel = kernel
    assert sorted(calls) == [6, 6]
    np.testing.assert_allclose(base[6:], (np.arange(6, 12) / 10) * (1 - 2 * 0.5), rtol=1e-6)


def test_small_parameters_state_is_one_flat_buffer_in_parameter_order():
    params, frozen = _params()
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=[*params, frozen])
    _loss(params, 0).backward()
    opt.step()
    state = opt.state_dict()
    first = [i for i in range(len(SHAPES) - 1) if i != LATE]
    views = [state[f"w{i}_moment2_0"]._data for i in first]
    base = views[0].base
    assert base is not None and all(v.base is base for v in views)
    offsets = [v.__array_interface__["data"][0] - base.__array_interface__["data"][0] for v in views]
    assert offsets == [sum(v.nbytes for v in views[:j]) for j in range(len(views))]


def test_failed_first_step_keeps_no_flat_state_and_changes_nothing():
    """A gradient of the wrong dtype on the last parameter fails the step after the flat
    accumulators were allocated: none is kept, no parameter moved, and the next good step is the
    one-by-one step's first."""
    params, frozen = _params()
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=[*params, frozen])
    _loss(params, 1).backward()
    good = params[-1]._grad
    params[-1]._grad = paddle.to_tensor(good.numpy().astype("float64"))
    with pytest.raises(TypeError, match="dtype"):
        opt.step()
    assert opt.state_dict() == {} and opt._flat_slots == {}
    _, _, p0 = _data()
    for p, want in zip(params, p0):
        np.testing.assert_array_equal(p.numpy(), want)
    params[-1]._grad = good
    opt.step()
    fresh, frozen = _params()
    one = paddle.optimizer.Adam(learning_rate=0.01, parameters=[*fresh, frozen])
    _loss(fresh, 1).backward()
    one.step()
    for p, q in zip(params, fresh):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
