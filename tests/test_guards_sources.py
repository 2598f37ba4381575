"""Guard sources are objects the translation builds step by step, never text parsed back.

A translation's Trackers build each source (`F_LOCALS.item('self').attr('fc1')...`); its text, the
Python expression a guard dump, a miss report and `explain` show, is derived from the steps and must
read as it always did. Sources that no literal text could name (an attribute set with setattr under a
name that is not an identifier, a dict key that is an infinite float) are guarded like any other, and
the compiled function gives eager's result.
"""
import numpy as np
import pytest

import runtime as paddle
import sot
import sot.guards.guard as guard_module
import sot.guards.source as source_module
from runtime import nn
from sot.dynamic.numbers import numpy_value_source
from sot.guards import Guard
from sot.guards.source import F_LOCALS, parse_source
from sot.opcode_executor.trackers import (BuiltinTracker, GetAttrTracker, GetItemTracker, GlobalTracker, LocalTracker,
                                          TypeTracker)
from sot_helpers import assert_same_result, jit_of, rand

SCALE = 2.0


class Net(nn.Layer):
    MODE = "add"

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 3)

    @classmethod
    def mode(cls):
        return cls.MODE

    def forward(self, x, cfg, pair, s):
        import math  # an import: its source is an expression
        y = self.fc1(x) * SCALE + len(pair) + cfg["bias"] + pair[1] * math.pi
        if hasattr(self, "extra"):
            y = y + 1
        if self.mode() == "add":
            y = y + s
        return y


def _args(batch, s):
    return rand(batch, 3), {"bias": 0.5}, (1, 2.0), s


def _no_parsing(monkeypatch):
    def refuse(text):
        raise AssertionError(f"a translation parsed source text {text!r}")
    monkeypatch.setattr(guard_module, "parse_source", refuse)
    monkeypatch.setattr(source_module, "parse_source", refuse)


def test_a_translation_parses_no_source_text(monkeypatch):
    net = Net()
    eager = net.forward
    jit = jit_of(Net.forward)
    _no_parsing(monkeypatch)
    # the first call, a new batch size (dims made dynamic), a new number (made dynamic), a NumPy scalar
    for batch, s in [(2, 1.0), (4, 1.0), (4, 3.0), (5, np.float32(0.5))]:
        args = _args(batch, s)
        assert_same_result(jit(net, *args), eager(*args))
    assert jit.sot_translator.recompiles  # the misses were explained from the guards' sources
    assert jit.sot_translator.fallbacks == []
    assert not hasattr(source_module, "_cache")  # no table of every source text ever seen


class Box:
    pass


def writes_and_reads(x, out, seen, tags, k, box, other):
    out.append(1)  # written: guarded to be no other list read (`a is not b`)
    box.n = len(seen)  # written: guarded against the other objects of its type (`a is b` / `a is not b`)
    if k > 0:  # a NumPy scalar's value needed: guarded through `.item()`
        x = x + 1
    return x * len(tags) + other.n + seen[0]


def test_guards_of_containers_writes_and_numpy_scalars_parse_no_text(monkeypatch):
    jit = jit_of(writes_and_reads)
    _no_parsing(monkeypatch)
    for k in (np.float64(1.0), np.float64(-1.0)):
        eager_args = [rand(2), [], [3], {"a", "b"}, k, Box(), Box()]
        jit_args = [eager_args[0], [], [3], {"a", "b"}, k, Box(), Box()]
        eager_args[6].n = jit_args[6].n = 2
        assert_same_result(jit(*jit_args), writes_and_reads(*eager_args))
        assert jit_args[1] == eager_args[1] and jit_args[5].n == eager_args[5].n
    assert jit.sot_translator.fallbacks == []


def test_displayed_text_of_typical_sources_is_unchanged():
    self_src = LocalTracker("self")
    weight = GetAttrTracker(GetAttrTracker(self_src, "fc1"), "weight")
    shown = {
        weight: "f_locals['self'].fc1.weight",
        GlobalTracker("SCALE"): "f_globals['SCALE']",
        BuiltinTracker("len"): "f_builtins['len']",
        GetItemTracker(LocalTracker("cfg"), "bias"): "f_locals['cfg']['bias']",
        GetItemTracker(GetAttrTracker(self_src, "layers"), 0): "f_locals['self'].layers[0]",
        GetAttrTracker(TypeTracker(self_src), "MODE"): "type(f_locals['self']).MODE",
    }
    for tracker, text in shown.items():
        assert tracker.source.text == str(tracker.source) == text
        assert parse_source(text) == tracker.source  # a guard written by hand is the same guard
        assert Guard(text, "value_eq", 1) == Guard(tracker.source, "value_eq", 1)
    assert numpy_value_source(F_LOCALS.item("s")).text == "f_locals['s'].item()"
    assert str(Guard(weight.source, "len_eq", 3)) == "len(f_locals['self'].fc1.weight) == 3"


def test_shared_prefixes_are_read_once_in_the_generated_guards():
    net = Net()
    args = _args(2, 1.0)
    jit = jit_of(Net.forward)
    assert_same_result(jit(net, *args), net.forward(*args))
    text = jit.sot_translator.cache.guard_source()
    # each prefix bound to one local once, which every other guard on it reads
    assert text.count(":= f_locals['self'])") == 1 and text.count(":= f_locals['pair'])") == 1, text
    assert text.count("L_pair[") >= 2 and "len(L_pair)" in text, text
    # what the Layer tree determines (fc1, its parameters, the methods on its class) is one guard on its root
    assert "TREE.holds(L_self" in text and "fc1" not in text, text


# ----- sources no literal text could name -----

def scaled_by_key(x, table):
    return x * table[1.5]


@pytest.mark.parametrize("key", [float("inf"), float("-inf")])
def test_a_dict_with_an_infinite_key_is_guarded_item_by_item(key):
    jit = jit_of(scaled_by_key)
    x = rand(2)
    for table in ({key: 2.0, 1.5: 3.0}, {key: 2.0, 1.5: 4.0}, {key: 5.0, 1.5: 4.0}):
        assert_same_result(jit(x, table), scaled_by_key(x, table))
    assert jit.sot_translator.fallbacks == []


def test_a_dict_with_a_nan_key_is_not_translated_once_per_call():
    jit = jit_of(scaled_by_key)
    x = rand(2)
    table = {float("nan"): 2.0, 1.5: 3.0}
    for _ in range(10):
        assert_same_result(jit(x, table), scaled_by_key(x, table))
    table[1.5] = 4.0
    assert_same_result(jit(x, table), scaled_by_key(x, table))
    assert jit.sot_translator.translations <= 3


class Bag:
    pass


def scaled_by_odd_names(x, bag):
    return x * getattr(bag, "a-b") + getattr(bag, "class")


def test_attributes_whose_names_are_not_identifiers_are_guarded():
    bag = Bag()
    setattr(bag, "a-b", 2)
    setattr(bag, "class", 3)
    jit = jit_of(scaled_by_odd_names)
    x = rand(2)
    assert_same_result(jit(x, bag), scaled_by_odd_names(x, bag))
    setattr(bag, "a-b", 5)
    setattr(bag, "class", 7)
    assert_same_result(jit(x, bag), scaled_by_odd_names(x, bag))
    assert jit.sot_translator.fallbacks == []
