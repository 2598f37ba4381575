"""Shape ops against NumPy references: values, shapes, views, in-place variants, gradients
through chains of them, and the errors bad arguments raise."""
import numpy as np
import pytest

import runtime as paddle

RNG = np.random.default_rng(1)


def T(a, stop_gradient=True):
    return paddle.to_tensor(np.asarray(a), stop_gradient=stop_gradient)


def A(*shape):
    return RNG.normal(size=shape)


# ---------------------------------------------------------------- reshape family
def test_reshape_flatten_squeeze_unsqueeze():
    a = A(2, 1, 3, 1)
    x = T(a)
    assert paddle.reshape(x, [0, -1]).shape == [2, 3]
    assert x.reshape([3, 2]).shape == [3, 2]
    np.testing.assert_array_equal(paddle.flatten(x).numpy(), a.reshape(-1))
    assert paddle.flatten(x, 1, 2).shape == [2, 3, 1]
    assert x.flatten(start_axis=-2).shape == [2, 1, 3]
    assert paddle.flatten(paddle.to_tensor(3.0)).shape == [1]
    assert paddle.squeeze(x).shape == [2, 3]
    assert x.squeeze(axis=[0, 1]).shape == [2, 3, 1]  # dimension 0 has size 2: it stays (Paddle)
    assert x.squeeze(-1).shape == [2, 1, 3]
    assert paddle.unsqueeze(T(A(5, 10)), [0, 2]).shape == [1, 5, 1, 10]
    assert T(A(2, 3)).unsqueeze(-1).shape == [2, 3, 1]
    assert T(A(2, 3)).unsqueeze([-1, 0]).shape == [1, 2, 3, 1]
    assert paddle.unsqueeze(T(A(3)), paddle.to_tensor([1])).shape == [3, 1]
    np.testing.assert_array_equal(x.view([6]).numpy(), a.reshape(6))


def test_view_ops_share_data():
    x = T(np.zeros((2, 3)))
    s = x.unsqueeze(0)
    x[0, 0] = 5.0
    assert s.numpy()[0, 0, 0] == 5.0  # Paddle: in dygraph mode the output shares data


def test_reshape_errors():
    x = T(A(2, 3))
    with pytest.raises(ValueError, match=r"cannot reshape a tensor of shape \[2, 3\] \(6 elements\) into \[4, 2\]"):
        x.reshape([4, 2])
    with pytest.raises(ValueError, match="may contain -1 at most once"):
        x.reshape([-1, -1])
    with pytest.raises(TypeError, match="reshape: argument 'shape' must hold ints"):
        x.reshape([2.0, 3])
    with pytest.raises(ValueError, match="unsqueeze: argument 'axis' = 3 is out of range"):
        x.unsqueeze(3)
    with pytest.raises(ValueError, match="squeeze: argument 'axis' = 2 is out of range"):
        x.squeeze(2)
    with pytest.raises(ValueError, match="flatten: argument 'start_axis' \\(1\\) must not come after"):
        x.flatten(1, 0)
    with pytest.raises(TypeError, match="view: argument 'shape_or_dtype' must be a list"):
        x.view("float32")


def test_inplace_reshape_variants():
    x = T(A(2, 3))
    y = x.reshape_([3, 2])
    assert y is x and x.shape == [3, 2]
    x.unsqueeze_(0)
    assert x.shape == [1, 3, 2]
    x.squeeze_()
    x.flatten_()
    assert x.shape == [6]
    w = T(A(2, 3), stop_gradient=False)
    with pytest.raises(ValueError, match="reshape_: a leaf tensor that requires grad"):
        w.reshape_([6])
    h = w * 2.0
    h.reshape_([6])
    assert h.shape == [6]
    (h * T(np.arange(6.0))).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), 2.0 * np.arange(6.0).reshape(2, 3))


# ---------------------------------------------------------------- transpose / moveaxis / T
def test_transpose_moveaxis_T():
    a = A(2, 3, 4)
    x = T(a)
    np.testing.assert_array_equal(paddle.transpose(x, [2, 0, 1]).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.transpose([-1, 0, 1]).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.T.numpy(), a.T)
    np.testing.assert_array_equal(paddle.moveaxis(x, 0, -1).numpy(), np.moveaxis(a, 0, -1))
    np.testing.assert_array_equal(x.moveaxis([0, 1], [2, 0]).numpy(), np.moveaxis(a, [0, 1], [2, 0]))
    with pytest.raises(ValueError, match=r"transpose: argument 'perm' \[0, 0, 1\] must be a permutation"):
        x.transpose([0, 0, 1])
    with pytest.raises(ValueError, match="moveaxis: arguments 'source'"):
        paddle.moveaxis(x, [0, 1], [0])


def test_transpose_gradient():
    w = T(A(2, 3, 4), stop_gradient=False)
    g = A(4, 2, 3)
    (paddle.transpose(w, [2, 0, 1]) * T(g)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), g.transpose(1, 2, 0))


