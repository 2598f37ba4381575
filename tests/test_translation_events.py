"""The pipeline's events (sot.translation.events): a translator made, and each translation with what it added.

Reports and SOT_LOG (sot.tools) read the pipeline only through these events; a cache hit emits
nothing (it is served in C).
"""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot.translation import events
from sot_helpers import jit_of


def breaks_once(x):
    y = x + 1
    n = float(y.numpy().sum())  # a tensor's value read as a number: SOT-B002
    return y * n


def raises(x):
    raise KeyError("no such key")


@pytest.fixture
def watched():
    """The translators made and the translations run while the test watches."""
    made, translated = [], []
    unsubscribe = events.subscribe(on_made=made.append, on_translated=translated.append)
    yield made, translated
    unsubscribe()


def test_each_translation_reports_what_it_added_and_a_hit_reports_nothing(watched):
    made, translated = watched
    jit = jit_of(breaks_once)
    assert made == [jit.sot_translator]
    x = paddle.to_tensor(np.ones(3, "float32"))
    np.testing.assert_array_equal(jit(x).numpy(), breaks_once(x).numpy())
    first = next(t for t in translated if t.translator is jit.sot_translator)
    assert [e.code for e in first.breaks] == ["SOT-B002"] and first.breaks == jit.sot_translator.breaks
    assert first.entries == jit.sot_translator.cache.entries and not first.recompile
    assert first.fallbacks == [] and first.seconds > 0
    count = len(translated)
    np.testing.assert_array_equal(jit(x).numpy(), breaks_once(x).numpy())  # hits: no translation
    assert len(translated) == count
    x2 = paddle.to_tensor(np.ones((2, 3), "float32"))  # another rank: a miss, translated again
    np.testing.assert_array_equal(jit(x2).numpy(), breaks_once(x2).numpy())
    again = [t for t in translated[count:] if t.translator is jit.sot_translator]
    assert len(again) == 1 and again[0].recompile and len(again[0].entries) == 1


def test_a_translation_that_raises_is_reported(watched):
    _, translated = watched
    jit = jit_of(breaks_once, fallback=False)
    with pytest.raises(sot.GraphBreakError):
        jit(paddle.to_tensor(np.ones(3, "float32")))
    (translation,) = translated
    assert translation.translator is jit.sot_translator and translation.entries == []


def test_a_fallback_is_reported_and_watching_ends_with_the_subscription(watched):
    made, translated = watched
    jit = jit_of(raises)
    with pytest.raises(KeyError):
        jit(paddle.to_tensor(np.ones(3, "float32")))
    (translation,) = translated
    assert [f.code for f in translation.fallbacks] == ["SOT-R001"] == [f.code for f in jit.sot_translator.fallbacks]
    ended = []
    events.subscribe(on_made=ended.append, on_translated=ended.append)()
    jit_of(raises)
    assert len(made) == 2 and ended == []  # the fixture's subscription still sees it, the ended one does not
