"""Reductions against NumPy references, Paddle's gradient conventions, dtype rules and errors."""
import numpy as np
import pytest

import runtime as paddle

rng = np.random.default_rng(0)
X = rng.normal(size=(2, 3, 4))
AXES = [None, 0, -1, (0, 2), [1], []]


def _np_axis(axis):
    if isinstance(axis, list):
        return tuple(axis) if axis else None
    return axis


def t(a, grad=False):
    return paddle.to_tensor(a, stop_gradient=not grad)


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name,ref", [
    ("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min), ("amax", np.max),
    ("amin", np.min), ("prod", np.prod),
    ("logsumexp", lambda a, axis, keepdims: np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))),
])
def test_reductions_match_numpy(name, ref, axis, keepdim):
    out = getattr(paddle, name)(t(X), axis=axis, keepdim=keepdim)
    expect = ref(X, axis=_np_axis(axis), keepdims=keepdim)
    assert out.shape == list(np.shape(expect))
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-12)


@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
@pytest.mark.parametrize("unbiased", [True, False])
def test_std_var_match_numpy(axis, unbiased):
    ddof = 1 if unbiased else 0
    np.testing.assert_allclose(paddle.var(t(X), axis, unbiased).numpy(), np.var(X, axis=axis, ddof=ddof), rtol=1e-12)
    np.testing.assert_allclose(t(X).std(axis, unbiased, keepdim=True).numpy(),
                               np.std(X, axis=axis, ddof=ddof, keepdims=True), rtol=1e-12)


def test_std_default_is_unbiased_and_single_element_gives_nan():
    a = np.array([1.0, 2.0, 4.0])
    assert paddle.std(t(a)).item() == pytest.approx(np.std(a, ddof=1))
    assert np.isnan(paddle.var(t(np.array([3.0]))).item())


def test_logsumexp_is_stable():
    a = np.array([[1000.0, 1000.0], [-1000.0, -1001.0]])
    np.testing.assert_allclose(paddle.logsumexp(t(a), axis=1).numpy(),
                               [1000.0 + np.log(2.0), -1000.0 + np.log1p(np.exp(-1.0))], rtol=1e-12)
    assert paddle.logsumexp(t(np.array([-np.inf, -np.inf]))).item() == -np.inf


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(name):
    ref = getattr(np, name)
    fn = getattr(paddle, name)
    out = fn(t(X))
    assert out.shape == [] and out.dtype == paddle.int64 and out.item() == ref(X)
    np.testing.assert_array_equal(fn(t(X), axis=1).numpy(), ref(X, axis=1))
    kept = fn(t(X), axis=-1, keepdim=True, dtype="int32")
    assert kept.dtype == paddle.int32 and kept.shape == [2, 3, 1]
    np.testing.assert_array_equal(kept.numpy()[..., 0], ref(X, axis=-1))
    assert fn(t(X), keepdim=True).shape == [1, 1, 1]
    assert getattr(t(X), name)(axis=0).shape == [3, 4]


def test_argmax_picks_first_of_ties():
    assert paddle.argmax(t(np.array([1.0, 3.0, 3.0]))).item() == 1


def test_all_any_count_nonzero():
    b = np.array([[True, False, True], [True, True, True]])
    np.testing.assert_array_equal(paddle.all(t(b), axis=1).numpy(), [False, True])
    np.testing.assert_array_equal(paddle.any(t(b), axis=0, keepdim=True).numpy(), [[True, True, True]])
    assert paddle.all(t(b)).item() is False and t(b).any().item() is True
    z = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    out = paddle.count_nonzero(t(z), axis=1)
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy(), [1, 2])
    assert paddle.count_nonzero(t(z)).item() == 3


