"""Graph breaks inside loops.

A break in a loop body continues the loop in a resume function, which breaks again in the next
iteration and calls the next resume function from inside the first: one nested Python call per
iteration, with one resume function per entry point (reused by every iteration). That is kept for
short loops (at most SOT_MAX_LOOP_BREAKS iterations left). A longer loop (or a `while`, whose
count is unknown) of the translated frame runs for real in the generated code, calling its body
as a translated function per iteration (`sot.opcode_executor.loops`, `sot.codegen.loop_body`);
where that cannot be built (a local first assigned in the body is read after the loop), the rest
of the frame runs eagerly from the break (SOT-C002). Every test compares with eager code.
"""
import sys

import numpy as np
import pytest

import runtime as paddle
import sot
from runtime import nn
from sot.codegen.loop_body import ITEM
from sot_helpers import assert_same_result, jit_of, rand, translators


def loop_with_a_branch(x, items):
    for w in items:
        if x.sum() > 1e9:  # a data-dependent branch in every iteration (never taken)
            x = x - 1
        x = x * w
    return x + 1


def test_a_long_loop_that_breaks_in_every_iteration_runs_for_real_calling_its_compiled_body():
    x, items = rand(3), [1.001] * 3000  # far deeper than the recursion limit if each iteration nested a call
    jit = jit_of(loop_with_a_branch)
    for _ in range(2):
        report = sot.explain(jit, x, items)
        np.testing.assert_allclose(report.result.numpy(), loop_with_a_branch(x, items).numpy(), rtol=1e-6)
        assert report.fallbacks == []
        loop_break, body_break = report.breaks  # the frame at its loop; the body function at the if
        assert loop_break.code == body_break.code == "SOT-B001" and loop_break.where == body_break.where
        assert "3000 iterations left: the loop runs for real" in loop_break.detail
    codes = {t.code for t in translators(jit)}
    assert {c.co_name for c in codes} == {"loop_with_a_branch"}  # the body too: frames name the user's function
    assert len(codes) <= 6  # not one per iteration


def reads_the_loop_variable_after(x, items):
    for w in items:
        if x.sum() > 1e9:
            x = x - 1
        x = x * w
    return x * w  # `w` is assigned only in the body and read after it: no body function


def test_a_long_loop_whose_body_cannot_be_a_function_runs_eagerly_from_the_break():
    x, items = rand(3), [1.001] * 100
    report = sot.explain(jit_of(reads_the_loop_variable_after), x, items)
    np.testing.assert_allclose(report.result.numpy(), reads_the_loop_variable_after(x, items).numpy(), rtol=1e-6)
    (fallback,) = report.fallbacks
    assert fallback.code == "SOT-C002" and "100 iterations left" in fallback.reason


def exits_early(x, items, stop):
    count = 0
    for w in items:
        if x.sum() > 1e9:  # the break that makes the loop run for real
            x = x - 1
        if w == stop:
            break
        if w < 0:
            continue
        if w == 7:
            return x * 7, count
        x = x + w
        count += 1
    else:
        count = -count
    return x, count


@pytest.mark.parametrize("items, stop", [([1, -2, 3] * 20, 99),  # runs out: the else block
                                         ([1, 2, 3] * 20 + [5, 1], 5),  # break
                                         ([1, -2] * 20 + [7, 1], 99)])  # return inside the body
def test_break_continue_else_and_return_in_a_loop_run_for_real_are_eager(items, stop):
    x = rand(3)
    jit = jit_of(exits_early)
    for _ in range(2):
        report = sot.explain(jit, x, items, stop)
        assert_same_result(report.result, exits_early(x, items, stop))
        assert report.fallbacks == [] and "the loop runs for real" in report.breaks[0].detail


def nested(x, rows):
    for row in rows:
        for w in row:
            if x.sum() > 1e9:
                x = x - 1
            x = x * w
    return x


def test_nested_long_loops_run_for_real():
    x, rows = rand(3), [[1.001] * 40] * 40
    report = sot.explain(jit_of(nested), x, rows)
    np.testing.assert_allclose(report.result.numpy(), nested(x, rows).numpy(), rtol=1e-5)
    assert report.fallbacks == []


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
    report = sot.explain(jit_of(loop_with_a_branch), x, items)
    assert_same_result(report.result, loop_with_a_branch(x, items))
    assert "SOT_MAX_LOOP_BREAKS" not in str(report.fallbacks)
    assert "4 iterations left: the loop runs for real" in report.breaks[0].detail
    report = sot.explain(jit_of(reads_the_loop_variable_after), x, items)
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


