"""Tensor indexing (__getitem__ / __setitem__) against NumPy, their gradients, the in-place
protocol, and the gather / scatter family against hand-written NumPy references."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime as paddle

from helpers import fd_grad

RNG = np.random.default_rng(0)


def T(a, stop_gradient=True):
    return paddle.to_tensor(np.asarray(a), stop_gradient=stop_gradient)


# ---------------------------------------------------------------- random index generation
@st.composite
def index_cases(draw):
    """(shape, numpy key, key with some arrays as Tensors): every NumPy index form, combined."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=4)))
    ndim = len(shape)
    use_mask = draw(st.booleans())
    block = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))  # broadcast shape of int arrays
    kinds = []
    consumed = 0
    for _ in range(draw(st.integers(0, ndim + 1))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "array", "mask"]))
        if kind == "mask" and (not use_mask or any(k == "mask" for k, _ in kinds)):
            kind = "slice"
        if kind == "array" and use_mask:
            kind = "int"
        width = draw(st.integers(1, 2)) if kind == "mask" else 1
        if consumed + width > ndim:
            break
        kinds.append((kind, width))
        consumed += width
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, len(kinds))))
    # the dimension each item indexes: items after an ellipsis index the trailing dimensions
    dims, dim = [], 0
    for i, (_, width) in enumerate(kinds):
        if ellipsis_at is not None and i == ellipsis_at:
            dim = ndim - sum(w for _, w in kinds[i:])
        dims.append(dim)
        dim += width
    items = []
    for (kind, width), d in zip(kinds, dims):
        size = shape[d]
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
            step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
            items.append(slice(draw(bound), draw(bound), draw(step)))
        elif kind == "array":
            ashape = tuple(b if draw(st.booleans()) else 1 for b in block)[draw(st.integers(0, len(block))):]
            vals = draw(st.lists(st.integers(-size, size - 1), min_size=int(np.prod(ashape)),
                                 max_size=int(np.prod(ashape))))
            items.append(np.asarray(vals, dtype=np.int64).reshape(ashape))
        else:
            mshape = shape[d:d + width]
            bits = draw(st.lists(st.booleans(), min_size=int(np.prod(mshape)), max_size=int(np.prod(mshape))))
            items.append(np.asarray(bits, dtype=bool).reshape(mshape))
    if ellipsis_at is not None:
        items.insert(ellipsis_at, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    as_tensor = [draw(st.sampled_from(["tensor", "list", "array"])) for _ in items]
    converted = []
    for it, how in zip(items, as_tensor):
        if isinstance(it, np.ndarray):
            it = T(it) if how == "tensor" else (it.tolist() if how == "list" and it.ndim else it)
        converted.append(it)
    single = len(items) == 1 and draw(st.booleans())
    return shape, (items[0] if single else tuple(items)), (converted[0] if single else tuple(converted))


def _reference_grad(shape, key, w):
    """d sum(w * a[key]) / d a, by counting how often each element is picked (an independent oracle)."""
    positions = np.arange(int(np.prod(shape))).reshape(shape)[key]
    return np.bincount(np.ravel(positions), weights=np.ravel(w), minlength=int(np.prod(shape))).reshape(shape)


@settings(max_examples=150, deadline=None)
@given(index_cases())
def test_getitem_matches_numpy(case):
    shape, np_key, key = case
    a = RNG.normal(size=shape)
    expected = a[np_key]
    out = T(a)[key]
    assert out.shape == list(np.shape(expected))
    assert out.dtype == paddle.float64
    np.testing.assert_array_equal(out.numpy(), expected)


@settings(max_examples=80, deadline=None)
@given(index_cases())
def test_getitem_gradient_counts_picks(case):
    shape, np_key, key = case
    a = RNG.normal(size=shape)
    x = T(a, stop_gradient=False)
    out = x[key]
    w = RNG.normal(size=out.shape)
    (out * T(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _reference_grad(shape, np_key, w), atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(index_cases(), st.booleans())
def test_setitem_matches_numpy(case, scalar):
    shape, np_key, key = case
    a = RNG.normal(size=shape)
    target_shape = np.shape(a[np_key])
    value = 2.5 if scalar else RNG.normal(size=target_shape)
    expected = a.copy()
    expected[np_key] = value
    x = T(a)
    x[key] = value if scalar else T(value)
    np.testing.assert_array_equal(x.numpy(), expected)
    # the recorded path (x depends on a leaf that requires grad) writes the same values
    w = T(a, stop_gradient=False)
    y = w * 1.0
    y[key] = value if scalar else T(value)
    np.testing.assert_array_equal(y.numpy(), expected)
    assert not y.stop_gradient and not y.is_leaf


# ---------------------------------------------------------------- explicit forms
def test_basic_forms():
    a = np.arange(60.0).reshape(3, 4, 5)
    x = T(a)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (slice(None, None, -1),),
                (1, slice(3, 0, -2), None, Ellipsis), ([0, 2],), ([[0], [2]], slice(None), [1, 4]),
                (0, slice(None), [1, 3]), (a[:, 0, 0] > 10,), (slice(None), a[0] > 6), (a > 30,)]:
        np.testing.assert_array_equal(x[key].numpy(), a[key], err_msg=str(key))
    assert x[1, 2, 3].shape == [] and x[1, 2, 3].item() == a[1, 2, 3]


def test_tensor_scalar_and_slice_bounds():
    a = np.arange(12.0).reshape(3, 4)
    x = T(a)
    i = paddle.to_tensor(2)
    np.testing.assert_array_equal(x[i].numpy(), a[2])
    np.testing.assert_array_equal(x[:, i:].numpy(), a[:, 2:])
    np.testing.assert_array_equal(x[np.int64(1), np.int32(2)].numpy(), a[1, 2])
    np.testing.assert_array_equal(x[[]].numpy(), a[np.array([], dtype=np.int64)])


def test_getitem_returns_a_copy():
    x = T(np.arange(6.0).reshape(2, 3))
    row = x[0]
    x[0] = -1.0
    np.testing.assert_array_equal(row.numpy(), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(x.numpy(), [[-1.0, -1.0, -1.0], [3.0, 4.0, 5.0]])


def test_iteration_uses_getitem():
    a = np.arange(6.0).reshape(3, 2)
    rows = [r.numpy() for r in T(a)]
    np.testing.assert_array_equal(np.stack(rows), a)


def test_setitem_forms_and_casts():
    x = paddle.zeros([3, 4], dtype="int64")
    x[0] = 1.9  # cast to the tensor's dtype
    x[1, [0, 2]] = T([5, 6])
    x[x == 0] = 7
    x[..., -1] = [8, 9, 10]
    x[2:, :2] = np.array([[3, 4]])
    np.testing.assert_array_equal(x.numpy(), [[1, 1, 1, 8], [5, 7, 6, 9], [3, 4, 7, 10]])
    assert x.dtype == paddle.int64


def test_setitem_bumps_version_and_flags_saved_inputs():
    w = T(np.ones(3), stop_gradient=False)
    x = T(np.arange(3.0))
    y = (x * w).sum()  # multiply saved x
    x[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


# ---------------------------------------------------------------- gradients through indexing
def _fd(f, a, eps=1e-6):
    """Central finite differences of the scalar f(a) with respect to array a (perturbed in place)."""
    return fd_grad(lambda: f(a), a, eps)


def test_getitem_gradient_matches_finite_differences():
    a = RNG.normal(size=(3, 4, 5))
    w = RNG.normal(size=(2, 3))
    idx = np.array([2, 0])
    key_np = (idx, slice(1, None), 3)

    def f(arr):
        return float((np.sin(arr[key_np]) * w).sum())

    x = T(a, stop_gradient=False)
    (paddle.sin(x[T(idx), 1:, 3]) * T(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _fd(f, a.copy()), rtol=1e-6, atol=1e-8)


def test_setitem_gradient_matches_finite_differences():
    a = RNG.normal(size=(4, 3))
    v = RNG.normal(size=(3,))
    w = RNG.normal(size=(4, 3))
    key = ([1, 3], slice(None))

    def f(arr, val):
        out = arr * 2.0
        out[np.array([1, 3]), :] = val * val
        return float((out * w).sum())

    x = T(a, stop_gradient=False)
    value = T(v, stop_gradient=False)
    y = x * 2.0
    y[key] = value * value
    (y * T(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _fd(lambda arr: f(arr, v), a.copy()), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(value.grad.numpy(), _fd(lambda val: f(a, val), v.copy()), rtol=1e-6, atol=1e-8)


def test_setitem_on_non_leaf_keeps_autograd():
    w = T(np.arange(6.0).reshape(2, 3), stop_gradient=False)
    h = w * 3.0
    h[0, 1] = 100.0
    h[h > 10] = 0.0
    h.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[3.0, 0.0, 3.0], [3.0, 0.0, 0.0]])


def test_setitem_into_constant_makes_it_require_grad():
    v = T(np.array([1.0, 2.0]), stop_gradient=False)
    x = paddle.zeros([3, 2], dtype="float64")
    x[1] = v
    assert not x.stop_gradient
    (x * x).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [2.0, 4.0])


def test_setitem_on_leaf_requiring_grad_raises():
    w = T(np.ones((2, 2)), stop_gradient=False)
    with pytest.raises(ValueError, match="leaf tensor that requires grad"):
        w[0] = 3.0
    np.testing.assert_array_equal(w.numpy(), np.ones((2, 2)))  # nothing written
    with paddle.no_grad():
        w[0] = 3.0
    np.testing.assert_array_equal(w.numpy(), [[3.0, 3.0], [1.0, 1.0]])


def test_double_backward_through_getitem():
    a = RNG.normal(size=(4, 3))
    x = T(a, stop_gradient=False)
    idx = T([0, 0, 2])
    y = (x[idx] ** 3).sum()
    (g,) = paddle.grad(y, x, create_graph=True)
    g.sum().backward()
    counts = np.bincount([0, 0, 2], minlength=4)[:, None]
    np.testing.assert_allclose(x.grad.numpy(), counts * 6.0 * a, rtol=1e-12)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("key,exc,match", [
    ((0, 5), IndexError, r"index 5 is out of range for dimension 1 with size 4"),
    (-4, IndexError, r"index -4 is out of range for dimension 0 with size 3"),
    ((0, 0, 0), IndexError, "too many indices"),
    ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
    (slice(None, None, 0), ValueError, "step cannot be zero"),
    (1.5, TypeError, "unsupported index of type float"),
    (True, TypeError, "Python bool is not a valid index"),
    ([0.5, 1.0], TypeError, "must hold ints or bools"),
    (np.ones((2, 4), dtype=bool), IndexError, "bool mask of shape \\[2, 4\\] does not match dimension 0"),
    (([0, 1], [0, 1, 2]), IndexError, "cannot be broadcast together"),
    (slice(0.5, 2), TypeError, "slice indices must be ints"),
])
def test_getitem_errors(key, exc, match):
    x = T(np.zeros((3, 4)))
    with pytest.raises(exc, match=match):
        x[key]


def test_index_tensor_dtype_and_value_errors():
    x = T(np.zeros((3, 4)))
    with pytest.raises(TypeError, match="integer or bool dtype, got float32"):
        x[paddle.to_tensor([0.0, 1.0])]
    with pytest.raises(ValueError, match=r"value of shape \[3\] cannot be assigned to the indexed shape \[2, 4\]"):
        x[:2] = T(np.ones(3))
    with pytest.raises(TypeError, match="value must be a Tensor, a number or an array"):
        x[0] = "abc"
    with pytest.raises(IndexError, match="out of range for dimension 0 with size 3"):
        x[3] = 1.0
    np.testing.assert_array_equal(x.numpy(), np.zeros((3, 4)))


# ---------------------------------------------------------------- gather / scatter family
def test_gather_and_index_select():
    a = RNG.normal(size=(4, 3))
    idx = np.array([3, 0, 3])
    np.testing.assert_array_equal(paddle.gather(T(a), T(idx)).numpy(), a[idx])
    np.testing.assert_array_equal(paddle.gather(T(a), T(idx[:2] % 3), axis=1).numpy(), a[:, idx[:2] % 3])
    np.testing.assert_array_equal(T(a).index_select(T([2, 1]), axis=-1).numpy(), a[:, [2, 1]])
    np.testing.assert_array_equal(paddle.gather(T(a), paddle.to_tensor(1)).numpy(), a[1])
    with pytest.raises(TypeError, match="gather: argument 'index' must be an integer tensor"):
        paddle.gather(T(a), T([0.0]))
    with pytest.raises(ValueError, match=r"gather: argument 'index' must be 0-D, 1-D or \[N, 1\]"):
        paddle.gather(T(a), T([[0, 1]]))


def test_gather_gradient_accumulates_repeats():
    x = T(np.ones((3, 2)), stop_gradient=False)
    paddle.gather(x, T([2, 0, 2])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1], [0, 0], [2, 2]])


def test_gather_nd_and_scatter_nd():
    a = RNG.normal(size=(3, 4, 2))
    index = np.array([[0, 1], [2, 3], [0, 1]])
    expected = np.stack([a[i, j] for i, j in index])
    np.testing.assert_array_equal(paddle.gather_nd(T(a), T(index)).numpy(), expected)
    np.testing.assert_array_equal(paddle.gather_nd(T(a), T([[[1]]])).numpy(), a[[[1]]])
    updates = RNG.normal(size=(3, 2))
    ref = a.copy()
    for (i, j), u in zip(index, updates):
        ref[i, j] += u
    np.testing.assert_allclose(paddle.scatter_nd_add(T(a), T(index), T(updates)).numpy(), ref)
    out = paddle.scatter_nd(T([[1], [1], [0]]), T([1.0, 2.0, 3.0]), [3])
    np.testing.assert_array_equal(out.numpy(), [3.0, 3.0, 0.0])
    with pytest.raises(ValueError, match="scatter_nd_add: argument 'updates' has shape"):
        paddle.scatter_nd_add(T(a), T(index), T(np.ones((3, 3))))
    with pytest.raises(ValueError, match="must be a known size <= the rank of x"):
        paddle.gather_nd(T(a), T(np.zeros((2, 4), dtype=np.int64)))


def test_scatter_overwrite_and_accumulate():
    x = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    index = np.array([2, 1, 0, 1])
    updates = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]])
    acc = paddle.scatter(T(x), T(index), T(updates), overwrite=False)
    np.testing.assert_array_equal(acc.numpy(), [[3.0, 3.0], [6.0, 6.0], [1.0, 1.0]])
    over = paddle.scatter(T(x), T([2, 0]), T(updates[:2]))
    np.testing.assert_array_equal(over.numpy(), [[2.0, 2.0], [2.0, 2.0], [1.0, 1.0]])
    t = T(x)
    t.scatter_(T([1]), T([[9.0, 9.0]]))
    np.testing.assert_array_equal(t.numpy(), [[1.0, 1.0], [9.0, 9.0], [3.0, 3.0]])
    with pytest.raises(ValueError, match=r"scatter: argument 'updates' has shape \[1, 2\], expected \[2, 2\]"):
        paddle.scatter(T(x), T([0, 1]), T([[1.0, 1.0]]))


