"""OneCycleLR, CyclicLR, LinearLR and CosineAnnealingWarmRestarts: 30 rates equal Paddle 3.3.1's,
state_dict round trips continue the schedule, bad arguments raise Paddle's error types."""
import numpy as np
import pytest

import runtime as paddle

from fixtures.paddle.more_apis_cases import load, rates, schedulers

L = paddle.optimizer.lr
REF = load()["lr"]
MAKERS = schedulers(paddle)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_thirty_rates_equal_paddle(name):
    s = MAKERS[name]()
    np.testing.assert_allclose(rates(s, 30), REF[name]["values"], rtol=1e-6, atol=1e-7)
    assert sorted(s.state_dict()) == REF[name]["state_keys"]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_state_dict_round_trip_continues_the_schedule(name):
    a = MAKERS[name]()
    rates(a, 13)
    b = MAKERS[name]()
    b.set_state_dict(a.state_dict())
    assert rates(b, 10) == rates(a, 10)


def test_onecycle_past_total_steps_raises():
    s = L.OneCycleLR(0.1, 3)
    s.step(), s.step(), s.step()
    with pytest.raises(ValueError, match="total steps"):
        s.step()


def test_warm_restarts_jump_to_epoch_equals_stepping():
    a, b = L.CosineAnnealingWarmRestarts(0.5, 3, T_mult=2), L.CosineAnnealingWarmRestarts(0.5, 3, T_mult=2)
    rates(a, 22)
    b.step(21)
    assert (b.last_lr, b.T_cur, b.T_i) == (a.last_lr, a.T_cur, a.T_i)


def test_scheduler_drives_an_optimizer():
    lin = paddle.nn.Linear(2, 2)
    sched = L.CyclicLR(0.1, 1.0, 2)
    opt = paddle.optimizer.SGD(sched, parameters=lin.parameters())
    sched.step()
    assert opt.get_lr() == sched.last_lr == pytest.approx(0.55)


@pytest.mark.parametrize("make,error,arg", [
    (lambda: L.OneCycleLR("1", 10), TypeError, "max_learning_rate"),
    (lambda: L.OneCycleLR(1.0, 0), ValueError, "total_steps"),
    (lambda: L.OneCycleLR(1.0, 10, phase_pct=1), TypeError, "phase_pct"),
    (lambda: L.OneCycleLR(1.0, 10, phase_pct=0.5, three_phase=True), ValueError, "phase_pct"),
    (lambda: L.OneCycleLR(1.0, 10, anneal_strategy="exp"), ValueError, "anneal_strategy"),
    (lambda: L.CyclicLR(0.1, 1.0, 0), ValueError, "step_size_up"),
    (lambda: L.CyclicLR(0.1, 1.0, 2, step_size_down=1.5), TypeError, "step_size_down"),
    (lambda: L.CyclicLR(0.1, 1.0, 2, exp_gamma=1), TypeError, "exp_gamma"),
    (lambda: L.CyclicLR(0.1, 1.0, 2, mode="tri"), ValueError, "mode"),
    (lambda: L.CyclicLR(0.1, 1.0, 2, scale_mode="epoch"), ValueError, "scale_mode"),
    (lambda: L.LinearLR(0.1, 10, start_factor=0.0), ValueError, "start_factor"),
    (lambda: L.LinearLR(0.1, 10, end_factor=1.5), ValueError, "end_factor"),
    (lambda: L.CosineAnnealingWarmRestarts(0.1, 0), ValueError, "T_0"),
    (lambda: L.CosineAnnealingWarmRestarts(0.1, 2, T_mult=0), ValueError, "T_mult"),
])
def test_bad_arguments_raise_paddle_error_types_naming_the_argument(make, error, arg):
    with pytest.raises(error, match=arg):
        make()
