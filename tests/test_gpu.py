"""runtime and sot on a GPU (CuPy): each test runs the same code on the GPU and on the CPU and
compares, so it checks the CuPy paths against the NumPy ones the rest of the suite checks.

Every test takes the `any_gpu` fixture: it runs on the CuPy stand-in everywhere (where the results
are NumPy's bits), and also on the real GPU where CuPy and one exist (that case is marked `gpu` and
is skipped elsewhere, saying why). `scripts/gpu-check` runs the `gpu` cases on a machine with a GPU.
"""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot

from helpers import assert_device_equal

GPU = paddle.CUDAPlace(0)
RTOL = {np.float32: 1e-5, np.float64: 1e-12}


def _rand(*shape, dtype=np.float32, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_to_tensor_on_a_gpu_place_keeps_values_and_reports_the_place(any_gpu):
    a = _rand(3, 4)
    t = paddle.to_tensor(a, place=GPU)
    assert t.place == GPU and t.place.is_gpu_place()
    assert np.array_equal(t.numpy(), a)


def test_cuda_and_cpu_move_a_tensor_and_back_unchanged(any_gpu):
    a = _rand(5, dtype=np.float64)
    g = paddle.to_tensor(a).cuda()
    assert g.place.is_gpu_place()
    back = g.cpu()
    assert back.place.is_cpu_place() and np.array_equal(back.numpy(), a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_matmul_and_reductions_on_gpu_match_cpu(any_gpu, dtype):
    a, b = _rand(8, 16, dtype=dtype), _rand(16, 4, dtype=dtype, seed=1)

    def f(x, y):
        h = paddle.matmul(paddle.tanh(x) * 2.0 + 1.0, y)
        return h.sum(axis=0), F.softmax(h, axis=-1)

    cpu = f(paddle.to_tensor(a), paddle.to_tensor(b))
    gpu = f(paddle.to_tensor(a, place=GPU), paddle.to_tensor(b, place=GPU))
    for c, g in zip(cpu, gpu):
        assert g.place.is_gpu_place()
        assert_device_equal(g.numpy(), c.numpy(), any_gpu, rtol=RTOL[dtype], atol=RTOL[dtype])


def _mlp() -> nn.Layer:
    paddle.seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def test_backward_and_an_sgd_step_on_gpu_match_cpu(any_gpu):
    x, y = _rand(4, 6), np.array([0, 2, 1, 0], np.int64)
    results = []
    for place in (paddle.CPUPlace(), GPU):
        model = _mlp()
        model.to(device="gpu" if place == GPU else "cpu")
        opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
        loss = F.cross_entropy(model(paddle.to_tensor(x, place=place)), paddle.to_tensor(y, place=place))
        loss.backward()
        opt.step()
        results.append((loss.numpy(), [p.numpy() for p in model.parameters()]))
    (cpu_loss, cpu_params), (gpu_loss, gpu_params) = results
    assert_device_equal(gpu_loss, cpu_loss, any_gpu, rtol=1e-5)
    for g, c in zip(gpu_params, cpu_params):
        assert_device_equal(g, c, any_gpu, rtol=1e-5, atol=1e-6)


def test_to_static_on_gpu_matches_gpu_eager_and_guards_the_place(any_gpu):
    model = _mlp()
    model.to(device="gpu")
    jit = sot.to_static(model)
    x = paddle.to_tensor(_rand(4, 6), place=GPU)
    with paddle.no_grad():
        eager, compiled = model(x), jit(x)
    assert compiled.place.is_gpu_place()
    np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-5, atol=1e-6)
    cpu_model = _mlp()
    cpu_jit = sot.to_static(cpu_model)
    with paddle.no_grad():
        on_cpu = cpu_jit(paddle.to_tensor(_rand(4, 6)))
    assert on_cpu.place.is_cpu_place()
    np.testing.assert_allclose(on_cpu.numpy(), eager.numpy(), rtol=1e-5, atol=1e-6)