# ---------------------------------------------------------------- expand / broadcast / tile
@pytest.mark.parametrize("reshaped", [lambda t: t.unsqueeze(0), lambda t: t.reshape([1, 0, 3]),
                                      lambda t: t.flatten(), lambda t: t.squeeze(0)])
def test_the_gradient_of_a_reshape_of_an_empty_tensor_keeps_its_zero_dim(reshaped):
    """A 0 in the shape the gradient goes back to is a size, not `reshape`'s "keep this dim"."""
    x = paddle.to_tensor(np.ones((1, 4, 3), "float32"), stop_gradient=False)
    y = reshaped(x[:, :0])  # [1, 0, 3] before the reshape
    (y.sum() + (y * 2).sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((1, 4, 3), "float32"))


def test_expand_broadcast_tile():
    a = A(3, 1)
    x = T(a)
    np.testing.assert_array_equal(paddle.expand(x, [2, 3, 4]).numpy(), np.broadcast_to(a, (2, 3, 4)))
    np.testing.assert_array_equal(x.broadcast_to([3, 5]).numpy(), np.broadcast_to(a, (3, 5)))
    np.testing.assert_array_equal(x.expand_as(T(A(2, 3, 2))).numpy(), np.broadcast_to(a, (2, 3, 2)))
    outs = paddle.broadcast_tensors([x, T(A(4)), T(A(1, 1))])
    assert [o.shape for o in outs] == [[3, 4]] * 3
    assert paddle.broadcast_shape([2, 1, 3], [4, 1]) == [2, 4, 3]
    b = A(2, 3)
    np.testing.assert_array_equal(paddle.tile(T(b), [2, 1, 3]).numpy(), np.tile(b, (2, 1, 3)))
    np.testing.assert_array_equal(T(b).tile([2]).numpy(), np.tile(b, 2))
    with pytest.raises(ValueError, match=r"expand: cannot expand dimension 0 of size 3 to 4"):
        x.expand([4, 4])
    with pytest.raises(ValueError, match="broadcast_shape: the shape of argument 'x_shape'"):
        paddle.broadcast_shape([2, 3], [4])
    with pytest.raises(ValueError, match="tile: argument 'repeat_times'"):
        paddle.tile(T(b), [-1])


def test_tile_gradient_sums_copies():
    w = T(A(2, 3), stop_gradient=False)
    g = A(2, 4, 6)
    (paddle.tile(w, [2, 2, 2]) * T(g)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), g.reshape(2, 2, 2, 2, 3).sum(axis=(0, 1, 3)))


# ---------------------------------------------------------------- concat / stack / split / unbind
def test_concat_stack():
    a, b = A(2, 3), A(2, 1)
    np.testing.assert_array_equal(paddle.concat([T(a), T(b)], axis=1).numpy(), np.concatenate([a, b], 1))
    np.testing.assert_array_equal(paddle.concat((T(a), T(a)), axis=paddle.to_tensor(-2)).numpy(),
                                  np.concatenate([a, a], 0))
    np.testing.assert_array_equal(paddle.stack([T(a), T(a)], axis=-1).numpy(), np.stack([a, a], -1))
    with pytest.raises(ValueError, match=r"concat: x\[1\] has shape \[2, 1\], which does not match x\[0\]"):
        paddle.concat([T(a), T(b)], axis=0)
    with pytest.raises(TypeError, match="concat: all tensors in argument 'x' must have the same dtype"):
        paddle.concat([T(a), T(a).astype("float32")])
    with pytest.raises(TypeError, match="concat: argument 'x' must be a list or tuple of Tensors"):
        paddle.concat(T(a))
    with pytest.raises(ValueError, match=r"stack: all tensors must have the same shape"):
        paddle.stack([T(a), T(b)])


def test_split_chunk_unbind():
    a = A(4, 6)
    x = T(a)
    parts = paddle.split(x, 3, axis=1)
    for p, r in zip(parts, np.split(a, 3, axis=1)):
        np.testing.assert_array_equal(p.numpy(), r)
    parts = x.split([1, -1, 2], axis=-1)
    assert [p.shape for p in parts] == [[4, 1], [4, 3], [4, 2]]
    np.testing.assert_array_equal(parts[1].numpy(), a[:, 1:4])
    assert [c.shape for c in x.chunk(2)] == [[2, 6], [2, 6]]
    rows = paddle.unbind(x, axis=1)
    assert len(rows) == 6 and rows[2].shape == [4]
    np.testing.assert_array_equal(rows[2].numpy(), a[:, 2])
    assert len(paddle.unstack(x, num=4)) == 4
    with pytest.raises(ValueError, match="split: dimension 1 of x \\[4, 6\\] \\(6\\) is not divisible into 4"):
        paddle.split(x, 4, axis=1)
    with pytest.raises(ValueError, match="do not add up to dimension 0"):
        paddle.split(x, [1, 2])
    with pytest.raises(ValueError, match="may contain -1 at most once"):
        paddle.split(x, [-1, -1])
    with pytest.raises(ValueError, match="unstack: argument 'num'"):
        paddle.unstack(x, num=3)


