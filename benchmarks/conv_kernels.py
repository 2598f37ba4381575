"""Conv / pool / batch-norm kernels at W5's shapes, each against its NumPy floor, then W5 itself.

Per op, the floor is the least work any implementation does: the sgemm of the same (M, K, N)
on contiguous operands for a convolution or its gradients, the running max / sum over the
window taps without a mask for pooling, and `x * scale + shift` in place for batch norm.
The ratio op / floor says how much a kernel spends beyond that. W5 (the small CNN of
benchmarks/_workloads.py: conv3x3
3->16 + BN + ReLU, conv3x3 16->32 + BN + ReLU, maxpool 2, linear 8192->10; eval, no grad,
input [32, 3, 32, 32]) is timed against a hand-written NumPy forward (NHWC im2col + sgemm),
and W5t (its training step, SGD) is timed alone. Results are checked before timing.
Last, a Winograd F(2x2, 3x3) convolution written in NumPy (a measurement, not a kernel of
`runtime`) is timed against the im2col kernel at W5's two convolutions, with its GEMMs alone.
Times are this thread's CPU time (BLAS pinned to one thread), so that a machine shared with
other work still gives each kernel's own cost; BENCH_CLOCK=wall measures wall time instead.
"""
import os
import time

from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
from runtime.ops.registry import get_op

BATCH, CH, HW = 32, 3, 32
rng = np.random.default_rng(0)


def _f32(*shape) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


def conv_cases() -> list[tuple]:
    """conv 16->32 3x3 pad 1 on [32, 16, 32, 32]: forward, input gradient, weight gradient."""
    n, c, o, h = BATCH, 16, 32, HW
    x, w, b, g = _f32(n, c, h, h), _f32(o, c, 3, 3), _f32(o), _f32(n, o, h, h)
    xt, wt, bt, gt = (paddle.to_tensor(a) for a in (x, w, b, g))
    grad_filter = get_op("conv_grad_filter")
    attrs = {"stride": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 1, "channel_last": False}
    k_rows = np.ascontiguousarray(_f32(n, c * 9, h * h))  # im2col columns, as the floors' operand
    wk = w.reshape(o, -1)
    gk = g.reshape(n, o, h * h)
    win = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), (2, 3))
    ref = np.einsum("nchwkl,ockl->nohw", win, w, dtype=np.float64) + b.reshape(o, 1, 1)
    np.testing.assert_allclose(F.conv2d(xt, wt, bt, padding=1).numpy(), ref, rtol=1e-4, atol=1e-4)
    return [
        ("conv2d fwd", lambda: F.conv2d(xt, wt, bt, padding=1), lambda: np.matmul(wk, k_rows)),
        ("conv2d grad x", lambda: F.conv2d_transpose(gt, wt, padding=1), lambda: np.matmul(wk.T, gk)),
        ("conv2d grad w", lambda: grad_filter(xt, gt, kernel_size=(3, 3), **attrs),
         lambda: np.matmul(gk, k_rows.transpose(0, 2, 1))),
    ]