@pytest.mark.parametrize("start", [1e-3, 1e-30])  # 12 and 106 iterations
def test_a_while_loop_on_a_tensor_condition_runs_for_real_with_its_body_and_test_compiled(start):
    x = paddle.to_tensor(np.array([start, 2 * start], "float32"))
    jit = jit_of(tensor_while)
    for _ in range(2):
        report = sot.explain(jit, x)
        assert_same_result(report.result, tensor_while(x))
        assert report.fallbacks == [] and {b.code for b in report.breaks} == {"SOT-B001"}
        assert any("a while loop" in b.detail and "the loop runs for real" in b.detail for b in report.breaks)


def while_true_with_break(x, limit):
    steps = 0
    while True:
        if x.sum() > 100:  # a tensor condition: the break (3.12+ copy the code after the loop here)
            break
        x = x + 1
        steps += 1
        if steps >= limit:
            return x * 0, steps
    return x, steps


@pytest.mark.parametrize("limit", [5, 1000])
def test_a_while_true_loop_left_by_break_or_return_runs_for_real(limit):
    x = rand(3)
    jit = jit_of(while_true_with_break)
    report = sot.explain(jit, x, limit)
    assert_same_result(report.result, while_true_with_break(x, limit))
    assert report.fallbacks == []


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


@pytest.mark.parametrize("n", [3, 40])
def test_a_loop_over_layers_that_break_stays_compiled(n):
    paddle.seed(0)
    model = Stack(n)
    x = rand(2, 3)
    want = model(x)
    report = sot.explain(sot.to_static(model).forward, x)
    np.testing.assert_allclose(report.result.numpy(), want.numpy(), rtol=1e-5)
    assert report.fallbacks == []
    assert ("the loop runs for real" in report.breaks[0].detail) == (n > 32)


class SumStack(Stack):
    """Its own forward code: a loop body over Layers keeps one translation per Layer (parameters are
    bound by identity), at most 64 per code object, shared by every instance."""

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return (x * x).sum()


def test_gradients_through_a_loop_run_for_real_equal_eager():
    paddle.seed(1)
    eager_model, jit_model = SumStack(36), SumStack(36)
    jit_model.set_state_dict(eager_model.state_dict())
    x = rand(2, 3)
    eager_model(x).backward()
    sot.to_static(jit_model)(x).backward()
    for a, b in zip(eager_model.parameters(), jit_model.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-7)


def long_pure_loop(x, n):
    for i in range(n):  # no break: unrolled up to SOT_MAX_UNROLL iterations, then kept as a loop
        x = x * 1.001 + i
    return x


def test_a_loop_longer_than_the_unroll_limit_runs_as_a_loop_with_its_body_compiled():
    x = rand(3)
    jit = jit_of(long_pure_loop)
    for n in (200, 300):
        report = sot.explain(jit, x, n)
        np.testing.assert_allclose(report.result.numpy(), long_pure_loop(x, n).numpy(), rtol=1e-5)
        assert report.fallbacks == [] and [b.code for b in report.breaks] == ["SOT-C003"]
        assert "the loop runs for real" in report.breaks[0].detail
    body = next(t for t in translators(jit) if t.code.co_varnames[:1] == (ITEM,))  # its first parameter: the item
    assert body.translations <= 2  # the item `i` becomes a dynamic number after its first change


def test_a_short_loop_is_unrolled_whole():
    x = rand(3)
    report = sot.explain(jit_of(long_pure_loop), x, 10)
    assert_same_result(report.result, long_pure_loop(x, 10))
    assert report.breaks == [] and report.graph_count == 1


def two_loops(x):
    for i in range(40):  # `i` is assigned again by the next loop before it is read: a body temporary
        if x.sum() > 1e9:
            x = x - 1
        x = x + i * 0.01
    for i in range(3):
        x = x * 0.5 + i
    return x


def test_a_loop_variable_assigned_again_after_the_loop_is_a_body_temporary():
    x = rand(3)
    report = sot.explain(jit_of(two_loops), x)
    np.testing.assert_allclose(report.result.numpy(), two_loops(x).numpy(), rtol=1e-6)
    assert report.fallbacks == [] and "the loop runs for real" in report.breaks[0].detail


def comprehension_that_breaks(items):
    return [t * 2 if t.sum() > 0 else t - 1 for t in items]


@pytest.mark.parametrize("n", [3, 40])
def test_a_comprehension_whose_body_breaks_gives_eagers_list(n):
    # 3.12+ inline comprehensions: their loop adds to the result under the iterator, which a body
    # function cannot reach, so a long one runs eagerly from the break (SOT-C002)
    items = [rand(2) - 0.5 for _ in range(n)]
    jit = jit_of(comprehension_that_breaks)
    for _ in range(2):
        assert_same_result(jit(items), comprehension_that_breaks(items))


def _translations(fn):
    """Translations of a to_static function and of every resume or body function its breaks made."""
    return sum(t.translations for t in translators(fn))


