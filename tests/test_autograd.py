"""Eager autograd: accumulation, retain_graph, paddle.grad, double backward, hooks, no_grad,
and detection of in-place writes to saved tensors. References are analytic derivatives."""
import numpy as np
import pytest

import runtime as paddle


def _leaf(values, dtype="float64"):
    return paddle.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=False)


def test_backward_matches_analytic_gradient_and_accumulates():
    x = _leaf([0.5, -1.0, 2.0])
    y = (x * x * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2)
    (x * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2 + 2.0)
    x.clear_grad()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
    x.clear_grad(set_to_zero=False)
    assert x.grad is None


def test_gradient_of_shared_input_sums_over_paths():
    x = _leaf([1.0, 2.0])
    a = paddle.exp(x)
    y = (a * x + a).sum()
    y.backward()
    xn = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xn) * xn + np.exp(xn) + np.exp(xn))


def test_broadcast_gradient_reduces_to_input_shape():
    x = _leaf(np.ones((3, 4)))
    b = _leaf(np.arange(4.0))
    c = _leaf(np.ones((3, 1)))
    ((x + b) * c).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 3.0))
    np.testing.assert_allclose(c.grad.numpy(), (1 + np.arange(4.0)).sum() * np.ones((3, 1)))
    assert b.grad.shape == [4] and c.grad.shape == [3, 1]


def test_non_scalar_backward_uses_ones_or_given_grad():
    x = _leaf([1.0, 2.0])
    (x * 3.0).backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    x.clear_grad()
    (x * 3.0).backward(paddle.to_tensor([1.0, 10.0], dtype="float64"))
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 30.0])
    with pytest.raises(ValueError, match="grad_tensor has shape"):
        (x * 3.0).backward(paddle.to_tensor([1.0], dtype="float64"))


def test_retain_graph():
    x = _leaf([2.0])
    y = paddle.tanh(x) * 2.0
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * (1 - np.tanh(2.0) ** 2))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_stop_gradient_blocks_and_backward_on_constant_raises():
    x = _leaf([1.0, 2.0])
    c = paddle.to_tensor([3.0, 4.0], dtype="float64")
    y = (x * c).sum()
    y.backward()
    assert c.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    with pytest.raises(RuntimeError, match="stop_gradient=True"):
        c.sum().backward()
    d = (x * 2).detach()
    assert d.stop_gradient and d.is_leaf


def test_paddle_grad_returns_without_accumulating():
    x = _leaf([1.0, 3.0])
    y = (x * x).sum()
    (g,) = paddle.grad(y, x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy())
    assert x.grad is None and g.stop_gradient


def test_paddle_grad_wrt_intermediate_and_unused():
    x = _leaf([1.0, 2.0])
    h = x * 3.0
    z = _leaf([5.0])
    y = (h * h).sum()
    gh, gz = paddle.grad([y], [h, z], allow_unused=True)
    np.testing.assert_allclose(gh.numpy(), 2 * h.numpy())
    assert gz is None
    with pytest.raises(ValueError, match="not reachable"):
        paddle.grad((x * x).sum(), [z])


def test_double_backward_matches_second_derivative():
    x = _leaf([0.3, -0.7, 1.1])
    y = (paddle.sin(x) * x).sum()
    (g,) = paddle.grad(y, x, create_graph=True)
    assert not g.stop_gradient
    (gg,) = paddle.grad(g.sum(), x)
    xn = x.numpy()
    np.testing.assert_allclose(g.numpy(), np.cos(xn) * xn + np.sin(xn))
    np.testing.assert_allclose(gg.numpy(), -np.sin(xn) * xn + 2 * np.cos(xn))


def test_double_backward_through_outputs_saved_by_tanh_and_sigmoid():
    x = _leaf([0.2, -0.4])
    (g,) = paddle.grad((paddle.tanh(x) + paddle.sigmoid(x)).sum(), x, create_graph=True)
    (gg,) = paddle.grad(g.sum(), x)
    xn = x.numpy()
    t, s = np.tanh(xn), 1 / (1 + np.exp(-xn))
    np.testing.assert_allclose(gg.numpy(), -2 * t * (1 - t * t) + s * (1 - s) * (1 - 2 * s))


def test_hooks_on_leaf_and_intermediate_and_removal():
    x = _leaf([1.0, 2.0])
    seen = []
    h = x * 2.0
    h.register_hook(lambda g: g * 10.0)
    handle = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0])
    np.testing.assert_allclose(seen[0], [20.0, 20.0])
    assert handle.remove()
    (x * 1.0).sum().backward()
    assert len(seen) == 1
    with pytest.raises(RuntimeError, match="stop_gradient=True"):
        paddle.to_tensor([1.0]).register_hook(lambda g: g)


def test_no_grad_context_and_decorator_and_set_grad_enabled():
    x = _leaf([1.0])
    with paddle.no_grad():
        y = x * 2
    assert y.stop_gradient and y.is_leaf

    @paddle.no_grad()
    def f(t):
        return t * 2

    assert f(x).stop_gradient
    assert paddle.is_grad_enabled()
    with paddle.set_grad_enabled(False):
        assert not paddle.is_grad_enabled()
        with paddle.enable_grad():
            assert not (x * 2).stop_gradient
    assert paddle.is_grad_enabled()


def test_inplace_write_to_saved_tensor_is_detected():
    x = _leaf([1.0, 2.0])
    h = x * 1.0
    y = (h * h).sum()
    h += 1.0  # h was saved by the multiply
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


def test_inplace_on_non_leaf_keeps_gradient_flowing():
    x = _leaf([1.0, 2.0])
    h = x * 3.0
    h *= 2.0
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_integer_outputs_do_not_require_grad():
    x = _leaf([1.0, 2.0])
    assert (x > 1.0).stop_gradient
    assert x.astype("int64").stop_gradient


def test_mixed_precision_gradient_casts_back_to_leaf_dtype():
    x = _leaf([1.0, 2.0], dtype="float32")
    y = _leaf([3.0, 4.0], dtype="float64")
    (x * y).sum().backward()
    assert x.grad.dtype == paddle.float32 and y.grad.dtype == paddle.float64
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_clear_grad_then_backward_gives_fresh_gradient_in_same_grad_tensor():
    x = _leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    g = x.grad
    x.clear_grad()
    (x * 5.0).sum().backward()
    assert x.grad is g
    np.testing.assert_allclose(g.numpy(), [5.0, 5.0])
    (x * 1.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_shared_gradient_arrays_are_not_aliased_between_leaves():
    a, b = _leaf([1.0]), _leaf([2.0])
    (a + b).sum().backward()  # both leaves receive the same upstream gradient
    (a * 4.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [5.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0])


def test_inplace_write_after_a_shape_only_use_keeps_backward_working():
    x = _leaf([1.0, 2.0, 3.0, 4.0])
    h = x * 2.0
    y = h.reshape([2, 2])  # reshape's gradient needs only h's shape
    s = h.sum()
    h += 1.0
    (y * paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float64")).sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0, 8.0])
    s.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 6.0, 8.0, 10.0])
