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


# ================================================================ helpers for layer references
def T(a, dtype=None):
    return paddle.to_tensor(a, dtype=dtype)


def N(t):
    return t.numpy()


def _backward_with(out, rng):
    """sum(out * r) for a fixed random r; returns r (the upstream gradient)."""
    r = rng.normal(size=out.shape).astype(N(out).dtype)
    (out * T(r)).sum().backward()
    return r


def _assert_all_grads(layer):
    """Every trainable parameter received a finite, non-zero gradient."""
    for name, p in layer.named_parameters():
        if p.stop_gradient:
            continue
        assert p.grad is not None, f"no gradient reached {name}"
        g = N(p.grad)
        assert np.all(np.isfinite(g)) and np.any(g != 0), f"gradient of {name} is zero or not finite"


# ================================================================ Linear
def test_linear_forward_and_gradients_match_numpy():
    rng = np.random.default_rng(0)
    layer = nn.Linear(4, 3)
    x = rng.normal(size=(2, 5, 4)).astype(np.float32)
    out = layer(T(x))
    W, b = N(layer.weight), N(layer.bias)
    np.testing.assert_allclose(N(out), x @ W + b, rtol=1e-5, atol=1e-6)
    r = _backward_with(out, rng)
    np.testing.assert_allclose(N(layer.weight.grad), x.reshape(-1, 4).T @ r.reshape(-1, 3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(N(layer.bias.grad), r.sum((0, 1)), rtol=1e-4, atol=1e-5)
    no_bias = nn.Linear(4, 3, bias_attr=False)
    np.testing.assert_allclose(N(no_bias(T(x))), x @ N(no_bias.weight), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="'in_features' must be a positive int"):
        nn.Linear(0, 3)


# ================================================================ convolutions
def np_conv2d(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out if b is None else out + b[None, :, None, None]


def np_conv2d_transpose(x, w, b, stride=(1, 1), padding=(0, 0), output_padding=(0, 0), dilation=(1, 1), groups=1):
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, padding, output_padding, dilation
    n, c, h, wd = x.shape
    cin, og, kh, kw = w.shape
    cg = cin // groups
    full = np.zeros((n, og * groups, (h - 1) * sh + dh * (kh - 1) + 1 + oph, (wd - 1) * sw + dw * (kw - 1) + 1 + opw))
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, i, j])
                full[:, g * og:(g + 1) * og, i * dh:i * dh + sh * (h - 1) + 1:sh,
                     j * dw:j * dw + sw * (wd - 1) + 1:sw] += contrib
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + 1 + oph
    ow = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + 1 + opw
    out = full[:, :, ph:ph + oh, pw:pw + ow]
    return out if b is None else out + b[None, :, None, None]


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(padding=(1, 2), dilation=2),
                                    dict(groups=2, stride=(1, 2)), dict(bias_attr=False)])
def test_conv2d_matches_numpy(kwargs):
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(1)
    layer = nn.Conv2D(4, 6, 3, **kwargs)
    x = rng.normal(size=(2, 4, 7, 8))
    out = layer(T(x))
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    ref = np_conv2d(x, N(layer.weight), None if layer.bias is None else N(layer.bias),
                    pair(kwargs.get("stride", 1)), pair(kwargs.get("padding", 0)), pair(kwargs.get("dilation", 1)),
                    kwargs.get("groups", 1))
    np.testing.assert_allclose(N(out), ref, rtol=1e-10, atol=1e-10)
    _backward_with(out, rng)
    _assert_all_grads(layer)


@pytest.mark.parametrize("mode, np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_conv2d_padding_modes(mode, np_mode):
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(2)
    layer = nn.Conv2D(2, 3, 3, padding=1, padding_mode=mode)
    x = rng.normal(size=(1, 2, 5, 6))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode=np_mode)
    np.testing.assert_allclose(N(layer(T(x))), np_conv2d(xp, N(layer.weight), N(layer.bias)), rtol=1e-10, atol=1e-10)
    with pytest.raises(TypeError, match="padding must be an int"):
        nn.Conv2D(2, 3, 3, padding=[1, 1], padding_mode=mode)


def test_conv1d_matches_numpy():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(3)
    layer = nn.Conv1D(3, 4, 3, stride=2, padding=1, dilation=1)
    x = rng.normal(size=(2, 3, 9))
    ref = np_conv2d(x[:, :, None, :], N(layer.weight)[:, :, None, :], N(layer.bias), (1, 2), (0, 1))[:, :, 0, :]
    out = layer(T(x))
    np.testing.assert_allclose(N(out), ref, rtol=1e-10, atol=1e-10)
    _backward_with(out, rng)
    _assert_all_grads(layer)
    nlc = nn.Conv1D(3, 4, 3, data_format="NLC")
    nlc.weight.set_value(layer.weight)
    nlc.bias.set_value(layer.bias)
    ref = np_conv2d(x[:, :, None, :], N(layer.weight)[:, :, None, :], N(layer.bias))[:, :, 0, :]
    np.testing.assert_allclose(N(nlc(T(x.transpose(0, 2, 1)))), ref.transpose(0, 2, 1), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1, output_padding=1), dict(groups=2, dilation=2)])
