"""Adagrad, Adamax and Lamb: three steps on a small Linear equal Paddle 3.3.1's parameters, in
dynamic mode and through static `minimize`; Paddle's state_dict keys; a state_dict round trip
continues training exactly; param groups, grad_clip and bad arguments."""
import numpy as np
import pytest

import runtime as paddle
from runtime import static

from fixtures.paddle.more_apis_cases import load, optimizers

REF = load()
INIT = {k: np.array(v, "float32") for k, v in REF["opt_init"].items()}
O = paddle.optimizer
MAKERS = optimizers(paddle)


def _linear():
    lin = paddle.nn.Linear(3, 2)
    lin.weight.set_value(INIT["w"])
    lin.bias.set_value(INIT["b"])
    return lin


def _train(lin, opt, steps):
    out = []
    for _ in range(steps):
        ((lin(paddle.to_tensor(INIT["x"])) ** 2).mean()).backward()
        opt.step()
        opt.clear_grad()
        out.append([lin.weight.numpy().copy(), lin.bias.numpy().copy()])
    return out


def _close(got, want):
    np.testing.assert_allclose(got, np.array(want, "float32"), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_three_steps_equal_paddle(kind):
    lin = _linear()
    opt = MAKERS[kind](lin.parameters())
    for (w, b), (rw, rb) in zip(_train(lin, opt, 3), REF["opt"][kind]["steps"]):
        _close(w, rw)
        _close(b, rb)
    keys = sorted(k.replace(lin.weight.name, "W").replace(lin.bias.name, "B") for k in opt.state_dict())
    assert keys == REF["opt"][kind]["state_keys"]


@pytest.mark.parametrize("kind", ["adagrad", "adamax_b", "lamb_excl"])
def test_state_dict_round_trip_continues_exactly(kind):
    lin = _linear()
    opt = MAKERS[kind](lin.parameters())
    _train(lin, opt, 2)

    def snapshot(state):
        return {k: v.numpy().copy() if isinstance(v, paddle.Tensor) else v for k, v in state.items()}

    params, state = snapshot(lin.state_dict()), snapshot(opt.state_dict())
    want = _train(lin, opt, 2)
    lin.set_state_dict(params)
    fresh = MAKERS[kind](lin.parameters())
    fresh.set_state_dict(state)
    for (w, b), (rw, rb) in zip(_train(lin, fresh, 2), want):
        np.testing.assert_array_equal(w, rw)
        np.testing.assert_array_equal(b, rb)


@pytest.mark.parametrize("kind", ["adagrad", "adamax", "lamb_excl"])
def test_static_minimize_equals_paddle(kind):
    paddle.enable_static()
    try:
        main, startup = static.Program(), static.Program()
        with static.program_guard(main, startup):
            x = static.data("x", [4, 3])
            lin = paddle.nn.Linear(3, 2)
            loss = (lin(x) ** 2).mean()
            MAKERS[kind]([lin.weight, lin.bias]).minimize(loss)
        exe, scope = static.Executor(), static.Scope()
        exe.run(startup, scope=scope)
        scope.var(lin.weight.name).set(INIT["w"])
        scope.var(lin.bias.name).set(INIT["b"])
        for rw, rb in REF["opt"][kind]["steps"]:
            exe.run(main, feed={"x": INIT["x"]}, fetch_list=[loss], scope=scope)
            _close(np.array(scope.find_var(lin.weight.name).get_tensor()), rw)
            _close(np.array(scope.find_var(lin.bias.name).get_tensor()), rb)
    finally:
        paddle.disable_static()


def test_param_groups_override_hyperparameters():
    a, b = _linear(), _linear()
    opt = O.Adamax(0.1, parameters=[{"params": [a.weight], "beta1": 0.8, "beta2": 0.9, "epsilon": 1e-3,
                                     "learning_rate": 0.5}, {"params": [a.bias]}])
    ref = O.Adamax(0.05, beta1=0.8, beta2=0.9, epsilon=1e-3, parameters=[b.weight])
    ref_bias = O.Adamax(0.1, parameters=[b.bias])
    for _ in range(2):
        ((a(paddle.to_tensor(INIT["x"])) ** 2).mean()).backward()
        ((b(paddle.to_tensor(INIT["x"])) ** 2).mean()).backward()
        for o in (opt, ref, ref_bias):
            o.step()
            o.clear_grad()
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    np.testing.assert_array_equal(a.bias.numpy(), b.bias.numpy())


def test_grad_clip_applies_before_the_update():
    a, b = _linear(), _linear()
    clip = paddle.nn.ClipGradByValue(0.01)
    opt = O.Lamb(0.1, parameters=a.parameters(), grad_clip=clip)
    ref = O.Lamb(0.1, parameters=b.parameters())
    ((a(paddle.to_tensor(INIT["x"])) ** 2).mean()).backward()
    ((b(paddle.to_tensor(INIT["x"])) ** 2).mean()).backward()
    for p in b.parameters():
        p.grad.set_value(np.clip(p.grad.numpy(), -0.01, 0.01))
    opt.step()
    ref.step()
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())


@pytest.mark.parametrize("make,error,arg", [
    (lambda ps: O.Adagrad(None, parameters=ps), ValueError, "learning_rate"),
    (lambda ps: O.Adagrad(0.1, epsilon=-1.0, parameters=ps), ValueError, "epsilon"),
    (lambda ps: O.Adamax(0.1, beta1=1.0, parameters=ps), ValueError, "beta1"),
    (lambda ps: O.Adamax(0.1, beta2="x", parameters=ps), TypeError, "beta2"),
    (lambda ps: O.Lamb(0.1, lamb_weight_decay=-0.1, parameters=ps), ValueError, "lamb_weight_decay"),
    (lambda ps: O.Lamb(0.1, exclude_from_weight_decay_fn=3, parameters=ps), TypeError,
     "exclude_from_weight_decay_fn"),
    (lambda ps: O.Lamb(0.1, parameters=ps, grad_clip=1.0), TypeError, "grad_clip"),
])
def test_bad_arguments_raise_paddle_error_types_naming_the_argument(make, error, arg):
    with pytest.raises(error, match=arg):
        make(_linear().parameters())


def test_lamb_accepts_multi_precision():
    lin = _linear()
    _train(lin, O.Lamb(0.1, parameters=lin.parameters(), multi_precision=True), 1)
    _close(lin.weight.numpy(), REF["opt"]["lamb"]["steps"][0][0])
