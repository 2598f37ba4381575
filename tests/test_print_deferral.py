"""Print deferral: a `print` whose text only the graph's values decide is recorded like the other
side effects and made right after its subgraph runs, so it does not break the graph.

Every test runs the function eagerly and under the JIT (translation, then a cache hit) and asserts
the same result and exactly the same printed text (capsys), then how many graphs and breaks ran:
deferred prints cost no break; the prints that cannot be shown safe still break (SOT-B003).
"""
import contextlib
import sys

import numpy as np
import pytest

import runtime as paddle
import sot
from runtime import nn
from sot import config
from sot_helpers import assert_same_result, jit_of, rand


def same_as_eager(capsys, fn, *args, calls=2, **options):
    """Eager's result and text, then the JIT's on each of `calls` calls (the translation, then hits):
    asserted equal; returns the explain reports and eager's text."""
    want = fn(*args)
    eager_out = capsys.readouterr().out
    jit = jit_of(fn, **options)
    reports = []
    for _ in range(calls):
        report = sot.explain(jit, *args)
        assert capsys.readouterr().out == eager_out
        assert_same_result(report.result, want)
        assert report.fallbacks == []
        reports.append(report)
    return reports, eager_out


SCALE = np.float32(0.25)


def prints_values(x):
    y = paddle.tanh(x) * 2
    print("y =", y, [y.shape, {"n": 3, "x": x}], (1.5, None, SCALE), y.dtype, sep=" | ", end=";\n")
    return y + 1


def test_tensors_constants_and_containers_print_after_one_graph_without_a_break(capsys):
    reports, out = same_as_eager(capsys, prints_values, rand(2, 3))
    assert out.count("Tensor(shape=") == 2 and out.startswith("y = | Tensor(") and out.endswith(";\n")
    for report in reports:
        assert (report.graph_count, report.break_count) == (1, 0)


def updates_after_printing(x):
    y = x * 2
    print("first", y)
    y += 1
    print("second", y)
    y *= x
    return y


def test_a_tensor_updated_in_place_after_the_print_prints_its_value_at_the_print(capsys):
    x = paddle.to_tensor(np.array([1.0, 2.0], "float32"))
    reports, out = same_as_eager(capsys, updates_after_printing, x)
    assert "[2., 4.]" in out and "[3., 5.]" in out  # the values at each print, not the final [3., 10.]
    assert [(r.graph_count, r.break_count) for r in reports] == [(1, 0), (1, 0)]


def prints_around_breaks(x):
    print("start", x)
    y = x * 2
    print("before the if", y)
    if y.sum() > 0:
        y = y - 1
    else:
        y = y + 1
    print("after the if", y)
    print("to a file", y.shape, file=sys.stdout)  # cannot be deferred: runs for real between two graphs
    print("end", y * 3)
    return y


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_deferred_prints_come_before_the_output_of_the_instruction_the_graph_breaks_at(sign, capsys):
    x = paddle.to_tensor(np.array([sign, 2 * sign], "float32"))
    reports, out = same_as_eager(capsys, prints_around_breaks, x)
    assert [line.split(" ")[0] for line in out.splitlines() if not line.startswith(" ")] == [
        "start", "before", "after", "to", "end"]
    line = prints_around_breaks.__code__.co_firstlineno
    for report in reports:
        assert [(b.code, int(b.where.rsplit(":", 1)[1]) - line) for b in report.breaks] == [
            ("SOT-B001", 4), ("SOT-B003", 9)]
        assert report.graph_count == 3
        # each graph's prints, listed where they are made after it; the one to a file ran for real
        assert [int(w.rsplit(":", 1)[1]) - line for w in report.deferred_prints] == [1, 3, 8, 10]


def inner(t):
    print("inner", t)
    return t * 2


def middle(t):
    print("middle before")
    u = inner(t + 1)
    print("middle after", u)
    return u


def outer(x):
    print("outer", x)
    return middle(x) - 1


def test_prints_in_inlined_callees_are_deferred_in_eager_order(capsys):
    reports, out = same_as_eager(capsys, outer, rand(2))
    assert [line.split(" ")[0] for line in out.splitlines() if not line.startswith(" ")] == [
        "outer", "middle", "inner", "middle"]
    assert [(r.graph_count, r.break_count) for r in reports] == [(1, 0), (1, 0)]


def prints_then_decides(t):
    print("callee", t)
    if t.sum() > 0:
        return t * 2
    return t - 1


def calls_a_callee_that_breaks_after_printing(x):
    y = x * 3
    print("caller", y)
    return prints_then_decides(y) + 1


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_callee_that_prints_then_breaks_prints_once_and_in_order(sign, capsys):
    x = paddle.to_tensor(np.array([sign, sign], "float32"))
    reports, out = same_as_eager(capsys, calls_a_callee_that_breaks_after_printing, x)
    assert out.count("callee") == 1 and out.index("caller") < out.index("callee")
    for report in reports:
        assert {b.code for b in report.breaks} == {"SOT-B001"}  # the `if`, never the print


def loops(x):
    for i in range(3):  # unrolled: three deferred prints in one graph
        x = x * 2
        print("step", i, x)
    for _ in range(2):  # a condition on a tensor: a break per iteration, the prints deferred
        if x.sum() < 20:
            x = x + 1
            print("grow", x.sum())
    return x


def test_prints_in_unrolled_and_breaking_loops_keep_eager_text_and_order(capsys):
    reports, out = same_as_eager(capsys, loops, paddle.ones([2]))
    assert out.count("step") == 3 and out.count("grow") == 2
    for report in reports:  # the if, and the resumed loop's next item (a run-time iterator): never a print
        assert {b.code for b in report.breaks} == {"SOT-B001", "SOT-B002"}