def test_concat_split_stack_gradients():
    a = T(A(2, 3), stop_gradient=False)
    b = T(A(2, 2), stop_gradient=False)
    left, right = paddle.split(paddle.concat([a, b], axis=1), [4, 1], axis=1)
    s = paddle.stack([left, left * 2.0], axis=0)
    (s.sum() + (right * 3.0).sum()).backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 3.0))
    np.testing.assert_array_equal(b.grad.numpy(), [[3.0, 3.0], [3.0, 3.0]])
    u = T(A(3, 2), stop_gradient=False)
    r0, r1, r2 = paddle.unbind(u)
    (r0 * 1.0 + r2 * 5.0).sum().backward()
    np.testing.assert_array_equal(u.grad.numpy(), [[1.0, 1.0], [0.0, 0.0], [5.0, 5.0]])


# ---------------------------------------------------------------- slice / strided_slice
def test_slice_and_strided_slice():
    a = A(3, 4, 5)
    x = T(a)
    np.testing.assert_array_equal(paddle.slice(x, axes=[0, 2], starts=[1, -3], ends=[100, -1]).numpy(),
                                  a[1:100, :, -3:-1])
    np.testing.assert_array_equal(x.slice([1], [paddle.to_tensor(1)], [3]).numpy(), a[:, 1:3])
    np.testing.assert_array_equal(
        paddle.strided_slice(x, axes=[1, 2], starts=[-1, 0], ends=[-100, 5], strides=[-2, 2]).numpy(),
        a[:, -1:-100:-2, 0:5:2])
    with pytest.raises(ValueError, match="slice: argument 'ends' \\[3\\] must have one entry per axis"):
        paddle.slice(x, [0, 1], [0, 0], [3])
    with pytest.raises(ValueError, match="strided_slice: argument 'strides' must not contain 0"):
        paddle.strided_slice(x, [0], [0], [2], [0])
    with pytest.raises(ValueError, match="slice: argument 'axes' = 3 is out of range"):
        paddle.slice(x, [3], [0], [1])


def test_slice_gradient():
    w = T(A(3, 4), stop_gradient=False)
    paddle.strided_slice(w, [1], [3], [0], [-2]).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.tile([0.0, 1.0, 0.0, 1.0], (3, 1)))


# ---------------------------------------------------------------- flip / roll
def test_flip_roll():
    a = A(3, 4)
    x = T(a)
    np.testing.assert_array_equal(paddle.flip(x, [0, 1]).numpy(), a[::-1, ::-1])
    np.testing.assert_array_equal(x.flip(-1).numpy(), a[:, ::-1])
    np.testing.assert_array_equal(paddle.roll(x, 5).numpy(), np.roll(a, 5))
    np.testing.assert_array_equal(x.roll([1, -1], axis=[0, 1]).numpy(), np.roll(a, (1, -1), (0, 1)))
    with pytest.raises(ValueError, match="flip: argument 'axis' has repeated axes"):
        paddle.flip(x, [0, 0])
    with pytest.raises(ValueError, match="roll: arguments 'shifts' \\[1\\] and 'axis' \\[0, 1\\]"):
        paddle.roll(x, [1], [0, 1])
    w = T(a, stop_gradient=False)
    g = A(3, 4)
    (paddle.roll(paddle.flip(w, [1]), [2], [1]) * T(g)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.roll(g, -2, 1)[:, ::-1])


def test_rot90_repeat_interleave_unflatten_view_as():
    a = A(2, 3, 4)
    x = T(a)
    for k in range(-1, 5):
        np.testing.assert_array_equal(paddle.rot90(x, k).numpy(), np.rot90(a, k))
        np.testing.assert_array_equal(x.rot90(k, axes=[2, 0]).numpy(), np.rot90(a, k, (2, 0)))
    np.testing.assert_array_equal(paddle.repeat_interleave(x, 2, axis=1).numpy(), np.repeat(a, 2, axis=1))
    np.testing.assert_array_equal(x.repeat_interleave(T([0, 2]), axis=0).numpy(), np.repeat(a, [0, 2], axis=0))
    np.testing.assert_array_equal(paddle.repeat_interleave(x, 3).numpy(), np.repeat(a, 3))
    np.testing.assert_array_equal(paddle.unflatten(x, -1, [2, -1]).numpy(), a.reshape(2, 3, 2, 2))
    assert x.view_as(T(A(6, 4))).shape == [6, 4]
    np.testing.assert_array_equal(x.reverse([0]).numpy(), a[::-1])
    with pytest.raises(ValueError, match="rot90: argument 'axes' must name two different dimensions"):
        paddle.rot90(x, 1, [1, 1])
    with pytest.raises(ValueError, match=r"repeat_interleave: argument 'repeats' must be a non-negative int or 3"):
        paddle.repeat_interleave(x, [1, 2], axis=1)
    w = T(a, stop_gradient=False)
    paddle.repeat_interleave(w, T([1, 0, 3]), axis=1).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[0, :, 0], [1.0, 0.0, 3.0])


def test_transpose_inplace():
    a = A(2, 3)
    x = T(a)
    x.transpose_([1, 0])
    assert x.shape == [3, 2]
    np.testing.assert_array_equal(x.numpy(), a.T)