def test_conv2d_transpose_matches_numpy(kwargs):
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(4)
    layer = nn.Conv2DTranspose(4, 6, 3, **kwargs)
    assert layer.weight.shape == [4, 6 // kwargs.get("groups", 1), 3, 3]
    x = rng.normal(size=(2, 4, 5, 4))
    out = layer(T(x))
    pair = lambda v: (v, v)  # noqa: E731
    ref = np_conv2d_transpose(x, N(layer.weight), N(layer.bias), pair(kwargs.get("stride", 1)),
                              pair(kwargs.get("padding", 0)), pair(kwargs.get("output_padding", 0)),
                              pair(kwargs.get("dilation", 1)), kwargs.get("groups", 1))
    np.testing.assert_allclose(N(out), ref, rtol=1e-10, atol=1e-10)
    _backward_with(out, rng)
    _assert_all_grads(layer)


def test_conv2d_transpose_output_size_and_conv_errors():
    paddle.set_default_dtype("float64")
    layer = nn.Conv2DTranspose(2, 3, 3, stride=2, padding=1)
    x = np.random.default_rng(5).normal(size=(1, 2, 4, 4))
    out = layer(T(x), output_size=[8, 8])
    ref = np_conv2d_transpose(x, N(layer.weight), N(layer.bias), (2, 2), (1, 1), (1, 1))
    assert out.shape == [1, 3, 8, 8]
    np.testing.assert_allclose(N(out), ref, rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2D(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2D(3, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="data_format"):
        nn.Conv2D(3, 4, 3, data_format="NCL")
    with pytest.raises(ValueError, match="weight_attr must not be False"):
        nn.Conv2D(3, 4, 3, weight_attr=False)
    with pytest.raises(ValueError, match="'kernel_size' must be an int or a list/tuple of 2 ints"):
        nn.Conv2D(3, 4, [3, 3, 3])
    assert repr(nn.Conv2D(3, 4, 3, stride=2, padding=1)) == \
        "Conv2D(3, 4, kernel_size=[3, 3], stride=[2, 2], padding=1, data_format=NCHW)"


# ================================================================ dropout and embedding
def test_dropout_modes_and_axis():
    x = np.ones((200, 50), np.float32)
    layer = nn.Dropout(0.4)
    out = N(layer(T(x)))
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.6)}
    assert abs((out == 0).mean() - 0.4) < 0.02
    layer.eval()
    np.testing.assert_array_equal(N(layer(T(x))), x)
    down = nn.Dropout(0.4, mode="downscale_in_infer")
    assert set(np.unique(N(down(T(x))))) <= {0.0, 1.0}
    down.eval()
    np.testing.assert_allclose(N(down(T(x))), x * 0.6, rtol=1e-6)
    by_row = N(nn.Dropout(0.5, axis=0)(T(x)))
    assert np.all((by_row == 0).all(axis=1) | (by_row == 2).all(axis=1))  # one decision per row
    np.testing.assert_array_equal(N(nn.Dropout(0.0)(T(x))), x)
    with pytest.raises(ValueError, match="'p' must be in \\[0, 1\\]"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="'mode' must be"):
        nn.Dropout(0.5, mode="scale")
    assert repr(nn.Dropout(0.2)) == "Dropout(p=0.2, axis=None, mode=upscale_in_train)"


def test_channel_dropout_zeroes_whole_channels():
    x = np.ones((8, 16, 3, 3), np.float32)
    out = N(nn.Dropout2D(0.5)(T(x)))
    per_channel = out.reshape(8, 16, -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    out = N(nn.Dropout3D(0.5)(T(np.ones((4, 6, 2, 2, 2), np.float32)))).reshape(4, 6, -1)
    assert np.all((out == 0).all(-1) | (out == 2).all(-1))
    layer = nn.AlphaDropout(0.3)
    layer.eval()
    np.testing.assert_array_equal(N(layer(T(x))), x)


def test_embedding_lookup_padding_and_gradient():
    rng = np.random.default_rng(6)
    emb = nn.Embedding(7, 3, padding_idx=0)
    idx = np.array([[1, 0, 3], [3, 3, 6]])
    out = emb(T(idx))
    W = N(emb.weight)
    np.testing.assert_array_equal(N(out), W[idx])
    assert not np.any(N(out)[0, 1])
    r = _backward_with(out, rng)
    expected = np.zeros_like(W)
    np.add.at(expected, idx.ravel(), r.reshape(-1, 3))
    expected[0] = 0  # the padding row gets no gradient
    np.testing.assert_allclose(N(emb.weight.grad), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="padding_idx' must be within \\[-7, 7\\)"):
        nn.Embedding(7, 3, padding_idx=7)
    assert repr(emb) == "Embedding(7, 3, padding_idx=0)"


# ================================================================ activations
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


_ERF = np.vectorize(math.erf)
_SELU = (1.0507009873554804934193349852946, 1.6732632423543772848170429916717)

ACTIVATIONS = [
    (lambda: nn.ReLU(), lambda x: np.maximum(x, 0)),
    (lambda: nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (lambda: nn.GELU(), lambda x: 0.5 * x * (1 + _ERF(x / np.sqrt(2)))),
    (lambda: nn.GELU(approximate=True),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    (lambda: nn.Sigmoid(), _sigmoid),
    (lambda: nn.Tanh(), np.tanh),
    (lambda: nn.Softmax(), _softmax),
    (lambda: nn.Softmax(axis=0), lambda x: _softmax(x, 0)),
    (lambda: nn.LogSoftmax(axis=1), lambda x: np.log(_softmax(x, 1))),
    (lambda: nn.SiLU(), lambda x: x * _sigmoid(x)),
    (lambda: nn.Silu(), lambda x: x * _sigmoid(x)),
    (lambda: nn.Swish(), lambda x: x * _sigmoid(x)),
    (lambda: nn.LeakyReLU(), lambda x: np.where(x > 0, x, 0.01 * x)),
    (lambda: nn.LeakyReLU(negative_slope=0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (lambda: nn.ELU(alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (lambda: nn.CELU(alpha=2.0), lambda x: np.maximum(x, 0) + np.minimum(0, 2.0 * (np.exp(x / 2.0) - 1))),
    (lambda: nn.SELU(), lambda x: _SELU[0] * np.where(x > 0, x, _SELU[1] * (np.exp(x) - 1))),
    (lambda: nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (lambda: nn.Hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    (lambda: nn.Hardtanh(-0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7)),
    (lambda: nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    (lambda: nn.Softplus(beta=2, threshold=1), lambda x: np.where(2 * x > 1, x, np.log1p(np.exp(2 * x)) / 2)),
    (lambda: nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (lambda: nn.Softshrink(0.3), lambda x: np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0))),
    (lambda: nn.Hardshrink(0.3), lambda x: np.where(np.abs(x) > 0.3, x, 0)),
    (lambda: nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (lambda: nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (lambda: nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (lambda: nn.ThresholdedReLU(0.5), lambda x: np.where(x > 0.5, x, 0)),
    (lambda: nn.GLU(axis=1), lambda x: x[:, :2] * _sigmoid(x[:, 2:])),
]


@pytest.mark.parametrize("make, ref", ACTIVATIONS)
def test_activation_layers_match_numpy(make, ref):
    x = np.random.default_rng(7).normal(size=(3, 4, 5)) * 2
    x[np.abs(x) < 1e-3] = 0.5  # keep away from kinks
    np.testing.assert_allclose(N(make()(T(x, "float64"))), ref(x), rtol=1e-6, atol=1e-7)


def test_prelu_per_channel_and_gradient():
    rng = np.random.default_rng(8)
    layer = nn.PReLU(num_parameters=3, init=0.1)
    layer._weight.set_value(np.array([0.1, 0.2, 0.3], np.float32))
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    out = layer(T(x))
    a = np.array([0.1, 0.2, 0.3], np.float32)[None, :, None]
    np.testing.assert_allclose(N(out), np.where(x > 0, x, a * x), rtol=1e-6)
    r = _backward_with(out, rng)
    np.testing.assert_allclose(N(layer._weight.grad), (np.minimum(x, 0) * r).sum((0, 2)), rtol=1e-5, atol=1e-6)
    assert list(layer.state_dict()) == ["_weight"]
    assert repr(nn.LeakyReLU(0.2)) == "LeakyReLU(negative_slope=0.2)" and repr(nn.ReLU()) == "ReLU()"
    with pytest.raises(TypeError, match="Softmax: .*unexpected keyword argument 'dim'"):
        nn.Softmax(dim=1)
    with pytest.raises(TypeError, match="MaxPool2D: missing a required argument: 'kernel_size'"):
        nn.MaxPool2D()


# ================================================================ pooling and shape layers
def _windows(x, k, s, pad_value=None, p=0):
    """[N, C, OH, OW, kh*kw] windows of an NCHW array (padded by p with pad_value)."""
    if p:
        x = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=pad_value)
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    return np.stack([x[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s] for i in range(k) for j in range(k)], -1)


def test_pool2d_layers_match_numpy():
    x = np.random.default_rng(9).normal(size=(2, 3, 7, 6))
    np.testing.assert_allclose(N(nn.MaxPool2D(2, 2)(T(x))), _windows(x, 2, 2).max(-1))
    np.testing.assert_allclose(N(nn.MaxPool2D(3, stride=2, padding=1)(T(x))),
                               _windows(x, 3, 2, -np.inf, 1).max(-1))
    np.testing.assert_allclose(N(nn.AvgPool2D(2)(T(x))), _windows(x, 2, 2).mean(-1))
    # exclusive=True (the default) averages only the real, unpadded elements
    summed = _windows(x, 3, 2, 0.0, 1).sum(-1)
    counts = _windows(np.ones_like(x), 3, 2, 0.0, 1).sum(-1)
    np.testing.assert_allclose(N(nn.AvgPool2D(3, stride=2, padding=1)(T(x))), summed / counts)
    np.testing.assert_allclose(N(nn.AvgPool2D(3, stride=2, padding=1, exclusive=False)(T(x))), summed / 9)
    out, mask = nn.MaxPool2D(2, return_mask=True)(T(x))
    assert out.shape == [2, 3, 3, 3] and mask.shape == [2, 3, 3, 3]
    assert repr(nn.MaxPool2D(2, 2)) == ("MaxPool2D(kernel_size=2, stride=2, padding=0, return_mask=False, "
                                        "ceil_mode=False, data_format=NCHW)")


def test_adaptive_and_1d_pools_match_numpy():
    x = np.random.default_rng(10).normal(size=(2, 3, 5, 7))
    out = N(nn.AdaptiveAvgPool2D((2, 3))(T(x)))
    ref = np.empty((2, 3, 2, 3))
    for i in range(2):
        for j in range(3):
            h0, h1 = (i * 5) // 2, -((-(i + 1) * 5) // 2)
            w0, w1 = (j * 7) // 3, -((-(j + 1) * 7) // 3)
            ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean((2, 3))
    np.testing.assert_allclose(out, ref)
    np.testing.assert_allclose(N(nn.AdaptiveAvgPool2D(1)(T(x))), x.mean((2, 3), keepdims=True))
    np.testing.assert_allclose(N(nn.AdaptiveMaxPool2D(1)(T(x))), x.max((2, 3), keepdims=True))
    seq = x[:, :, 0, :]
    np.testing.assert_allclose(N(nn.MaxPool1D(2)(T(seq))), seq[:, :, :6].reshape(2, 3, 3, 2).max(-1))
    np.testing.assert_allclose(N(nn.AvgPool1D(3, stride=2)(T(seq))),
                               np.stack([seq[:, :, i:i + 3].mean(-1) for i in (0, 2, 4)], -1))
    np.testing.assert_allclose(N(nn.AdaptiveAvgPool1D(1)(T(seq))), seq.mean(-1, keepdims=True))


def test_flatten_identity_pad_upsample_and_cosine_similarity():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    assert nn.Flatten()(T(x)).shape == [2, 60]
    np.testing.assert_array_equal(N(nn.Flatten(1, 2)(T(x))), x.reshape(2, 12, 5))
    assert nn.Identity(3, foo=1)(T(x)).shape == [2, 3, 4, 5]
    np.testing.assert_array_equal(N(nn.Pad2D([1, 2, 0, 1], value=-1.0)(T(x))),
                                  np.pad(x, ((0, 0), (0, 0), (0, 1), (1, 2)), constant_values=-1.0))
    np.testing.assert_array_equal(N(nn.Pad2D(1, mode="reflect")(T(x))),
                                  np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect"))
    np.testing.assert_array_equal(N(nn.ZeroPad2D(1)(T(x))), np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))))
    np.testing.assert_array_equal(N(nn.Pad1D([2, 0])(T(x[:, :, 0]))), np.pad(x[:, :, 0], ((0, 0), (0, 0), (2, 0))))
    with pytest.raises(ValueError, match="'padding' must be an int or 4 ints"):
        nn.Pad2D([1, 2])
    np.testing.assert_array_equal(N(nn.Upsample(scale_factor=2)(T(x))), x.repeat(2, 2).repeat(2, 3))
    np.testing.assert_array_equal(N(nn.UpsamplingNearest2D(size=[8, 10])(T(x))), x.repeat(2, 2).repeat(2, 3))
    up = N(nn.UpsamplingBilinear2D(scale_factor=2)(T(x[:, :, :2, :2])))
    np.testing.assert_allclose(up[0, 0, :, 0], np.linspace(x[0, 0, 0, 0], x[0, 0, 1, 0], 4))  # align_corners
    a, b = np.random.default_rng(11).normal(size=(2, 4, 3))
    cos = (a * b).sum(0) / np.maximum(np.linalg.norm(a, axis=0) * np.linalg.norm(b, axis=0), 1e-8)
    np.testing.assert_allclose(N(nn.CosineSimilarity(axis=0)(T(a), T(b))), cos)


# ================================================================ losses
def _log_softmax(x, axis=-1):
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


def _reduce(v, reduction):
    return {"mean": v.mean(), "sum": v.sum(), "none": v}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    rng = np.random.default_rng(12)
    x, y = rng.normal(size=(2, 3, 4, 5))
    np.testing.assert_allclose(N(nn.MSELoss(reduction)(T(x), T(y))), _reduce((x - y) ** 2, reduction))
    np.testing.assert_allclose(N(nn.L1Loss(reduction)(T(x), T(y))), _reduce(np.abs(x - y), reduction))
    d = np.abs(x - y)
    huber = np.where(d < 0.5, 0.5 * d * d, 0.5 * (d - 0.25))
    np.testing.assert_allclose(N(nn.SmoothL1Loss(reduction, delta=0.5)(T(x), T(y))), _reduce(huber, reduction))
    other, label = rng.normal(size=(4, 5)), np.sign(rng.normal(size=(4, 5)))
    np.testing.assert_allclose(N(nn.MarginRankingLoss(0.1, reduction)(T(x[0]), T(other), T(label))),
                               _reduce(np.maximum(0, -label * (x[0] - other) + 0.1), reduction))


def test_cross_entropy_and_nll_losses():
    rng = np.random.default_rng(13)
    logits = rng.normal(size=(6, 5))
    logp = _log_softmax(logits)
    hard = np.array([0, 4, 2, 2, 3, 1])
    picked = -logp[np.arange(6), hard]
    np.testing.assert_allclose(N(nn.CrossEntropyLoss()(T(logits), T(hard))), picked.mean())
    np.testing.assert_allclose(N(nn.CrossEntropyLoss(reduction="none")(T(logits), T(hard[:, None]))).ravel(), picked)
    # an explicit ignore_index: ignored samples add nothing and are not counted in the mean
    kept = hard != 2
    np.testing.assert_allclose(N(nn.CrossEntropyLoss(ignore_index=2)(T(logits), T(hard))), picked[kept].mean())
    # Paddle's quirk with the default ignore_index=-100 and no weight: the mean is over all samples
    with_default = np.where(kept, hard, -100)
    np.testing.assert_allclose(N(nn.CrossEntropyLoss()(T(logits), T(with_default))), picked[kept].sum() / 6)
    w = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
    np.testing.assert_allclose(N(nn.CrossEntropyLoss(weight=T(w))(T(logits), T(hard))),
                               (w[hard] * picked).sum() / w[hard].sum())
    soft = _softmax(rng.normal(size=(6, 5)))
    np.testing.assert_allclose(N(nn.CrossEntropyLoss(soft_label=True)(T(logits), T(soft))),
                               (-(soft * logp).sum(1)).mean())
    smooth = 0.9 * np.eye(5)[hard] + 0.1 / 5
    np.testing.assert_allclose(N(nn.CrossEntropyLoss(label_smoothing=0.1)(T(logits), T(hard))),
                               (-(smooth * logp).sum(1)).mean())
    np.testing.assert_allclose(N(nn.CrossEntropyLoss(axis=0)(T(logits.T), T(hard))), picked.mean())
    np.testing.assert_allclose(N(nn.NLLLoss()(T(logp), T(hard))), picked.mean())
    np.testing.assert_allclose(N(nn.NLLLoss(weight=T(w), reduction="sum")(T(logp), T(hard))), (w[hard] * picked).sum())
    np.testing.assert_allclose(N(nn.NLLLoss(ignore_index=2)(T(logp), T(hard))), picked[kept].mean())
    with pytest.raises(ValueError, match="'reduction' in CrossEntropyLoss should be"):
        nn.CrossEntropyLoss(reduction="avg")


def test_binary_and_kl_losses():
    rng = np.random.default_rng(14)
    logit, label = rng.normal(size=(2, 4, 3))
    label = (label > 0).astype(np.float64)
    p = _sigmoid(logit)
    bce = -(label * np.log(p) + (1 - label) * np.log(1 - p))
    np.testing.assert_allclose(N(nn.BCEWithLogitsLoss()(T(logit), T(label))), bce.mean())
    pos = np.array([1.0, 2.0, 3.0])
    weighted = -(pos * label * np.log(p) + (1 - label) * np.log(1 - p))
    np.testing.assert_allclose(N(nn.BCEWithLogitsLoss(pos_weight=T(pos), reduction="sum")(T(logit), T(label))),
                               weighted.sum())
    w = rng.uniform(0.5, 1.5, size=(4, 3))
    np.testing.assert_allclose(N(nn.BCELoss(weight=T(w))(T(p), T(label))), (w * bce).mean())
    target = _softmax(rng.normal(size=(4, 3)))
    logq = _log_softmax(rng.normal(size=(4, 3)))
    kl = target * (np.log(target) - logq)
    np.testing.assert_allclose(N(nn.KLDivLoss()(T(logq), T(target))), kl.mean())
    np.testing.assert_allclose(N(nn.KLDivLoss("batchmean")(T(logq), T(target))), kl.sum() / 4)
    np.testing.assert_allclose(N(nn.KLDivLoss("none")(T(logq), T(target))), kl)
    np.testing.assert_allclose(N(nn.KLDivLoss("sum", log_target=True)(T(logq), T(np.log(target)))), kl.sum())
    sign = np.where(label > 0, 1.0, -1.0)
    np.testing.assert_allclose(N(nn.SoftMarginLoss()(T(logit), T(sign))), np.log1p(np.exp(-sign * logit)).mean())
    hinge = np.where(sign > 0, logit, np.maximum(0, 0.5 - logit))
    np.testing.assert_allclose(N(nn.HingeEmbeddingLoss(0.5, "sum")(T(logit), T(sign))), hinge.sum())
    loss = nn.CrossEntropyLoss(weight=T(np.ones(3)))
    assert "weight" not in loss.state_dict()  # as in Paddle: a plain tensor attribute, not persistable


def test_loss_layers_backpropagate_to_a_model():
    rng = np.random.default_rng(15)
    model = nn.Linear(4, 3)
    x, label = T(rng.normal(size=(5, 4)).astype(np.float32)), T(np.array([0, 1, 2, 1, 0]))
    nn.CrossEntropyLoss()(model(x), label).backward()
    logits = N(x) @ N(model.weight) + N(model.bias)
    d = (_softmax(logits) - np.eye(3)[N(label)]) / 5
    np.testing.assert_allclose(N(model.weight.grad), N(x).T @ d, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(N(model.bias.grad), d.sum(0), rtol=1e-4, atol=1e-6)


# ================================================================ attention and transformers
def np_linear(layer, x):
    return x @ N(layer.weight) + (0 if layer.bias is None else N(layer.bias))


def np_layer_norm(layer, x):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + layer._epsilon) * N(layer.weight) + N(layer.bias)


def np_mha(mha, q, k, v, mask=None):
    """Reference multi-head attention from the layer's own projections; returns (out, weights)."""
    h, d = mha.num_heads, mha.head_dim

    def heads(x):
        b, n, _ = x.shape
        return x.reshape(b, n, h, d).transpose(0, 2, 1, 3)

    Q, K, V = heads(np_linear(mha.q_proj, q)), heads(np_linear(mha.k_proj, k)), heads(np_linear(mha.v_proj, v))
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d)
    if mask is not None:
        scores = scores + (np.where(mask, 0.0, -1e9) if mask.dtype == bool else mask)
    weights = _softmax(scores)
    out = (weights @ V).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], h * d)
    return np_linear(mha.out_proj, out), weights


def np_encoder_layer(layer, src, mask=None):
    act = {"relu": lambda z: np.maximum(z, 0), "gelu": lambda z: 0.5 * z * (1 + _ERF(z / np.sqrt(2)))}[
        layer._config["activation"]]
    pre = layer.normalize_before
    x = np_layer_norm(layer.norm1, src) if pre else src
    x = src + np_mha(layer.self_attn, x, x, x, mask)[0]
    x = x if pre else np_layer_norm(layer.norm1, x)
    y = np_layer_norm(layer.norm2, x) if pre else x
    x = x + np_linear(layer.linear2, act(np_linear(layer.linear1, y)))
    return x if pre else np_layer_norm(layer.norm2, x)


def np_decoder_layer(layer, tgt, memory, tgt_mask=None, memory_mask=None):
    pre = layer.normalize_before
    x = np_layer_norm(layer.norm1, tgt) if pre else tgt
    x = tgt + np_mha(layer.self_attn, x, x, x, tgt_mask)[0]
    x = x if pre else np_layer_norm(layer.norm1, x)
    y = np_layer_norm(layer.norm2, x) if pre else x
    x = x + np_mha(layer.cross_attn, y, memory, memory, memory_mask)[0]
    x = x if pre else np_layer_norm(layer.norm2, x)
    y = np_layer_norm(layer.norm3, x) if pre else x
    x = x + np_linear(layer.linear2, np.maximum(np_linear(layer.linear1, y), 0))
    return x if pre else np_layer_norm(layer.norm3, x)


@pytest.mark.parametrize("mask_kind", [None, "bool", "float", "int"])
def test_multi_head_attention_matches_numpy(mask_kind):
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(16)
    mha = nn.MultiHeadAttention(8, 2, kdim=6, vdim=5, need_weights=True)
    q, k, v = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 4, 6)), rng.normal(size=(2, 4, 5))
    mask = None
    if mask_kind is not None:
        keep = rng.random((2, 1, 3, 4)) > 0.3
        keep[..., 0] = True  # every query keeps at least one key
        mask = {"bool": keep, "float": np.where(keep, 0.0, -1e4) + rng.normal(size=keep.shape) * 0.1,
                "int": keep.astype(np.int64)}[mask_kind]
    out, weights = mha(T(q), T(k), T(v), attn_mask=None if mask is None else T(mask))
    ref_mask = keep if mask_kind in ("bool", "int") else mask
    ref_out, ref_w = np_mha(mha, q, k, v, ref_mask)
    np.testing.assert_allclose(N(out), ref_out, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(N(weights), ref_w, rtol=1e-8, atol=1e-10)
    r = _backward_with(out, rng)
    _assert_all_grads(mha)
    assert r.shape == (2, 3, 8)


def test_multi_head_attention_self_attention_default_and_2d_mask():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(17)
    mha = nn.MultiHeadAttention(6, 3)
    x = rng.normal(size=(2, 4, 6))
    causal = np.tril(np.ones((4, 4), bool))
    out = mha(T(x), attn_mask=T(causal))
    np.testing.assert_allclose(N(out), np_mha(mha, x, x, x, causal)[0], rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="embed_dim \\(6\\) must be divisible by num_heads \\(4\\)"):
        nn.MultiHeadAttention(6, 4)


def test_multi_head_attention_caches():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(18)
    mha = nn.MultiHeadAttention(4, 2)
    x = rng.normal(size=(1, 5, 4))
    full = np_mha(mha, x, x, x, np.tril(np.ones((5, 5), bool)))[0]
    cache = mha.gen_cache(T(x))
    assert cache.k.shape == [1, 2, 0, 2]
    for t in range(5):
        step = T(x[:, t:t + 1])
        out, cache = mha(step, step, step, None, cache)
        np.testing.assert_allclose(N(out), full[:, t:t + 1], rtol=1e-8, atol=1e-10)
    assert cache.k.shape == [1, 2, 5, 2]
    memory = rng.normal(size=(1, 3, 4))
    static = mha.gen_cache(T(memory), T(memory), type=nn.MultiHeadAttention.StaticCache)
    out, same = mha(T(x), None, None, None, static)
    assert same is static
    np.testing.assert_allclose(N(out), np_mha(mha, x, memory, memory)[0], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("normalize_before, activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder_layer_matches_numpy(normalize_before, activation):
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(19)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=activation,
                                       normalize_before=normalize_before)
    for p in layer.parameters():  # non-trivial norms and biases
        p.set_value(rng.normal(size=p.shape) * 0.5 + (1.0 if p.name.endswith(".w_0") and p.ndim == 1 else 0.0))
    src = rng.normal(size=(2, 5, 8))
    pad = np.ones((2, 1, 1, 5), bool)
    pad[1, ..., 3:] = False
    out = layer(T(src), T(pad))
    np.testing.assert_allclose(N(out), np_encoder_layer(layer, src, pad), rtol=1e-8, atol=1e-9)
    _backward_with(out, rng)
    _assert_all_grads(layer)


def test_transformer_encoder_layer_gradient_matches_finite_differences():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(20)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0)
    src = rng.normal(size=(1, 3, 4))
    r = rng.normal(size=(1, 3, 4))
    (layer(T(src)) * T(r)).sum().backward()
    for p in (layer.self_attn.q_proj.weight, layer.linear1.bias, layer.norm1.weight):
        flat = N(p).ravel()
        for i in (0, flat.size - 1):
            def loss(delta):
                v = flat.copy()
                v[i] += delta
                p.set_value(v.reshape(p.shape))
                return (np_encoder_layer(layer, src) * r).sum()
            fd = (loss(1e-6) - loss(-1e-6)) / 2e-6
            loss(0.0)
            np.testing.assert_allclose(N(p.grad).ravel()[i], fd, rtol=1e-5, atol=1e-7)


def test_transformer_encoder_stacks_fresh_layers():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(21)
    first = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    enc = nn.TransformerEncoder(first, 3, norm=nn.LayerNorm(8))
    assert enc.layers[0] is first and len(enc.layers) == 3
    names = [p.name for p in enc.parameters()]
    assert len(names) == len(set(names))  # every layer has its own parameters
    assert not np.array_equal(N(enc.layers[1].linear1.weight), N(first.linear1.weight))
    assert [n for n, _ in enc.named_parameters()][:2] == ["layers.0.self_attn.q_proj.weight",
                                                         "layers.0.self_attn.q_proj.bias"]
    src = rng.normal(size=(2, 4, 8))
    ref = src
    for layer in enc.layers:
        ref = np_encoder_layer(layer, ref)
    out = enc(T(src))
    np.testing.assert_allclose(N(out), np_layer_norm(enc.norm, ref), rtol=1e-8, atol=1e-9)
    _backward_with(out, rng)
    _assert_all_grads(enc)
    caches = enc.gen_cache(T(src))
    out2, new_caches = enc(T(src), cache=caches)
    assert len(new_caches) == 3 and new_caches[0].k.shape == [2, 2, 4, 4]
    np.testing.assert_allclose(N(out2), N(out), rtol=1e-10)


def test_transformer_decoder_and_full_transformer():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(22)
    model = nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0)
    src, tgt = rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 3, 8))
    causal = N(model.generate_square_subsequent_mask(3))
    np.testing.assert_array_equal(causal, np.triu(np.full((3, 3), -np.inf), 1))
    out = model(T(src), T(tgt), tgt_mask=T(causal))
    memory = src
    for layer in model.encoder.layers:
        memory = np_encoder_layer(layer, memory)
    memory = np_layer_norm(model.encoder.norm, memory)
    x = tgt
    for layer in model.decoder.layers:
        x = np_decoder_layer(layer, x, memory, causal)
    np.testing.assert_allclose(N(out), np_layer_norm(model.decoder.norm, x), rtol=1e-8, atol=1e-9)
    _backward_with(out, rng)
    _assert_all_grads(model)
    # incremental decoding with caches reproduces the causal result step by step
    dec = model.decoder
    cache = dec.gen_cache(T(memory))
    for t in range(3):
        step, cache = dec(T(tgt[:, t:t + 1]), T(memory), cache=cache)
        np.testing.assert_allclose(N(step)[:, 0], N(dec(T(tgt), T(memory), tgt_mask=T(causal)))[:, t],
                                   rtol=1e-8, atol=1e-9)
    pre = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, normalize_before=True)
    np.testing.assert_allclose(N(pre(T(tgt), T(memory))), np_decoder_layer(pre, tgt, memory), rtol=1e-8, atol=1e-9)
    with pytest.raises(ValueError, match="length of bias_attr should be 1, 2 or 3"):
        nn.Transformer(8, 2, 1, 1, 16, bias_attr=[None] * 4)


# ================================================================ normalisation
def _set_random(layer, rng, names=("weight", "bias")):
    for n in names:
        p = getattr(layer, n)
        p.set_value(rng.uniform(0.5, 1.5, size=p.shape) if n in ("weight", "scale") else rng.normal(size=p.shape))


@pytest.mark.parametrize("cls, shape, axes, fmt", [
    (nn.BatchNorm1D, (6, 3), (0,), "NCL"), (nn.BatchNorm1D, (4, 3, 5), (0, 2), "NCL"),
    (nn.BatchNorm1D, (4, 5, 3), (0, 1), "NLC"), (nn.BatchNorm2D, (4, 3, 2, 5), (0, 2, 3), "NCHW"),
    (nn.BatchNorm2D, (4, 2, 5, 3), (0, 1, 2), "NHWC"), (nn.BatchNorm3D, (2, 3, 2, 2, 3), (0, 2, 3, 4), "NCDHW")])
def test_batch_norm_training_eval_and_running_stats(cls, shape, axes, fmt):
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(23)
    bn = cls(3, momentum=0.8, epsilon=1e-3, data_format=fmt)
    _set_random(bn, rng)
    caxis = [i for i in range(len(shape)) if i not in axes][0]
    view = [1] * len(shape)
    view[caxis] = 3
    W, B = N(bn.weight).reshape(view), N(bn.bias).reshape(view)
    x = rng.normal(size=shape) * 2 + 1
    out = bn(T(x))
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    np.testing.assert_allclose(N(out), (x - mean) / np.sqrt(var + 1e-3) * W + B, rtol=1e-8, atol=1e-10)
    # Paddle's running statistics: momentum * old + (1 - momentum) * batch, with the biased variance
    np.testing.assert_allclose(N(bn._mean), 0.2 * mean.ravel(), rtol=1e-10)
    np.testing.assert_allclose(N(bn._variance), 0.8 + 0.2 * var.ravel(), rtol=1e-10)
    _backward_with(out, rng)
    _assert_all_grads(bn)
    assert bn._mean.grad is None
    bn.eval()
    rm, rv = N(bn._mean).reshape(view), N(bn._variance).reshape(view)
    np.testing.assert_allclose(N(bn(T(x))), (x - rm) / np.sqrt(rv + 1e-3) * W + B, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(N(bn._mean), 0.2 * mean.ravel(), rtol=1e-10)  # eval leaves them alone


def test_batch_norm_options_and_errors():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(24)
    x = rng.normal(size=(4, 3, 2, 2))
    frozen = nn.BatchNorm2D(3, use_global_stats=True)
    np.testing.assert_allclose(N(frozen(T(x))), x / np.sqrt(1 + 1e-5), rtol=1e-10)  # running stats even in train
    fixed = nn.BatchNorm2D(3, weight_attr=False, bias_attr=False)
    assert fixed.weight.stop_gradient and fixed.bias.stop_gradient
    assert len(fixed.parameters()) == 4 and list(fixed.state_dict()) == ["weight", "bias", "_mean", "_variance"]
    named = nn.BatchNorm2D(3, name="bn1")
    assert named._mean.name == "bn1_mean" and named._variance.name == "bn1_variance"
    with pytest.raises(ValueError, match="expected 4D input \\(got 3D input\\)"):
        nn.BatchNorm2D(3)(T(x[0]))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1D(3)(T(x))
    with pytest.raises(ValueError, match="'data_format' must be one of NCHW, NHWC"):
        nn.BatchNorm2D(3, data_format="NCL")
    legacy = nn.BatchNorm(3, act="relu")
    legacy.bias.set_value(np.array([-10.0, 0.0, 10.0]))
    out = N(legacy(T(x)))
    assert np.all(out[:, 0] == 0) and np.all(out[:, 2] > 0)
    assert repr(nn.BatchNorm1D(3)) == "BatchNorm1D(num_features=3, momentum=0.9, epsilon=1e-05, data_format=NCL)"
    sync = nn.SyncBatchNorm(3)
    assert nn.SyncBatchNorm.convert_sync_batchnorm(sync) is sync
    np.testing.assert_allclose(N(sync(T(x))), (x - x.mean((0, 2, 3), keepdims=True))
                               / np.sqrt(x.var((0, 2, 3), keepdims=True) + 1e-5), rtol=1e-8, atol=1e-10)


def test_layer_norm_matches_numpy_with_flattened_parameters():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(25)
    ln = nn.LayerNorm([2, 3], epsilon=1e-4)
    _set_random(ln, rng)
    x = rng.normal(size=(4, 2, 3))
    flat = x.reshape(4, 6)
    ref = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-4) * N(ln.weight) + N(ln.bias)
    out = ln(T(x))
    np.testing.assert_allclose(N(out), ref.reshape(4, 2, 3), rtol=1e-8, atol=1e-10)
    _backward_with(out, rng)
    _assert_all_grads(ln)
    bare = nn.LayerNorm(3, weight_attr=False, bias_attr=False)
    assert bare.weight is None and bare.bias is None and bare.parameters() == []
    np.testing.assert_allclose(N(bare(T(x))), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True)
                                                                                      + 1e-5), rtol=1e-8)
    with pytest.raises(ValueError, match="'normalized_shape' must be a positive int"):
        nn.LayerNorm([3, 0])


