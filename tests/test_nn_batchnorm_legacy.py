"""The legacy `paddle.nn.BatchNorm(num_channels, act=...)` against NumPy: which statistics it
normalises with (Paddle's kernel rule: running ones in eval mode unless trainable_statistics,
always with use_global_stats), the running-statistics update, the activation; and under
to_static in eval mode, the same result as eager."""
import numpy as np

import runtime as paddle
import runtime.nn as nn
from sot_helpers import captured, jit_of

EPS = 1e-5
AXES = (0, 2, 3)


def _bn(**kwargs) -> nn.BatchNorm:
    """A float64 BatchNorm over 3 channels with non-trivial weight, bias and running statistics."""
    paddle.set_default_dtype("float64")
    layer = nn.BatchNorm(3, dtype="float64", **kwargs)
    layer.weight.set_value(np.array([0.5, 1.5, -2.0]))
    layer.bias.set_value(np.array([0.1, -0.3, 0.7]))
    layer._mean.set_value(np.array([0.2, -0.4, 1.0]))
    layer._variance.set_value(np.array([0.5, 2.0, 3.0]))
    return layer


def _normalised(x: np.ndarray, mean: np.ndarray, var: np.ndarray, layer: nn.BatchNorm) -> np.ndarray:
    shape = (1, -1, 1, 1)
    w, b = layer.weight.numpy().reshape(shape), layer.bias.numpy().reshape(shape)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPS) * w + b


def _running(layer: nn.BatchNorm) -> tuple[np.ndarray, np.ndarray]:
    return layer._mean.numpy().copy(), layer._variance.numpy().copy()


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def test_eval_uses_running_statistics_after_training_steps():
    rng = np.random.default_rng(0)
    momentum = 0.8
    bn = _bn(act="sigmoid", momentum=momentum)
    mean, var = _running(bn)
    for _ in range(3):
        x = rng.normal(2.0, 3.0, size=(4, 3, 2, 2))
        out = bn(paddle.to_tensor(x))
        batch_mean, batch_var = x.mean(AXES), x.var(AXES)  # biased variance, as Paddle
        np.testing.assert_allclose(out.numpy(), _sigmoid(_normalised(x, batch_mean, batch_var, bn)), rtol=1e-10)
        mean = momentum * mean + (1 - momentum) * batch_mean
        var = momentum * var + (1 - momentum) * batch_var
        np.testing.assert_allclose(bn._mean.numpy(), mean, rtol=1e-12)
        np.testing.assert_allclose(bn._variance.numpy(), var, rtol=1e-12)
    bn.eval()
    before = _running(bn)
    x = rng.normal(size=(2, 3, 2, 2))
    out = bn(paddle.to_tensor(x))
    np.testing.assert_allclose(out.numpy(), _sigmoid(_normalised(x, mean, var, bn)), rtol=1e-10)
    for kept, was in zip(_running(bn), before):  # eval leaves the running statistics alone
        np.testing.assert_array_equal(kept, was)


def test_is_test_starts_the_layer_in_eval_mode():
    bn = _bn(is_test=True)
    assert not bn.training
    x = np.random.default_rng(1).normal(size=(4, 3, 2, 2))
    mean, var = _running(bn)
    np.testing.assert_allclose(bn(paddle.to_tensor(x)).numpy(), _normalised(x, mean, var, bn), rtol=1e-10)


def test_use_global_stats_uses_running_statistics_in_train_mode():
    bn = _bn(use_global_stats=True)
    assert bn.training
    x = np.random.default_rng(2).normal(size=(4, 3, 2, 2))
    mean, var = _running(bn)
    np.testing.assert_allclose(bn(paddle.to_tensor(x)).numpy(), _normalised(x, mean, var, bn), rtol=1e-10)
    np.testing.assert_array_equal(bn._mean.numpy(), mean)
    np.testing.assert_array_equal(bn._variance.numpy(), var)


def test_trainable_statistics_uses_batch_statistics_in_eval_where_the_default_uses_running_ones():
    x = np.random.default_rng(3).normal(size=(4, 3, 2, 2))
    default, trainable = _bn(), _bn(trainable_statistics=True)
    default.eval()
    trainable.eval()
    mean, var = _running(default)
    np.testing.assert_allclose(default(paddle.to_tensor(x)).numpy(), _normalised(x, mean, var, default), rtol=1e-10)
    np.testing.assert_allclose(trainable(paddle.to_tensor(x)).numpy(),
                               _normalised(x, x.mean(AXES), x.var(AXES), trainable), rtol=1e-10)
    # Paddle's kernel updates the running statistics whenever it normalises by the batch ones
    np.testing.assert_allclose(trainable._mean.numpy(), 0.9 * mean + 0.1 * x.mean(AXES), rtol=1e-12)


def test_to_static_in_eval_mode_equals_eager_and_uses_running_statistics():
    rng = np.random.default_rng(4)
    bn = _bn(act="relu")
    for _ in range(2):
        bn(paddle.to_tensor(rng.normal(1.0, 2.0, size=(4, 3, 2, 2))))
    bn.eval()
    mean, var = _running(bn)

    def forward(x):
        return bn(x) * 2.0

    x = rng.normal(size=(2, 3, 2, 2))
    captured(forward, paddle.to_tensor(x))
    jit = jit_of(forward)
    np.testing.assert_allclose(jit(paddle.to_tensor(x)).numpy(),
                               np.maximum(_normalised(x, mean, var, bn), 0.0) * 2.0, rtol=1e-10)
    np.testing.assert_array_equal(bn._mean.numpy(), mean)
    np.testing.assert_array_equal(bn._variance.numpy(), var)