def test_index_add():
    x = np.zeros((2, 4))
    value = np.arange(6.0).reshape(2, 3)
    out = paddle.index_add(T(x), T([3, 0, 3]), 1, T(value))
    np.testing.assert_array_equal(out.numpy(), [[1.0, 0.0, 0.0, 2.0], [4.0, 0.0, 0.0, 8.0]])
    t = T(x)
    t.index_add_(T([1]), 0, T(np.ones((1, 4))))
    np.testing.assert_array_equal(t.numpy(), [[0.0] * 4, [1.0] * 4])
    with pytest.raises(ValueError, match="index_add: argument 'value' has shape"):
        paddle.index_add(T(x), T([0]), 1, T(value))


def test_take_and_put_along_axis():
    a = RNG.normal(size=(3, 4))
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    np.testing.assert_array_equal(paddle.take_along_axis(T(a), T(idx), 1).numpy(),
                                  np.array([[a[r, c] for c in row] for r, row in enumerate(idx)]))
    # broadcast=True: indices [1, 1] take arr's shape outside the axis, [3, 1]
    np.testing.assert_array_equal(paddle.take_along_axis(T(a), T([[2]]), 1).numpy(), a[:, [2]])
    put = paddle.put_along_axis(T(a), T(idx), 9.0, 1)
    ref = a.copy()
    for r, row in enumerate(idx):
        ref[r, row] = 9.0
    np.testing.assert_array_equal(put.numpy(), ref)
    added = paddle.put_along_axis(T(np.zeros((2, 3))), T([[0, 0], [2, 1]]), T([[1.0, 2.0], [3.0, 4.0]]), 1,
                                  reduce="add", broadcast=False)
    np.testing.assert_array_equal(added.numpy(), [[3.0, 0.0, 0.0], [0.0, 4.0, 3.0]])
    np.testing.assert_array_equal(paddle.index_sample(T(a), T(idx)).numpy(),
                                  paddle.take_along_axis(T(a), T(idx), 1).numpy())
    with pytest.raises(ValueError, match="'reduce' must be 'assign' or 'add'"):
        paddle.put_along_axis(T(a), T(idx), 1.0, 1, reduce="mean")
    with pytest.raises(ValueError, match="must agree outside dimension 1"):
        paddle.take_along_axis(T(a), T(idx[:2]), 1, broadcast=False)


