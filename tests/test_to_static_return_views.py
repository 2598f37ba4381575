"""A compiled function returning a view of an input (`x.reshape(...)`) returns a view, as eager does:
an in-place write to the input afterwards shows through the returned tensor (and back). So does a view
of a tensor the function computed, when the caller can reach that tensor too (returned, stored on an
object, or held across a graph break)."""
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


def result_and_a_view_of_it(x):
    t = x * 2
    return t, t.reshape([6])


def view_first_then_its_base(x):
    t = x * 2
    return t.reshape([6]), t


def view_of_a_view_and_its_base(x):
    t = x + 1
    flat = t.reshape([6])
    return t, flat.unsqueeze(0), flat


def view_across_a_break(x):
    t = x * 2
    v = t.reshape([6])
    if v.sum() > -100:  # a graph break: t and v are both passed on to the resume function
        pass
    return t, v


class _Holder:
    pass


_holder = _Holder()


def stored_and_viewed(x):
    t = x * 2
    _holder.t = t  # a side effect: the caller reaches t through the object
    return t.reshape([6])


def _after_write_through_first(fn):
    """fn's outputs after an in-place write through the first one (what a caller's `add_` leaves)."""
    out = fn(paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3)))
    out[0].add_(paddle.ones_like(out[0]))
    return [o.numpy().copy() for o in out]


@pytest.mark.parametrize("fn", [result_and_a_view_of_it, view_first_then_its_base, view_of_a_view_and_its_base,
                                view_across_a_break], ids=lambda f: f.__name__)
def test_a_returned_view_of_a_computed_tensor_shares_its_memory_as_in_eager(fn):
    want = _after_write_through_first(fn)
    jit = sot.to_static(fresh(fn))
    for _ in range(2):  # the translation, then a cache hit
        got = _after_write_through_first(jit)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert jit.sot_translator.fallbacks == []


def test_a_view_of_a_tensor_stored_on_an_object_shares_its_memory_as_in_eager():
    def run(fn):
        view = fn(paddle.ones([2, 3]))
        _holder.t.add_(paddle.ones([2, 3]))
        return view.numpy().copy()

    want = run(stored_and_viewed)
    jit = sot.to_static(fresh(stored_and_viewed))
    for _ in range(2):
        np.testing.assert_array_equal(run(jit), want)
    assert jit.sot_translator.fallbacks == []


def test_a_view_of_a_computed_tensor_carries_both_gradients_as_in_eager():
    def run(fn):
        x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3), stop_gradient=False)
        t, v = fn(x)
        ((t * t).sum() + (v * 3.0).sum()).backward()
        return t, v, x.grad.numpy()

    got, want = run(sot.to_static(fresh(result_and_a_view_of_it))), run(result_and_a_view_of_it)
    for g, w in zip(got[:2], want[:2]):
        assert_same_result(g, w)
        assert g.stop_gradient == w.stop_gradient
    np.testing.assert_array_equal(got[2], want[2])


def test_a_view_of_a_computed_tensor_nothing_else_reaches_stays_the_graphs_output():
    """No eager op per call where no alias can be seen: the view is the SIR's one output."""
    def only_the_view(x):
        return (x * 2).reshape([6])

    jit = sot.to_static(fresh(only_the_view))
    x = paddle.ones([2, 3])
    assert_same_result(jit(x), only_the_view(x))
    (sir,) = [e.payload for e in jit.sot_translator.cache.entries]
    (made,) = [st for st in sir.statements if sir.outputs[0] in st.output_symbols()]
    assert len(sir.outputs) == 1 and made.method == "reshape"


def written_after_a_break_through_the_base(x):
    t = x * 2
    v = t.reshape([6])
    if v.sum() > -100:  # a graph break: the resume function writes t, eager's v sees it
        t.add_(paddle.ones_like(t))
    return v * 1


def written_after_a_break_through_the_view(x):
    t = x * 2
    v = t.reshape([6])
    if v.sum() > -100:  # a graph break
        v.scale_(3.0)
    return t + 0


def transposed_then_written_after_a_break(x):
    t = x * 2
    v = t.t()
    if v.sum() > -100:  # a graph break
        t.add_(paddle.ones_like(t))
    return v * 1


def split_then_written_after_a_break(x):
    t = x * 2
    first, second = paddle.split(t, [1, 2], axis=1)
    if first.sum() > -100:  # a graph break
        t.add_(paddle.ones_like(t))
    return first * 1, second * 1


def unbound_then_written_after_a_break(x):
    t = x * 2
    rows = t.unbind(0)
    if rows[0].sum() > -100:  # a graph break
        t.scale_(3.0)
    return rows[1] * 1


@pytest.mark.parametrize("fn", [written_after_a_break_through_the_base, written_after_a_break_through_the_view,
                                transposed_then_written_after_a_break, split_then_written_after_a_break,
                                unbound_then_written_after_a_break], ids=lambda f: f.__name__)
def test_an_in_place_write_after_a_break_shows_through_a_view_of_a_computed_tensor(fn):
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    want = fn(x)
    jit = sot.to_static(fresh(fn))
    for _ in range(2):
        assert_same_result(jit(x), want)


def split_into_views(x):
    return tuple(paddle.split(x, 3, axis=1))


def test_the_parts_of_a_split_input_share_its_memory_as_in_eager():
    want_seen, want_x = _after_writes(split_into_views)
    jit = sot.to_static(fresh(split_into_views))
    for _ in range(2):
        got_seen, got_x = _after_writes(jit)
        for g, w in zip(got_seen, want_seen):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(got_x, want_x)


_VIEW_EXPRESSIONS = ["t.reshape([12])", "t.view([4, 3])", "paddle.flatten(t)", "t[1]", "t[:, 1:3]", "t[::2]",
                     "t.transpose([1, 0])", "paddle.moveaxis(t, 0, 1)", "t.t()", "t.T", "t.unsqueeze(0)",
                     "paddle.flip(t, [0])", "t.detach()", "paddle.split(t, 2, axis=1)[1]", "t.unbind(0)[2]",
                     "paddle.unstack(t, axis=1)[0]", "paddle.chunk(t, 3, axis=0)[0]"]
_WRITES = ["t.add_(paddle.ones_like(t))", "t[0, 0] = 50.0", "v.scale_(2.0)", "v[...] = 7.0"]


@pytest.mark.parametrize("write", _WRITES)
@pytest.mark.parametrize("view", _VIEW_EXPRESSIONS)
def test_a_write_after_a_break_reaches_every_kind_of_view_as_in_eager(view, write):
    """Eager's view and its base share memory across a data-dependent branch: a write through one after
    it shows through the other, whichever op made the view."""
    namespace = {"paddle": paddle}
    exec(f"def fn(x):\n    t = x * 2\n    v = {view}\n    if v.sum() > -1000:\n        pass\n"  # noqa: S102
         f"    {write}\n    return t * 1, v * 1\n", namespace)
    fn = namespace["fn"]

    def run(f):
        return f(paddle.to_tensor(np.arange(12, dtype="float32").reshape(3, 4)))

    want = run(fn)
    jit = sot.to_static(fresh(fn))
    for _ in range(2):
        assert_same_result(run(jit), want)
