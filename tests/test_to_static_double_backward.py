"""Higher-order gradients through compiled graphs: `paddle.grad(..., create_graph=True)` and
`backward` of a gradient, compared with eager and with finite differences."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot
from sot_helpers import events, fresh


def smooth(x, w):
    return paddle.tanh(x @ w) * x.sum() + (x ** 3).mean()


def smooth_with_break(x, w):
    y = paddle.tanh(x @ w)
    if y.sum() > -100:  # a break: two compiled nodes on the tape
        y = y * x.sum()
    return y + (x ** 3).mean()


def _leaf(*shape, seed):
    return paddle.to_tensor(np.random.default_rng(seed).random(shape), stop_gradient=False)


def _second_order(fn, x, w):
    """fn's value, first gradients (create_graph=True) and the gradients of a function of them."""
    y = fn(x, w)
    gx, gw = paddle.grad(y.sum(), [x, w], create_graph=True)
    ggx, ggw = paddle.grad((gx * gx).sum() + (gw * w).sum(), [x, w])
    return [t.numpy() for t in (y, gx, gw, ggx, ggw)]


@pytest.mark.parametrize("fn", [smooth, smooth_with_break], ids=lambda f: f.__name__)
def test_second_order_gradients_through_a_compiled_graph_equal_eagers(fn):
    x, w = _leaf(2, 3, seed=0), _leaf(3, 3, seed=1)
    want = _second_order(fn, x, w)
    jit = sot.to_static(fresh(fn))
    for _ in range(2):  # the translation, then a cache hit
        got = _second_order(jit, x, w)
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    assert all(code != "SOT-G001" for code, _, _ in events(jit)) and jit.sot_translator.fallbacks == []


def test_second_order_gradients_through_a_compiled_graph_match_finite_differences():
    x, w = _leaf(2, 3, seed=2), _leaf(3, 3, seed=3)
    jit = sot.to_static(fresh(smooth))
    ggx = _second_order(jit, x, w)[3]

    def phi(values):  # the function of the first gradients, with eager first gradients
        xv = paddle.to_tensor(values, stop_gradient=False)
        gx, gw = paddle.grad(smooth(xv, w).sum(), [xv, w])
        return float((gx * gx).sum() + (gw * w).sum())

    base, eps = x.numpy(), 1e-6
    numeric = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        step = np.zeros_like(base)
        step[i] = eps
        numeric[i] = (phi(base + step) - phi(base - step)) / (2 * eps)
    np.testing.assert_allclose(ggx, numeric, rtol=1e-5, atol=1e-7)


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.norm = nn.BatchNorm1D(3)

    def forward(self, x):
        return F.softplus(self.norm(self.fc(x)))


def _gradient_penalty(layer, x):
    """A WGAN-GP style penalty: the gradient of the output w.r.t. the input, differentiated again
    w.r.t. the parameters; with the running statistics after the call."""
    y = layer(x)
    (gx,) = paddle.grad(y.sum(), [x], create_graph=True)
    penalty = ((gx * gx).sum(axis=1) - 1.0).pow(2).mean()
    penalty.backward()
    grads = [None if p.grad is None else p.grad.numpy().copy() for p in layer.parameters()]
    layer.clear_gradients()
    x.clear_gradient()
    return [y.numpy(), gx.numpy(), penalty.numpy(), *grads, layer.norm._mean.numpy().copy()]


def test_a_gradient_penalty_through_a_compiled_layer_equals_eager_and_updates_the_statistics_once():
    paddle.seed(4)
    compiled, eager = Block(), Block()
    eager.set_state_dict(compiled.state_dict())
    sot.to_static(compiled)
    x = paddle.to_tensor(np.random.default_rng(5).random((4, 3)).astype("float32"), stop_gradient=False)
    for _ in range(2):
        got, want = _gradient_penalty(compiled, x), _gradient_penalty(eager, x)
        assert [g is None for g in got] == [e is None for e in want]  # (the norm's shift: no gradient)
        for g, e in zip(got, want):
            if e is not None:
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def noisy(x):
    return F.dropout(x, 0.5) * x


def test_a_recompute_for_create_graph_draws_the_forwards_random_numbers():
    x = _leaf(4, 4, seed=6)

    def run(fn):
        paddle.seed(7)
        y = fn(x)
        (gx,) = paddle.grad(y.sum(), [x], create_graph=True)
        (ggx,) = paddle.grad((gx * gx).sum(), [x])
        after = paddle.rand([2]).numpy()  # the generator goes on as after eager's forward
        return y.numpy(), gx.numpy(), ggx.numpy(), after

    for g, e in zip(run(sot.to_static(fresh(noisy))), run(noisy)):
        np.testing.assert_allclose(g, e, rtol=1e-12)
