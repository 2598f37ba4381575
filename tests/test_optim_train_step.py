"""The training-step path end to end: ReLU-family gradients (a masked copy of the out grad) against
NumPy's where, and an MLP step (forward under sot.to_static, backward, Adam, clear_grad) against
the same step run eagerly and against a NumPy reference of the same math."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot

# name -> (call, the NumPy condition under which the out grad passes through)
MASKED_GRADS = {
    "relu": (F.relu, lambda x: x > 0.0),
    "relu6": (F.relu6, lambda x: (x > 0.0) & (x < 6.0)),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 1.5), lambda x: (x > -0.5) & (x < 1.5)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.25), lambda x: np.abs(x) > 0.25),
    "softshrink": (lambda x: F.softshrink(x, 0.25), lambda x: np.abs(x) > 0.25),
    "thresholded_relu": (lambda x: F.thresholded_relu(x, 0.5), lambda x: x > 0.5),
}


def _inputs(dtype):
    """x on both sides of every kink; an out grad with NaN, +-inf, -0.0 and a random sign pattern."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 8, size=64).astype(dtype)
    x[:8] = [0.0, -0.0, 6.0, -0.5, 1.5, 0.25, -0.25, 0.5]
    g = rng.standard_normal(64).astype(dtype)
    g[:12] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan, -np.inf, -0.0, 1.0, -1.0, np.inf, -0.0]
    g[40:52] = g[:12]
    return x, g


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(MASKED_GRADS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_masked_activation_grads_are_numpy_where_bit_for_bit(name, dtype, create_graph):
    call, passes = MASKED_GRADS[name]
    x, g = _inputs(dtype)
    xt = paddle.to_tensor(x, stop_gradient=False)
    (got,) = paddle.grad(call(xt), xt, grad_outputs=paddle.to_tensor(g), create_graph=create_graph)
    want = np.where(passes(x), g, 0.0)
    assert got.numpy().dtype == want.dtype
    np.testing.assert_array_equal(got.numpy().view(f"u{want.itemsize}"), want.view(f"u{want.itemsize}"))


# ---------------------------------------------------------------- an MLP training step
SIZES = (12, 16, 16, 5)
BATCH = 6


class _MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(SIZES[0], SIZES[1])
        self.fc2 = paddle.nn.Linear(SIZES[1], SIZES[2])
        self.fc3 = paddle.nn.Linear(SIZES[2], SIZES[3])

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def _weights():
    rng = np.random.default_rng(3)
    return [a.astype("float32") for i in range(3)
            for a in (rng.standard_normal(SIZES[i:i + 2]) * 0.5, rng.standard_normal(SIZES[i + 1]) * 0.1)]


def _batch():
    rng = np.random.default_rng(4)
    return rng.standard_normal((BATCH, SIZES[0])).astype("float32"), rng.integers(0, SIZES[-1], BATCH)


def _train(jit: bool, steps: int) -> tuple[list, list]:
    model = _MLP()
    for p, w in zip(model.parameters(), _weights()):
        p.set_value(w)
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    forward = sot.to_static(model) if jit else model
    x, y = (paddle.to_tensor(a) for a in _batch())
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in model.parameters()]


def _numpy_train(steps: int, lr=0.01, b1=0.9, b2=0.999, eps=1e-8) -> tuple[list, list]:
    """The same step in float64 textbook form (bias-corrected moments)."""
    ps = [w.astype(np.float64) for w in _weights()]
    ms, vs = [np.zeros_like(p) for p in ps], [np.zeros_like(p) for p in ps]
    x, y = _batch()
    rows = np.arange(BATCH)
    losses = []
    for t in range(1, steps + 1):
        w1, c1, w2, c2, w3, c3 = ps
        h1 = x @ w1 + c1
        h2 = np.maximum(h1, 0) @ w2 + c2
        z = np.maximum(h2, 0) @ w3 + c3
        e = np.exp(z - z.max(1, keepdims=True))
        prob = e / e.sum(1, keepdims=True)
        losses.append(float(-np.log(prob[rows, y]).mean()))
        d = prob
        d[rows, y] -= 1
        d /= BATCH
        r2, r1 = np.maximum(h2, 0), np.maximum(h1, 0)
        grads = [None] * 6
        grads[4], grads[5] = r2.T @ d, d.sum(0)
        d = (d @ w3.T) * (h2 > 0)
        grads[2], grads[3] = r1.T @ d, d.sum(0)
        d = (d @ w2.T) * (h1 > 0)
        grads[0], grads[1] = x.T @ d, d.sum(0)
        for p, g, m, v in zip(ps, grads, ms, vs):
            m[...] = b1 * m + (1 - b1) * g
            v[...] = b2 * v + (1 - b2) * g * g
            p -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return losses, ps


def test_mlp_adam_step_compiled_matches_eager_and_numpy():
    steps = 4
    eager_losses, eager_params = _train(False, steps)
    jit_losses, jit_params = _train(True, steps)
    assert jit_losses == eager_losses
    for got, want in zip(jit_params, eager_params):
        np.testing.assert_array_equal(got, want)
    ref_losses, ref_params = _numpy_train(steps)
    np.testing.assert_allclose(eager_losses, ref_losses, rtol=1e-5)
    for got, want in zip(eager_params, ref_params):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