class Head(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        h = self.fc(x)
        print("hidden", h, "input doubled", x * 2, "weight", self.fc.weight)
        return h.sum()


@pytest.mark.parametrize("grad", [True, False])
def test_printed_tensors_show_eager_stop_gradient_with_parameters_and_under_no_grad(grad, capsys):
    paddle.seed(0)
    model = Head()
    x = rand(4, 3)
    with contextlib.nullcontext() if grad else paddle.no_grad():
        want = model(x)
        eager_out = capsys.readouterr().out
        report = sot.explain(jit_of(Head.forward), model, x)
        assert capsys.readouterr().out == eager_out
    assert_same_result(report.result, want)
    assert (report.graph_count, report.break_count) == (1, 0)
    assert eager_out.count("stop_gradient=False") == (2 if grad else 1)  # h and the weight (a parameter)


def writes_and_prints(x, log, box):
    print("log", log, "count", box.count)
    log.append(x * 2)
    box.count = box.count + 1
    print("log", log, "count", box.count)
    log.append(3)
    return x + 1


class Box:
    def __init__(self):
        self.count = 0


def test_prints_see_the_recorded_writes_made_before_them_and_not_those_after(capsys):
    x = rand(2)
    log, box = [1.0], Box()
    want = writes_and_prints(x, log, box)
    eager_out = capsys.readouterr().out
    jit = jit_of(writes_and_prints)
    jit_log, jit_box = [1.0], Box()
    report = sot.explain(jit, x, jit_log, jit_box)
    assert capsys.readouterr().out == eager_out
    assert_same_result(report.result, want)
    assert_same_result(jit_log, log) and jit_box.count == box.count == 1
    assert (report.graph_count, report.break_count) == (1, 0)
    assert "log [1.0] count 0\n" in eager_out and "Tensor(" in eager_out and ", 3]" not in eager_out


@pytest.fixture
def min_size():
    yield config.set_min_graph_size
    config.set_min_graph_size(None)


def test_a_graph_below_the_minimum_size_runs_eagerly_and_prints_the_same(min_size, capsys):
    min_size(100)
    reports, _ = same_as_eager(capsys, prints_values, rand(3))
    assert [(r.graph_count, r.eager_graph_count, r.break_count) for r in reports] == [(0, 1, 0), (0, 1, 0)]


def adds_between_prints(x, y):
    print("before", x)
    z = x + y
    print("after", z)
    return z


def test_a_graph_whose_run_raises_prints_what_eager_printed_before_the_error(capsys):
    jit = jit_of(adds_between_prints)
    for n in (3, 4):  # the second size makes the dims dynamic: the graph then runs on any size
        x, y = paddle.ones([n]), paddle.ones([n])
        assert_same_result(jit(x, y), adds_between_prints(x, y))
    translations = jit.sot_translator.translations
    capsys.readouterr()
    x, y = paddle.ones([4]), paddle.ones([5])
    with pytest.raises(ValueError) as eager_error:
        adds_between_prints(x, y)
    eager_out = capsys.readouterr().out
    with pytest.raises(ValueError) as jit_error:
        jit(x, y)
    assert capsys.readouterr().out == eager_out and eager_out.startswith("before Tensor(")
    assert str(jit_error.value) == str(eager_error.value)
    assert jit.sot_translator.translations == translations  # the cached graph ran and raised, not a fallback


class Labelled:
    def __str__(self):
        return "a user object"


LABEL = Labelled()


def prints_a_user_object(x):
    y = x + 1
    print(y, LABEL)  # its own __str__: user code, not deferred
    return y * 2


def prints_to_a_file(x):
    y = x + 1
    print(y, file=sys.stdout)  # the file is what it writes into: not deferred
    return y * 2


def prints_a_function(x):
    y = x + 1
    print(y, paddle.tanh)  # an object whose text is not the graph's values: not deferred
    return y * 2


@pytest.mark.parametrize("fn", [prints_a_user_object, prints_to_a_file, prints_a_function])
def test_prints_that_cannot_be_shown_safe_still_break_and_run_for_real(fn, capsys):
    reports, out = same_as_eager(capsys, fn, rand(2))
    assert out.count("Tensor(") == 1
    for report in reports:
        where = f"{__file__}:{fn.__code__.co_firstlineno + 2}"
        assert [(b.code, b.where) for b in report.breaks] == [("SOT-B003", where)]
        assert report.graph_count == 2


def test_full_graph_mode_captures_a_deferred_print_and_rejects_one_that_breaks(capsys):
    same_as_eager(capsys, prints_values, rand(3), fallback=False)
    with pytest.raises(sot.GraphBreakError) as error:
        jit_of(prints_to_a_file, fallback=False)(rand(3))
    assert error.value.code == "SOT-B003" and "file=" in error.value.reason


def test_print_on_the_block_list_breaks_as_asked(capsys):
    with sot.graph_break_on(print):
        reports, _ = same_as_eager(capsys, prints_values, rand(3))
    assert [b.code for b in reports[0].breaks] == ["SOT-B004"]


def prints_a_list_that_contains_itself(x):
    items = [x * 2]
    items.append(items)
    print(items)
    return x + 1


def test_a_list_that_contains_itself_is_printed_by_eager_code_with_the_reason(capsys):
    x = paddle.to_tensor(np.array([1.0, 2.0], "float32"))
    want = prints_a_list_that_contains_itself(x)
    want_out = capsys.readouterr().out
    jit = jit_of(prints_a_list_that_contains_itself)
    assert_same_result(jit(x), want)
    assert capsys.readouterr().out == want_out and "[...]" in want_out
    (fallback,) = jit.sot_translator.fallbacks  # cannot be deferred, nor rebuilt for a break
    assert fallback.code == "SOT-B003" and "contains itself" in fallback.reason
