"""paddle.amp under sot.to_static gives the eager result.

Entering `paddle.amp.auto_cast()` checks its arguments, warns and sets the runtime's amp state on every
call, so under to_static it runs for real: the call making it breaks the graph and the block (with the
rest of the frame) runs eagerly, both recorded as SOT-S001. A function compiled outside an auto_cast
block and called inside one (or the reverse) gives what eager code gives there. A training step with a
GradScaler, compiled, trains as the same step run eagerly, skipped inf steps included.
"""
import warnings

import numpy as np
import pytest

import runtime as paddle
import sot
from runtime.amp.state import amp_state

from sot_helpers import assert_same_result, events, jit_of, rand


@pytest.fixture(autouse=True)
def _amp_dtype_restored():
    before = amp_state.amp_dtype
    yield
    amp_state.amp_dtype = before


def _linear():
    lin = paddle.nn.Linear(3, 2)
    lin.weight.set_value(paddle.to_tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)))
    return lin


LIN = _linear()


def forward_under_auto_cast(x):
    y = x * 3
    with paddle.amp.auto_cast():
        y = LIN(y)
    return paddle.nn.functional.softmax(y) * 2


def forward(x):
    return paddle.nn.functional.softmax(LIN(x * 3)) * 2


def _warned(fn, *args):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [(w.category, str(w.message), w.filename, w.lineno) for w in ws]


def test_a_forward_under_auto_cast_gives_the_eager_result_and_warnings_on_every_call():
    x = rand(4, 3)
    jit = jit_of(forward_under_auto_cast)
    for _ in range(3):  # the later calls are served by the cache
        got, got_ws = _warned(jit, x)
        want, want_ws = _warned(forward_under_auto_cast, x)
        assert_same_result(got, want)
        assert got_ws == want_ws and len(want_ws) == 1
    assert [code for code, *_ in events(jit)] == ["SOT-S001", "SOT-S001"]
    assert "paddle.amp.auto_cast" in events(jit)[1][1]


def test_auto_cast_argument_errors_are_raised_as_eagerly():
    def bad_level(x):
        with paddle.amp.auto_cast(level="O3"):
            return x + 1

    with pytest.raises(ValueError, match="level should be O0, OD, O1 or O2"):
        bad_level(rand(2))
    with pytest.raises(ValueError, match="level should be O0, OD, O1 or O2"):
        jit_of(bad_level)(rand(2))


@paddle.amp.auto_cast()
def _decorated(x):
    return x * 2 + 1


def calls_a_function_decorated_with_auto_cast(x):
    return _decorated(x) - 3


def test_a_call_of_a_function_decorated_with_auto_cast_gives_the_eager_result():
    x = rand(4, 3)
    jit = jit_of(calls_a_function_decorated_with_auto_cast)
    for _ in range(2):
        got, got_ws = _warned(jit, x)
        want, want_ws = _warned(calls_a_function_decorated_with_auto_cast, x)
        assert_same_result(got, want)
        assert got_ws == want_ws and len(want_ws) == 1
    assert {code for code, *_ in events(jit)} == {"SOT-S001"}


@pytest.mark.parametrize("first_inside", [False, True])
def test_a_function_compiled_on_one_side_of_auto_cast_is_right_on_the_other(first_inside):
    x = rand(4, 3)
    jit = jit_of(forward)
    order = [True, False] if first_inside else [False, True]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for inside in order * 2:
            if inside:
                with paddle.amp.auto_cast():
                    got, want = jit(x), forward(x)
            else:
                got, want = jit(x), forward(x)
            assert_same_result(got, want)


def _training(seed_weight):
    """A model, its Adam and a GradScaler (init 1024, grows every 2 finite steps), and its train step."""
    model = _linear()
    model.weight.set_value(seed_weight)
    opt = paddle.optimizer.Adam(0.1, parameters=model.parameters())
    scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)

    def train_step(x, factor):
        with paddle.amp.auto_cast():
            loss = (model(x) ** 2 * factor).mean()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        return loss

    return model, scaler, train_step


def _train_like_eager(capsys):
    weight = paddle.to_tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))
    x = rand(4, 3)
    with warnings.catch_warnings():  # the CPU's "makes no effect" warnings
        warnings.simplefilter("ignore")
        eager_model, eager_scaler, eager_step = _training(weight)
        jit_model, jit_scaler, step = _training(weight)
        jit = sot.to_static(step)
        for i in range(6):
            factor = paddle.to_tensor(float("inf") if i in (1, 3, 4) else 1.0)
            want = eager_step(x, factor)
            want_out = capsys.readouterr().out
            got = jit(x, factor)
            assert capsys.readouterr().out == want_out
            assert_same_result(got, want)
            for p, q in zip(jit_model.parameters(), eager_model.parameters()):
                np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=f"step {i}")
            assert str(jit_scaler.state_dict()) == str(eager_scaler.state_dict())
    return jit_scaler, jit_model


def test_a_compiled_training_step_with_a_grad_scaler_trains_as_eagerly_on_the_cpu(capsys):
    """On the CPU the scaler passes everything through (as Paddle's CPU build): the inf steps reach the
    parameters, in both modes."""
    scaler, model = _train_like_eager(capsys)
    assert not scaler.is_enable() and not np.isfinite(model.weight.numpy()).all()


def test_a_compiled_training_step_with_a_grad_scaler_trains_as_eagerly_on_a_gpu(fake_gpu, capsys):
    """Enabled, the scaler skips the inf steps and lowers its scale (printing it), in both modes alike."""
    paddle.set_device("gpu")
    scaler, model = _train_like_eager(capsys)
    assert scaler.is_enable() and np.isfinite(model.weight.numpy()).all()
    assert scaler.state_dict()["scale"].tolist() == [128.0]  # 1024 halved at each of the 3 inf steps
