"""Random ops and the generator: reproducibility, state save/restore, distribution sanity, errors."""
import numpy as np
import pytest

import runtime as paddle
from runtime.generator import Generator, default_generator

N = 10_000


def _twice(fn):
    paddle.seed(123)
    a = fn().numpy()
    paddle.seed(123)
    b = fn().numpy()
    return a, b


@pytest.mark.parametrize("fn", [
    lambda: paddle.rand([4, 5]),
    lambda: paddle.randn([7]),
    lambda: paddle.standard_normal([2, 3], dtype="float64"),
    lambda: paddle.uniform([3, 3], min=-2.0, max=5.0),
    lambda: paddle.normal(1.0, 2.0, [6]),
    lambda: paddle.randint(0, 100, [10]),
    lambda: paddle.randperm(9),
    lambda: paddle.bernoulli(paddle.full([20], 0.5)),
    lambda: paddle.multinomial(paddle.to_tensor([0.2, 0.3, 0.5]), 2),
    lambda: paddle.poisson(paddle.full([5], 3.0)),
])
def test_same_seed_same_values(fn):
    a, b = _twice(fn)
    np.testing.assert_array_equal(a, b)


def test_different_draws_and_seeds_differ():
    paddle.seed(1)
    a = paddle.rand([50]).numpy()
    b = paddle.rand([50]).numpy()
    paddle.seed(2)
    c = paddle.rand([50]).numpy()
    assert not np.array_equal(a, b) and not np.array_equal(a, c)


def test_seed_returns_generator_and_state_roundtrip():
    g = paddle.seed(7)
    assert isinstance(g, Generator) and g is default_generator() and g.initial_seed() == 7
    state = paddle.get_rng_state()
    assert isinstance(state, list) and len(state) == 1
    first = paddle.randn([5]).numpy()
    paddle.rand([3])
    paddle.set_rng_state(state)
    np.testing.assert_array_equal(paddle.randn([5]).numpy(), first)


def test_generator_object_api():
    g = Generator(5)
    a = g.random()
    s = g.get_state()
    b = g.random()
    g.set_state(s)
    assert g.random() == b and a != b
    assert g.manual_seed(5).random() == a


def test_per_op_seed_is_fixed_stream():
    a = paddle.uniform([4], seed=42).numpy()
    b = paddle.uniform([4], seed=42).numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, np.random.default_rng(42).random(4, dtype=np.float32) * 2 - 1, rtol=1e-6)


def test_default_dtypes_and_shapes():
    assert paddle.rand([2, 3]).dtype == paddle.float32 and paddle.rand([2, 3]).shape == [2, 3]
    assert paddle.randn([4], dtype="float64").dtype == paddle.float64
    assert paddle.uniform([2], dtype="float16").dtype == paddle.float16
    assert paddle.randint(5).dtype == paddle.int64 and paddle.randint(5).shape == [1]
    assert paddle.randint(0, 5, [3], dtype="int32").dtype == paddle.int32
    assert paddle.randperm(4, dtype="float32").dtype == paddle.float32
    assert paddle.rand(paddle.to_tensor([2, 2])).shape == [2, 2]
    paddle.set_default_dtype("float64")
    assert paddle.rand([2]).dtype == paddle.float64 and paddle.normal(shape=[2]).dtype == paddle.float64
    x = paddle.zeros([2, 3], dtype="float64")
    out = paddle.randint_like(x, -5, 5)
    assert out.dtype == paddle.float64 and out.shape == [2, 3]


def test_uniform_distribution():
    u = paddle.uniform([N], min=-2.0, max=3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.05
    assert abs(u.std() - 5 / np.sqrt(12)) < 0.05
    r = paddle.rand([N]).numpy()
    assert r.min() >= 0.0 and r.max() < 1.0 and abs(r.mean() - 0.5) < 0.02


def test_normal_distribution():
    z = paddle.normal(3.0, 2.0, [N]).numpy()
    assert abs(z.mean() - 3.0) < 0.06 and abs(z.std() - 2.0) < 0.06
    s = paddle.randn([N]).numpy()
    assert abs(s.mean()) < 0.03 and abs(s.std() - 1.0) < 0.03


def test_normal_with_tensor_parameters():
    mean = paddle.to_tensor([0.0, 100.0, -50.0])
    std = paddle.to_tensor([[0.01], [0.01]])
    z = paddle.normal(mean, std).numpy()
    assert z.shape == (2, 3)
    np.testing.assert_allclose(z, np.broadcast_to([0.0, 100.0, -50.0], (2, 3)), atol=0.1)


def test_randint_range_and_frequencies():
    v = paddle.randint(-3, 4, [N]).numpy()
    assert v.min() == -3 and v.max() == 3
    counts = np.bincount(v + 3)
    assert np.all(np.abs(counts / N - 1 / 7) < 0.02)


def test_randperm_is_permutation():
    p = paddle.randperm(20).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(20))