@pytest.mark.parametrize("axis,dtype", [(None, None), (0, None), (-1, "float64"), (1, None)])
def test_cumsum_cumprod_match_numpy(axis, dtype):
    a = rng.normal(size=(3, 4))
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    np.testing.assert_allclose(paddle.cumsum(t(a), axis, dtype).numpy(), np.cumsum(flat, ax), rtol=1e-12)
    np.testing.assert_allclose(t(a).cumprod(axis, dtype).numpy(), np.cumprod(flat, ax), rtol=1e-12)


def test_dtype_rules():
    ints = t(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert paddle.sum(ints).dtype == paddle.int64
    assert paddle.sum(ints, dtype="int32").dtype == paddle.int32
    assert paddle.sum(t(np.array([True, True]))).item() == 2
    assert paddle.prod(ints + 1).dtype == paddle.int32
    assert paddle.max(ints).dtype == paddle.int32
    assert paddle.cumsum(ints, 1).dtype == paddle.int32
    assert paddle.cumsum(t(np.array([True, False, True]))).numpy().tolist() == [1, 1, 2]
    assert paddle.median(ints).dtype == paddle.float32
    assert paddle.mean(t(np.ones(3, np.float32))).dtype == paddle.float32


def test_median():
    a = rng.normal(size=(4, 5))
    np.testing.assert_allclose(paddle.median(t(a)).numpy(), np.median(a), rtol=1e-12)
    np.testing.assert_allclose(paddle.median(t(a), axis=1, keepdim=True).numpy(),
                               np.median(a, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(t(a).median(axis=0).numpy(), np.median(a, axis=0), rtol=1e-12)


def test_median_gradient_goes_to_middle_elements():
    x = t(np.array([[3.0, 1.0, 2.0], [4.0, 1.0, 3.0]]), grad=True)
    paddle.median(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 1], [0, 0, 1]])
    y = t(np.array([4.0, 1.0, 3.0, 2.0]), grad=True)
    paddle.median(y).backward()
    np.testing.assert_allclose(y.grad.numpy(), [0, 0, 0.5, 0.5])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0/0 of the all-NaN row
def test_nansum_nanmean():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    np.testing.assert_allclose(paddle.nansum(t(a), axis=1).numpy(), np.nansum(a, axis=1))
    assert paddle.nansum(t(a)).item() == 4.0
    np.testing.assert_allclose(paddle.nanmean(t(a), axis=1).numpy(), [2.0, np.nan])
    assert t(a).nanmean().item() == 2.0
    x = t(a, grad=True)
    paddle.nanmean(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.5, 0, 0.5], [0, 0, 0]])
    assert paddle.nansum(t(np.array([1, 2]))).item() == 3


def test_max_gives_every_tie_the_full_gradient_and_amax_splits_it():
    data = np.array([[0.1, 0.9, 0.9, 0.9], [0.9, 0.9, 0.6, 0.7]])
    x = t(data, grad=True)
    paddle.max(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), (data == 0.9).astype(float))
    x = t(data, grad=True)
    paddle.amax(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), (data == 0.9) / 5.0)
    x = t(data, grad=True)
    paddle.amin(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1, 0, 0, 0], [0, 0, 1, 0]])


def test_prod_gradient_with_zeros():
    x = t(np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]]), grad=True)
    paddle.prod(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 6, 0], [0, 0, 0], [8, 4, 2]])


def test_cumprod_gradient_with_zero_matches_reference():
    a = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    w = np.array([1.0, -2.0, 0.5, 3.0, 1.5])
    x = t(a, grad=True)
    (paddle.cumprod(x, 0) * t(w)).sum().backward()
    # reference: d/dx_i sum_j w_j prod_{k<=j} x_k
    expect = [sum(w[j] * np.prod([a[k] for k in range(j + 1) if k != i]) for j in range(i, 5)) for i in range(5)]
    np.testing.assert_allclose(x.grad.numpy(), expect)


