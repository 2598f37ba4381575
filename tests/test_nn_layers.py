"""nn layers against NumPy references built from each layer's own parameters; gradients reach every
parameter; initializer statistics and fans."""
import math

import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.initializer as I

# ================================================================ initializers


def _param(shape, dtype="float32"):
    return nn.layer.layers.create_parameter(shape, dtype, default_initializer=I.Constant(0.0))


def _check_uniform(values, low, high):
    n = values.size
    assert values.min() >= low and values.max() <= high
    assert abs(values.mean() - (low + high) / 2) < 5 * (high - low) / math.sqrt(12 * n)
    np.testing.assert_allclose(values.var(), (high - low) ** 2 / 12, rtol=0.05)


def _check_normal(values, mean, std):
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(values.size)
    np.testing.assert_allclose(values.std(), std, rtol=0.05)


def test_constant_fills_in_place_and_keeps_dtype():
    p = _param([3, 4], "float64")
    data = p._data
    assert I.Constant(1.5)(p) is p
    assert p._data is data and p.dtype == paddle.float64
    np.testing.assert_array_equal(p.numpy(), np.full([3, 4], 1.5))
    with pytest.raises(TypeError, match="'value' must be a number"):
        I.Constant("1")
    with pytest.raises(TypeError, match="expected a Parameter or Tensor"):
        I.Constant(1.0)(np.zeros(3))


def test_uniform_and_normal_statistics():
    p = _param([200, 100])
    _check_uniform(I.Uniform(-0.5, 1.5)(p).numpy(), -0.5, 1.5)
    _check_normal(I.Normal(1.0, 2.0)(p).numpy(), 1.0, 2.0)
    q = _param([200, 100], "float64")
    assert I.Normal(0.0, 0.5)(q).dtype == paddle.float64
    _check_normal(q.numpy(), 0.0, 0.5)
    with pytest.raises(ValueError, match="'low' .* must not exceed"):
        I.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="'std' must be non-negative"):
        I.Normal(0.0, -1.0)


def test_truncated_normal_stays_in_bounds_with_the_truncated_spread():
    v = I.TruncatedNormal(0.5, 2.0)(_param([200, 100])).numpy()
    assert v.min() >= -2.0 and v.max() <= 2.0  # a, b are absolute bounds
    lo, hi = (-2.0 - 0.5) / 2.0, (2.0 - 0.5) / 2.0
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    mass = cdf(hi) - cdf(lo)
    mean = 0.5 + 2.0 * (pdf(lo) - pdf(hi)) / mass
    var = 4.0 * (1 + (lo * pdf(lo) - hi * pdf(hi)) / mass - ((pdf(lo) - pdf(hi)) / mass) ** 2)
    _check_normal(v, mean, math.sqrt(var))
    with pytest.raises(ValueError, match="'a' .* must be less than"):
        I.TruncatedNormal(a=1.0, b=1.0)


@pytest.mark.parametrize("shape, fans", [([30, 50], (30, 50)), ([8, 6, 3, 3], (54, 72)), ([40], (40, 40)),
                                         ([12, 4, 5], (20, 60))])
