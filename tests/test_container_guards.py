"""Guards on the lists, dicts and attributes a frame mutates: they describe each value as it was when
the frame was entered (the frame's own writes do not count), and a list the frame only appends to is
not guarded on its length or items at all (the appends are replayed as appends), so a list that grows
every call is served by one translation. Every call is compared with eager code, the containers
after the call included."""
import numpy as np

import runtime as paddle
from sot.testing import assert_same
from sot_helpers import events, jit_of, rand


def same_contents(jit, eager):
    """Lists/dicts equal item by item, tensors exactly (dtype, shape, values)."""
    assert type(jit) is type(eager) and len(jit) == len(eager)
    pairs = zip(jit.values(), eager.values()) if isinstance(eager, dict) else zip(jit, eager)
    if isinstance(eager, dict):
        assert list(jit) == list(eager)
    for j, e in pairs:
        if isinstance(e, paddle.Tensor):
            assert j.dtype == e.dtype and j.shape == e.shape
            np.testing.assert_array_equal(j.numpy(), e.numpy())
        else:
            assert j == e


def logs_a_call(x, log):
    log.append(1)
    return x + 1


def stores_a_key(x, table):
    table["sum"] = x.sum()
    return x + 1


def updates_a_dict(x, table):
    table.update({"sum": x.sum(), "n": 2})
    return x * 2


class Box:
    def __init__(self, v=0):
        self.v = v
        self.hist = []


def bumps_an_attribute(x, box):
    box.v = box.v + 1
    return x + box.v


def test_a_list_appended_to_is_guarded_as_it_was_at_entry():
    jit = jit_of(logs_a_call)
    for _ in range(3):
        assert_same(jit, rand(2), [])
    assert jit.sot_translator.translations == 1 and events(jit) == []


def test_dict_writes_are_guarded_on_the_keys_at_entry():
    for fn in (stores_a_key, updates_a_dict):
        jit = jit_of(fn)
        for _ in range(3):
            assert_same(jit, rand(2), {})
        assert_same(jit, rand(2), {"old": 1})  # other keys at entry: another translation, eager's result
        assert jit.sot_translator.translations == 2 and events(jit) == []


def test_an_attribute_written_then_read_is_guarded_on_its_value_at_entry():
    jit = jit_of(bumps_an_attribute)
    for _ in range(3):
        assert_same(jit, rand(2), Box(0))
    assert jit.sot_translator.translations == 1
    guards = [str(g) for g in jit.sot_translator.cache.entries[0].guards]
    assert "f_locals['box'].v == 0" in guards
    assert_same(jit, rand(2), Box(5))  # another value at entry: not the cached translation's
    assert jit.sot_translator.translations == 2


def records_a_loss(x, losses):
    loss = (x * 2).sum()
    losses.append(loss)
    return loss


def test_a_list_that_grows_every_call_is_translated_once():
    jit = jit_of(records_a_loss)
    eager_losses, jit_losses = [], []
    for _ in range(5):
        x = rand(3)
        same_contents([jit(x, jit_losses)], [records_a_loss(x, eager_losses)])
        same_contents(jit_losses, eager_losses)
    assert len(jit_losses) == 5
    assert jit.sot_translator.translations <= 1 and events(jit) == []
    guards = [str(g) for g in jit.sot_translator.cache.entries[0].guards]
    assert not any("losses" in g and "len(" in g for g in guards)


def records_through_an_attribute(x, box):
    box.hist.append(x * 2)
    box.hist.append(x + 1)  # read again through the attribute: the same list
    return x


def test_appends_through_two_reads_of_one_list_are_both_replayed():
    jit = jit_of(records_through_an_attribute)
    eager_box, jit_box = Box(), Box()
    for _ in range(3):
        x = rand(2)
        records_through_an_attribute(x, eager_box)
        jit(x, jit_box)
        same_contents(jit_box.hist, eager_box.hist)
    assert jit.sot_translator.translations == 1


def reads_after_appending(x, log):
    log.append(x * 3)
    return x + len(log), log[-1] + log[0]


def test_a_list_read_after_appending_sees_its_items():
    jit = jit_of(reads_after_appending)
    eager_log, jit_log = [rand(2)], [rand(2)]
    jit_log[0] = paddle.to_tensor(eager_log[0].numpy())
    for _ in range(3):
        x = rand(2)
        want = reads_after_appending(x, eager_log)
        got = jit(x, jit_log)
        same_contents(list(got), list(want))
        same_contents(jit_log, eager_log)
    assert events(jit) == []


def appends_to_both(x, a, b):
    a.append(1)
    b.append(2)
    return x + len(a)


def test_one_list_passed_twice_is_one_list():
    jit = jit_of(appends_to_both)
    assert_same(jit, rand(2), [], [])  # translated for two lists: guarded to be two
    fresh_shared = []
    assert_same(jit, rand(2), fresh_shared, fresh_shared)
    shared = []
    assert_same(jit, rand(2), shared, shared)
    assert_same(jit, rand(2), [], [])  # distinct lists: another translation
    assert_same(jit, rand(2), shared, shared)
    same_list = []
    assert_same(jit, rand(2), same_list, same_list)


def appends_without_reading(x, a, b):
    a.append(x * 2)
    b.append(x + 1)
    a.append(x)
    return x


def test_appends_to_a_list_passed_twice_keep_their_order():
    jit = jit_of(appends_without_reading)
    assert_same(jit, rand(2), [], [])  # translated for two lists: guarded to be two
    shared = [rand(2)]
    assert_same(jit, rand(2), shared, shared)
    distinct = ([rand(2)], [])
    assert_same(jit, rand(2), *distinct)
    assert jit.sot_translator.translations == 2


def marks_and_checks(x, box):
    box.flag = 1
    return x + (1 if hasattr(box, "flag") else 2)


def test_hasattr_sees_an_attribute_the_frame_wrote():
    jit = jit_of(marks_and_checks)
    for _ in range(2):
        assert_same(jit, rand(2), Box())
    assert jit.sot_translator.translations == 1


def appends_then_breaks(x, log):
    y = x * 2
    log.append(y)
    text = str(log)  # reads the items, needs tensor values: a graph break at this call
    return y + len(text)


def test_items_read_by_an_instruction_that_breaks_are_unread_again():
    jit = jit_of(appends_then_breaks)
    for _ in range(3):
        assert_same(jit, rand(2), [rand(2)])
    assert {code for code, _, _ in events(jit)} == {"SOT-B002"}  # (the resume function's str breaks too)
    assert jit.sot_translator.translations == 1  # guarded as the list was at entry
    for n in (0, 2):
        assert_same(jit, rand(2), [rand(2)] * n)


def hands_containers_on(x, log, table, box):
    log.append(x * 2)
    box.table = table
    box.hist.append(log)
    return x + 1, log


def test_a_list_or_dict_from_the_frame_is_returned_and_stored_as_itself():
    jit = jit_of(hands_containers_on)
    for n in range(3):
        log, table, box = [rand(2)] * n, {"a": 1}, Box()
        _, returned = jit(rand(2), log, table, box)
        assert returned is log and box.table is table and box.hist[0] is log and len(log) == n + 1
        assert_same(jit, rand(2), [rand(2)] * n, {"a": 1}, Box())
    assert jit.sot_translator.translations == 1 and events(jit) == []