def test_reduction_gradients_against_references():
    x = t(X, grad=True)
    paddle.mean(x, axis=(0, 2)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(X.shape, 1 / 8))
    x = t(X, grad=True)
    paddle.logsumexp(x, axis=-1).sum().backward()
    sm = np.exp(X) / np.exp(X).sum(-1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), sm, rtol=1e-12)
    x = t(X, grad=True)
    paddle.var(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (X - X.mean(1, keepdims=True)) / 2, rtol=1e-12)
    x = t(X, grad=True)
    paddle.cumsum(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(np.array([3.0, 2.0, 1.0])[:, None], X.shape))


def test_double_backward_through_logsumexp_and_std():
    x = t(np.array([0.3, -1.2, 2.0]), grad=True)
    (g,) = paddle.grad(paddle.logsumexp(x), x, create_graph=True)
    (gg,) = paddle.grad((g * t(np.array([1.0, 0.0, 0.0]))).sum(), x)
    p = np.exp(x.numpy()) / np.exp(x.numpy()).sum()
    np.testing.assert_allclose(gg.numpy(), p[0] * (np.eye(3)[0] - p), rtol=1e-10)


def test_tensor_methods_are_bound():
    for name in ("sum", "mean", "max", "min", "amax", "amin", "prod", "argmax", "argmin", "all", "any",
                 "logsumexp", "std", "var", "median", "cumsum", "cumprod", "nansum", "nanmean", "count_nonzero"):
        assert getattr(paddle.Tensor, name) is getattr(paddle, name), name


def test_float32_inputs_stay_float32():
    a = t(X.astype(np.float32))
    for name in ("sum", "mean", "max", "prod", "logsumexp", "std", "var", "cumsum", "median"):
        assert getattr(paddle, name)(a).dtype == paddle.float32, name


def test_zero_dim_tensor():
    s = t(np.array(2.5))
    for name in ("sum", "mean", "max", "amin", "prod", "logsumexp"):
        out = getattr(paddle, name)(s, axis=0)
        assert out.shape == [] and out.item() == pytest.approx(2.5)
    assert paddle.argmax(s).item() == 0
    assert paddle.cumsum(s).shape == [1]


@pytest.mark.parametrize("call,exc,match", [
    (lambda: paddle.sum(t(X), axis=3), ValueError, "sum: argument 'axis' = 3 is out of range"),
    (lambda: paddle.max(t(X), axis=(0, 0)), ValueError, "repeated axes"),
    (lambda: paddle.max(t(X), axis=1.5), TypeError, "must be an int"),
    (lambda: paddle.max(t(np.zeros((0, 3))), axis=0), ValueError, "zero-size dimension"),
    (lambda: paddle.max(t(np.array([True]))), TypeError, "max: argument 'x' must be an int or floating"),
    (lambda: paddle.mean(t(np.arange(3))), TypeError, "mean: argument 'x' must be a floating"),
    (lambda: paddle.std(t(np.arange(3))), TypeError, "std: argument 'x' must be a floating"),
    (lambda: paddle.logsumexp(t(np.arange(3))), TypeError, "logsumexp"),
    (lambda: paddle.argmax(t(X), axis=[0, 1]), TypeError, "argmax: argument 'axis' must be an int"),
    (lambda: paddle.argmin(t(X), dtype="float32"), TypeError, "int32 or int64"),
    (lambda: paddle.argmax(t(X), axis=-4), ValueError, "out of range"),
    (lambda: paddle.argmax(t(np.zeros((0,)))), ValueError, "empty"),
    (lambda: paddle.cumsum(t(X), axis=3), ValueError, "cumsum: argument 'axis' = 3"),
    (lambda: paddle.cumprod(t(X), dim=(0, 1)), TypeError, "cumprod: the axis argument must be an int"),
    (lambda: paddle.median(t(X), axis=(0, 1)), TypeError, "median: argument 'axis' must be an int"),
    (lambda: paddle.nanmean(t(np.arange(3))), TypeError, "nanmean"),
    (lambda: paddle.sum([1.0, 2.0]), TypeError, "sum: argument 'x' must be a Tensor"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
