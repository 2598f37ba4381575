"""SOT_STRICT: an internal error of the translation is raised (strict) or recorded as a gap (default).

The suite runs with SOT_STRICT=1 (`make test`), so a bug of the JIT cannot hide as an eager fallback;
the tests here set the knob themselves. Constructs that used to fail inside the translation (a gap
recorded as SOT-G001 with an AttributeError) now break the graph deliberately, with their reason.
"""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot import config
from sot.opcode_executor import HANDLERS
from sot_helpers import explained_like_eager, fresh


def tensor(*values):
    return paddle.to_tensor(np.array(values, "float32"))


def doubled(x):
    return x * 2


@pytest.fixture
def broken_multiply(monkeypatch):
    """A bug planted in the executor: BINARY_OP raises an internal error."""
    def broken(ex, ins):
        raise AttributeError("'NoneType' object has no attribute 'dtype'")
    monkeypatch.setitem(HANDLERS, "BINARY_OP", broken)


@pytest.mark.parametrize("value,expected", [("", False), ("0", False), ("1", True), ("2", True)])
def test_the_knob_is_read_when_asked(monkeypatch, value, expected):
    monkeypatch.setenv("SOT_STRICT", value)
    assert config.strict() is expected


def test_a_bad_value_is_an_error_naming_the_knob(monkeypatch):
    monkeypatch.setenv("SOT_STRICT", "yes")
    with pytest.raises(ValueError, match="SOT_STRICT"):
        config.strict()


@pytest.fixture
def broken_codegen(monkeypatch):
    """A bug planted in the code generation: it raises an error of a type meta functions raise too
    (a user's error if the simulation raised it; the JIT's own here)."""
    def broken(*args, **kwargs):
        raise KeyError("a slot the code generator lost")
    monkeypatch.setattr("sot.translation.translator.whole_frame", broken)


# where the bug is planted, and what it raises
_PLANTED = [("broken_multiply", AttributeError, "dtype"), ("broken_codegen", KeyError, "code generator")]


@pytest.mark.parametrize("planted,error,message", _PLANTED)
def test_strict_raises_an_internal_error_where_the_frame_is_called(monkeypatch, request, planted, error, message):
    request.getfixturevalue(planted)
    monkeypatch.setenv("SOT_STRICT", "1")
    with pytest.raises(error, match=message):
        sot.to_static(fresh(doubled))(tensor(1.0))


@pytest.mark.parametrize("planted,error,message", _PLANTED)
def test_by_default_an_internal_error_runs_the_frame_eagerly_as_a_gap(monkeypatch, request, planted, error,
                                                                      message):
    request.getfixturevalue(planted)
    monkeypatch.setenv("SOT_STRICT", "0")
    jit = sot.to_static(fresh(doubled))
    x = tensor(1.0, 2.0)
    np.testing.assert_array_equal(jit(x).numpy(), doubled(x).numpy())
    (fallback,) = jit.sot_translator.fallbacks
    assert fallback.code == "SOT-G001" and error.__name__ in fallback.reason


def test_strict_leaves_deliberate_fallbacks_alone(monkeypatch):
    monkeypatch.setenv("SOT_STRICT", "1")

    def raises(x):
        raise ValueError("the user's own")
    with pytest.raises(ValueError, match="the user's own"):
        sot.to_static(fresh(raises))(tensor(1.0))


def by_mask(x):
    return (x * 2)[x > 0] + 1


def by_list(x):
    return (x * 2)[[0, 1, 0]] + 1


def by_index_tensor(x, i):
    return (x * 2)[i] + 1


@pytest.mark.parametrize("fn,make_args,code", [
    (by_mask, lambda: (tensor(1.0, -2.0, 3.0),), "SOT-B005"),
    (by_list, lambda: (tensor(1.0, -2.0, 3.0),), "SOT-G001"),
    (by_index_tensor, lambda: (tensor(1.0, -2.0, 3.0), paddle.to_tensor(np.array([2, 0]))), "SOT-G001"),
])
def test_advanced_indexing_breaks_the_graph_instead_of_failing_inside(monkeypatch, fn, make_args, code):
    monkeypatch.setenv("SOT_STRICT", "1")
    report = explained_like_eager(fn, make_args)
    assert [e.code for e in report.breaks] == [code] and report.graph_count == 2


def lambdas_with_constant_defaults(x):
    g = lambda t, a=1, b=2: t * a + b  # noqa: E731 - the defaults are one constant tuple in the bytecode

    def h(t, *, k=3):
        return t - k
    return g(x) + h(x)


def test_functions_made_with_constant_defaults_are_captured(monkeypatch):
    monkeypatch.setenv("SOT_STRICT", "1")  # (it used to fail inside the translation: an AttributeError)
    report = explained_like_eager(lambdas_with_constant_defaults, lambda: (tensor(1.0, 2.0),))
    assert report.breaks == []
