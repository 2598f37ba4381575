"""Side effects recorded during simulation and replayed after the graph: the caller sees what eager
execution leaves behind (sot.testing.assert_same compares inputs and globals after the call), and
the frame is still captured whole."""
import numpy as np
import pytest

import sot
from runtime import nn
from sot.testing import assert_same
from sot_helpers import assert_same_result, events, jit_of, rand, translators

STEPS = 0
LAST = None


class Tracker:
    def __init__(self):
        self.calls = 0
        self.history = []


def counts_calls(x, tracker):
    tracker.calls += 1
    tracker.history.append(tracker.calls)
    return x * tracker.calls


def keeps_globals(x):
    global STEPS, LAST
    STEPS += 1
    LAST = x.sum()
    return x + STEPS


def fills_containers(x, items, table):
    items.append(x * 2)
    items.extend([1, 2])
    items[0] = items[0] + 1
    table["sum"] = x.sum()
    table["n"] = len(items)
    return items[0] - x


class Counter(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.seen = 0

    def forward(self, x):
        self.seen = self.seen + x.shape[0]
        return self.fc(x)


def runs_counter(model, x):
    return model(x)


def counts_calls_through_setattr(x, tracker):
    setattr(tracker, "calls", tracker.calls + 1)
    setattr(tracker, "last", x * tracker.calls)
    return tracker.last + 1


@pytest.mark.parametrize("fn, make", [
    (counts_calls, lambda: (rand(2), Tracker())),
    (counts_calls_through_setattr, lambda: (rand(2), Tracker())),
    (keeps_globals, lambda: (rand(2),)),
    (fills_containers, lambda: (rand(2), [5], {"old": 1})),
    (runs_counter, lambda: (Counter(), rand(4, 3))),
], ids=["attributes", "setattr", "globals", "containers", "layer_attribute"])
def test_writes_are_replayed_and_the_frame_is_captured(fn, make):
    args = make()
    assert_same(fn, *args)  # results, inputs after the call, globals
    jit = jit_of(fn)
    jit(*make())
    assert events(jit) == [] and jit.sot_translator.translations == 1


def test_replayed_writes_happen_on_every_cache_hit():
    tracker, x = Tracker(), rand(2)
    jit = jit_of(counts_calls)
    for n in range(1, 4):
        np.testing.assert_array_equal(jit(x, tracker).numpy(), (x * n).numpy())
    assert tracker.calls == 3 and tracker.history == [1, 2, 3]


class Slotted:
    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


def deletes(x, obj):
    del obj.calls
    return x + 1


def writes_slot(x, obj):
    obj.value = 1
    return x + 1


@pytest.mark.parametrize("fn, obj", [(deletes, Tracker), (writes_slot, Slotted)], ids=["delete", "slot"])
def test_writes_the_replay_cannot_make_run_for_real(fn, obj):
    eager_obj, jit_obj = obj(), obj()
    x = rand(2)
    want = fn(x, eager_obj)
    jit = jit_of(fn)
    np.testing.assert_array_equal(jit(x, jit_obj).numpy(), want.numpy())
    assert [code for code, _, _ in events(jit)] == ["SOT-S001"]
    assert hasattr(jit_obj, "calls") == hasattr(eager_obj, "calls")
    assert getattr(jit_obj, "value", None) == getattr(eager_obj, "value", None)


def logs_and_prints(x, losses, seen, tracker):
    losses.append(x.sum())  # only appended: replayed as an append
    seen.append(len(seen))  # read: written back whole
    tracker.last = x * 2
    print("seen", seen)
    losses.extend([x.mean(), 1])
    return x + 1


def test_appends_and_refills_replay_in_eager_order_on_every_hit(capsys):
    jit = jit_of(logs_and_prints)
    eager_losses, jit_losses = [], []
    for _ in range(3):
        x = rand(2)
        eager_tracker, jit_tracker = Tracker(), Tracker()
        want = logs_and_prints(x, eager_losses, [0], eager_tracker)
        eager_text = capsys.readouterr().out
        got = jit(x, jit_losses, [0], jit_tracker)
        assert capsys.readouterr().out == eager_text
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(jit_tracker.last.numpy(), eager_tracker.last.numpy())
        assert len(jit_losses) == len(eager_losses)
        for j, e in zip(jit_losses, eager_losses):
            np.testing.assert_array_equal(np.asarray(j.numpy() if hasattr(j, "numpy") else j),
                                          np.asarray(e.numpy() if hasattr(e, "numpy") else e))
    assert events(jit) == [] and jit.sot_translator.translations == 1


def _make_counter():
    count = 0

    def bump(x):
        nonlocal count  # a cell of a real function: the write is replayed into it after the graph
        count += 1
        return x * count

    def read():
        return count

    return bump, read


def bumps_twice(x, bump):
    return bump(x) + bump(x)


def test_a_closure_cell_written_by_an_inlined_callee_is_written_back():
    eager_bump, eager_read = _make_counter()
    jit_bump, jit_read = _make_counter()
    jit = jit_of(bumps_twice)
    x = rand(3)
    for _ in range(4):
        report = sot.explain(jit, x, jit_bump)
        assert_same_result(report.result, bumps_twice(x, eager_bump))
        assert jit_read() == eager_read() and report.fallbacks == [] and report.break_count == 0
    assert sum(t.translations for t in translators(jit)) <= 2  # the cell's number becomes dynamic


def sets_a_name_that_is_no_string(x, obj):
    y = x + 1
    setattr(obj, 3, y)
    return y


def test_setattr_with_a_name_that_is_no_string_raises_as_eagerly():
    x = rand(2)
    with pytest.raises(TypeError) as eager_error:
        sets_a_name_that_is_no_string(x, Tracker())
    jit, obj = jit_of(sets_a_name_that_is_no_string), Tracker()
    with pytest.raises(TypeError) as jit_error:
        jit(x, obj)
    assert str(jit_error.value) == str(eager_error.value)
    assert vars(obj) == vars(Tracker())


class WeightNormed(nn.Layer):
    """Two weight-normed convolutions, with a forward of its own (translators are per code object)."""

    def __init__(self):
        super().__init__()
        self.first = nn.utils.weight_norm(nn.Conv1D(2, 4, 3, padding=1))
        self.second = nn.utils.weight_norm(nn.Conv1D(4, 3, 3, padding=1))

    def forward(self, x):
        return self.second(nn.functional.relu(self.first(x)))


def test_a_weight_normed_model_is_one_graph_and_trains_as_eagerly():
    """weight_norm's pre-hook sets the layer's weight with setattr on every call: captured as an attribute
    write, not a break per layer."""
    import runtime as paddle

    def make():
        paddle.seed(0)
        return WeightNormed()

    eager, compiled = make(), make()
    jit = sot.to_static(compiled)
    x = rand(2, 2, 8)
    for _ in range(2):
        want, got = eager(x), jit(x)
        assert_same_result(got, want)
        want.sum().backward()
        got.sum().backward()
    for (name, a), (_, b) in zip(eager.named_parameters(), compiled.named_parameters()):
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy(), err_msg=name)
    np.testing.assert_array_equal(compiled.first.weight.numpy(), eager.first.weight.numpy())
    assert events(jit.forward) == [] and jit.forward.sot_translator.translations == 1
