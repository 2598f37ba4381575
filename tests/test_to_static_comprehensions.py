"""Comprehensions whose body breaks the graph (a tensor's value read with `.item()`): the result
the frame builds is eager's, for list, set and dict comprehensions, with the break in the value,
the key or the filter, flat or nested. 3.12+ inline comprehensions into the frame (the result is a
stack item of the frame's resume functions); 3.11 calls a nested function."""
import warnings

import numpy as np
import pytest

import runtime as paddle
from sot.guards.cache import CacheSizeLimitWarning
from sot_helpers import assert_same_result, jit_of, translators


def _inputs():
    return {"a": paddle.to_tensor(np.array([1.0, 2.0], "float32")),
            "b": paddle.to_tensor(np.array([-3.0, 1.0], "float32")),
            "c": paddle.to_tensor(np.array([0.5, 0.25], "float32"))}


def dict_value(d):
    return {k: v.sum().item() for k, v in d.items()}


def dict_of_a_dict_made_in_the_frame(d):
    made = {"x": d["a"] * 2, "y": d["b"] + 1}
    return {k: v.sum().item() for k, v in made.items()}


def dict_key(d):
    return {v.sum().item(): k for k, v in d.items()}


def dict_filter(d):
    return {k: v * 2 for k, v in d.items() if v.sum().item() > 0}


def dict_nested(d):
    return {k: {j: w.sum().item() for j, w in enumerate([v, v + 1])} for k, v in d.items()}


def dict_in_list(d):
    return [{k: v.sum().item()} for k, v in d.items()]


def dict_after_values(d):
    total = d["a"] + 1  # tensor work before the comprehension: the prefix graph is not empty
    return total, {k: (v + 1).max().item() for k, v in d.items()}


def list_value(d):
    return [v.sum().item() for v in d.values()]


def list_filter(d):
    return [k for k, v in d.items() if v.sum().item() > 0]


def list_nested(d):
    return [[w.sum().item() for w in (v, v * 2)] for v in d.values()]


def list_of_an_outer_tensor(d):
    a = d["a"] + 1  # read inside the comprehension: on 3.11 a closure cell of its nested function
    return [a[i].item() * 2 for i in range(2)], a * 3


def set_value(d):
    return {v.sum().item() for v in d.values()}


def set_filter(d):
    return {k for k, v in d.items() if v.min().item() < 1}


def set_key_of_dict(d):
    return {k: {w.sum().item() for w in (v, -v)} for k, v in d.items()}


CAPTURED = [dict_value, dict_of_a_dict_made_in_the_frame, dict_key, dict_filter, dict_nested, dict_in_list,
            dict_after_values, list_value, list_filter, list_nested, list_of_an_outer_tensor]
SETS = [set_value, set_filter, set_key_of_dict]  # (set opcodes may make the frame run eagerly: still eager's result)


def _assert_like_eager(fn):
    jit = jit_of(fn)
    for _ in range(2):  # the translation, then its cached code
        d = _inputs()
        assert_same_result(jit(d), fn(d))
    return jit


@pytest.mark.parametrize("fn", CAPTURED, ids=lambda f: f.__name__)
def test_a_comprehension_whose_body_breaks_builds_eagers_result_with_the_break_compiled(fn):
    root = translators(_assert_like_eager(fn))[0]
    assert root.translations == 1 and root.fallbacks == [] and root.breaks


@pytest.mark.parametrize("fn", SETS, ids=lambda f: f.__name__)
def test_a_set_comprehension_whose_body_breaks_gives_eagers_set(fn):
    _assert_like_eager(fn)


def test_a_dict_built_across_a_break_keeps_its_items_in_order():
    def build(d):
        out = {"first": 0.0, **{k: v.sum().item() for k, v in d.items()}, "last": 1.0}
        return out

    d = _inputs()
    got = jit_of(build)(d)
    assert_same_result(got, build(d))
    assert list(got) == ["first", "a", "b", "c", "last"]


def item_list(d):
    values = [v.sum().item() * 2 for v in d.values()]
    return d["a"] + values[0] + values[2] + len(values)


def test_values_read_in_a_comprehension_become_dynamic_instead_of_translating_per_value():
    jit = jit_of(item_list)
    rng = np.random.default_rng(0)
    counts = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheSizeLimitWarning)  # per-value translations would reach the limit
        for _ in range(16):
            d = {name: paddle.to_tensor(rng.uniform(-1, 1, 2).astype("float32")) for name in "abc"}
            assert_same_result(jit(d), item_list(d))
            counts.append(sum(t.translations for t in translators(jit)))
    assert counts[3] == counts[-1]  # after the first misses, every call hits
