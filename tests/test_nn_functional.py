"""nn.functional activations and common layers against NumPy references written here,
gradients against finite differences (including the composed double-backward path),
dropout statistics and error cases."""
import math

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import fd_grad, t

RNG = np.random.default_rng(0)


def numeric_grad(f, arrays, i, eps=1e-6):
    """Central differences of the scalar f(arrays) w.r.t. arrays[i] (float64)."""
    arrays = [np.array(a, dtype=np.float64, copy=True) for a in arrays]
    return fd_grad(lambda: f(*arrays), arrays[i], eps)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


_ERF = np.vectorize(math.erf)

# name: (call, NumPy reference)
ACTIVATIONS = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.8), lambda x: np.clip(x, -0.5, 0.8)),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x * 0.1666667 + 0.5, 0, 1)),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hardshrink": (F.hardshrink, lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    "softshrink": (lambda x: F.softshrink(x, 0.3), lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.3, 0)),
    "thresholded_relu": (F.thresholded_relu, lambda x: np.where(x > 1.0, x, 0)),
    "elu": (lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1))),
    "selu": (F.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1))),
    "celu": (lambda x: F.celu(x, 1.5), lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * (np.exp(x / 1.5) - 1))),
    "softplus": (lambda x: F.softplus(x, 2.0, 3.0), lambda x: _softplus(x, 2.0, 3.0)),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _ERF(x / np.sqrt(2)))),
    "gelu_tanh": (lambda x: F.gelu(x, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (F.silu, lambda x: x * _sigmoid(x)),
    "swish": (F.swish, lambda x: x * _sigmoid(x)),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "mish": (F.mish, lambda x: x * np.tanh(_softplus(x))),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "log_sigmoid": (F.log_sigmoid, lambda x: np.log(_sigmoid(x))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_and_dtype(name):
    call, ref = ACTIVATIONS[name]
    x = RNG.uniform(-4, 4, (3, 7))
    np.testing.assert_allclose(call(t(x)).numpy(), ref(x), rtol=1e-10, atol=1e-12)
    out32 = call(t(x.astype(np.float32)))
    assert out32.dtype == paddle.float32
    np.testing.assert_allclose(out32.numpy(), ref(x), rtol=1e-5, atol=1e-6)


SMOOTH = ["elu", "selu", "celu", "softplus", "gelu", "gelu_tanh", "silu", "softsign", "mish", "tanhshrink",
          "log_sigmoid", "hardswish"]


@pytest.mark.parametrize("name", SMOOTH)
def test_activation_double_backward_matches_finite_differences(name):
    """create_graph=True takes the composed path: its first derivative equals the fused one and
    its second derivative matches differences of the first."""
    call, _ = ACTIVATIONS[name]
    x0 = RNG.uniform(-2.5, 2.5, (2, 5))
    x0 = x0[np.abs(np.abs(x0) - 3.0) > 0.05]  # keep away from hardswish's kinks
    w = RNG.normal(size=x0.shape)

    def first(xa):
        x = t(xa, grad=True)
        (g,) = paddle.grad((call(x) * t(w)).sum(), x)
        return g.numpy()

    x = t(x0, grad=True)
    (g,) = paddle.grad((call(x) * t(w)).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), first(x0), rtol=1e-12, atol=1e-12)
    v = RNG.normal(size=x0.shape)
    (gg,) = paddle.grad((g * t(v)).sum(), x)
    numeric = numeric_grad(lambda xa: float((first(xa) * v).sum()), [x0], 0)
    np.testing.assert_allclose(gg.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_activations_are_stable_for_extreme_inputs():
    x = t(np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0]))
    for fn in (F.softplus, F.log_sigmoid, F.mish, F.silu, F.elu, F.selu, F.gelu):
        out = fn(x).numpy()
        assert np.isfinite(out).all(), fn
    np.testing.assert_allclose(F.log_sigmoid(x).numpy()[[0, 4]], [-1000.0, 0.0])
    np.testing.assert_allclose(F.softplus(x).numpy()[[0, 4]], [0.0, 1000.0])


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax(axis):
    x = RNG.normal(size=(3, 4, 5)) * 3
    np.testing.assert_allclose(F.softmax(t(x), axis=axis).numpy(), _np_softmax(x, axis), rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(t(x), axis=axis).numpy(), np.log(_np_softmax(x, axis)),
                               rtol=1e-10, atol=1e-12)


def test_softmax_stability_and_dtype_argument():
    x = t(np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]], dtype=np.float32))
    out = F.softmax(x)
    assert np.isfinite(out.numpy()).all()
    np.testing.assert_allclose(out.numpy()[0], _np_softmax(np.array([0.0, 1.0, 2.0]), 0), rtol=1e-6)
    assert np.isfinite(F.log_softmax(x).numpy()).all()
    assert F.softmax(x, dtype="float64").dtype == paddle.float64
    assert F.log_softmax(x, dtype=paddle.float64).dtype == paddle.float64


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_double_backward(fn):
    x0 = RNG.normal(size=(3, 4))
    w = RNG.normal(size=(3, 4))
    v = RNG.normal(size=(3, 4))

    def first(xa):
        x = t(xa, grad=True)
        (g,) = paddle.grad((fn(x, axis=1) * t(w)).sum(), x)
        return g.numpy()

    x = t(x0, grad=True)
    (g,) = paddle.grad((fn(x, axis=1) * t(w)).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), first(x0), rtol=1e-12, atol=1e-14)
    (gg,) = paddle.grad((g * t(v)).sum(), x)
    numeric = numeric_grad(lambda xa: float((first(xa) * v).sum()), [x0], 0)
    np.testing.assert_allclose(gg.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_prelu_and_glu():
    x = RNG.normal(size=(2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    ref = np.where(x > 0, x, x * w.reshape(1, 3, 1))
    np.testing.assert_allclose(F.prelu(t(x), t(w)).numpy(), ref)
    ref_last = np.where(x > 0, x, x * np.array([0.1, 0.2, 0.3, 0.4]))
    np.testing.assert_allclose(F.prelu(t(x), t(np.array([0.1, 0.2, 0.3, 0.4])), data_format="NLC").numpy(), ref_last)
    np.testing.assert_allclose(F.prelu(t(x), t(np.array([0.25]))).numpy(), np.where(x > 0, x, 0.25 * x))
    a, b = x[..., :2], x[..., 2:]
    np.testing.assert_allclose(F.glu(t(x)).numpy(), a * _sigmoid(b), rtol=1e-12)
    with pytest.raises(ValueError, match="prelu: argument 'weight' has 2 elements"):
        F.prelu(t(x), t(np.array([0.1, 0.2])))
    with pytest.raises(ValueError, match="glu: the size of axis 1"):
        F.glu(t(x), axis=1)


def test_inplace_activations():
    x = t(np.array([-1.0, 2.0]))
    out = F.relu_(x)
    assert out is x and x.tolist() == [0.0, 2.0]
    y = t(np.array([[1.0, 2.0]]))
    F.softmax_(y)
    np.testing.assert_allclose(y.numpy(), _np_softmax(np.array([[1.0, 2.0]]), -1))
    z = t(np.array([-1.0, 1.0]))
    F.elu_(z, alpha=2.0)
    np.testing.assert_allclose(z.numpy(), [2.0 * (np.exp(-1.0) - 1), 1.0])


def test_activation_errors():
    with pytest.raises(TypeError, match="relu: argument 'x' must be a floating tensor"):
        F.relu(t(np.array([1, 2])))
    with pytest.raises(TypeError, match="gelu: argument 'x' must be a Tensor"):
        F.gelu([1.0])
    with pytest.raises(ValueError, match="hardtanh: argument 'min'"):
        F.hardtanh(t(np.ones(2)), 1.0, -1.0)
    with pytest.raises(ValueError, match="celu: argument 'alpha' must not be 0"):
        F.celu(t(np.ones(2)), 0.0)
    with pytest.raises(ValueError, match="selu: argument 'scale'"):
        F.selu(t(np.ones(2)), scale=0.5)
    with pytest.raises(ValueError, match="softmax: argument 'axis' = 2 is out of range"):
        F.softmax(t(np.ones((2, 2))), axis=2)
    with pytest.raises(TypeError, match="leaky_relu: argument 'negative_slope' must be a number"):
        F.leaky_relu(t(np.ones(2)), "0.1")


# ---------------------------------------------------------------- linear
def test_linear_values_shapes_and_gradients():
    x0, w0, b0 = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(4, 5)), RNG.normal(size=5)
    x, w, b = t(x0, True), t(w0, True), t(b0, True)
    out = F.linear(x, w, b)
    np.testing.assert_allclose(out.numpy(), x0 @ w0 + b0, rtol=1e-12)
    g0 = RNG.normal(size=(2, 3, 5))
    out.backward(t(g0))
    np.testing.assert_allclose(x.grad.numpy(), g0 @ w0.T, rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), x0.reshape(-1, 4).T @ g0.reshape(-1, 5), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), g0.sum(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(F.linear(t(x0), t(w0)).numpy(), x0 @ w0, rtol=1e-12)
    vec = F.linear(t(x0[0, 0]), t(w0), t(b0))
    assert vec.shape == [5]


def test_linear_double_backward():
    """d/dW of ||d loss / dx||^2, through the linear gradient ops, against differences."""
    x0, w0 = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))

    def penalty(xa, wa, create_graph):
        x, w = t(xa, True), t(wa, True)
        (gx,) = paddle.grad(F.tanh(F.linear(x, w)).sum(), x, create_graph=create_graph)
        return (gx * gx).sum(), w

    p, w = penalty(x0, w0, True)
    (gw,) = paddle.grad(p, w)
    numeric = numeric_grad(lambda xa, wa: float(penalty(xa, wa, False)[0]), [x0, w0], 1)
    np.testing.assert_allclose(gw.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_linear_errors():
    with pytest.raises(ValueError, match="linear: the last dimension of argument 'x'"):
        F.linear(t(np.ones((2, 3))), t(np.ones((4, 5))))
    with pytest.raises(ValueError, match="linear: argument 'weight' must be 2-D"):
        F.linear(t(np.ones((2, 3))), t(np.ones(3)))
    with pytest.raises(TypeError, match="linear: argument 'weight' has dtype float32"):
        F.linear(t(np.ones((2, 3))), t(np.ones((3, 2), np.float32)))
    with pytest.raises(ValueError, match=r"linear: argument 'bias' must have shape \[2\]"):
        F.linear(t(np.ones((2, 3))), t(np.ones((3, 2))), t(np.ones(3)))


# ---------------------------------------------------------------- dropout
def test_dropout_statistics_and_gradient():
    paddle.seed(123)
    x = t(np.ones((200, 100)), True)
    out = F.dropout(x, p=0.3)
    o = out.numpy()
    dropped = (o == 0).mean()
    assert abs(dropped - 0.3) < 0.02
    np.testing.assert_allclose(o[o != 0], 1 / 0.7)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), o)  # x is ones: the gradient is the scaled mask