def pool_cases() -> list[tuple]:
    """2x2 stride-2 max and average pooling on [32, 32, 32, 32], and max pooling's gradient."""
    x = _f32(BATCH, 32, HW, HW)
    xt = paddle.to_tensor(x)
    y, mask = F.max_pool2d(xt, 2, return_mask=True)
    gy = paddle.to_tensor(_f32(*y.shape))
    scatter = get_op("max_pool_scatter")
    quads = [x[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]
    np.testing.assert_array_equal(y.numpy(), np.maximum(np.maximum(quads[0], quads[1]),
                                                        np.maximum(quads[2], quads[3])))

    def taps(reduce):
        acc = quads[0].copy()
        for q in quads[1:]:
            reduce(acc, q, out=acc)
        return acc

    def scatter_floor():
        out = np.zeros_like(x)
        out[:, :, ::2, ::2] = gy.numpy()
        return out

    return [
        ("max_pool2d fwd", lambda: F.max_pool2d(xt, 2), lambda: taps(np.maximum)),
        ("avg_pool2d fwd", lambda: F.avg_pool2d(xt, 2), lambda: taps(np.add)),
        ("max_pool2d grad", lambda: scatter(gy, mask, size=(HW, HW), channel_last=False, disjoint=True),
         scatter_floor),
    ]


def bn_cases() -> list[tuple]:
    """batch norm over [32, 32, 32, 32]: training forward, its gradient, eval forward."""
    c = 32
    x = _f32(BATCH, c, HW, HW)
    xt = paddle.to_tensor(x)
    w, b = paddle.ones([c]), paddle.zeros([c])
    mean, var = paddle.zeros([c]), paddle.ones([c])
    gy = paddle.to_tensor(_f32(*x.shape))
    _, batch_mean, batch_var = get_op("batch_norm")(xt, w, b, epsilon=1e-5, channel_axis=1)
    bn_grad = get_op("batch_norm_grad")
    scale, shift = np.full((c, 1, 1), 0.5, np.float32), np.full((c, 1, 1), 0.1, np.float32)

    def floor():
        y = np.multiply(x, scale)
        y += shift
        return y

    return [
        ("batch_norm train fwd", lambda: F.batch_norm(xt, mean, var, w, b, training=True), floor),
        ("batch_norm grad", lambda: bn_grad(xt, w, b, batch_mean, batch_var, gy, epsilon=1e-5, channel_axis=1),
         floor),
        ("batch_norm eval fwd", lambda: F.batch_norm(xt, mean, var, w, b, training=False), floor),
    ]


class CNN(nn.Layer):
    """W5's network."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2D(CH, 16, 3, padding=1), nn.BatchNorm2D(16)
        self.conv2, self.bn2 = nn.Conv2D(16, 32, 3, padding=1), nn.BatchNorm2D(32)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Linear(32 * (HW // 2) ** 2, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = paddle.flatten(self.pool(x), 1)
        return self.fc(x)


def numpy_w5(model: CNN):
    """W5's forward hand-written in NumPy (NHWC, im2col + one sgemm per conv), with the model's weights."""
    def conv_bn_relu(x, conv, bn):
        w, b = conv.weight.numpy(), conv.bias.numpy()
        k = w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0])
        scale = bn.weight.numpy() / np.sqrt(bn._variance.numpy() + bn._epsilon)
        shift = (b - bn._mean.numpy()) * scale + bn.bias.numpy()
        n, h, wd, c = x.shape
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        cols = np.empty((n, h, wd, 3, 3, c), dtype=np.float32)
        for i in range(3):
            for j in range(3):
                cols[:, :, :, i, j, :] = xp[:, i:i + h, j:j + wd, :]
        y = cols.reshape(n * h * wd, -1) @ k
        y *= scale
        y += shift
        np.maximum(y, 0, out=y)
        return y.reshape(n, h, wd, -1)

    hw = HW // 2
    fc_w = model.fc.weight.numpy().reshape(32, hw, hw, 10).transpose(1, 2, 0, 3).reshape(-1, 10)
    fc_b = model.fc.bias.numpy()

    def forward(x_nchw):
        x = np.ascontiguousarray(x_nchw.transpose(0, 2, 3, 1))
        x = conv_bn_relu(x, model.conv1, model.bn1)
        x = conv_bn_relu(x, model.conv2, model.bn2)
        n, h, w, c = x.shape
        x = x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))
        return x.reshape(n, -1) @ fc_w + fc_b
    return forward


def w5_cases() -> list[tuple]:
    paddle.seed(0)
    model = CNN()
    xn = _f32(BATCH, CH, HW, HW)
    x = paddle.to_tensor(xn)
    floor = numpy_w5(model)
    model.eval()

    def forward():
        with paddle.no_grad():
            return model(x)

    np.testing.assert_allclose(forward().numpy(), floor(xn), rtol=1e-4, atol=1e-4)
    labels = paddle.to_tensor(rng.integers(0, 10, BATCH).astype(np.int64))
    train_model = CNN()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=train_model.parameters())

    def step():
        loss = F.cross_entropy(train_model(x), labels)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return [("W5 forward", forward, lambda: floor(xn)), ("W5t step", step, None)]


# Winograd F(2x2, 3x3): U = G w G^T per (out, in) channel pair, V = B^T d B per 4x4 input tile
# (stride 2), M = U V as 16 GEMMs over the tiles, y = A^T M A per 2x2 output tile.
_G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])


def winograd_f2x3(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """3x3 convolution, stride 1, padding 1, of x [N, C, H, W] (H, W even) by Winograd F(2x2, 3x3)."""
    n, c, h, wd = x.shape
    o, th, tw = w.shape[0], h // 2, wd // 2
    u = np.einsum("ak,ockl,bl->aboc", _G, w, _G).astype(x.dtype).reshape(16, o, c)
    p = np.zeros((n, c, h + 2, wd + 2), x.dtype)
    p[:, :, 1:-1, 1:-1] = x
    r = [p[:, :, k:k + 2 * th - 1:2, :] for k in range(4)]
    rows = [r[0] - r[2], r[1] + r[2], r[2] - r[1], r[1] - r[3]]  # B^T d
    v = np.empty((4, 4, c, n, th, tw), x.dtype)
    for i, t in enumerate(rows):  # (B^T d) B, written as [C, N * tiles] per (i, j)
        q = [t[..., k:k + 2 * tw - 1:2] for k in range(4)]
        for j, (a, s, sign) in enumerate(((0, 2, -1), (1, 2, 1), (2, 1, -1), (1, 3, -1))):
            (np.add if sign > 0 else np.subtract)(q[a], q[s], out=v[i, j].transpose(1, 0, 2, 3))
    m = np.matmul(u, v.reshape(16, c, -1)).reshape(4, 4, o, n, th, tw)
    y = np.empty((n, o, h, wd), x.dtype)
    yt = y.transpose(1, 0, 2, 3)
    for i, s in enumerate((m[0] + m[1] + m[2], m[1] - m[2] - m[3])):  # A^T M, then (A^T M) A
        yt[:, :, i::2, 0::2] = s[0] + s[1] + s[2] + b[:, None, None, None]
        yt[:, :, i::2, 1::2] = s[1] - s[2] - s[3] + b[:, None, None, None]
    return y


def winograd_cases() -> list[tuple]:
    """W5's two convolutions (3->16, 16->32, [32, C, 32, 32]): the im2col kernel, Winograd, its GEMMs alone."""
    out = []
    for c, o in ((CH, 16), (16, 32)):
        x, w, b = _f32(BATCH, c, HW, HW), _f32(o, c, 3, 3), _f32(o)
        xt, wt, bt = (paddle.to_tensor(a) for a in (x, w, b))
        ref = F.conv2d(paddle.to_tensor(x.astype(np.float64)), paddle.to_tensor(w.astype(np.float64)),
                       paddle.to_tensor(b.astype(np.float64)), padding=1).numpy()
        np.testing.assert_allclose(winograd_f2x3(x, w, b), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
        u, v = _f32(16, o, c), _f32(16, c, BATCH * (HW // 2) ** 2)
        out.append((f"conv {c}->{o}", lambda xt=xt, wt=wt, bt=bt: F.conv2d(xt, wt, bt, padding=1),
                    {"winograd": lambda x=x, w=w, b=b: winograd_f2x3(x, w, b),
                     "winograd GEMMs": lambda u=u, v=v: np.matmul(u, v)}))
    return out


def main() -> None:
    print(describe())
    cases = conv_cases() + pool_cases() + bn_cases() + w5_cases()
    winograd = winograd_cases()
    variants = {}
    for name, kernel, others in winograd:
        variants[name + " im2col kernel"] = kernel
        variants.update({f"{name} {k}": fn for k, fn in others.items()})
    for name, ours, floor in cases:
        variants[name] = ours
        if floor is not None:
            variants[name + " /floor"] = floor
    wall = os.environ.get("BENCH_CLOCK") == "wall"
    r = bench(variants, clock=time.perf_counter if wall else time.thread_time)
    print(f"clock: {'wall time' if wall else 'CPU time of this thread'}")
    print(f"{'op':28s} {'runtime':>12s} {'numpy floor':>12s} {'ratio':>7s}")
    for name, _, floor in cases:
        ours = r[name]
        if floor is None:
            print(f"{name:28s} {fmt_time(ours):>12s} {'-':>12s} {'-':>7s}")
        else:
            low = r[name + " /floor"]
            print(f"{name:28s} {fmt_time(ours):>12s} {fmt_time(low):>12s} {ours / low:6.2f}x")
    print(f"\n{'Winograd F(2x2, 3x3), NumPy':28s} {'time':>12s} {'/ im2col':>9s}")
    for name, _, others in winograd:
        base = r[name + " im2col kernel"]
        for label in ["im2col kernel", *others]:
            print(f"{name + ' ' + label:28s} {fmt_time(r[name + ' ' + label]):>12s} {r[name + ' ' + label] / base:8.2f}x")


if __name__ == "__main__":
    main()
