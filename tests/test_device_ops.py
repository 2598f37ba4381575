"""Every registry op on a device place gives what it gives on the CPU.

Runs on the host-backed CuPy stand-in (fixture `fake_gpu`), which computes with NumPy, so the
device results must be bit-identical to the CPU ones: any difference is a kernel that does not
go through its array module `xp`. The same walk covers the gradient rules (backward on the
device == backward on the CPU)."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import grad_positions, output_weights, registry_cases, weighted_sum

# ops whose device kernel sums in another order than the host one (a scatter-add where NumPy sorts and
# reduces runs): equal up to rounding, not bit for bit; so are the gradients of the ops whose rule runs one
REORDERED = {"embedding_grad"}
REORDERED_GRADIENTS = {"embedding"}


def _tensors(sample, place, with_grad=()):
    return [None if a is None else paddle.to_tensor(a, place=place, stop_gradient=i not in with_grad)
            for i, a in enumerate(sample.inputs)]


def _run(op, sample, place):
    if op.random:
        paddle.seed(0)
    tensors = _tensors(sample, place)
    if all(t is None for t in tensors):  # a creation op: the default device decides
        paddle.set_device("gpu:0" if place.is_gpu_place() else "cpu")
    try:
        out = op(*tensors, **sample.attrs)
    finally:
        paddle.set_device("cpu")
    return list(out) if isinstance(out, tuple) else [out]


def _assert_same(op, what, cpu, dev, place, reordered=False):
    assert len(cpu) == len(dev), f"{op.name}: {len(dev)} {what} on {place}, {len(cpu)} on the CPU"
    for k, (c, d) in enumerate(zip(cpu, dev)):
        if c is None:
            assert d is None, f"{op.name}: {what} {k} is None on the CPU only"
            continue
        assert d.place == place, f"{op.name}: {what} {k} lives on {d.place}, not {place}"
        got, want = d.numpy(), c.numpy()
        assert type(got) is np.ndarray
        assert got.dtype == want.dtype and got.shape == want.shape, \
            f"{op.name}: {what} {k} is {got.dtype}{got.shape} on {place}, {want.dtype}{want.shape} on the CPU"
        if reordered:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=f"{op.name}: {what} {k}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{op.name}: {what} {k} on {place}")


@pytest.mark.parametrize("op,sample", list(registry_cases()))
def test_op_on_device_matches_cpu(fake_gpu, op, sample):
    place = paddle.CUDAPlace(0)
    cpu = _run(op, sample, paddle.CPUPlace())
    dev = _run(op, sample, place)
    _assert_same(op, "output", cpu, dev, place, reordered=op.name in REORDERED)


def _grads(op, sample, place):
    positions = grad_positions(op, sample)
    tensors = _tensors(sample, place, positions)
    out = op(*tensors, **sample.attrs)
    outs = list(out) if isinstance(out, tuple) else [out]
    rng = np.random.default_rng(3)
    loss = None
    for k, o in enumerate(outs):
        if k in op.nondiff_outputs or o.dtype not in (paddle.float32, paddle.float64, paddle.complex64,
                                                      paddle.complex128):
            continue
        term = weighted_sum(o, output_weights(rng, o.numpy()), place)
        loss = term if loss is None else loss + term
    return paddle.grad(loss, [tensors[i] for i in positions], allow_unused=True)


@pytest.mark.parametrize("op,sample", list(registry_cases(need_grad=True)))
def test_gradient_on_device_matches_cpu(fake_gpu, op, sample):
    place = paddle.CUDAPlace(0)
    _assert_same(op, "gradient", _grads(op, sample, paddle.CPUPlace()), _grads(op, sample, place), place,
                 reordered=op.name in REORDERED_GRADIENTS)


def _r(*shape):
    return np.random.default_rng(0).standard_normal(shape)


# functions built from several ops, some of them creating a constant on the way (a zero block, an
# identity, a mask value): the constant must land on the inputs' place, not the default device
COMPOSITES = {
    "scatter_nd": lambda p: paddle.scatter_nd(paddle.to_tensor(np.array([[1], [0], [1]]), place=p),
                                              paddle.to_tensor(_r(3, 2), place=p), [3, 2]),
    "matrix_power_0": lambda p: paddle.linalg.matrix_power(paddle.to_tensor(_r(2, 3, 3), place=p), 0),
    "local_response_norm": lambda p: F.local_response_norm(paddle.to_tensor(_r(1, 4, 2, 2), place=p), size=3),
    "sdpa_bool_mask": lambda p: F.scaled_dot_product_attention(
        *[paddle.to_tensor(_r(1, 3, 2, 4).astype(np.float32), place=p) for _ in range(3)],
        attn_mask=paddle.to_tensor(np.tril(np.ones((3, 3), bool)), place=p)),
    "sequence_mask": lambda p: F.sequence_mask(paddle.to_tensor(np.array([1, 3, 2]), place=p)),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_functions_keep_their_constants_on_the_inputs_place(fake_gpu, name):
    place = paddle.CUDAPlace(0)
    cpu, dev = COMPOSITES[name](paddle.CPUPlace()), COMPOSITES[name](place)
    assert dev.place == place
    np.testing.assert_array_equal(dev.numpy(), cpu.numpy())