def test_dropout_is_reproducible_under_a_seed():
    x = t(np.ones((10, 10)))
    paddle.seed(7)
    a = F.dropout(x, 0.5).numpy()
    paddle.seed(7)
    b = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, b)


def test_dropout_eval_modes_and_edges():
    x = t(RNG.normal(size=(4, 5)))
    assert F.dropout(x, 0.5, training=False) is x
    np.testing.assert_allclose(F.dropout(x, 0.4, training=False, mode="downscale_in_infer").numpy(), x.numpy() * 0.6)
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros((4, 5)))
    paddle.seed(1)
    down = F.dropout(t(np.ones((50, 50))), 0.5, mode="downscale_in_infer").numpy()
    assert set(np.unique(down)) == {0.0, 1.0}


def test_dropout_axis_drops_whole_slices():
    paddle.seed(3)
    out = F.dropout(t(np.ones((40, 6))), 0.5, axis=0).numpy()
    rows = out.reshape(40, 6)
    assert all(len(set(r)) == 1 for r in rows)  # each row kept or dropped as a whole
    assert {0.0, 2.0} == set(np.unique(rows))
    out2 = F.dropout2d(t(np.ones((4, 8, 3, 3))), 0.5).numpy()
    per_channel = out2.reshape(4, 8, 9)
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()
    out3 = F.dropout2d(t(np.ones((4, 3, 3, 8))), 0.5, data_format="NHWC").numpy()
    assert (out3.min(axis=(1, 2)) == out3.max(axis=(1, 2))).all()


