"""PyLayer (paddle.autograd.PyLayer): one tape node with a Python backward. Oracles: eager autograd
of the same math written with registry ops, and Paddle's documented rules for the errors."""
import numpy as np
import pytest

import runtime as paddle
from runtime.autograd import PyLayer


def _leaf(values, dtype="float64"):
    return paddle.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=False)


class Tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


class ScaledMulAdd(PyLayer):
    """(a * b * scale, a + b) with a non-Tensor argument and a keyword Tensor."""

    @staticmethod
    def forward(ctx, a, scale, b=None):
        ctx.scale = scale
        ctx.save_for_backward(a, b)
        return a * b * scale, a + b

    @staticmethod
    def backward(ctx, g_prod, g_sum):
        a, b = ctx.saved_tensor()
        ga = g_prod * b * ctx.scale + g_sum if ctx.needs_input_grad[0] else None
        gb = g_prod * a * ctx.scale + g_sum if ctx.needs_input_grad[1] else None
        return ga, gb


def test_apply_matches_eager_autograd_in_a_chain():
    x1, x2 = _leaf([0.3, -1.2, 2.0]), _leaf([0.3, -1.2, 2.0])
    (paddle.exp(Tanh.apply(x1 * 2.0)) * 3.0).sum().backward()
    (paddle.exp(paddle.tanh(x2 * 2.0)) * 3.0).sum().backward()
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_multiple_outputs_keyword_tensor_and_accumulation():
    a1, b1 = _leaf([1.0, 2.0]), _leaf([3.0, -4.0])
    a2, b2 = _leaf([1.0, 2.0]), _leaf([3.0, -4.0])
    for _ in range(2):  # the second backward accumulates into .grad as eager autograd does
        p, s = ScaledMulAdd.apply(a1, 0.5, b=b1)
        (p * s).sum().backward()
        (a2 * b2 * 0.5 * (a2 + b2)).sum().backward()
    np.testing.assert_allclose(a1.grad.numpy(), a2.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b1.grad.numpy(), b2.grad.numpy(), rtol=1e-12)


def test_only_inputs_that_require_grad_get_one():
    a = _leaf([1.0, 2.0])
    b = paddle.to_tensor(np.array([3.0, -4.0]))
    p, _ = ScaledMulAdd.apply(a, 2.0, b=b)
    p.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [6.0, -8.0])
    assert b.grad is None


def test_none_gradient_leaves_grad_untouched():
    class FirstOnly(PyLayer):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2.0 + b * 0.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0, None

    a, b = _leaf([1.0]), _leaf([2.0])
    FirstOnly.apply(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0])
    assert b.grad is None


def test_no_node_without_grad_mode_or_grad_inputs():
    x = _leaf([0.5])
    with paddle.no_grad():
        y = Tanh.apply(x)
    assert y.stop_gradient and y.is_leaf
    z = Tanh.apply(paddle.to_tensor([0.5]))
    assert z.stop_gradient


def test_non_differentiable_outputs():
    class Split(PyLayer):
        @staticmethod
        def forward(ctx, x):
            idx = paddle.argmax(x)
            doubled = x * 2.0
            frozen = x * 3.0
            ctx.mark_non_differentiable(frozen)
            return doubled, idx, frozen

        @staticmethod
        def backward(ctx, g_doubled, g_idx, g_frozen):
            np.testing.assert_array_equal(g_frozen.numpy(), np.zeros(2))
            return g_doubled * 2.0

    x = _leaf([1.0, 5.0])
    doubled, idx, frozen = Split.apply(x)
    assert not doubled.stop_gradient and idx.stop_gradient and frozen.stop_gradient
    (doubled.sum() + frozen.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_double_backward_through_public_ops():
    x1, x2 = _leaf([0.4, -0.7]), _leaf([0.4, -0.7])
    (g1,) = paddle.grad(Tanh.apply(x1).sum(), x1, create_graph=True)
    (g2,) = paddle.grad(paddle.tanh(x2).sum(), x2, create_graph=True)
    g1.sum().backward()
    g2.sum().backward()
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_second_backward_without_retain_graph_raises():
    x = _leaf([0.4])
    y = Tanh.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh(0.4) ** 2))
    with pytest.raises(RuntimeError, match="a second time"):
        y.backward()


def test_saved_tensor_written_in_place_raises():
    class Identity(PyLayer):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensor()
            return g * w, None

    x, w = _leaf([1.0]), paddle.to_tensor(np.array([2.0]))
    y = Identity.apply(x, w)
    w.set_value(np.array([5.0]))
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


@pytest.mark.parametrize("returned, error, message", [
    (lambda g: (g, g), ValueError, "returned 2 gradients, expected 1"),
    (lambda g: g.numpy(), TypeError, "gradient 0 must be a Tensor or None"),
    (lambda g: paddle.ones([3], dtype="float64"), ValueError, r"gradient 0 has shape \[3\]"),
])
def test_bad_backward_results_are_named(returned, error, message):
    class Bad(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return returned(g)

    with pytest.raises(error, match=message):
        Bad.apply(_leaf([1.0, 2.0])).sum().backward()


def test_forward_must_return_tensors():
    class Bad(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return 3

    with pytest.raises(TypeError, match="must return a Tensor or a tuple/list"):
        Bad.apply(_leaf([1.0]))