def carries_an_int(x, n):
    s = 0
    for i in range(n):
        s += i % 3 + i // 4  # a Python int carried across iterations: a dynamic number of the body
    return x + s


def carries_a_float(x, n):
    total = 0.5
    for _ in range(n):
        total = total * 0.999 + 0.25
    return x * total


def _compiled_at_lengths(fn) -> list:
    """A fresh to_static of `fn(x, n)` per loop length n of 70 and 200, each called twice against eager."""
    jits = []
    for n in (70, 200):
        jit = jit_of(fn)
        for _ in range(2):
            x = rand(3)
            assert_same_result(jit(x, n), fn(x, n))
        jits.append(jit)
    return jits


@pytest.mark.parametrize("fn", [carries_an_int, carries_a_float])
def test_a_long_loop_carrying_a_number_translates_as_often_whatever_its_length(fn, recwarn):
    jits = _compiled_at_lengths(fn)
    assert all(translators(jit)[0].fallbacks == [] for jit in jits)
    counts = [_translations(jit) for jit in jits]
    assert counts[0] == counts[1] <= 3  # the frame, the loop's body (once: its numbers are dynamic), the exit
    assert not [w for w in recwarn if "cache_size_limit" in str(w.message)]


def decides_on_the_item(x, n):
    s = 0
    for i in range(n):
        if i % 2:  # the item's value decides: a translation per item, were the item kept static
            s += 1
        x = x + 1
    return x * s


def test_a_long_loop_deciding_on_its_item_runs_its_body_eagerly_instead_of_translating_per_item(recwarn):
    jits = _compiled_at_lengths(decides_on_the_item)
    for jit in jits:
        body_fallbacks = [f for t in translators(jit)[1:] for f in t.fallbacks]
        assert [f.code for f in body_fallbacks] == ["SOT-C003"] and "item" in body_fallbacks[0].reason
    counts = [_translations(jit) for jit in jits]
    assert counts[0] == counts[1] <= 3
    assert not [w for w in recwarn if "cache_size_limit" in str(w.message)]


class Linears(nn.Layer):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(3, 3) for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@pytest.mark.parametrize("n", [70, 100])
def test_a_loop_over_more_layers_than_the_unroll_limit_is_unrolled_whole_in_one_translation(n, recwarn):
    paddle.seed(2)
    model = Linears(n)
    x = rand(2, 3)
    want = model(x)
    jit = sot.to_static(model)
    for _ in range(2):
        np.testing.assert_allclose(jit(x).numpy(), want.numpy(), rtol=1e-5)
    assert _translations(jit.forward) == 1 and translators(jit.forward)[0].breaks == []
    assert not [w for w in recwarn if "cache_size_limit" in str(w.message)]


def names_its_frame_in_a_long_loop(x, n):
    names = set()
    for _ in range(n):
        x = x + 1
        names.add((sys._getframe().f_code.co_name, sys._getframe().f_code.co_qualname))
    return x, names


def test_a_loop_run_for_real_shows_the_functions_own_frame_name():
    x = rand(3)
    assert_same_result(jit_of(names_its_frame_in_a_long_loop)(x, 70), names_its_frame_in_a_long_loop(x, 70))


class Decoder(nn.Layer):
    """PaddleSeg's decoder loop: `for up, skip in zip(layers, reversed(skips))`, and an enumerate."""

    def __init__(self):
        super().__init__()
        self.ups = nn.LayerList([nn.Linear(2, 2) for _ in range(3)])

    def forward(self, x, skips):
        for up, skip in zip(self.ups, reversed(skips)):
            x = up(x) + skip
            if x.sum() > 0:  # a break with the zip live: made again over its sources as they are
                x = x * 0.5
        for i, up in enumerate(self.ups, 1):
            x = up(x) * i
            if x.sum() > 0:
                x = x - 1
        return x


def strict_zip_loop(x, layers, skips):
    for up, skip in zip(layers, reversed(skips), strict=True):  # made again strict at the break
        x = up(x) + skip
        if x.sum() > 0:
            x = x * 0.5
    return x


@pytest.mark.parametrize("strict", [False, True])
def test_a_break_inside_a_loop_over_zip_or_enumerate_resumes_the_loop(strict):
    """The zip and enumerate objects live at the break are made again over what is left of their sources
    (before, the frame ran eagerly: "rebuilding an iterator")."""
    model = Decoder()
    x, skips = paddle.to_tensor(np.array([[0.5, -1.0]], "float32")), [rand(1, 2) for _ in range(3)]
    fn, args = (strict_zip_loop, (x, model.ups, skips)) if strict else (model.forward, (x, skips))
    want = fn(*args)
    jit = jit_of(strict_zip_loop) if strict else sot.to_static(model).forward
    report = sot.explain(jit, *args)
    assert_same_result(report.result, want)
    assert report.fallbacks == [] and report.break_count >= 3