def test_take_along_axis_gradient():
    x = T(np.zeros((2, 3)), stop_gradient=False)
    paddle.take_along_axis(x, T([[0, 0], [2, 1]]), 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2.0, 0.0, 0.0], [0.0, 1.0, 1.0]])


def test_masked_fill():
    a = RNG.normal(size=(2, 3))
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(paddle.masked_fill(T(a), T(mask), 0.5).numpy(), np.where(mask, 0.5, a))
    v = T(np.array(2.0), stop_gradient=False)
    x = T(a, stop_gradient=False)
    out = x.masked_fill(T(mask), v)
    out.sum().backward()
    assert v.grad.item() == 4.0
    np.testing.assert_array_equal(x.grad.numpy(), np.where(mask, 0.0, 1.0) * np.ones((2, 3)))
    t = T(a)
    t.masked_fill_(T(mask), -1.0)
    np.testing.assert_array_equal(t.numpy(), np.where(mask, -1.0, a))
    with pytest.raises(TypeError, match="masked_fill: argument 'mask' must be a bool tensor"):
        paddle.masked_fill(T(a), T([1, 0, 1]), 0.0)


def test_take_modes():
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(paddle.take(T(a), T([[0, 5], [-1, 2]])).numpy(), a.reshape(-1)[[[0, 5], [-1, 2]]])
    np.testing.assert_array_equal(T(a).take(T([7, -8]), mode="wrap").numpy(), [a.flat[1], a.flat[4]])
    np.testing.assert_array_equal(paddle.take(T(a), T([9, -3]), mode="clip").numpy(), [5.0, 0.0])
    with pytest.raises(IndexError):
        paddle.take(T(a), T([6]))
    with pytest.raises(ValueError, match="take: argument 'mode' must be 'raise', 'wrap' or 'clip'"):
        paddle.take(T(a), T([0]), mode="bad")


