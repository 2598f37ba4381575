"""The cache size limit: calls the user got wrong never use it up, and SOT_CACHE_SIZE_LIMIT sets its
default per process (an explicit argument wins; a bad value fails `import sot`)."""
import os
import subprocess
import sys
import warnings

import pytest

import runtime as paddle
import sot
from sot_helpers import assert_same_result, jit_of, rand


def exp_plus_one(x):
    return paddle.exp(x) + 1


def _raised(fn, *args):
    """The exception `fn(*args)` raises (the test fails if it returns)."""
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


def test_wrong_typed_calls_never_push_a_function_past_its_cache_limit():
    jit = jit_of(exp_plus_one)
    limit = jit.sot_translator.cache.cache_size_limit
    for i in range(limit + 1):  # each string a new value: a new translation, each one rejected as eager rejects it
        got, want = _raised(jit, f"s{i}"), _raised(exp_plus_one, f"s{i}")
        assert type(got) is type(want) and str(got) == str(want)
    assert [f.code for f in jit.sot_translator.fallbacks] == ["SOT-E001"] * (limit + 1)
    x = rand(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CacheSizeLimitWarning: the call compiles
        assert_same_result(jit(x), exp_plus_one(x))
    cache = jit.sot_translator.cache
    assert not cache.eager and jit.sot_translator.translations == 1
    assert cache.entries[0].payload is not None and not cache.entries[0].disposable
    assert len(cache.entries) == limit
    assert_same_result(jit(x), exp_plus_one(x))  # and it is served from the cache
    assert jit.sot_translator.translations == 1


def checked_scale(x, n):
    if n < 0:
        raise ValueError(f"negative scale {n}")
    return x * n


def test_calls_the_function_itself_rejects_never_push_it_past_its_cache_limit():
    jit = jit_of(checked_scale)
    x = rand(3)
    limit = jit.sot_translator.cache.cache_size_limit
    for n in range(-1, -limit - 2, -1):  # each value its own translation (the `if` needs it), each raising
        assert str(_raised(jit, x, n)) == str(_raised(checked_scale, x, n))
    assert [f.code for f in jit.sot_translator.fallbacks] == ["SOT-R001"] * (limit + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same_result(jit(x, 3), checked_scale(x, 3))
    assert not jit.sot_translator.cache.eager and jit.sot_translator.translations == 1


def test_a_wrong_call_repeated_is_served_from_the_cache():
    jit = jit_of(exp_plus_one)
    for _ in range(3):
        assert str(_raised(jit, "same")) == str(_raised(exp_plus_one, "same"))
    assert len(jit.sot_translator.fallbacks) == 1 and len(jit.sot_translator.cache.entries) == 1


def _import_sot(env_value):
    """`import sot` in a fresh interpreter with SOT_CACHE_SIZE_LIMIT set: (exit status, stdout, stderr)."""
    path = os.pathsep.join([os.path.dirname(os.path.dirname(sot.__file__)), os.environ.get("PYTHONPATH", "")])
    code = "import sot\ndef f(x):\n    return x\nprint(sot.to_static(f).sot_translator.cache.cache_size_limit)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": path, "SOT_CACHE_SIZE_LIMIT": env_value})
    return done.returncode, done.stdout.strip(), done.stderr


def test_sot_cache_size_limit_sets_the_default_and_an_argument_wins(monkeypatch):
    monkeypatch.setenv("SOT_CACHE_SIZE_LIMIT", "3")
    assert jit_of(exp_plus_one).sot_translator.cache.cache_size_limit == 3
    assert jit_of(exp_plus_one, cache_size_limit=5).sot_translator.cache.cache_size_limit == 5
    monkeypatch.delenv("SOT_CACHE_SIZE_LIMIT")
    assert jit_of(exp_plus_one).sot_translator.cache.cache_size_limit == 8


def test_sot_cache_size_limit_limits_translations(monkeypatch):
    monkeypatch.setenv("SOT_CACHE_SIZE_LIMIT", "1")
    jit = jit_of(exp_plus_one)
    jit(rand(2))
    x = rand(2, 2)  # another rank: a second translation, past a limit of 1
    with pytest.warns(sot.guards.CacheSizeLimitWarning, match="cache_size_limit=1"):
        assert_same_result(jit(x), exp_plus_one(x))


def test_sot_cache_size_limit_read_at_import():
    assert _import_sot("4")[:2] == (0, "4")


@pytest.mark.parametrize("value", ["0", "-2", "eight", "1.5"])
def test_a_bad_sot_cache_size_limit_fails_import_with_a_clear_message(value):
    status, _, err = _import_sot(value)
    assert status != 0
    assert err.strip().splitlines()[-1] == f"ValueError: SOT_CACHE_SIZE_LIMIT must be a positive integer, got {value!r}"
