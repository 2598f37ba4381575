"""Every reason code in sot.translation.reasons is produced by some code, and reported with it.

Each case runs a function under to_static, compares with eager, and asserts the first recorded
break or fallback carries the expected code, quotes the expression it happened at and names nothing
of the simulator (GraphBreakError too, with fallback=False, where the frame cannot be captured).
The registry itself: codes unique and well-formed, a hint for each.
"""
import re
import sys

import pytest

import runtime as paddle
import sot
from sot.guards import CacheSizeLimitWarning
from sot.translation.reasons import REASONS, reason
from sot_helpers import assert_same_result, assert_user_terms, events, jit_of, rand

COUNTER = 0


def tensor_condition(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


def tensor_value(x):
    return x.numpy().sum() + 1


def prints(x):
    print(x.shape, file=sys.stdout)  # to a file: a print that cannot be deferred
    return x * 2


@sot.not_to_static
def helper(x):
    return x + 1


def calls_not_to_static(x):
    return helper(x) * 2


def defines_a_class(x):
    class Local:  # LOAD_BUILD_CLASS has no handler: the graph breaks there
        scale = 2
    return x * Local.scale


def writes_global(x):
    global COUNTER
    del COUNTER  # a delete is not replayed: the frame breaks there
    globals()["COUNTER"] = 1
    return x * 2


def raises(x):
    raise KeyError("no such key")


def shape_mismatch(x):
    return paddle.matmul(x, x)


def nonzero_count(x):
    return paddle.nonzero(x > 0.5)


def one():
    return 1


def iter_with_a_sentinel(x):
    return [x * v for v in iter(one, 1)]  # `one` is called until it returns 1: no item


CASES = {
    "SOT-B001": (tensor_condition, False),
    "SOT-B002": (tensor_value, False),
    "SOT-B003": (prints, False),
    "SOT-B004": (calls_not_to_static, False),
    "SOT-B005": (nonzero_count, False),
    "SOT-U001": (defines_a_class, False),
    "SOT-S001": (writes_global, False),
    "SOT-R001": (raises, True),
    "SOT-E001": (shape_mismatch, True),
    "SOT-G001": (iter_with_a_sentinel, False),
}
# the expression each case's detail quotes, as written above (a class statement: its header)
QUOTES = {"SOT-B001": "x.sum() > 0", "SOT-B002": "x.numpy()", "SOT-B003": "print(x.shape, file=sys.stdout)",
          "SOT-B004": "helper(x)", "SOT-B005": "paddle.nonzero(x > 0.5)", "SOT-U001": "class Local",
          "SOT-S001": "COUNTER", "SOT-R001": 'raise KeyError("no such key")', "SOT-E001": "paddle.matmul(x, x)",
          "SOT-G001": "iter(one, 1)"}


@pytest.mark.parametrize("code", list(CASES))
def test_each_code_is_produced_and_recorded(code):
    fn, raises_in_eager = CASES[code]
    x = rand(2, 3)
    jit = jit_of(fn)
    if raises_in_eager:
        with pytest.raises(Exception) as want:
            fn(x)
        with pytest.raises(type(want.value)) as got:
            jit(x)
        assert str(got.value) == str(want.value)
    else:
        assert_same_result(jit(x), fn(x))
        assert fn is not writes_global or COUNTER == 1  # the delete and the write ran for real
    recorded = events(jit)  # a graph break where the frame can resume, else the frame ran eagerly
    assert recorded and recorded[0][0] == code, recorded
    assert recorded[0][1].startswith(f"`{QUOTES[code]}` "), recorded[0]
    assert_user_terms(recorded[0][1])
    if not raises_in_eager:
        with pytest.raises(sot.GraphBreakError, match=re.escape(f"[{code}]")) as err:
            jit_of(fn, fallback=False)(x)
        assert err.value.code == code and REASONS[code].hint in str(err.value)


def varies(x, n):
    return x * n if n > 0 else x  # n decides a Python branch: translated per value (not a dynamic number)


def test_the_cache_limit_warning_carries_its_code():
    jit = jit_of(varies, cache_size_limit=2)
    x = rand(2)
    with pytest.warns(CacheSizeLimitWarning, match=r"SOT-L001"):
        for n in range(4):
            assert_same_result(jit(x, n), varies(x, n))
    assert "SOT-L001" in REASONS


def grows(x, past=None):
    n = 0 if past is None else past.shape[0]  # a cache length read as a number: translated per length
    return x * n if n > 0 else x


def test_the_cache_limit_warning_names_the_value_that_keeps_changing():
    """The first entry (past None) fails its `is None` guard on every later call, but the value that keeps
    changing is the cache's length: each translation guards one, so the warning counts them together."""
    jit = jit_of(grows, cache_size_limit=4)
    x = rand(2)
    with pytest.warns(CacheSizeLimitWarning) as caught:
        for past in (None, *(rand(n) for n in range(1, 6))):
            assert_same_result(jit(x, past), grows(x, past))
    (message,) = [str(w.message) for w in caught if "SOT-L001" in str(w.message)]
    assert "the guard that failed most is `f_locals['past'] is a tensor of shape" in message
    assert "translations guard a value of it" in message


def test_the_registry_is_well_formed():
    assert all(re.fullmatch(r"SOT-[A-Z]\d{3}", c) and r.code == c for c, r in REASONS.items())
    assert all(r.summary and r.hint and r.kind for r in REASONS.values())
    # every code has a test that produces it (C001: tests/test_sot_cost.py, C002/C003: tests/test_graph_breaks_in_loops.py)
    assert set(CASES) | {"SOT-L001", "SOT-C001", "SOT-C002", "SOT-C003"} == set(REASONS)
    with pytest.raises(KeyError, match="SOT-X999"):
        reason("SOT-X999")


def test_the_error_policy_raises_past_the_limit_instead_of_running_eagerly():
    jit = jit_of(varies, cache_size_limit=2, cache_limit_policy="error")
    x = rand(2)
    for n in range(2):
        assert_same_result(jit(x, n), varies(x, n))
    with pytest.raises(sot.CacheLimitError, match=r"SOT-L001.*cache_size_limit=2"):
        jit(x, 5)
    assert_same_result(jit(x, 1), varies(x, 1))  # a hit still runs compiled
    with pytest.raises(ValueError, match="argument 'cache_limit_policy'"):
        sot.to_static(varies, cache_limit_policy="ignore")


def test_explain_reports_the_frames_run_eagerly_past_the_limit():
    jit = jit_of(varies, cache_size_limit=1)
    x = rand(2)
    with pytest.warns(CacheSizeLimitWarning):
        jit(x, 1), jit(x, 2)
    report = sot.explain(jit, x, 3)
    assert_same_result(report.result, varies(x, 3))
    assert [fb.code for fb in report.fallbacks] == ["SOT-L001"] and report.graph_count == 0
