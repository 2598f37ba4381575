"""Calls of the runtime's state API inside a compiled function behave as eagerly.

A recorded runtime call runs in static mode, once, at translation time. That is right for ops,
but a query of the runtime's state (`in_dynamic_mode()`, `get_default_dtype()`) would answer for
static mode and be frozen into the graph, and a call that changes the state
(`set_default_dtype`, `set_flags`) would take effect only on the call that translated.
"""
import pytest

import runtime as paddle
import sot

from sot_helpers import assert_same_result, captured, events, jit_of, rand


@pytest.fixture(autouse=True)
def _default_dtype_restored():
    before = paddle.get_default_dtype()
    yield
    paddle.set_default_dtype(before)


def test_in_dynamic_mode_reads_true_inside_a_compiled_function():
    def f(x):
        if paddle.in_dynamic_mode():
            return x + 1
        return x - 1

    x = rand(2)
    jit = captured(f, x)
    assert_same_result(jit(x), x + 1)  # the eager branch, on a cache hit too


def test_a_default_dtype_read_follows_a_later_change():
    def f(x):
        return x.astype(paddle.get_default_dtype()) * 2

    x = rand(2)
    jit = captured(f, x)
    paddle.set_default_dtype("float64")
    with sot.disable():
        want = f(x)
    assert want.dtype == paddle.float64
    assert_same_result(jit(x), want)
    assert jit.sot_translator.translations == 2  # the guard on the default dtype missed


def test_setting_the_default_dtype_takes_effect_on_every_call():
    def f(x):
        paddle.set_default_dtype("float64")
        return x + 1

    x = rand(2)
    jit = jit_of(f)
    for _ in range(2):  # the second call is served by the cache
        paddle.set_default_dtype("float32")
        assert_same_result(jit(x), x + 1)
        assert paddle.get_default_dtype() == "float64"
    assert [code for code, *_ in events(jit)] == ["SOT-S001"]


def test_setting_flags_takes_effect_on_every_call():
    def f(x, value):
        paddle.set_flags({"FLAGS_check_nan_inf": value})
        return x * 2

    before = paddle.get_flags(["FLAGS_check_nan_inf"])
    jit = jit_of(f)
    x = rand(3)
    try:
        for value in (True, False, True):
            paddle.set_flags({"FLAGS_check_nan_inf": not value})
            assert_same_result(jit(x, value), x * 2)
            assert paddle.get_flags(["FLAGS_check_nan_inf"])["FLAGS_check_nan_inf"] is value
    finally:
        paddle.set_flags(before)


def test_a_dtype_predicate_on_a_tensor_is_still_captured():
    def f(x):
        return x * 2 if paddle.is_floating_point(x) else x

    captured(f, rand(2))


def _made_without_a_dtype(x):
    return x + paddle.ones([2]) * 0.1, paddle.to_tensor(1.5) * 3, paddle.full([2], 0.3), paddle.linspace(0.0, 1.0, 3)


@pytest.mark.parametrize("order", [("float32", "float64", "float32"), ("float64", "float32", "float64")])
def test_tensors_made_without_a_dtype_follow_a_later_default_dtype_change(order):
    """`paddle.ones([2])` makes the default dtype: a graph compiled under float32 must not be reused under
    float64 (it would give float32-rounded values in a float64 result)."""
    x = paddle.ones([2], dtype="float64")
    jit = jit_of(_made_without_a_dtype)
    for dtype in order:
        paddle.set_default_dtype(dtype)
        want = _made_without_a_dtype(x)
        for _ in range(2):
            assert_same_result(jit(x), want)
    assert jit.sot_translator.translations == 2
