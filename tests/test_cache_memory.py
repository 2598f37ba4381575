"""Cache entries do not keep what they were translated for alive: objects guarded by identity are held
weakly, and an entry whose guarded object (or the Layer a guarded parameter was read from) died is
dropped with its compiled graph. Probed with weak references after `del` and `gc.collect()`; the
function keeps giving eager's results for new objects."""
import gc
import weakref

import numpy as np

import runtime as paddle
from runtime import nn
from sot.guards import CodeCache, FrameLike, Guard
from sot_helpers import jit_of, translators


def same(got, want):
    """Tensors equal exactly (dtype, shape, values)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def applies(layer, x):
    return layer(x) * 2


def applies_once_reported(layer, x):  # (one test's: the report finds its functions by name)
    return layer(x) * 2


def calls(fn, x):
    return fn(x) + 1


def test_layers_passed_in_and_their_parameters_are_not_kept_alive():
    jit, x = jit_of(applies), paddle.ones([2, 3])
    probes = []
    for _ in range(3):
        layer = nn.Linear(3, 3)
        same(jit(layer, x), applies(layer, x))
        probes += [weakref.ref(layer), weakref.ref(layer.weight), weakref.ref(layer.bias)]
        del layer
    gc.collect()
    assert [p() for p in probes] == [None] * len(probes)
    layer = nn.Linear(3, 3)  # a new Layer still gets eager's result, and the cache did not fill up
    same(jit(layer, x), applies(layer, x))
    assert len(translators(jit)[0].cache.entries) == 1


def test_lambdas_passed_in_are_not_kept_alive():
    jit, x = jit_of(calls), paddle.ones([2])
    probes = []
    for k in range(3):
        fn = lambda v, k=k: v * (k + 2)  # noqa: E731 - a new function object each time
        same(jit(fn, x), calls(fn, x))
        probes.append(weakref.ref(fn))
        del fn
    gc.collect()
    assert [p() for p in probes] == [None] * 3
    fn = lambda v: v - 3  # noqa: E731
    same(jit(fn, x), calls(fn, x))


def test_an_entry_whose_guarded_object_died_never_matches_and_is_dropped():
    class Marker:
        pass

    marker = Marker()
    cache = CodeCache(calls.__code__)
    cache.insert([Guard("f_locals['fn']", "id_is", marker)], "old")
    assert cache.lookup(FrameLike({"fn": marker})) == "old"
    del marker
    gc.collect()
    assert cache.lookup(FrameLike({"fn": None})) is None  # a dead reference never matches None
    assert cache.entries == [] and cache.dropped == 1
    other = Marker()
    cache.insert([Guard("f_locals['fn']", "id_is", other)], "new")
    assert cache.lookup(FrameLike({"fn": other})) == "new"


def test_objects_that_cannot_be_weakly_referenced_are_held():
    method = list.append  # a method descriptor: no weak references
    cache = CodeCache(calls.__code__)
    cache.insert([Guard("f_locals['fn']", "id_is", method)], "entry")
    assert cache.lookup(FrameLike({"fn": list.append})) == "entry"
    assert cache.lookup(FrameLike({"fn": list.extend})) is None


class Tied(nn.Layer):
    """A Layer made anew on every call around one shared parameter."""

    def __init__(self, weight):
        super().__init__()
        self.weight = weight

    def forward(self, x):
        return x * self.weight


def test_new_layers_sharing_one_parameter_stop_retranslating_after_the_limit():
    shared = nn.Linear(3, 3).bias
    jit, x = jit_of(applies), paddle.ones([2, 3])
    for _ in range(20):
        layer = Tied(shared)
        same(jit(layer, x), applies(layer, x))
        del layer
        gc.collect()
    translator = translators(jit)[0]
    limit = translator.cache.cache_size_limit
    assert translator.cache.owner_drops == limit
    assert translator.translations == limit + 1


class Settings:
    """A plain object holding a parameter."""


def scales(x, settings):
    return x * settings.weight


def test_a_parameter_held_by_a_plain_object_passed_in_is_not_kept_alive():
    jit, x = jit_of(scales), paddle.ones([3])
    settings = Settings()
    settings.weight = paddle.create_parameter([3], "float32")
    probe = weakref.ref(settings.weight)
    same(jit(x, settings), scales(x, settings))
    del settings
    gc.collect()
    assert probe() is None


def test_reports_still_count_the_graphs_of_entries_whose_layer_died():
    # `sot explain SCRIPT:FUNCTION` reports after the script's Layers are gone: what ran still counts
    import sot
    jit, x = jit_of(applies_once_reported), paddle.ones([2, 3])
    layers = [nn.Linear(3, 3) for _ in range(2)]
    explained = [sot.explain(jit, layer, x) for layer in layers]
    assert [e.graph_count for e in explained] == [1, 1]
    before = [(g.entry, g.ops, g.runs) for f in sot.report().function("applies_once_reported") for g in f.graphs]
    probe = weakref.ref(layers[0].weight)
    del layers, explained
    gc.collect()
    assert probe() is None  # the entry's SIR went with the Layer
    after = [f for f in sot.report().function("applies_once_reported") if f.file == __file__]
    assert [(g.entry, g.ops, g.runs) for f in after for g in f.graphs] == before and len(before) == 2
    assert sum(f.graph_count for f in after) == 2 and all(g.ops > 0 for f in after for g in f.graphs)


def breaks_then_adds(x):
    y = x * 2
    if float(y.sum()) > 0:  # a graph break: a resume function, with a code cache of its own
        y = y + 1
    return y - 3


def test_a_dropped_function_whose_code_was_made_at_run_time_is_freed_with_its_caches():
    """Each copy of one source (exec'd code, a notebook cell run again) gets a code object of its own;
    once its function is dropped, that code, its cache and its resume functions' go too."""
    x = paddle.ones([3])
    probes = []
    for _ in range(2):
        jit = jit_of(breaks_then_adds)
        same(jit(x), breaks_then_adds(x))
        made = translators(jit)
        assert len(made) == 2  # the function and the resume function its break made
        probes += [weakref.ref(t.code) for t in made] + [weakref.ref(t.cache) for t in made]
        del jit, made
    for _ in range(4):  # a code object's constants are not traced by the collector: one layer per collection
        gc.collect()
    assert [p() for p in probes] == [None] * len(probes)
