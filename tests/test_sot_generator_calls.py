"""A decorated generator function runs eagerly (the hook never sees a generator's frames): each call
counts as one eager run in the report, as each call of any other function run eagerly does."""
import numpy as np

import runtime as paddle
import sot
from sot.tools.report import load
from sot_helpers import assert_same_result, jit_of


def counts(n):
    for i in range(n):
        yield paddle.to_tensor(np.array([i], "float32")) * 2


def test_each_call_of_a_generator_function_is_one_eager_run(tmp_path):
    jit = jit_of(counts)
    for n in (1, 2, 3):
        assert_same_result(list(jit(n)), list(counts(n)))
    assert jit.sot_translator.eager_calls == 3
    mine = [f for f in sot.report().functions if f.qualname == "counts" and f.eager_calls == 3]
    assert mine and all(f.eager_runs == 3 and f.captured_ratio == 0.0 for f in mine)
    loaded = load(sot.report().save(tmp_path / "r.json"))
    assert [f.eager_runs for f in loaded.functions if f.qualname == "counts" and f.eager_calls == 3] == \
        [f.eager_runs for f in mine]


def test_calls_under_disable_are_not_counted():
    jit = jit_of(counts)
    with sot.disable():
        assert_same_result(list(jit(2)), list(counts(2)))
    assert jit.sot_translator.eager_calls == 0


def test_a_generator_method_binds_and_counts():
    class Source:
        @sot.to_static
        def items(self, n):
            yield from range(n)

    s = Source()
    assert list(s.items(3)) == list(Source.items.__wrapped__(s, 3))
    assert Source.items.sot_translator.eager_calls == 1