def test_group_and_instance_norm_match_numpy():
    paddle.set_default_dtype("float64")
    rng = np.random.default_rng(26)
    x = rng.normal(size=(2, 6, 3, 4))
    gn = nn.GroupNorm(3, 6, epsilon=1e-4)
    _set_random(gn, rng)
    g = x.reshape(2, 3, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-4)).reshape(x.shape)
    out = gn(T(x))
    np.testing.assert_allclose(N(out), ref * N(gn.weight)[None, :, None, None] + N(gn.bias)[None, :, None, None],
                               rtol=1e-8, atol=1e-10)
    _backward_with(out, rng)
    _assert_all_grads(gn)
    with pytest.raises(ValueError, match="num_channels \\(6\\) must be divisible by num_groups \\(4\\)"):
        nn.GroupNorm(4, 6)
    inorm = nn.InstanceNorm2D(6, epsilon=1e-4)
    _set_random(inorm, rng, ("scale", "bias"))
    ref = (x - x.mean((2, 3), keepdims=True)) / np.sqrt(x.var((2, 3), keepdims=True) + 1e-4)
    out = inorm(T(x))
    np.testing.assert_allclose(N(out), ref * N(inorm.scale)[None, :, None, None] + N(inorm.bias)[None, :, None, None],
                               rtol=1e-8, atol=1e-10)
    assert list(inorm.state_dict()) == ["scale", "bias"]
    seq = x[:, :, 0]
    plain = nn.InstanceNorm1D(6, weight_attr=False, bias_attr=False)
    assert plain.parameters() == []
    np.testing.assert_allclose(N(plain(T(seq))), (seq - seq.mean(-1, keepdims=True))
                               / np.sqrt(seq.var(-1, keepdims=True) + 1e-5), rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="must be False at the same time"):
        nn.InstanceNorm2D(6, weight_attr=False)
