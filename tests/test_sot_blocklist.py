"""The user's block list (CDBL): graph_break_on, skip_function, and data-dependent-shape ops.

Each case compares the JIT with eager code and asserts the break code where the call ran for real.
"""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import assert_same_result, events, jit_of, rand, translators


def uses_nonzero(x):
    y = x * 2
    idx = paddle.nonzero(y > 1)
    return idx, y + 1


def helper(x):
    return x * 3


def calls_helper(x):
    return helper(x + 1) - 1


def tanh_twice(x):
    return paddle.tanh(paddle.tanh(x))


def test_a_data_dependent_shape_op_breaks_by_default_and_can_be_captured():
    x = paddle.to_tensor(np.array([0.2, 0.9, 0.7], "float32"))
    jit = jit_of(uses_nonzero)
    assert_same_result(jit(x), uses_nonzero(x))
    assert [code for code, _, _ in events(jit)] == ["SOT-B005"]
    with sot.graph_break_on(paddle.nonzero, False):
        jit = jit_of(uses_nonzero)
        assert_same_result(jit(x), uses_nonzero(x))
        assert events(jit) == [] and jit.sot_translator.translations == 1


def test_graph_break_on_makes_the_call_run_for_real_and_is_undone_by_the_block():
    x = rand(3)
    with sot.graph_break_on(paddle.tanh):
        jit = jit_of(tanh_twice)
        assert_same_result(jit(x), tanh_twice(x))
        assert [code for code, _, _ in events(jit)] == ["SOT-B004", "SOT-B004"]
    jit = jit_of(tanh_twice)
    assert_same_result(jit(x), tanh_twice(x))
    assert events(jit) == []


def test_skip_function_runs_it_eagerly_instead_of_inlining_it():
    x = rand(3)
    entry = sot.skip_function(helper)
    try:
        jit = jit_of(calls_helper)
        assert_same_result(jit(x), calls_helper(x))
        ((code, reason, _),) = [e for e in events(jit) if e[0] == "SOT-B004"]
        assert "helper" in reason
        assert all(t.code is not helper.__code__ for t in translators(jit))  # not translated either
    finally:
        entry.__exit__(None, None, None)
    jit = jit_of(calls_helper)
    assert_same_result(jit(x), calls_helper(x))
    assert events(jit) == []




@pytest.mark.parametrize("bad", [3, "tanh"])
def test_bad_arguments_name_the_argument(bad):
    with pytest.raises(TypeError, match="argument 'api'"):
        sot.graph_break_on(bad)
    with pytest.raises(TypeError, match="argument 'function'"):
        sot.skip_function(bad)
