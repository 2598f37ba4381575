"""Dynamic dims that an op may shrink to size 1. A -1 dim is assumed to hold at least 2 items, so a
slice that may keep fewer (`x[1:]`, `x[:-1]`, `x[-1:]` of a size-2 dim keep 1) specialises the dims
behind it, a slice that keeps at least 2 of any size >= 2 (`x[-3:]`, `x[::-1]`) leaves them dynamic,
and `squeeze` of a computed tensor's dynamic dim specialises (a pool of a size-2 dim gives 1). Ops
that still make a -1 dim of size 1 (split, an inferred reshape size, a pool) get gradients summed
back over the dims that broadcast, found when the program runs. Each result and gradient is eager's,
the eager ones checked against NumPy."""
import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import runtime as paddle
import runtime.nn.functional as F
import sot
from sot.opcode_executor.dims import _least_size_keeping_two
from sot_helpers import jit_of


def shifted_product(x, w):
    return (x[1:] * w).sum()  # x[1:] of a size-2 x keeps 1 item, which broadcasts against w


def last_rows(x, w):
    return (x[-3:] * w).sum()  # keeps min(3, n) >= 2 items of any n >= 2: no broadcast


def _run(fn, n, m):
    rng = np.random.default_rng(n * 10 + m)
    x = paddle.to_tensor(rng.standard_normal(n).astype("float32"), stop_gradient=False)
    w = paddle.to_tensor(rng.standard_normal(m).astype("float32"), stop_gradient=False)
    out = fn(x, w)
    out.backward()
    return [t.numpy() for t in (out, x.grad, w.grad)]


def test_a_slice_that_may_keep_one_item_of_a_dynamic_dim_gives_eagers_result_and_gradients():
    jit = jit_of(shifted_product)
    for n, m in [(4, 3), (5, 4), (6, 5), (2, 5)]:  # the dims turn dynamic; then x[1:] keeps 1 item
        with sot.disable():
            want = _run(shifted_product, n, m)
        got = _run(jit, n, m)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    rng = np.random.default_rng(25)  # _run's draws for n=2, m=5
    x, w = rng.standard_normal(2).astype("float32"), rng.standard_normal(5).astype("float32")
    np.testing.assert_allclose(want[1], np.r_[0.0, w.sum()], rtol=1e-6)  # eager's gradient is NumPy's
    np.testing.assert_allclose(want[2], np.full(5, x[1]), rtol=1e-6)
    described = jit.sot_translator.shapes.describe().splitlines()
    assert "f_locals['x'] dim 0 (rank 1): dynamic for sizes of at least 3, sliced by [1:], which keeps fewer than " \
           "2 items of a smaller size" in described  # x of size 2 got a translation of its own
    assert "f_locals['w'] dim 0 (rank 1): dynamic" in described
    assert jit.sot_translator.translations == 3  # sizes 4, then 5 and 6 (dynamic, at least 3), then 2


def test_a_slice_that_keeps_two_items_of_any_size_leaves_the_dim_dynamic():
    jit = jit_of(last_rows)
    for n in (4, 5, 6, 7):
        with sot.disable():
            want = _run(last_rows, n, 3)
        for g, w in zip(_run(jit, n, 3), want):
            np.testing.assert_array_equal(g, w)
    assert jit.sot_translator.translations == 2  # the first call's sizes, then dim 0 of x dynamic
    assert "f_locals['x'] dim 0 (rank 1): dynamic" in jit.sot_translator.shapes.describe()


@pytest.mark.parametrize("sliced, index, kept", [
    (lambda x: x[:, 1:] * 2, (slice(None), slice(1, None)), "dynamic for sizes of at least 3"),
    (lambda x: x[..., :-1] * 2, (Ellipsis, slice(None, -1)), "dynamic for sizes of at least 3"),
    (lambda x: x[:, ::3] * 2, (slice(None), slice(None, None, 3)), "dynamic for sizes of at least 4"),
    (lambda x: x[:, -1:] * 2, (slice(None), slice(-1, None)), "static"),  # one item of any size
    (lambda x: x[:, None, -4:] * 2, (slice(None), None, slice(-4, None)), "dynamic"),
    (lambda x: x[..., ::-1] * 2, (Ellipsis, slice(None, None, -1)), "dynamic"),
])
def test_the_slice_of_each_dim_is_found_past_none_and_ellipsis(sliced, index, kept):
    jit = jit_of(sliced)
    for n in (5, 6, 7, 2, 3):
        x = paddle.to_tensor(np.arange(3.0 * n, dtype="float32").reshape(3, n))
        np.testing.assert_array_equal(jit(x).numpy(), x.numpy()[index] * 2)
    (line,) = [line for line in jit.sot_translator.shapes.describe().splitlines()
               if line.startswith("f_locals['x'] dim 1 (rank 2): ")]
    said = line.removeprefix("f_locals['x'] dim 1 (rank 2): ")
    assert said == kept if kept == "dynamic" else said.startswith(kept)
    assert jit.sot_translator.breaks == []


bounds = st.one_of(st.none(), st.integers(-7, 7))


