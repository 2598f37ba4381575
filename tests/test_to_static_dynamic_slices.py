"""Slices of dynamic dims: a -1 dim is assumed to hold at least 2 items, so a slice that may keep
fewer (`x[1:]`, `x[:-1]`, `x[-1:]` of a size-2 dim keep 1) specialises the dims behind it, and a
slice that keeps at least 2 of any size >= 2 (`x[-3:]`, `x[::-1]`) leaves them dynamic. Each
result and gradient is eager's, the eager ones checked against NumPy."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import runtime as paddle
import sot
from sot.opcode_executor.dims import _may_keep_fewer_than_two
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
    described = jit.sot_translator.shapes.describe()
    assert "f_locals['x'] dim 0 (rank 1): static, sliced by [1:], which may keep fewer than 2 items" in described
    assert "f_locals['w'] dim 0 (rank 1): dynamic" in described


def test_a_slice_that_keeps_two_items_of_any_size_leaves_the_dim_dynamic():
    jit = jit_of(last_rows)
    for n in (4, 5, 6, 7):
        with sot.disable():
            want = _run(last_rows, n, 3)
        for g, w in zip(_run(jit, n, 3), want):
            np.testing.assert_array_equal(g, w)
    assert jit.sot_translator.translations == 2  # the first call's sizes, then dim 0 of x dynamic
    assert "f_locals['x'] dim 0 (rank 1): dynamic" in jit.sot_translator.shapes.describe()


@pytest.mark.parametrize("sliced, index, dynamic", [
    (lambda x: x[:, 1:] * 2, (slice(None), slice(1, None)), False),
    (lambda x: x[..., :-1] * 2, (Ellipsis, slice(None, -1)), False),
    (lambda x: x[:, None, -4:] * 2, (slice(None), None, slice(-4, None)), True),
    (lambda x: x[..., ::-1] * 2, (Ellipsis, slice(None, None, -1)), True),
])
def test_the_slice_of_each_dim_is_found_past_none_and_ellipsis(sliced, index, dynamic):
    jit = jit_of(sliced)
    for n in (4, 5, 6):
        x = paddle.to_tensor(np.arange(3.0 * n, dtype="float32").reshape(3, n))
        np.testing.assert_array_equal(jit(x).numpy(), x.numpy()[index] * 2)
    assert ("f_locals['x'] dim 1 (rank 2): dynamic" in jit.sot_translator.shapes.describe()) is dynamic
    assert jit.sot_translator.breaks == []


bounds = st.one_of(st.none(), st.integers(-7, 7))


@given(bounds, bounds, st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
def test_may_keep_fewer_than_two_agrees_with_every_size_up_to_a_hundred(start, stop, step):
    item = slice(start, stop, step)
    fewest = min(len(range(*item.indices(n))) for n in range(2, 101))
    assert _may_keep_fewer_than_two(item) is (fewest < 2)