def test_index_put():
    a = np.zeros((3, 3))
    rows, cols = np.array([0, 2, 0]), np.array([1, 1, 1])
    put = paddle.index_put(T(a), (T(rows), T(cols)), T([1.0, 2.0, 3.0]))
    ref = a.copy()
    ref[rows, cols] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(put.numpy(), ref)
    acc = paddle.index_put(T(a), (T(rows), T(cols)), T(1.5), accumulate=True)
    np.testing.assert_array_equal(acc.numpy(), [[0.0, 3.0, 0.0], [0.0] * 3, [0.0, 1.5, 0.0]])
    mask = np.array([True, False, True])
    masked = paddle.index_put(T(a), (T(mask),), T([1.0, 2.0, 3.0]), accumulate=True)
    np.testing.assert_array_equal(masked.numpy(), [[1.0, 2.0, 3.0], [0.0] * 3, [1.0, 2.0, 3.0]])
    x = T(a)
    x.index_put_((T([1]),), T(7.0))
    np.testing.assert_array_equal(x.numpy()[1], [7.0, 7.0, 7.0])
    v = T(np.array([1.0, 2.0]), stop_gradient=False)
    w = T(np.ones((3, 3)), stop_gradient=False)
    (paddle.index_put(w * 1.0, (T([2, 2]), T([0, 1])), v * v, accumulate=True) ** 2).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), 4.0 * np.array([1.0, 2.0]) * (1.0 + np.array([1.0, 4.0])))
    with pytest.raises(TypeError, match="index_put: argument 'indices' must be a tuple of Tensors"):
        paddle.index_put(T(a), T([0]), 1.0)


def test_setitem_under_no_grad_keeps_saved_outputs():
    w = T(np.array([0.5, 1.0]), stop_gradient=False)
    y = paddle.exp(w)  # exp's gradient reads its saved output
    with paddle.no_grad():
        y[0] = 100.0
    np.testing.assert_array_equal(y.numpy()[0], 100.0)
    y.backward(T(np.ones(2)))
    np.testing.assert_allclose(w.grad.numpy(), np.exp([0.5, 1.0]))


def test_augmented_assignment_on_slices_keeps_gradients():
    w = T(np.ones((2, 3)), stop_gradient=False)
    h = w * 1.0
    h[:, 1] += h[:, 0] * 5.0
    h[0] *= 2.0
    h.sum().backward()
    # h = [[2w00, 2(w01 + 5 w00), 2w02], [w10, w11 + 5 w10, w12]]
    np.testing.assert_array_equal(w.grad.numpy(), [[12.0, 2.0, 2.0], [6.0, 1.0, 1.0]])