def test_alpha_dropout_keeps_mean_and_variance():
    paddle.seed(11)
    x0 = RNG.normal(size=(400, 250))
    out = F.alpha_dropout(t(x0), p=0.2).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1.0) < 0.02
    assert F.alpha_dropout(t(x0), 0.2, training=False).numpy() is not None
    np.testing.assert_array_equal(F.alpha_dropout(t(x0), 0.2, training=False).numpy(), x0)


def test_dropout_errors():
    x = t(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"dropout: argument 'p' must be in \[0, 1\], got 1.5"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match="dropout: argument 'mode' must be one of"):
        F.dropout(x, 0.5, mode="scale")
    with pytest.raises(ValueError, match="dropout2d: argument 'x' must be 4-D"):
        F.dropout2d(x)
    with pytest.raises(TypeError, match="dropout: argument 'x' must be a floating tensor"):
        F.dropout(t(np.ones((2, 2), np.int64)), 0.5)


# ---------------------------------------------------------------- embedding, one_hot
def test_embedding_values_padding_and_gradient():
    w0 = RNG.normal(size=(6, 3))
    ids = np.array([[1, 2, 1], [5, 0, 2]])
    w = t(w0, True)
    out = F.embedding(t(ids), w, padding_idx=2)
    ref = w0[ids]
    ref[ids == 2] = 0
    np.testing.assert_allclose(out.numpy(), ref)
    g0 = RNG.normal(size=(2, 3, 3))
    out.backward(t(g0))
    expect = np.zeros_like(w0)
    np.add.at(expect, ids.reshape(-1), g0.reshape(-1, 3))
    expect[2] = 0
    np.testing.assert_allclose(w.grad.numpy(), expect)
    neg = F.embedding(t(ids), t(w0), padding_idx=-1).numpy()  # -1 means the last row
    assert (neg[0, 0] != 0).all() and (neg[1, 0] == 0).all()


