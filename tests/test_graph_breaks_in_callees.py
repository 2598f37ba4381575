"""Graph breaks inside inlined calls resume inside the callee (virtual frames).

The graph before the break holds the callers' work up to their calls and the callee's up to the
break; after it, the callee's rest and each caller's rest run in resume functions, translated
again. Each test compares with eager code (values, gradients, printed text, side effects) and
asserts where the break is and how many graphs ran; where a callee cannot be resumed, the caller
breaks at the call and the event says why.
"""
import gc

import numpy as np
import pytest

import runtime as paddle
import sot
from runtime import nn
from sot_helpers import assert_same_result, jit_of, rand, translators


def level3(x):
    y = x * 3
    if y.mean() > 0:  # the break, three calls deep
        y = y + 1
    return y * 2


def level2(x):
    return level3(x - 1) * 2


def level1(x):
    h = paddle.tanh(x)
    return level2(h) + h


LEVEL3_IF = level3.__code__.co_firstlineno + 2


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_break_three_calls_deep_resumes_inside_the_innermost_call(sign):
    x = rand(2, 2) * sign + sign  # both branches of level3's if
    jit = jit_of(level1)
    for _ in range(2):  # a translation, then cache hits
        report = sot.explain(jit, x)
        assert_same_result(report.result, level1(x))
        assert report.fallbacks == [] and report.break_count == 1
        (brk,) = report.breaks
        assert brk.code == "SOT-B001" and brk.where.endswith(f":{LEVEL3_IF}")
        assert "inside the call" not in brk.detail
        # one graph before the break (tanh, -1, *3, mean, >), then level3's, level2's, level1's rest
        assert report.graph_count == 4
    resumes = translators(jit)[1:]  # (their code keeps the user's name, as tracebacks show it)
    assert sorted(t.code.co_name for t in resumes) == ["level1", "level2", "level3", "level3"]  # one per branch
    assert not any(t.code is f.__code__ for t in resumes for f in (level1, level2, level3))


def test_the_graph_before_the_break_holds_the_callers_and_the_callees_work():
    x = rand(3)
    report = sot.explain(jit_of(level1), x)
    first = report.sir_texts[0]
    for op in ("tanh", "__sub__", "__mul__", "mean"):
        assert op in first  # level1's, level2's and level3's ops before the break
    assert_same_result(report.result, level1(x))


def test_gradients_flow_through_every_resumed_frame():
    x_eager, x_jit = rand(2, 3, grad=True), None
    x_jit = paddle.to_tensor(x_eager.numpy(), stop_gradient=False)
    level1(x_eager).sum().backward()
    jit = jit_of(level1)
    jit(x_jit).sum().backward()
    np.testing.assert_allclose(x_jit.grad.numpy(), x_eager.grad.numpy(), rtol=1e-6)


class Counter:
    def __init__(self):
        self.calls = 0
        self.seen = []

    def step(self, x):
        self.calls += 1  # a side effect before the break: made once, before the breaking instruction
        self.seen.append(self.calls)
        value = float(x.sum())  # the break (a value read)
        return x * value

    def run(self, x):
        return self.step(x + 1) - 1


def counter_main(counter, x):
    return counter.run(x) * 2


def test_methods_resume_inside_with_their_side_effects_made_once():
    x = rand(3)
    eager, jitted = Counter(), Counter()
    want = [counter_main(eager, x) for _ in range(3)]
    jit = jit_of(counter_main)
    got = [jit(jitted, x) for _ in range(3)]
    for g, w in zip(got, want):
        assert_same_result(g, w)
    assert (jitted.calls, jitted.seen) == (eager.calls, eager.seen)
    report = sot.explain(jit, jitted, x)
    assert report.fallbacks == [] and [b.code for b in report.breaks] == ["SOT-B002"]
    assert report.breaks[0].where.endswith(f":{Counter.step.__code__.co_firstlineno + 3}")


class Gate(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:  # a data-dependent branch inside a Layer's forward
            h = paddle.nn.functional.relu(h)
        return h * 0.5


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.gate(x) + x)


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x).mean()


def test_layer_forwards_three_levels_deep_resume_inside_and_train_as_eager():
    paddle.seed(3)
    eager_model = Model()
    jit_model = Model()
    jit_model.set_state_dict(eager_model.state_dict())
    jit_model = sot.to_static(jit_model)
    x = rand(5, 4) - 0.5
    for _ in range(3):
        for model in (eager_model, jit_model):
            loss = model(x)
            loss.backward()
            for p in model.parameters():
                p.set_value(p - 0.1 * p.grad)
                p.clear_gradient()
        np.testing.assert_allclose(jit_model(x).numpy(), eager_model(x).numpy(), rtol=1e-5)
    report = sot.explain(jit_model.forward, x)
    assert report.fallbacks == [] and [b.code for b in report.breaks] == ["SOT-B001"]
    assert report.breaks[0].where.endswith(f":{Gate.forward.__code__.co_firstlineno + 2}")
    assert "inside the call" not in report.breaks[0].detail


