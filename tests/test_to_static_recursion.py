"""Recursion under to_static: a shallow one is inlined whole; one deeper than the inline depth runs
for real from its first call, one Python frame per level as eagerly, so the compiled function
raises RecursionError exactly where eager code does (an inlined level has no frame of its own)."""
import numpy as np
import pytest

import runtime as paddle
from sot_helpers import assert_same_result, jit_of, translators


def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)


def scaled(x, n):
    return x * depth(n)


def _x():
    return paddle.to_tensor(np.ones([2], "float32"))


def _runs(fn, n):
    """Whether fn(x, n) returns (False: it raised RecursionError)."""
    try:
        fn(_x(), n)
    except RecursionError:
        return False
    return True


def test_a_shallow_recursion_is_inlined_whole():
    jit = jit_of(scaled)
    assert_same_result(jit(_x(), 5), scaled(_x(), 5))
    root = translators(jit)[0]
    assert root.translations == 1 and root.breaks == [] and root.fallbacks == []


# each level is a call with a new `n`, translated per value until the cache limit (warned), then eager
@pytest.mark.filterwarnings("ignore::sot.guards.cache.CacheSizeLimitWarning")
def test_a_recursion_deeper_than_the_limit_raises_recursion_error_where_eager_does():
    low, high = 10, 20_000  # the deepest n eager code runs here, by bisection
    while low + 1 < high:
        middle = (low + high) // 2
        low, high = (middle, high) if _runs(scaled, middle) else (low, middle)
    assert _runs(jit_of(scaled), low)
    assert not _runs(jit_of(scaled), low + 1)
    assert not _runs(jit_of(scaled), low + 100)


def test_a_deep_recursion_below_the_limit_gives_eagers_result():
    jit = jit_of(scaled)
    for _ in range(2):
        assert_same_result(jit(_x(), 200), scaled(_x(), 200))
    (event,) = {e.code for e in translators(jit)[0].breaks}
    assert event == "SOT-B003"