def test_bernoulli_frequencies():
    p = np.array([0.0, 0.25, 0.9, 1.0], dtype=np.float32)
    draws = paddle.bernoulli(paddle.to_tensor(np.tile(p, (N // 4, 1)))).numpy()
    assert draws.dtype == np.float32 and set(np.unique(draws)) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.mean(axis=0), p, atol=0.03)


def test_poisson_mean():
    v = paddle.poisson(paddle.full([N], 4.0)).numpy()
    assert abs(v.mean() - 4.0) < 0.1 and abs(v.var() - 4.0) < 0.3


def test_multinomial_with_replacement_frequencies():
    probs = paddle.to_tensor([[1.0, 3.0, 0.0, 4.0], [0.0, 0.0, 1.0, 0.0]])
    out = paddle.multinomial(probs, N, replacement=True).numpy()
    assert out.shape == (2, N) and out.dtype == np.int64
    freq = np.bincount(out[0], minlength=4) / N
    np.testing.assert_allclose(freq, [1 / 8, 3 / 8, 0.0, 4 / 8], atol=0.02)
    assert np.all(out[1] == 2)


def test_multinomial_without_replacement():
    probs = paddle.to_tensor(np.tile([0.1, 0.2, 0.0, 0.7], (N // 10, 1)))
    out = paddle.multinomial(probs, 3).numpy()
    assert all(len(set(row)) == 3 for row in out[:200])
    assert not np.any(out == 2)
    first = np.bincount(out[:, 0], minlength=4) / out.shape[0]
    np.testing.assert_allclose(first, [0.1, 0.2, 0.0, 0.7], atol=0.04)


def test_inplace_fills():
    x = paddle.zeros([N])
    assert x.uniform_(min=1.0, max=2.0) is x
    v = x.numpy()
    assert v.min() >= 1.0 and v.max() < 2.0 and abs(v.mean() - 1.5) < 0.02
    x.normal_(mean=-1.0, std=0.5)
    assert abs(x.numpy().mean() + 1.0) < 0.03 and abs(x.numpy().std() - 0.5) < 0.03
    x.exponential_(lam=2.0)
    assert x.numpy().min() >= 0 and abs(x.numpy().mean() - 0.5) < 0.03


def test_inplace_fill_cuts_gradient_history():
    w = paddle.ones([3])
    w.stop_gradient = False
    y = w * 2.0
    y.uniform_()
    (y * 3.0).sum().backward()
    assert w.grad is None


@pytest.mark.parametrize("call,exc,match", [
    (lambda: paddle.rand([2, -1]), ValueError, "shape"),
    (lambda: paddle.rand("3"), TypeError, "shape"),
    (lambda: paddle.rand([2], dtype="int32"), TypeError, "uniform: argument 'dtype'"),
    (lambda: paddle.uniform([2], min=2.0, max=1.0), ValueError, "'min'"),
    (lambda: paddle.uniform([2], min="a"), TypeError, "'min' must be a number"),
    (lambda: paddle.normal(0.0, -1.0, [2]), ValueError, "'std' must be non-negative"),
    (lambda: paddle.randint(5, 5), ValueError, "'low' \\(5\\) must be less than"),
    (lambda: paddle.randint(0, 5, dtype="float32"), TypeError, "int32 or int64"),
    (lambda: paddle.randint(0.5, 3), TypeError, "'low' must be an int"),
    (lambda: paddle.randperm(-1), ValueError, "'n' must be non-negative"),
    (lambda: paddle.bernoulli(paddle.to_tensor([1, 0])), TypeError, "bernoulli: argument 'x' must be a floating"),
    (lambda: paddle.bernoulli([0.5]), TypeError, "bernoulli: argument 'x' must be a Tensor"),
    (lambda: paddle.multinomial(paddle.ones([2, 2, 2])), ValueError, "1-D or 2-D"),
    (lambda: paddle.multinomial(paddle.ones([3]), 4), ValueError, "exceeds the number of categories"),
    (lambda: paddle.multinomial(paddle.ones([3]), 0), ValueError, "'num_samples' must be positive"),
    (lambda: paddle.multinomial(paddle.to_tensor([1.0, -1.0])), ValueError, "non-negative"),
    (lambda: paddle.multinomial(paddle.to_tensor([1.0, 0.0]), 2), ValueError, "at least 2 positive"),
    (lambda: paddle.poisson(paddle.to_tensor([-1.0])), ValueError, "non-negative"),
    (lambda: paddle.seed(1.5), TypeError, "'seed' must be an int"),
    (lambda: paddle.set_rng_state("x"), ValueError, "state_list"),
    (lambda: paddle.zeros([2], dtype="int64").uniform_(), TypeError, "uniform_: argument 'x' must be a floating"),
    (lambda: paddle.zeros([2]).exponential_(lam=0.0), ValueError, "'lam' must be positive"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_failed_inplace_fill_leaves_tensor_unchanged():
    x = paddle.ones([3])
    with pytest.raises(ValueError):
        x.uniform_(min=3.0, max=1.0)
    np.testing.assert_array_equal(x.numpy(), np.ones(3, np.float32))