def make_scaler(k):
    def scale(t):  # a closure: its frame cannot be resumed (a resume function cannot share its cells)
        if t.sum() > 0:
            return t * k
        return t
    return scale


SCALE = make_scaler(2.0)


def calls_a_closure(x):
    return SCALE(x + 1) - 1


def test_a_callee_that_cannot_be_resumed_makes_its_caller_break_at_the_call_and_says_why():
    x = rand(3)
    jit = jit_of(calls_a_closure)
    report = sot.explain(jit, x)
    assert_same_result(report.result, calls_a_closure(x))
    brk, own = report.breaks
    assert brk.code == "SOT-B001" and "inside the call at" in brk.detail
    assert "cannot be resumed: it has closure cells" in brk.detail
    # the closure then runs as a translated frame of its own, which breaks at its `if` (its resume
    # functions get its cells)
    assert own.code == "SOT-B001" and "inside the call" not in own.detail and report.fallbacks == []


def breaks_in_a_handler(x):
    try:
        raise ValueError("caught below")
    except ValueError:
        if x.sum() > 0:  # the exception being handled cannot be made again in a resume function
            x = x * 2
    return x


def calls_a_handler_that_breaks(x):
    return breaks_in_a_handler(x) + 1


def test_a_callee_whose_frame_cannot_be_rebuilt_breaks_the_caller_at_the_call():
    x = rand(3)
    jit = jit_of(calls_a_handler_that_breaks)
    report = sot.explain(jit, x)
    assert_same_result(report.result, calls_a_handler_that_breaks(x))
    (brk,) = report.breaks  # the caller broke at the call (translated again without resuming inside)
    assert "inside the call at" in brk.detail and "its frame could not be rebuilt" in brk.detail
    (fallback,) = report.fallbacks  # the callee as a frame of its own cannot rebuild the handled exception
    assert "rebuilding" in fallback.reason


def makes_a_lambda_then_breaks(x):
    double = lambda t: t * 2  # noqa: E731 - a function the frame makes, rebuilt where the frame goes on
    if x.sum() > 0:
        return double(x)
    return x


def calls_lambda_maker(x):
    return makes_a_lambda_then_breaks(x) + 1


def test_a_function_the_callee_made_is_rebuilt_after_a_break_inside_it():
    x = rand(3)
    report = sot.explain(jit_of(calls_lambda_maker), x)
    assert_same_result(report.result, calls_lambda_maker(x))
    (brk,) = report.breaks
    assert brk.code == "SOT-B001" and "inside the call" not in brk.detail and report.fallbacks == []


class Bag:
    def __init__(self, items):
        self.items = items

    def __getitem__(self, i):
        t = self.items[i]
        if t.sum() > 0:  # the break, inside a protocol method called by BINARY_SUBSCR
            return t * 2
        return t


def indexes_a_bag(bag, x):
    return bag[0] + x


def test_a_break_in_a_protocol_method_breaks_the_caller_at_that_instruction():
    x = rand(3)
    bag = Bag([rand(3)])
    jit = jit_of(indexes_a_bag)
    report = sot.explain(jit, bag, x)
    assert_same_result(report.result, indexes_a_bag(bag, x))
    assert report.fallbacks == []
    assert "__getitem__ is called by an operation of its caller" in report.breaks[0].detail


def _breaks_in_try(t):
    try:
        u = t * 2
    finally:
        pass
    if u.sum() > 0:
        return u + 1
    return u - 1


def first_caller(x):
    return _breaks_in_try(x * 3)


def second_caller(x):
    return _breaks_in_try(x + 3) * 2


def test_explain_counts_only_what_ran_when_callers_share_a_callees_cache():
    x = paddle.to_tensor(np.array([1.0, 2.0], "float32"))
    first = jit_of(first_caller)
    for sign in (1.0, -1.0):  # the callee's code gets translations for both branches
        assert_same_result(first(x * sign), first_caller(x * sign))
    del first
    gc.collect()  # its translators are gone; the callee's code keeps its cache and entries
    report = sot.explain(jit_of(second_caller), x)
    assert_same_result(report.result, second_caller(x))
    # the callee's resume functions are shared with first_caller's translations (one code per entry
    # point), both branches' in one cache: only the branch taken now ran
    names = [text.splitlines()[0].split("SIR_", 1)[1].split("(")[0].strip() for text in report.sir_texts]
    assert names.count("_breaks_in_try") == 1, names
    assert report.graph_count == 3 and report.break_count == 1
