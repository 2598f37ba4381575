"""Graph breaks inside loops: each iteration's break resumes in the same resume function, and a
loop that would break many (or an unknown number of) times runs eagerly from the break (SOT-C002).

A break in a loop body continues the loop in a resume function, which breaks again in the next
iteration and calls the next resume function from inside the first: one nested Python frame per
iteration. Short loops stay compiled; long ones would overflow the stack, so their rest runs as
plain Python. Every test compares with eager code.
"""
import numpy as np
import pytest

import runtime as paddle
import sot
from runtime import nn
from sot_helpers import assert_same_result, jit_of, rand, translators


def loop_with_a_branch(x, items):
    for w in items:
        if x.sum() > 1e9:  # a data-dependent branch in every iteration (never taken)
            x = x - 1
        x = x * w
    return x + 1


def test_a_long_loop_that_breaks_in_every_iteration_runs_eagerly_from_the_break():
    x, items = rand(3), [1.001] * 3000  # far deeper than the recursion limit if each iteration nested a frame
    jit = jit_of(loop_with_a_branch)
    for _ in range(2):
        report = sot.explain(jit, x, items)
        np.testing.assert_allclose(report.result.numpy(), loop_with_a_branch(x, items).numpy(), rtol=1e-6)
        (fallback,) = report.fallbacks
        assert fallback.code == "SOT-C002" and "3000 iterations left" in fallback.reason
        assert report.break_count == 1


def test_a_short_loop_stays_compiled_and_reuses_one_resume_function_per_entry_point():
    x, items = rand(3), [2.0, 2.0, 2.0, 2.0]
    jit = jit_of(loop_with_a_branch)
    for translations in (4, 0):
        report = sot.explain(jit, x, items)
        assert_same_result(report.result, loop_with_a_branch(x, items))
        assert report.fallbacks == [] and report.translations == translations
        # the if's break in the frame, the next-item break (the resumed loop's iterator is a run-time
        # value) and the if's break in the resumed body: every later iteration reuses these entries
        assert [b.code for b in report.breaks] == ["SOT-B001", "SOT-B002", "SOT-B001"]
    # one resume function per entry point (the if's two branches, the loop's next item, its exit),
    # not one per iteration
    assert len(translators(jit)) == 5


def test_the_limit_is_sot_max_loop_breaks(monkeypatch):
    x, items = rand(3), [2.0, 2.0, 2.0, 2.0]
    monkeypatch.setenv("SOT_MAX_LOOP_BREAKS", "2")
    jit = jit_of(loop_with_a_branch)
    report = sot.explain(jit, x, items)
    assert_same_result(report.result, loop_with_a_branch(x, items))
    assert [f.code for f in report.fallbacks] == ["SOT-C002"] and "SOT_MAX_LOOP_BREAKS=2" in report.fallbacks[0].reason
    monkeypatch.setenv("SOT_MAX_LOOP_BREAKS", "-1")
    with pytest.raises(ValueError, match="SOT_MAX_LOOP_BREAKS"):
        sot.config.max_loop_breaks()


def tensor_while(x):
    steps = 0
    while x.sum() < 10:  # breaks at the condition in every iteration: an unknown number of times
        x = x * 2
        steps += 1
    return x, steps


def test_a_while_loop_on_a_tensor_condition_runs_eagerly_after_its_first_break():
    x = paddle.to_tensor(np.array([1e-3, 2e-3], "float32"))  # 12 iterations
    jit = jit_of(tensor_while)
    report = sot.explain(jit, x)
    assert_same_result(report.result, tensor_while(x))
    (fallback,) = report.fallbacks
    assert fallback.code == "SOT-C002" and "a while loop" in fallback.reason


class Noisy(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 10:  # a break inside each layer of the loop below
            h = h * 0
        return h + x


class Stack(nn.Layer):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.LayerList([Noisy() for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x.mean()


@pytest.mark.parametrize("n, eager_rest", [(3, False), (40, True)])
def test_a_loop_over_layers_that_break_is_compiled_when_short(n, eager_rest):
    paddle.seed(0)
    model = Stack(n)
    x = rand(2, 3)
    want = model(x)
    report = sot.explain(sot.to_static(model).forward, x)
    np.testing.assert_allclose(report.result.numpy(), want.numpy(), rtol=1e-5)
    assert [f.code for f in report.fallbacks] == (["SOT-C002"] if eager_rest else [])
