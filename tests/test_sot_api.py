"""The user API around to_static: disable(), not_to_static, sot.testing.assert_same, sot.explain.

Every JIT result is compared with the eager result of the same function on the same inputs.
"""
import types

import numpy as np
import pytest

import runtime as paddle
import sot
import sot.translate
from sot.eval_frame import set_eval_frame
from sot.testing import assert_same

G_SCALE = 3.0
G_LOG = []


def rand(*shape):
    return paddle.to_tensor(np.random.rand(*shape).astype("float32"))


def fresh(fn):
    """A copy of `fn` with its own code object, so its code cache starts empty (caches are per code)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


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


def test_assert_same_passes_for_a_fallback_with_side_effects():
    jit = sot.to_static(fresh(logs_and_doubles))
    before = list(G_LOG)
    assert_same(jit, rand(3), [1.0])
    assert jit.sot_translator.fallbacks and jit.sot_translator.translations == 0
    assert G_LOG == before + [2]  # one run's effect on the global, not two


def test_assert_same_compares_exceptions():
    assert_same(raises, rand(2, 2))


def test_assert_same_fails_on_a_wrong_result(monkeypatch):
    real = sot.translate._runner

    def off_by_one(compiled, template):
        run = real(compiled, template)
        return lambda *tensors: run(*tensors) + 1

    monkeypatch.setattr(sot.translate, "_runner", off_by_one)
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


def test_explain_a_fallback():
    report = sot.explain(fresh(logs_and_doubles), rand(3), [])
    assert report.graph_count == 0 and report.sir_texts == []
    (fb,) = report.fallbacks
    assert fb.where.startswith(__file__ + ":") and fb.reason
    assert fb.reason in str(report)