def test_embedding_double_backward_is_linear_in_the_gradient():
    w0 = RNG.normal(size=(4, 2))
    ids = t(np.array([0, 3, 3]))
    w = t(w0, True)
    (g,) = paddle.grad((F.embedding(ids, w) ** 2).sum(), w, create_graph=True)
    (gg,) = paddle.grad(g.sum(), w)
    np.testing.assert_allclose(gg.numpy(), np.array([[2, 2], [0, 0], [0, 0], [4, 4]], dtype=float))


def test_embedding_errors():
    w = t(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"embedding: index 4 in argument 'x' is out of range \[0, 4\)"):
        F.embedding(t(np.array([0, 4])), w)
    with pytest.raises(ValueError, match=r"embedding: index -1"):
        F.embedding(t(np.array([-1, 0])), w)
    with pytest.raises(TypeError, match="embedding: argument 'x' must be an integer tensor"):
        F.embedding(t(np.array([0.0])), w)
    with pytest.raises(ValueError, match="embedding: argument 'padding_idx' = 4 is out of range"):
        F.embedding(t(np.array([0])), w, padding_idx=4)


def test_one_hot():
    out = F.one_hot(t(np.array([[0, 2], [1, 1]])), 3)
    assert out.dtype == paddle.float32 and out.shape == [2, 2, 3]
    np.testing.assert_array_equal(out.numpy(), np.eye(3)[[[0, 2], [1, 1]]])
    with pytest.raises(ValueError, match=r"one_hot: label value 3 in argument 'x' is out of range \[0, 3\)"):
        F.one_hot(t(np.array([0, 3])), 3)
    with pytest.raises(TypeError, match="one_hot: argument 'x' must be an integer tensor"):
        F.one_hot(t(np.array([0.0])), 3)


