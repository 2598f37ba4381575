"""nn.functional normalisation: values against NumPy references, batch_norm running-stat
updates, gradients of x/weight/bias against finite differences (fused and composed paths)."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from helpers import fd_grad
from test_nn_functional import numeric_grad, t

RNG = np.random.default_rng(2)


def ref_norm(x, axes, w=None, b=None, eps=1e-5, pshape=None):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * w.reshape(pshape)
    if b is not None:
        y = y + b.reshape(pshape)
    return y


X4 = RNG.normal(size=(3, 4, 2, 5)) * 2 + 1
WC, BC = RNG.uniform(0.5, 1.5, 4), RNG.normal(size=4)


def test_batch_norm_training_values_and_running_stats():
    rm, rv = t(np.full(4, 0.5)), t(np.full(4, 2.0))
    version = rm._version
    y = F.batch_norm(t(X4), rm, rv, t(WC), t(BC), training=True, momentum=0.8)
    np.testing.assert_allclose(y.numpy(), ref_norm(X4, (0, 2, 3), WC, BC, pshape=(1, 4, 1, 1)), rtol=1e-10)
    np.testing.assert_allclose(rm.numpy(), 0.8 * 0.5 + 0.2 * X4.mean(axis=(0, 2, 3)), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.8 * 2.0 + 0.2 * X4.var(axis=(0, 2, 3)), rtol=1e-12)  # biased variance
    assert rm._version > version


def test_batch_norm_eval_and_global_stats():
    rm, rv = RNG.normal(size=4), RNG.uniform(0.5, 2, 4)
    ref = (X4 - rm.reshape(1, 4, 1, 1)) / np.sqrt(rv.reshape(1, 4, 1, 1) + 1e-3) * WC.reshape(1, 4, 1, 1) \
        + BC.reshape(1, 4, 1, 1)
    out = F.batch_norm(t(X4), t(rm), t(rv), t(WC), t(BC), epsilon=1e-3)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    rm_t, rv_t = t(rm), t(rv)
    out = F.batch_norm(t(X4), rm_t, rv_t, t(WC), t(BC), training=True, epsilon=1e-3, use_global_stats=True)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    np.testing.assert_array_equal(rm_t.numpy(), rm)  # global statistics are not updated
    rm_b, rv_b = t(rm), t(rv)
    out = F.batch_norm(t(X4), rm_b, rv_b, training=False, use_global_stats=False)
    np.testing.assert_allclose(out.numpy(), ref_norm(X4, (0, 2, 3)), rtol=1e-10)
    # as Paddle's kernel: batch statistics in use (even with training=False) update the running ones
    np.testing.assert_allclose(rm_b.numpy(), 0.9 * rm + 0.1 * X4.mean(axis=(0, 2, 3)), rtol=1e-12)
    np.testing.assert_allclose(rv_b.numpy(), 0.9 * rv + 0.1 * X4.var(axis=(0, 2, 3)), rtol=1e-12)


def test_batch_norm_channel_last_and_2d():
    x = np.moveaxis(X4, 1, -1)
    rm, rv = t(np.zeros(4)), t(np.ones(4))
    y = F.batch_norm(x=t(x), running_mean=rm, running_var=rv, weight=t(WC), bias=t(BC), training=True,
                     data_format="NHWC")
    np.testing.assert_allclose(y.numpy(), ref_norm(x, (0, 1, 2), WC, BC, pshape=(1, 1, 1, 4)), rtol=1e-10)
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.mean(axis=(0, 1, 2)), rtol=1e-12)
    x2 = RNG.normal(size=(6, 4))
    y2 = F.batch_norm(t(x2), t(np.zeros(4)), t(np.ones(4)), training=True, data_format="NC")
    np.testing.assert_allclose(y2.numpy(), ref_norm(x2, (0,)), rtol=1e-10)


NORM_CASES = {
    "batch_norm": (lambda x, w, b: F.batch_norm(x, t(np.zeros(3)), t(np.ones(3)), w, b, training=True),
                   (4, 3, 2), (3,)),
    "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, t(np.array([0.1, -0.2, 0.3])), t(np.array([0.5, 1.0, 2.0])),
                                                     w, b), (4, 3, 2), (3,)),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, [3, 2], w, b), (4, 3, 2), (6,)),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, weight=w, bias=b), (2, 4, 3), (4,)),
    "group_norm_nhwc": (lambda x, w, b: F.group_norm(x, 2, weight=w, bias=b, data_format="NHWC"), (2, 3, 4), (4,)),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (2, 3, 4), (3,)),
}


@pytest.mark.parametrize("case", sorted(NORM_CASES))
def test_norm_gradients_match_finite_differences(case):
    fn, xshape, pshape = NORM_CASES[case]
    x0, w0, b0 = RNG.normal(size=xshape), RNG.uniform(0.5, 1.5, pshape), RNG.normal(size=pshape)
    v = RNG.normal(size=xshape)

    def f(xa, wa, ba):
        return float((fn(t(xa), t(wa), t(ba)) * t(v)).sum())

    x, w, b = t(x0, True), t(w0, True), t(b0, True)
    (fn(x, w, b) * t(v)).sum().backward()
    for i, got in enumerate((x.grad, w.grad, b.grad)):
        np.testing.assert_allclose(got.numpy(), numeric_grad(f, [x0, w0, b0], i), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{case}: input {i}")


@pytest.mark.parametrize("case", ["batch_norm", "layer_norm", "group_norm", "instance_norm"])
def test_norm_double_backward(case):
    """With create_graph=True the gradient is composed of public ops: it equals the fused one,
    and differentiating it again matches finite differences."""
    fn, xshape, pshape = NORM_CASES[case]
    x0, w0 = RNG.normal(size=xshape), RNG.uniform(0.5, 1.5, pshape)
    b = t(np.zeros(pshape))
    v = RNG.normal(size=xshape)

    def grads(xa, wa, create_graph=False):
        x, w = t(xa, True), t(wa, True)
        gx, gw = paddle.grad((fn(x, w, b) * t(v)).sum(), [x, w], create_graph=create_graph)
        return gx, gw, x, w

    gx, gw, x, w = grads(x0, w0, True)
    fx, fw, _, _ = grads(x0, w0)
    np.testing.assert_allclose(gx.numpy(), fx.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), fw.numpy(), rtol=1e-9, atol=1e-12)
    u = RNG.normal(size=xshape)
    hx, hw = paddle.grad((gx * t(u)).sum(), [x, w])

    def h(xa, wa):
        return float((grads(xa, wa)[0].numpy() * u).sum())

    np.testing.assert_allclose(hx.numpy(), numeric_grad(h, [x0, w0], 0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(hw.numpy(), numeric_grad(h, [x0, w0], 1), rtol=1e-4, atol=1e-6)


def test_layer_norm_values():
    x = RNG.normal(size=(2, 3, 4))
    w, b = RNG.normal(size=(4,)), RNG.normal(size=(4,))
    np.testing.assert_allclose(F.layer_norm(t(x), 4, t(w), t(b)).numpy(), ref_norm(x, (2,), w, b, pshape=(4,)),
                               rtol=1e-10)
    w2 = RNG.normal(size=12)
    ref = ref_norm(x, (1, 2), w2, None, pshape=(3, 4))
    np.testing.assert_allclose(F.layer_norm(t(x), [3, 4], t(w2)).numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(F.layer_norm(t(x), (3, 4), t(w2.reshape(3, 4))).numpy(), ref, rtol=1e-10)
    out32 = F.layer_norm(t(x.astype(np.float32)), 4)
    assert out32.dtype == paddle.float32
    np.testing.assert_allclose(out32.numpy(), ref_norm(x, (2,)), rtol=1e-4, atol=1e-5)


def test_group_and_instance_norm_values():
    x = RNG.normal(size=(2, 6, 3, 2))
    w, b = RNG.normal(size=6), RNG.normal(size=6)
    xs = x.reshape(2, 3, 2, 3, 2)
    ref = ref_norm(xs, (2, 3, 4)).reshape(x.shape) * w.reshape(1, 6, 1, 1) + b.reshape(1, 6, 1, 1)
    np.testing.assert_allclose(F.group_norm(t(x), 3, weight=t(w), bias=t(b)).numpy(), ref, rtol=1e-10)
    xl = np.moveaxis(x, 1, -1)
    np.testing.assert_allclose(F.group_norm(t(xl), 3, weight=t(w), bias=t(b), data_format="NHWC").numpy(),
                               np.moveaxis(ref, 1, -1), rtol=1e-10)
    ref_in = ref_norm(x, (2, 3), w, b, pshape=(1, 6, 1, 1))
    np.testing.assert_allclose(F.instance_norm(t(x), weight=t(w), bias=t(b)).numpy(), ref_in, rtol=1e-10)
    rm, rv = RNG.normal(size=6), RNG.uniform(0.5, 2, 6)
    out = F.instance_norm(t(x), t(rm), t(rv), use_input_stats=False)
    np.testing.assert_allclose(out.numpy(), (x - rm.reshape(1, 6, 1, 1)) / np.sqrt(rv.reshape(1, 6, 1, 1) + 1e-5),
                               rtol=1e-12)


def test_normalize():
    x = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(F.normalize(t(x)).numpy(), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(F.normalize(t(x), p=1, axis=0).numpy(),
                               x / np.abs(x).sum(axis=0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(F.normalize(t(x), p=float("inf")).numpy(),
                               x / np.abs(x).max(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_array_equal(F.normalize(t(np.zeros((2, 3)))).numpy(), np.zeros((2, 3)))


def test_norm_errors():
    x = t(X4)
    with pytest.raises(ValueError, match="batch_norm: argument 'weight' must have 4 elements"):
        F.batch_norm(x, t(np.zeros(4)), t(np.ones(4)), t(np.ones(3)), training=True)
    with pytest.raises(ValueError, match="batch_norm: argument 'running_mean' must have 4 elements"):
        F.batch_norm(x, t(np.zeros(3)), t(np.ones(4)))
    with pytest.raises(ValueError, match="batch_norm: argument 'data_format' must be one of"):
        F.batch_norm(x, t(np.zeros(4)), t(np.ones(4)), data_format="CHWN")
    with pytest.raises(ValueError, match="layer_norm: argument 'normalized_shape'"):
        F.layer_norm(x, [3, 5])
    with pytest.raises(ValueError, match=r"group_norm: the number of channels \(4\) must be divisible by num_groups"):
        F.group_norm(x, 3)
    with pytest.raises(TypeError, match="layer_norm: argument 'x' must be a floating tensor"):
        F.layer_norm(t(np.ones((2, 3), np.int64)), 3)
    with pytest.raises(ValueError, match="normalize: argument 'p' must be positive"):
        F.normalize(x, p=0)
    rm = t(np.zeros(4))
    with pytest.raises(ValueError):
        F.batch_norm(x, rm, t(np.ones(4)), t(np.ones(3)), training=True)
    np.testing.assert_array_equal(rm.numpy(), np.zeros(4))  # a failed call leaves the running stats alone


def test_local_response_norm_values_and_gradient():
    x0 = RNG.normal(size=(2, 5, 3, 2))

    def ref(x, size, alpha=1e-4, beta=0.75, k=1.0):
        sq = np.pad(x * x, ((0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)))
        window = sum(sq[:, j:j + x.shape[1]] for j in range(size))
        return x / (k + alpha / size * window) ** beta

    np.testing.assert_allclose(F.local_response_norm(t(x0), 3).numpy(), ref(x0, 3), rtol=1e-12)
    np.testing.assert_allclose(F.local_response_norm(t(x0), 4, alpha=0.5, beta=0.6, k=2.0).numpy(),
                               ref(x0, 4, 0.5, 0.6, 2.0), rtol=1e-12)
    xl = np.moveaxis(x0, 1, -1)
    np.testing.assert_allclose(F.local_response_norm(t(xl), 2, alpha=0.3, data_format="NHWC").numpy(),
                               np.moveaxis(ref(x0, 2, 0.3), 1, -1), rtol=1e-12)
    x = t(x0, True)
    v = RNG.normal(size=x0.shape)
    (F.local_response_norm(x, 3, alpha=0.5) * t(v)).sum().backward()
    numeric = numeric_grad(lambda xa: float((F.local_response_norm(t(xa), 3, alpha=0.5).numpy() * v).sum()), [x0], 0)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("p", [2, 3, float("inf")])
def test_normalize_gradient_is_finite_on_an_all_zero_slice(p):
    """x / max(||x||_p, eps): on a zero row the norm's gradient is 0 (Paddle's p_norm_grad), so the
    row's gradient is g / eps, not NaN; other rows match finite differences."""
    a = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])
    w = np.array([[1.0, -2.0, 3.0], [0.3, 0.2, -0.1]])
    x = paddle.to_tensor(a.copy(), stop_gradient=False)
    (F.normalize(x, p=p, axis=1) * paddle.to_tensor(w)).sum().backward()
    g = x.grad.numpy()
    np.testing.assert_allclose(g[0], w[0] / 1e-12)
    row = a[1:].copy()
    f = lambda: float((F.normalize(paddle.to_tensor(row), p=p, axis=1).numpy() * w[1:]).sum())  # noqa: E731
    np.testing.assert_allclose(g[1:], fd_grad(f, row), rtol=1e-6, atol=1e-8)
