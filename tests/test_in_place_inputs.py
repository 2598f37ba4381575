"""In-place updates of tensors (`x.add_(y)`, `x += 1`, `x[k] = v`) in a translated function.

Where no op of the frame has read the input before (so no view of it inside the graph could miss
the update) and no gradient is involved, the update is captured: the graph computes the new value,
later reads see it, and it is written into the caller's tensor after the graph, as eager's update
writes into its buffer. Otherwise the frame runs eagerly (SOT-S001), so eager's semantics hold.
Each test compares the JIT with eager code on copies of the same inputs.
"""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import assert_same_result, jit_of, rand


def updates_then_reads(x, y):
    x.add_(y)
    x += 1
    return x * 2


def updates_and_returns_the_input(x):
    x.scale_(2.0)
    return x


def reads_then_updates(x):
    y = x.reshape([3])  # a view of x in eager, which sees the update; a compiled copy would not
    x.add_(1.0)
    return x + y


def computes_then_updates(x):
    y = x * 3  # an operator makes a new tensor (never a view): the update can still be captured
    x.add_(1.0)
    return x + y


def updates_then_breaks(x):
    x.add_(1.0)
    print("mid", x.numpy())  # a break: the write-back is made before the print runs
    return x * 2


def copies(*tensors):
    return [paddle.to_tensor(t.numpy(), stop_gradient=t.stop_gradient) for t in tensors]


@pytest.mark.parametrize("fn, n_args", [(updates_then_reads, 2), (updates_and_returns_the_input, 1),
                                        (computes_then_updates, 1)])
def test_an_input_updated_in_place_is_captured_and_written_back(fn, n_args):
    args = [rand(3) for _ in range(n_args)]
    jit = jit_of(fn)
    eager_args, jit_args = copies(*args), copies(*args)
    for _ in range(3):  # a translation, then cache hits that update again
        want = fn(*eager_args)
        report = sot.explain(jit, *jit_args)
        assert_same_result(report.result, want)
        for e, j in zip(eager_args, jit_args):
            np.testing.assert_array_equal(j.numpy(), e.numpy())
        assert report.fallbacks == [] and report.graph_count == 1 and report.break_count == 0
    if fn is updates_and_returns_the_input:
        assert jit(jit_args[0]) is jit_args[0]  # the input itself, as eager returns it


def test_the_write_back_is_made_before_a_break_runs(capsys):
    x = rand(3)
    (ex,), (jx,) = copies(x), copies(x)
    want = updates_then_breaks(ex)
    eager_out = capsys.readouterr().out
    report = sot.explain(jit_of(updates_then_breaks), jx)
    assert capsys.readouterr().out == eager_out
    assert_same_result(report.result, want)
    np.testing.assert_array_equal(jx.numpy(), ex.numpy())
    assert report.fallbacks == [] and [b.code for b in report.breaks] == ["SOT-B002", "SOT-B003"]  # .numpy(), print(array)


def test_an_input_read_before_its_update_runs_the_frame_eagerly():
    x = rand(3)
    (ex,), (jx,) = copies(x), copies(x)
    jit = jit_of(reads_then_updates)
    assert_same_result(jit(jx), reads_then_updates(ex))
    np.testing.assert_array_equal(jx.numpy(), ex.numpy())
    (fallback,) = jit.sot_translator.fallbacks
    assert fallback.code == "SOT-S001"


def test_an_input_that_requires_grad_raises_eagers_error():
    x = rand(3, grad=True)
    with pytest.raises(ValueError) as eager:
        updates_and_returns_the_input(x)
    with pytest.raises(ValueError) as jit:
        jit_of(updates_and_returns_the_input)(x)
    assert str(jit.value) == str(eager.value)


def assigns_items(x):
    y = x * 2
    y[0] = 0.0  # item assignment on a tensor the frame made: recorded as paddle.static.setitem
    y[1:, 0] = x[1:, 1]
    return y + 1


def assigns_into_the_input(x):
    x[0, 0] = 5
    return x * 2


def test_item_assignment_on_tensors_is_captured_with_eager_values_and_gradients():
    x = rand(3, 3)
    report = sot.explain(jit_of(assigns_items), x)
    assert_same_result(report.result, assigns_items(x))
    assert report.graph_count == 1 and report.breaks == [] and report.fallbacks == []
    ex, jx = copies(x)[0], copies(x)[0]
    report = sot.explain(jit_of(assigns_into_the_input), jx)
    assert_same_result(report.result, assigns_into_the_input(ex))
    np.testing.assert_array_equal(jx.numpy(), ex.numpy())  # written back into the caller's tensor
    assert report.fallbacks == []
    we = rand(3, 3, grad=True)
    wj = paddle.to_tensor(we.numpy(), stop_gradient=False)
    (assigns_items(we) * we).sum().backward()
    (jit_of(assigns_items)(wj) * wj).sum().backward()
    np.testing.assert_allclose(wj.grad.numpy(), we.grad.numpy(), rtol=1e-6)


def test_static_setitem_returns_a_new_tensor_as_eager_item_assignment_would_write():
    x = rand(3, 4)
    y = paddle.to_tensor(x.numpy())
    y[1:, ::2] = 7.0
    got = paddle.static.setitem(x, (slice(1, None), slice(None, None, 2)), 7.0)
    np.testing.assert_array_equal(got.numpy(), y.numpy())
    assert not np.array_equal(x.numpy(), y.numpy())  # x itself unchanged
