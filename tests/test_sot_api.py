"""The user API around to_static: its wrapper, disable(), not_to_static, sot.testing.assert_same, sot.explain.

Every JIT result is compared with the eager result of the same function on the same inputs.
"""
import copy
import inspect
import pickle
import threading
import types

import numpy as np
import pytest

import runtime as paddle
import sot
import sot.codegen.frame
import sot.translation.translator
from sot.hook.eval_frame import set_eval_frame
from sot.testing import assert_same

G_SCALE = 3.0
G_LOG = []


def rand(*shape):
    return paddle.to_tensor(np.random.rand(*shape).astype("float32"))


def fresh(fn):
    """A copy of `fn` with its own code object, so its code cache starts empty (caches are per code)."""
    new = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__, new.__doc__, new.__qualname__ = fn.__kwdefaults__, fn.__doc__, fn.__qualname__
    return new


def affine(x, y):
    return x * G_SCALE + y, x - y


def add_one(x):
    return x + 1


def logs_and_doubles(x, log):
    a = x.numpy()  # a tensor read as NumPy: not capturable in this slice, the frame runs eagerly
    log.append(float(a.sum()))
    G_LOG.append(len(log))
    return x * 2


def raises(x):
    raise ValueError(f"bad input of rank {len(x.shape)}")


# ----- the to_static wrapper -----

def scaled_sum(x, y=None, *, scale=2.0):
    """Adds y (if given) and scales: a docstring the wrapper must keep."""
    return (x if y is None else x + y) * scale


def test_the_wrapper_keeps_the_functions_metadata():
    fn = fresh(scaled_sum)
    jit = sot.to_static(fn)
    assert jit.__wrapped__ is fn
    assert (jit.__name__, jit.__qualname__, jit.__doc__, jit.__module__) == \
        (fn.__name__, fn.__qualname__, fn.__doc__, fn.__module__)
    assert inspect.signature(jit) == inspect.signature(fn)
    assert isinstance(jit.sot_translator, sot.translation.translator.Translator)


def test_the_wrapper_passes_arguments_and_keywords():
    jit = sot.to_static(fresh(scaled_sum))
    x, y = rand(3), rand(3)
    for args, kwargs in [((x,), {}), ((x, y), {}), ((x,), {"y": y, "scale": 0.5})]:
        np.testing.assert_allclose(jit(*args, **kwargs).numpy(), scaled_sum(*args, **kwargs).numpy(), rtol=1e-6)


def test_a_one_output_hit_feeds_many_inputs_in_the_programs_order():
    namespace = {}  # 12 inputs: the program's feeds are sorted by name (var_11 before var_2), not by position
    exec("def weighted(" + ", ".join(f"a{i}" for i in range(12)) + "):\n    return "  # noqa: S102
         + " + ".join(f"a{i} * {i + 1}" for i in range(12)) + "\n", namespace)
    fn = namespace["weighted"]
    jit = sot.to_static(fn)
    for _ in range(3):  # translation, then hits
        xs = [rand(3) for _ in range(12)]
        np.testing.assert_allclose(jit(*xs).numpy(), fn(*xs).numpy(), rtol=1e-6)
    assert jit.sot_translator.translations == 1 and jit.sot_translator.fallbacks == []


def test_an_exception_propagates_and_the_previous_callback_is_restored():
    seen = []

    def outer(frame):
        if frame.f_code.co_filename == __file__:
            seen.append(frame.f_code.co_name)

    jit = sot.to_static(fresh(raises))
    x = rand(2, 2)
    assert set_eval_frame(outer) is None
    try:
        with pytest.raises(ValueError) as got:
            jit(x)
        add_one(1)  # back under the outer callback
    finally:
        assert set_eval_frame(None) is outer
    with pytest.raises(ValueError) as want:
        raises(x)
    assert str(got.value) == str(want.value)
    assert seen == ["add_one"]  # the frame of raises went to the translator, not to the outer callback


