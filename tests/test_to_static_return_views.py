"""A compiled function returning a view of an input (`x.reshape(...)`) returns a view, as eager does:
an in-place write to the input afterwards shows through the returned tensor (and back)."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import sot
from sot_helpers import assert_same_result, fresh


def reshaped(x):
    return x.reshape([6])


def flattened_and_unsqueezed(x):
    return paddle.flatten(x), x.unsqueeze(0).squeeze(0), x.detach().transpose([1, 0])


def with_a_computed_output(x):
    return x.reshape([3, 2]), x * 2


def view_before_a_break(x):
    v = x.reshape([6])
    if v.sum() > -100:  # a graph break: v is passed on to the resume function
        v = v.unsqueeze(0)
    return v


def written_after_a_break(x):
    v = x.reshape([6])
    if v.sum() > -100:  # a graph break
        pass
    x.add_(paddle.ones_like(x))  # eager's v sees the write
    return v * 1, x


def test_an_input_written_after_a_break_shows_through_a_view_made_before_it():
    def run(fn):
        x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
        v, _ = fn(x)
        return v.numpy(), x.numpy()

    want = run(written_after_a_break)
    jit = sot.to_static(fresh(written_after_a_break))
    for _ in range(2):
        for g, w in zip(run(jit), want):
            np.testing.assert_array_equal(g, w)


def _after_writes(fn):
    """fn's outputs after an in-place write to the input, then the input after a write through the first output."""
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    out = fn(x)
    out = out if isinstance(out, tuple) else (out,)
    x.add_(paddle.ones_like(x))
    seen = [o.numpy().copy() for o in out]
    out[0].scale_(10.0)
    return seen, x.numpy().copy()


@pytest.mark.parametrize("fn", [reshaped, flattened_and_unsqueezed, with_a_computed_output, view_before_a_break],
                         ids=lambda f: f.__name__)
def test_a_returned_view_of_an_input_shares_its_memory_as_in_eager(fn):
    want_seen, want_x = _after_writes(fn)
    jit = sot.to_static(fresh(fn))
    for _ in range(2):  # the translation, then a cache hit
        got_seen, got_x = _after_writes(jit)
        for g, w in zip(got_seen, want_seen):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(got_x, want_x)
    assert jit.sot_translator.translations == 1 and jit.sot_translator.fallbacks == []


def test_a_returned_view_carries_the_gradient_to_the_input_as_in_eager():
    def run(fn):
        x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3), stop_gradient=False)
        a, b = fn(x)
        (a * a).sum().backward()
        return a, x.grad.numpy()

    (got, got_grad), (want, want_grad) = run(sot.to_static(fresh(with_a_computed_output))), run(with_a_computed_output)
    assert_same_result(got, want)
    assert got.stop_gradient == want.stop_gradient
    np.testing.assert_array_equal(got_grad, want_grad)


def test_a_returned_view_of_a_parameter_shares_its_memory_as_in_eager():
    layer = nn.Linear(2, 3)

    def flat_weight():
        return layer.weight.reshape([6])

    def run(fn):
        view = fn()
        with paddle.no_grad():
            layer.weight.add_(paddle.ones_like(layer.weight))  # an optimizer-like in-place step
        seen = view.numpy().copy()
        with paddle.no_grad():
            layer.weight.add_(-paddle.ones_like(layer.weight))
        return seen, view.stop_gradient

    want = run(flat_weight)
    jit = sot.to_static(fresh(flat_weight))
    for _ in range(2):
        got = run(jit)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
