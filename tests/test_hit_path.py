"""What a call of translated code runs once its translations are cached (no timing here: benchmarks/graph_breaks.py
times it). A graph break pays a cache lookup twice a call (its frame and the resume function), so these tests pin
the Python frames of that path: per lookup only the generated guard function (the code cache's hit path is in C),
and a break's prefix runs as one generated inference function over the executor's core."""

import numpy as np
import pytest

from sot.guards import CacheSizeLimitWarning, CodeCache, FrameLike, Guard
from sot.hook.eval_frame import CustomCode, eval_frame_callback, set_code_cache
from sot_helpers import frames_of, jit_of, rand


def seed_fn(x):  # a graph break between tensor ops that does no I/O
    x = x + 1
    x.numpy()
    return x * 2


def test_a_cached_graph_break_runs_its_guard_functions_and_generated_runners_and_no_cache_or_translator_frame():
    jit = jit_of(seed_fn)
    x = rand(8)
    jit(x), jit(x)  # translate the frame and its resume function, then hit both
    result, ran = frames_of(jit, x)
    np.testing.assert_array_equal(result.numpy(), seed_fn(x).numpy())
    guards = [name for file, name in ran if name.startswith("guard_")]
    assert guards == ["guard_seed_fn", "guard_seed_fn"]  # the frame's and its resume function's (the same name)
    wrappers = [(file, name) for file, name in ran if file.endswith(("guards/cache.py", "translate.py"))]
    assert wrappers == []
    compiled = [name for file, name in ran if file.endswith("ir/compiled.py")]
    assert compiled == []  # the prefix is the generated inference run itself
    assert sum(1 for file, name in ran if file.startswith("<inference run of")) == 2


def _plain(x):
    return x


def _variant(x):
    return x * 10


def test_a_code_cache_installed_in_the_hook_counts_hits_in_c_and_promotes_through_python():
    cache = CodeCache(_plain.__code__)
    one = cache.insert([Guard("f_locals['x']", "value_eq", 1)], CustomCode(_variant.__code__))
    two = cache.insert([Guard("f_locals['x']", "value_eq", 2)], CustomCode(None))
    set_code_cache(_plain.__code__, cache)

    def names(x):
        result, ran = frames_of(_plain, x)
        return result, [name for _, name in ran]

    try:
        with eval_frame_callback(lambda frame: None):
            assert names(2) == (2, ["guard__plain", "_plain"])  # the front entry: served in C
            result, ran = names(1)  # the other entry: counted and moved to the front by _lookup_slow
            assert result == 10 and ran[:2] == ["guard__plain", "_lookup_slow"] and ran[-1] == "_variant"
            assert names(1) == (10, ["guard__plain", "_variant"])
            result, ran = names(3)  # a miss: recorded, then _lookup_slow answers None and the callback is asked
            assert result == 3 and ran[0] == "guard__plain" and {"_missed", "_lookup_slow", "<lambda>"} <= set(ran)
    finally:
        set_code_cache(_plain.__code__, None)
    assert (one.hits, two.hits) == (2, 1) and [e.code for e in cache.entries] == [one.code, two.code]
    assert len(cache.miss_reasons()) == 1


class _EagerWhenFull(CodeCache):
    gave_up = "the original code"


def test_a_cache_that_gave_up_returns_its_gave_up_choice_without_checking_guards():
    cache = _EagerWhenFull(_plain.__code__, cache_size_limit=1)
    cache.insert([Guard("f_locals['x']", "value_eq", 1)], "one")
    with pytest.warns(CacheSizeLimitWarning, match="cache_size_limit=1"):
        assert cache.lookup(FrameLike({"x": 2})) == "the original code"
    assert cache.lookup(FrameLike({"x": 1})) == "the original code" and cache.eager_runs == 2
    assert cache.entries[0].hits == 0 and len(cache.miss_reasons()) == 1