def test_nested_to_static_calls_match_eager():
    inner = sot.to_static(fresh(add_one))

    def outer(x):
        return inner(x) * 2

    jit = sot.to_static(outer)
    x = rand(3)
    for _ in range(2):  # translation, then the cache hit
        np.testing.assert_array_equal(jit(x).numpy(), ((x + 1) * 2).numpy())
    np.testing.assert_array_equal(inner(x).numpy(), (x + 1).numpy())
    assert set_eval_frame(None) is None


class Scaler:
    def __init__(self, k):
        self.k = k

    @sot.to_static
    def apply(self, x):
        return x * self.k


def test_the_wrapper_binds_as_a_method():
    s, x = Scaler(3.0), rand(4)
    want = x * 3.0
    for got in (s.apply(x), s.apply(x), Scaler.apply(s, x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    translator = Scaler.apply.sot_translator
    assert translator.translations + len(translator.fallbacks) >= 1  # the bound call went through the wrapper


def test_the_wrapper_from_several_threads():
    jit = sot.to_static(fresh(affine))
    inputs = [(rand(2, 3), rand(2, 3)) for _ in range(2)]
    barrier, results, leftovers = threading.Barrier(2), {}, {}

    def work(i):
        barrier.wait()
        x, y = inputs[i]
        results[i] = [jit(x, y) for _ in range(20)]
        leftovers[i] = set_eval_frame(None)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert leftovers == {0: None, 1: None}
    for i, (x, y) in enumerate(inputs):
        want = affine(x, y)
        for got in results[i]:
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@sot.to_static
def doubled(x):
    return x * 2


def test_the_wrapper_is_copied_as_itself_and_pickled_by_name():
    holder = {"fn": doubled, "items": [doubled]}
    copied = copy.deepcopy(holder)
    assert copied["fn"] is doubled and copied["items"][0] is doubled and copy.copy(doubled) is doubled
    assert pickle.loads(pickle.dumps(doubled)) is doubled
    x = rand(3)
    np.testing.assert_array_equal(copied["fn"](x).numpy(), (x * 2).numpy())


def test_disable_inside_a_translated_call_and_nested_disable():
    jit = sot.to_static(fresh(add_one))
    x = rand(3)
    with sot.disable():
        with sot.disable():
            np.testing.assert_array_equal(jit(x).numpy(), add_one(x).numpy())
        np.testing.assert_array_equal(jit(x).numpy(), add_one(x).numpy())
    assert jit.sot_translator.translations == 0
    with pytest.raises(KeyError):
        with sot.disable():
            raise KeyError("inside")
    np.testing.assert_array_equal(jit(x).numpy(), add_one(x).numpy())  # the hook is back on after the error
    assert jit.sot_translator.translations == 1


# ----- disable() and not_to_static -----

def test_disable_runs_to_static_functions_eagerly():
    jit = sot.to_static(fresh(add_one))
    x = rand(3)
    with sot.disable():
        np.testing.assert_array_equal(jit(x).numpy(), add_one(x).numpy())
    assert jit.sot_translator.translations == 0
    np.testing.assert_array_equal(jit(x).numpy(), add_one(x).numpy())
    assert jit.sot_translator.translations == 1  # translated again outside the block


def test_disable_turns_the_hook_off_and_restores_it():
    seen = []
    previous = set_eval_frame(lambda frame: seen.append(frame.f_code))
    try:
        with sot.disable():
            add_one(1)
        add_one(2)
    finally:
        set_eval_frame(previous)
    assert seen.count(add_one.__code__) == 1


def test_not_to_static_functions_are_never_handed_to_the_hook():
    @sot.not_to_static
    def helper(x):
        return x + 2

    assert sot.to_static(helper) is helper
    seen = []
    previous = set_eval_frame(lambda frame: seen.append(frame.f_code))
    try:
        helper(1)
    finally:
        set_eval_frame(previous)
    assert helper.__code__ not in seen


def test_not_to_static_callee_of_a_translated_frame_runs_eagerly():
    @sot.not_to_static
    def helper(x):
        return x * 2

    def caller(x):
        return helper(x) + 1

    x = rand(4)
    out = assert_same(caller, x)
    np.testing.assert_array_equal(out.numpy(), (x * 2 + 1).numpy())


# ----- assert_same -----

def test_assert_same_passes_for_a_captured_function():
    jit = sot.to_static(fresh(affine))
    out = assert_same(jit, rand(2, 3), rand(2, 3))
    assert jit.sot_translator.translations == 1 and isinstance(out, tuple)


def test_assert_same_passes_for_a_graph_break_with_side_effects():
    jit = sot.to_static(fresh(logs_and_doubles))
    before = list(G_LOG)
    assert_same(jit, rand(3), [1.0])
    assert [e.code for e in jit.sot_translator.breaks] == ["SOT-B002"]  # x.numpy() ran for real
    assert G_LOG == before + [2]  # one run's effect on the global, not two


def test_assert_same_compares_exceptions():
    assert_same(raises, rand(2, 2))


def test_assert_same_fails_on_a_wrong_result(monkeypatch):
    real = sot.codegen.frame.runner

    def off_by_one(compiled, template, *rest):
        run = real(compiled, template, *rest)
        return lambda *tensors: run(*tensors) + 1

    monkeypatch.setattr(sot.codegen.frame, "runner", off_by_one)
    with pytest.raises(AssertionError, match="values differ"):
        assert_same(fresh(add_one), rand(3))


def test_assert_same_fails_on_a_different_exception_or_side_effect():
    def eager_raises(x, log):
        log.append(1)
        if sot.api._state.disabled:  # eager run: sot.testing runs it under sot.disable()
            raise KeyError("k")
        return x

    with pytest.raises(AssertionError, match="eager raised KeyError"):
        assert_same(eager_raises, 1, [])

    def eager_appends(x, log):
        if sot.api._state.disabled:
            log.append(1)
        return x

    with pytest.raises(AssertionError, match="inputs after the call"):
        assert_same(eager_appends, 1, [])
    assert_same(eager_appends, 1, [], check_side_effects=False)


def test_assert_same_fails_on_a_different_global():
    def bumps(x):
        global G_SCALE
        if not sot.api._state.disabled:
            G_SCALE = G_SCALE + 1
        return x

    saved = G_SCALE
    try:
        with pytest.raises(AssertionError, match="global 'G_SCALE'"):
            assert_same(bumps, 1)
    finally:
        globals()["G_SCALE"] = saved


# ----- explain -----

def test_explain_a_captured_call():
    fn = fresh(affine)
    x, y = rand(2, 2), rand(2, 2)
    report = sot.explain(fn, x, y)
    for got, want in zip(report.result, affine(x, y)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert (report.graph_count, report.break_count, report.fallbacks, report.breaks) == (1, 0, [], [])
    assert len(report.sir_texts) == 1 and "__mul__(3.0)" in report.sir_texts[0]
    assert "1 graph(s)" in str(report)
    again = sot.explain(sot.to_static(fn), x, y)  # a cache hit still runs the graph
    assert again.graph_count == 1 and again.translations == 0


class _Explained(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, x):
        return paddle.nn.functional.relu(self.fc(x)) * 2.0


def test_explain_a_layer_as_its_forward_without_changing_the_layer():
    layer, x = _Explained(), rand(4, 3)
    want = layer(x)
    report = sot.explain(layer, x)
    np.testing.assert_array_equal(report.result.numpy(), want.numpy())
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, [])
    assert report.name == "_Explained.forward"
    assert "forward" not in layer.__dict__  # no compiled forward was installed on the layer
    compiled = sot.to_static(layer)  # a converted layer is explained through its own wrapper
    again = sot.explain(compiled, x)
    assert again.graph_count == 1 and again.translations == 0 and compiled.forward is layer.forward


def forgets_a_global(x):
    global G_TEMPORARY
    G_TEMPORARY = 1
    del G_TEMPORARY  # a delete the replay cannot make, where no break can go: the frame runs eagerly
    return x * 2


def test_explain_a_fallback():
    report = sot.explain(fresh(forgets_a_global), rand(3))
    assert report.graph_count == 0 and report.sir_texts == []
    (fb,) = report.fallbacks
    assert fb.where.startswith(__file__ + ":") and fb.reason
    assert fb.reason in str(report)