def test_xavier_fans_and_spread(shape, fans):
    fan_in, fan_out = fans
    reps = max(1, 20000 // int(np.prod(shape)))
    u = np.concatenate([I.XavierUniform()(_param(shape)).numpy().ravel() for _ in range(reps)])
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    _check_uniform(u, -limit, limit)
    n = np.concatenate([I.XavierNormal(gain=2.0)(_param(shape)).numpy().ravel() for _ in range(reps)])
    _check_normal(n, 0.0, 2.0 * math.sqrt(2.0 / (fan_in + fan_out)))


def test_xavier_and_kaiming_explicit_fans():
    v = I.XavierUniform(fan_in=10, fan_out=14)(_param([100, 200])).numpy()
    _check_uniform(v, -math.sqrt(6 / 24), math.sqrt(6 / 24))
    v = I.KaimingNormal(fan_in=8)(_param([100, 200])).numpy()
    _check_normal(v, 0.0, math.sqrt(2.0 / 8))


def test_kaiming_fans_gains_and_nonlinearities():
    shape = [16, 8, 3, 3]  # fan_in = 8 * 9
    vals = np.concatenate([I.KaimingNormal()(_param(shape)).numpy().ravel() for _ in range(20)])
    _check_normal(vals, 0.0, math.sqrt(2.0) / math.sqrt(72))
    vals = np.concatenate([I.KaimingUniform()(_param(shape)).numpy().ravel() for _ in range(20)])
    limit = math.sqrt(2.0) * math.sqrt(3.0 / 72)
    _check_uniform(vals, -limit, limit)
    vals = np.concatenate([I.KaimingNormal(negative_slope=0.2, nonlinearity="leaky_relu")(_param(shape)).numpy()
                           .ravel() for _ in range(20)])
    _check_normal(vals, 0.0, math.sqrt(2.0 / 1.04) / math.sqrt(72))
    vals = I.KaimingUniform(nonlinearity="tanh")(_param([400, 100])).numpy()
    limit = 5.0 / 3 * math.sqrt(3.0 / 400)
    _check_uniform(vals, -limit, limit)
    with pytest.raises(ValueError, match="nonlinearity 'swish' is not supported"):
        I.KaimingNormal(nonlinearity="swish")


def test_calculate_gain_table():
    assert I.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert I.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert I.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert I.calculate_gain("leaky_relu", 0.5) == pytest.approx(math.sqrt(2 / 1.25))
    assert I.calculate_gain("selu") == 0.75 and I.calculate_gain("conv2d") == 1.0
    with pytest.raises(TypeError, match="'param' must be a number"):
        I.calculate_gain("leaky_relu", "a")


def test_assign_initializer():
    p = _param([2, 3], "float64")
    I.Assign(np.arange(6, dtype=np.float32).reshape(2, 3))(p)
    assert p.dtype == paddle.float64
    np.testing.assert_array_equal(p.numpy(), np.arange(6.0).reshape(2, 3))
    I.Assign([[1, 2, 3], [4, 5, 6]])(p)
    np.testing.assert_array_equal(p.numpy(), [[1, 2, 3], [4, 5, 6]])
    I.Assign(paddle.to_tensor(np.ones([2, 3])))(p)
    np.testing.assert_array_equal(p.numpy(), np.ones([2, 3]))
    with pytest.raises(ValueError, match=r"value has shape \[3\] but the parameter has shape \[2, 3\]"):
        I.Assign(np.ones(3))(p)
    with pytest.raises(TypeError, match="'value' must be a Tensor, NumPy array"):
        I.Assign("abc")


def test_initialization_is_reproducible_under_seed():
    paddle.seed(7)
    a = nn.Linear(5, 6).weight.numpy()
    paddle.seed(7)
    b = nn.Linear(5, 6).weight.numpy()
    np.testing.assert_array_equal(a, b)
    assert np.any(a != nn.Linear(5, 6).weight.numpy())


def test_layer_default_initializers():
    w = np.concatenate([nn.Linear(30, 50).weight.numpy().ravel() for _ in range(10)])
    _check_uniform(w, -math.sqrt(6 / 80), math.sqrt(6 / 80))
    conv = [nn.Conv2D(6, 16, 3) for _ in range(15)]
    _check_normal(np.concatenate([c.weight.numpy().ravel() for c in conv]), 0.0, math.sqrt(2.0 / (9 * 6)))
    assert all(not np.any(c.bias.numpy()) for c in conv)
    grouped = [nn.Conv2D(6, 12, 3, groups=3) for _ in range(30)]  # std uses all in_channels, as Paddle
    _check_normal(np.concatenate([c.weight.numpy().ravel() for c in grouped]), 0.0, math.sqrt(2.0 / (9 * 6)))
    # transposed filters [in, out/groups, k, k] take the default Xavier: fan_in = 4*9, fan_out = 6*9
    tw = np.concatenate([nn.Conv2DTranspose(6, 4, 3).weight.numpy().ravel() for _ in range(30)])
    _check_uniform(tw, -math.sqrt(6 / 90), math.sqrt(6 / 90))
    bn = nn.BatchNorm2D(4)
    for p, v in ((bn.weight, 1.0), (bn.bias, 0.0), (bn._mean, 0.0), (bn._variance, 1.0)):
        np.testing.assert_array_equal(p.numpy(), np.full([4], v, np.float32))
    assert bn._mean.stop_gradient and not bn._mean.trainable and not bn.weight.stop_gradient
    ln = nn.LayerNorm([2, 3])
    assert ln.weight.shape == [6] and np.all(ln.weight.numpy() == 1) and np.all(ln.bias.numpy() == 0)
    emb = nn.Embedding(10, 4, padding_idx=-2)
    assert emb._padding_idx == 8 and not np.any(emb.weight.numpy()[8]) and np.all(emb.weight.numpy()[:8] != 0)
    prelu = nn.PReLU(3, init=0.1)
    np.testing.assert_allclose(prelu._weight.numpy(), [0.1] * 3)


@pytest.mark.parametrize("shape", [[6, 4], [3, 8], [4, 2, 3]])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    q = I.Orthogonal(gain=2.0)(_param(shape, "float64")).numpy().reshape(shape[0], -1)
    gram = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(q.shape)), atol=1e-10)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        I.Orthogonal()(_param([3]))
