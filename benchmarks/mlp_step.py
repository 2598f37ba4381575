"""One MLP training step (784-512-512-10, batch 128), eager `runtime` vs a hand-written NumPy step (the floor).

Model: Linear 784->512, ReLU, 512->512, ReLU, 512->10; cross-entropy (mean) on int64
labels; batch 128 float32; Adam lr 1e-3 (0.9/0.999, eps 1e-8). One step = forward + loss
+ backward + step + clear_grad. Both sides start from the same weights and are checked to
produce the same parameters after a step before timing. Aim: eager <= 1.3x the floor.
"""
from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
import runtime.nn.functional as F

SIZES = [784, 512, 512, 10]
BATCH = 128


class NumpyMLPStep:
    """The floor: the same math written directly in NumPy as tightly as we know how
    (in-place bias adds and ReLUs, in-place Adam with one scratch buffer per parameter)."""

    def __init__(self, params: list[np.ndarray], lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
        self.params = [p.copy() for p in params]
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.tmp = [np.empty_like(p) for p in self.params]
        self.lr, self.b1, self.b2, self.eps, self.t = lr, b1, b2, eps, 0

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        W1, b1, W2, b2, W3, b3 = self.params
        n = x.shape[0]
        rows = np.arange(n)
        h1 = x @ W1
        h1 += b1
        r1 = np.maximum(h1, 0)
        h2 = r1 @ W2
        h2 += b2
        r2 = np.maximum(h2, 0)
        z = r2 @ W3
        z += b3
        z -= z.max(axis=1, keepdims=True)
        ez = np.exp(z)
        s = ez.sum(axis=1, keepdims=True)
        loss = float((np.log(s[:, 0]) - z[rows, y]).mean())
        d = ez
        d /= s
        d[rows, y] -= 1.0
        d /= n
        grads = [None] * 6
        grads[4], grads[5] = r2.T @ d, d.sum(0)
        d = d @ W3.T
        d *= h2 > 0
        grads[2], grads[3] = r1.T @ d, d.sum(0)
        d = d @ W2.T
        d *= h1 > 0
        grads[0], grads[1] = x.T @ d, d.sum(0)
        self.t += 1
        c2 = np.sqrt(1 - self.b2 ** self.t)
        lr_t = self.lr * c2 / (1 - self.b1 ** self.t)
        for p, g, m, v, tmp in zip(self.params, grads, self.m, self.v, self.tmp):
            m *= self.b1
            np.multiply(g, 1 - self.b1, out=tmp)
            m += tmp
            v *= self.b2
            np.multiply(g, g, out=tmp)
            tmp *= 1 - self.b2
            v += tmp
            np.sqrt(v, out=tmp)
            tmp += self.eps * c2
            np.divide(m, tmp, out=tmp)
            tmp *= lr_t
            p -= tmp
        return loss


class MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(SIZES[0], SIZES[1])
        self.fc2 = paddle.nn.Linear(SIZES[1], SIZES[2])
        self.fc3 = paddle.nn.Linear(SIZES[2], SIZES[3])

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def eager_workload():
    """The step's data, a seeded eager model with Adam, its NumPy floor, and the eager step function."""
    paddle.seed(0)
    model = MLP()
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    ys = rng.integers(0, SIZES[-1], BATCH).astype(np.int64)
    floor = NumpyMLPStep([p.numpy() for p in model.parameters()])
    x, y = paddle.to_tensor(xs), paddle.to_tensor(ys)

    def eager_step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return model, xs, ys, floor, eager_step


def main() -> None:
    print(describe())
    model, xs, ys, floor, eager_step = eager_workload()
    loss_eager = float(eager_step())
    loss_floor = floor.step(xs, ys)
    assert abs(loss_eager - loss_floor) < 1e-4, (loss_eager, loss_floor)
    for p, q in zip(model.parameters(), floor.params):
        np.testing.assert_allclose(p.numpy(), q, rtol=1e-4, atol=1e-5)
    r = bench({"numpy floor": lambda: floor.step(xs, ys), "runtime eager": eager_step})
    print(f"numpy floor   {fmt_time(r['numpy floor'])}")
    print(f"runtime eager {fmt_time(r['runtime eager'])}  ({r['runtime eager'] / r['numpy floor']:.2f}x the floor)")


if __name__ == "__main__":
    main()