@given(bounds, bounds, st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
def test_the_least_size_keeping_two_items_agrees_with_every_size_up_to_two_hundred(start, stop, step):
    item = slice(start, stop, step)
    kept = {n: len(range(*item.indices(n))) for n in range(2, 201)}
    fine_from = [n for n in kept if all(kept[m] >= 2 for m in range(n, 201))]
    assert _least_size_keeping_two(item) == (fine_from[0] if fine_from else None)
def split_product(x, w):
    a, _ = paddle.split(x, 2, axis=0)  # a size-2 x splits into halves of 1, which broadcast against w
    return (a * w).sum()


def inferred_product(x, w):
    return (x.reshape([-1, 2]) * w.unsqueeze(1)).sum()  # a size-2 x reshapes to [1, 2]


def pooled_product(x, w):
    return (F.max_pool2d(x, 2) * w).sum()  # a 2x2 x pools to 1x1


def split_matmul(x, w):
    a, _ = paddle.split(x, 2, axis=0)  # a batch of 1 matrices, broadcast against w's 5
    return paddle.matmul(a, w).sum()


def split_maximum(x, w):
    a, _ = paddle.split(x, 2, axis=0)
    return paddle.maximum(a, w).sum()


@pytest.mark.parametrize("fn, sizes, reference", [
    (split_product, [((4,), (2,)), ((6,), (3,)), ((8,), (4,)), ((2,), (5,))], lambda x, w: (x[:1] * w).sum()),
    (inferred_product, [((8,), (4,)), ((12,), (6,)), ((16,), (8,)), ((2,), (5,))],
     lambda x, w: (x.reshape(1, 2) * w[:, None]).sum()),
    (pooled_product, [((1, 1, 4, 4), (2,)), ((1, 1, 6, 6), (3,)), ((1, 1, 8, 8), (4,)), ((1, 1, 2, 2), (5,))],
     lambda x, w: (x.max() * w).sum()),
    (split_matmul, [((4, 3, 4), (2, 4, 2)), ((6, 3, 4), (3, 4, 2)), ((8, 3, 4), (4, 4, 2)), ((2, 3, 4), (5, 4, 2))],
     lambda x, w: (x[:1] @ w).sum()),
    (split_maximum, [((4, 3), (2, 3)), ((6, 3), (3, 3)), ((8, 3), (4, 3)), ((2, 3), (5, 3))],
     lambda x, w: np.maximum(x[:1], w).sum()),
])
def test_gradients_broadcast_along_a_dynamic_dim_of_size_one_are_summed_back(fn, sizes, reference):
    jit = jit_of(fn)
    for x_shape, w_shape in sizes:  # the dims turn dynamic, then the last call's -1 dim has size 1
        rng = np.random.default_rng(len(x_shape) * 100 + x_shape[-1])
        x_np, w_np = rng.standard_normal(x_shape).astype("float32"), rng.standard_normal(w_shape).astype("float32")
        results = []
        for run in (fn, jit):
            x = paddle.to_tensor(x_np, stop_gradient=False)
            w = paddle.to_tensor(w_np, stop_gradient=False)
            with sot.disable() if run is fn else contextlib.nullcontext():
                out = run(x, w)
            out.backward()
            results.append([t.numpy() for t in (out, x.grad, w.grad)])
        for g, e in zip(*reversed(results)):
            np.testing.assert_array_equal(g, e)
    assert jit.sot_translator.translations == 2  # the dims stayed dynamic
    eager_out, _, eager_w_grad = results[0]
    np.testing.assert_allclose(eager_out, reference(x_np, w_np), rtol=1e-5)  # eager's is NumPy's
    if w_np.ndim == 1:
        np.testing.assert_allclose(eager_w_grad, np.full(5, eager_w_grad[0]), rtol=1e-6)  # w met one value 5 times


def pooled_then_squeezed(x):
    y = F.max_pool2d(x, 2).squeeze()  # [H/2, W/2]; of a 2x2 x, a 0-D tensor
    return y.sum(0) if y.ndim else y * 1.0


def test_squeeze_of_a_computed_dynamic_dim_specialises_it():
    jit = jit_of(pooled_then_squeezed)
    for h in (4, 6, 8, 2):
        x_np = np.arange(h * h, dtype="float32").reshape(1, 1, h, h)
        x = paddle.to_tensor(x_np)
        with sot.disable():
            want = pooled_then_squeezed(x)
        pooled = x_np.reshape(h // 2, 2, h // 2, 2).max(axis=(1, 3))
        np.testing.assert_array_equal(want.numpy(), pooled.sum(0) if h > 2 else pooled.reshape(()))
        got = jit(x)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert "static, squeezed, which drops a dim only where its size is 1" in jit.sot_translator.shapes.describe()


def squeezed_input(x):
    return x.squeeze(0) * 2


def test_squeeze_of_an_inputs_own_dynamic_dim_stays_dynamic():
    jit = jit_of(squeezed_input)
    for n in (3, 4, 5):  # the guard keeps dim 0 >= 2: squeeze never drops it
        x = paddle.to_tensor(np.ones((n, 1), "float32"))
        np.testing.assert_array_equal(jit(x).numpy(), np.ones((n, 1), "float32") * 2)
    assert "f_locals['x'] dim 0 (rank 2): dynamic" in jit.sot_translator.shapes.describe()