# ---------------------------------------------------------------- similarity, distance, smoothing
def test_cosine_similarity_pairwise_distance_label_smooth():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    ref = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    np.testing.assert_allclose(F.cosine_similarity(t(a), t(b)).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(F.cosine_similarity(t(a), t(b), axis=0).numpy(),
                               (a * b).sum(0) / np.sqrt((a * a).sum(0) * (b * b).sum(0)), rtol=1e-12)
    zero = F.cosine_similarity(t(np.zeros((1, 3))), t(np.ones((1, 3)))).numpy()
    np.testing.assert_array_equal(zero, [0.0])
    d = a - b + 1e-6
    np.testing.assert_allclose(F.pairwise_distance(t(a), t(b)).numpy(), np.sqrt((d * d).sum(-1)), rtol=1e-12)
    np.testing.assert_allclose(F.pairwise_distance(t(a), t(b), p=3.0, keepdim=True).numpy(),
                               (np.abs(d) ** 3).sum(-1, keepdims=True) ** (1 / 3), rtol=1e-12)
    np.testing.assert_allclose(F.pairwise_distance(t(a), t(b), p=float("inf")).numpy(), np.abs(d).max(-1))
    onehot = np.eye(4)[[0, 3, 1]]
    np.testing.assert_allclose(F.label_smooth(t(onehot), epsilon=0.2).numpy(), onehot * 0.8 + 0.05)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(F.label_smooth(t(onehot), t(prior), epsilon=0.2).numpy(), onehot * 0.8 + 0.2 * prior)


def test_maxout_rrelu_gumbel_softmax():
    x0 = RNG.normal(size=(2, 6, 3))
    np.testing.assert_array_equal(F.maxout(t(x0), 3).numpy(), x0.reshape(2, 2, 3, 3).max(axis=2))
    xl = np.moveaxis(x0, 1, -1)
    np.testing.assert_array_equal(F.maxout(t(xl), 2, axis=-1).numpy(), xl.reshape(2, 3, 3, 2).max(axis=-1))
    with pytest.raises(ValueError, match=r"maxout: the number of channels \(6\) must be divisible"):
        F.maxout(t(x0), 4)
    paddle.seed(5)
    x = t(x0, True)
    out = F.rrelu(x, 0.1, 0.3)
    o = out.numpy()
    slope = o[x0 < 0] / x0[x0 < 0]
    assert ((slope >= 0.1) & (slope <= 0.3)).all() and len(np.unique(slope)) > 1
    np.testing.assert_array_equal(o[x0 >= 0], x0[x0 >= 0])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(x0 >= 0, 1.0, o / np.where(x0 == 0, 1, x0)))
    np.testing.assert_allclose(F.rrelu(t(x0), 0.1, 0.3, training=False).numpy(), np.where(x0 > 0, x0, 0.2 * x0))
    with pytest.raises(ValueError, match="rrelu: arguments must satisfy"):
        F.rrelu(t(x0), 0.5, 0.2)
    logits = RNG.normal(size=(4, 5))
    paddle.seed(9)
    soft = F.gumbel_softmax(t(logits), temperature=0.5)
    np.testing.assert_allclose(soft.numpy().sum(-1), np.ones(4))
    paddle.seed(9)
    lx = t(logits, True)
    hard = F.gumbel_softmax(lx, temperature=0.5, hard=True)
    np.testing.assert_array_equal(hard.numpy(), np.eye(5)[soft.numpy().argmax(-1)])
    (hard * t(np.arange(5.0))).sum().backward()
    assert np.abs(lx.grad.numpy()).sum() > 0  # the straight-through estimator passes the soft gradient


def test_hardswish_gradient_at_the_kinks_follows_paddle():
    """Paddle's hardswish_grad takes the outer pieces' slopes at the kinks: 0 at x = -3, 1 at x = 3
    (the inner formula (2x + 3) / 6 would give -0.5 and 1.5 there), on both backward paths."""
    x = t(np.array([-3.0, 3.0, -2.0, 2.0]), grad=True)
    F.hardswish(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0, -1.0 / 6.0, 7.0 / 6.0], rtol=1e-12)
    x = t(np.array([-3.0, 3.0]), grad=True)
    (g,) = paddle.grad(F.hardswish(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [0.0, 1.0])
