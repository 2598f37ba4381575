"""`sot.reset()` and `fn.sot_translator.reset()`: every translation is forgotten (cache entries, the
cache limit reached, dims made dynamic, breaks and fallbacks, resume functions), the next call
translates again, and its result is still eager's."""
import gc
import warnings

import numpy as np
import pytest

import runtime as paddle
import sot
from sot.guards import CacheSizeLimitWarning
from sot_helpers import assert_same_result, jit_of, rand, translators


def scaled(x, n):
    return (x * n).tanh() + 1


def breaks(x):
    y = x * 2
    if float(y.sum()) > 0:  # a tensor read into Python: a graph break, the rest in a resume function
        y = y + 1
    return y - 3


def numbered(x):
    return x + 1


def test_reset_of_one_function_retranslates_it_and_its_result_is_eagers():
    jit = jit_of(scaled)
    x = rand(2, 3)
    assert_same_result(jit(x, 2), scaled(x, 2))
    jit.sot_translator.reset()
    assert jit.sot_translator.translations == 0 and jit.sot_translator.cache.entries == []
    assert_same_result(jit(x, 2), scaled(x, 2))
    assert jit.sot_translator.translations == 1 and len(jit.sot_translator.cache.entries) == 1


def test_sot_reset_forgets_every_function_and_reset_of_one_leaves_the_others():
    one, other = jit_of(scaled), jit_of(numbered)
    x = rand(3)
    one(x, 2), other(x)
    one.sot_translator.reset()
    assert one.sot_translator.cache.entries == [] and len(other.sot_translator.cache.entries) == 1
    one(x, 2)
    sot.reset()
    assert one.sot_translator.cache.entries == [] and other.sot_translator.cache.entries == []
    assert_same_result(other(x), numbered(x))
    assert other.sot_translator.translations == 1


@pytest.mark.parametrize("reset", ["function", "all"])
def test_reset_lifts_the_cache_limit(reset):
    jit = jit_of(scaled, cache_size_limit=1)
    x = rand(2)
    jit(x, 1)
    with pytest.warns(CacheSizeLimitWarning):
        jit(x, 2.5)  # a float `n` after an int: a second translation is needed, past the limit
    assert jit.sot_translator.cache.eager
    jit.sot_translator.reset() if reset == "function" else sot.reset()
    cache = jit.sot_translator.cache
    assert not cache.eager and cache.eager_runs == 0 and cache.miss_reasons() == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled again, within the limit: no warning
        assert_same_result(jit(x, 3), scaled(x, 3))
    assert [e.payload is not None and e.code is not None for e in cache.entries] == [True]
    assert jit.sot_translator.fallbacks == []


def test_reset_forgets_the_dims_made_dynamic():
    jit = jit_of(numbered)
    for n in (2, 3):  # the second size misses on dim 0 alone: it is made dynamic
        jit(rand(n))
    assert "dynamic" in jit.sot_translator.shapes.describe()
    jit.sot_translator.reset()
    assert jit.sot_translator.shapes.describe() == "" and jit.sot_translator.recompiles == []
    x = rand(4)
    assert_same_result(jit(x), numbered(x))
    (entry,) = jit.sot_translator.cache.entries
    assert any("[4]" in str(g) for g in entry.guards)  # specialised on the size again


@pytest.mark.parametrize("reset", ["function", "all"])
def test_reset_forgets_breaks_and_the_resume_functions_caches(reset):
    jit = jit_of(breaks)
    x = rand(3)
    assert_same_result(jit(x), breaks(x))
    children = translators(jit)[1:]
    assert children and all(c.cache.entries for c in children)
    assert [e.code for e in jit.sot_translator.breaks] != []
    jit.sot_translator.reset() if reset == "function" else sot.reset()
    assert jit.sot_translator.breaks == [] and jit.sot_translator.children == []
    assert all(c.cache.entries == [] and c.translations == 0 for c in children)
    assert_same_result(jit(x), breaks(x))
    assert len(jit.sot_translator.breaks) == 1 and translators(jit)[1:]
    assert all(c.translations == 1 for c in translators(jit))


def test_reset_clears_the_report_of_the_function():
    jit = jit_of(breaks)
    x = rand(3)
    jit(x)
    jit.sot_translator.reset()
    mine = [f for f in sot.report().functions if f.qualname == "breaks" and f.file == __file__
            and f.cache.entries == [] and f.translations == 0]
    assert mine and all(f.breaks == [] and f.graphs == [] and f.translate_seconds == 0.0 for f in mine)


def test_the_report_keeps_apart_copies_of_one_function_that_compare_equal():
    """Code objects compare by value: two copies of one function (a notebook cell run twice, or
    `code.replace()`) are reported as two functions, each with its own cache and counts."""
    gc.collect()  # (copies earlier tests dropped, in reference cycles, would be reported while they live)
    kept, other = jit_of(breaks), jit_of(breaks)
    one, two = kept.sot_translator.code, other.sot_translator.code
    assert one == two and one is not two
    x = rand(3)
    kept(x), other(x)
    other.sot_translator.reset()
    mine = [f for f in sot.report().functions if f.qualname == "breaks" and f.file == __file__
            and f.kind == "function"]
    assert sorted((f.translations, len(f.cache.entries)) for f in mine) == [(0, 0), (1, 1)]


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).tanh()


def test_reset_of_a_layers_forward_retranslates_it():
    net = sot.to_static(Net())
    x = rand(4, 3)
    with sot.disable():
        want = net(x)
    assert_same_result(net(x), want)
    translator = net.forward.sot_translator
    translator.reset()
    assert translator.cache.entries == []
    assert_same_result(net(x), want)
    assert translator.translations == 1


def counts(n):
    for i in range(n):
        yield paddle.to_tensor(np.array([i], "float32"))


def test_reset_of_a_generator_keeps_its_fallback_and_forgets_its_calls():
    jit = jit_of(counts)
    assert_same_result(list(jit(2)), list(counts(2)))
    assert jit.sot_translator.eager_calls == 1
    jit.sot_translator.reset()
    assert jit.sot_translator.eager_calls == 0 and [f.code for f in jit.sot_translator.fallbacks] == ["SOT-G001"]


def through(layer, x):
    return layer(x) + 1


def test_a_layer_freed_after_reset_leaves_the_new_entries_alone():
    jit = jit_of(through)
    x = rand(4, 3)
    old = Net()
    jit(old, x)  # its entry guards `old` (held weakly: its death retires the entry)
    jit.sot_translator.reset()
    new = Net()
    with sot.disable():
        want = through(new, x)
    assert_same_result(jit(new, x), want)
    del old
    gc.collect()
    (entry,) = jit.sot_translator.cache.entries
    assert entry.code is not None
    assert_same_result(jit(new, x), want)
    assert jit.sot_translator.translations == 1 and entry.hits == 1
