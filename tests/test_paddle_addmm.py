"""paddle.addmm / baddbmm (and the Tensor methods) against Paddle 3.3.1's numbers, gradients
included; to_static equals eager; Paddle's shape errors."""
import numpy as np
import pytest

import runtime as paddle
from fixtures.paddle.more_apis_cases import load
from sot_helpers import captured, jit_of

REF = load()


@pytest.mark.parametrize("op", ["addmm", "baddbmm"])
def test_value_and_grads_match_paddle(op):
    ref = REF[op]
    ts = [paddle.to_tensor(np.array(a, "float32"), stop_gradient=False) for a in ref["inputs"]]
    out = getattr(paddle, op)(*ts, beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), ref["out"], rtol=1e-5, atol=1e-6)
    out.sum().backward()
    for t, g in zip(ts, ref["grads"]):
        np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-5, atol=1e-6)


def test_tensor_methods_and_namespace_equal_function():
    i, x, y = (paddle.to_tensor(np.array(a, "float32")) for a in REF["addmm"]["inputs"])
    want = paddle.addmm(i, x, y, beta=0.5, alpha=2.0).numpy()
    np.testing.assert_array_equal(i.addmm(x, y, beta=0.5, alpha=2.0).numpy(), want)
    np.testing.assert_array_equal(paddle.tensor.math.addmm(i, x, y, 0.5, 2.0).numpy(), want)
    bi, bx, by = (paddle.to_tensor(np.array(a, "float32")) for a in REF["baddbmm"]["inputs"])
    np.testing.assert_array_equal(bi.baddbmm(bx, by).numpy(),
                                  (bi.numpy() + np.matmul(bx.numpy(), by.numpy())).astype("float32"))


def test_to_static_equals_eager():
    def f(i, x, y, bi, bx, by):
        return paddle.addmm(i, x, y, beta=0.25, alpha=3.0) + 1, bi.baddbmm(bx, by, alpha=-1.0)

    arrs = [np.array(a, "float32") for a in REF["addmm"]["inputs"] + REF["baddbmm"]["inputs"]]
    captured(f, *(paddle.to_tensor(a) for a in arrs))


@pytest.mark.parametrize("shapes,words", [
    (([2, 3], [2, 4, 1], [4, 3]), "dimension of x, y should be 2"),
    (([2, 3], [2, 4], [5, 3]), "width"),
    (([3, 3], [2, 4], [4, 3]), "broadcastable"),
    (([2, 2, 3], [2, 4], [4, 3]), "broadcastable"),
])
def test_bad_shapes_raise_value_error(shapes, words):
    i, x, y = (paddle.ones(s) for s in shapes)
    with pytest.raises(ValueError, match=words):
        paddle.addmm(i, x, y)


def test_bad_coefficient_raises_type_error_naming_it():
    with pytest.raises(TypeError, match="'alpha'"):
        paddle.addmm(paddle.ones([2]), paddle.ones([2, 2]), paddle.ones([2, 2]), alpha="2")


def test_inplace_methods_write_the_input():
    i, x, y = (paddle.to_tensor(np.array(a, "float32")) for a in REF["addmm"]["inputs"])
    full = paddle.expand(i, [2, 3]).clone()
    want = paddle.addmm(full, x, y, beta=0.5, alpha=2.0).numpy()
    assert full.addmm_(x, y, beta=0.5, alpha=2.0) is full
    np.testing.assert_array_equal(full.numpy(), want)
    with pytest.raises(ValueError, match="addmm_"):
        i.addmm_(x, y)  # [3] cannot hold the [2, 3] result
    bi, bx, by = (paddle.to_tensor(np.array(a, "float32")) for a in REF["baddbmm"]["inputs"])
    target = paddle.expand(bi, [2, 2, 3]).clone()
    want = paddle.baddbmm(target, bx, by, alpha=-1.0).numpy()
    target.baddbmm_(bx, by, alpha=-1.0)
    np.testing.assert_array_equal(target.numpy(), want)


def test_to_static_gradients_equal_eager():
    def f(i, x, y):
        return (paddle.addmm(i, x, y, beta=0.5, alpha=2.0) ** 2).sum()

    def grads(fn):
        ts = [paddle.to_tensor(np.array(a, "float32"), stop_gradient=False) for a in REF["addmm"]["inputs"]]
        fn(*ts).backward()
        return [t.grad.numpy() for t in ts]

    for got, want in zip(grads(jit_of(f)), grads(f)):
        np.testing.assert_array_equal(got, want)
