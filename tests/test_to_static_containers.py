"""Methods of lists, tuples, dicts and sets are simulated: the frame compiles as one graph.

Each case runs eagerly and under the JIT on equal fresh arguments: the results, the containers passed
in (mutated as eager mutates them, written back after the graph) and the order of sets agree, and the
frame was captured without a break or a fallback.
"""
import collections

import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import assert_same_result, explained_like_eager, fresh, jit_of, translators


def tensor(*values):
    return paddle.to_tensor(np.array(values, "float32"))


def pair():
    return tensor(1.0, 2.0), tensor(3.0, -1.0)


def tuple_count_index(x, y):
    t = (1, 2, 2, "a")
    return x * t.count(2) + t.index("a") + t.index(2, 2) + (x, y).index(x) + (y, x, 1).index(y)


def list_insert_pop_remove(x, xs):
    xs.insert(1, x * 2)
    xs.insert(-10, x + 1)
    last = xs.pop()
    first = xs.pop(0)
    ks = [3, 1, 4, 1]
    ks.remove(1)
    return last + first + ks.pop(1) + len(xs)


def list_copy_clear_reverse_extend(x, xs):
    ys = xs.copy()
    ys.append(x)
    xs.reverse()
    zs = [1, 2]
    zs.extend((3, 4))
    zs.extend(zs)
    zs.clear()
    return ys[-1] + xs[0] + len(ys) + len(zs)


def list_sort(x, xs):
    ks = [3, 1, 2, 5, 4]
    ks.sort()
    words = ["bb", "a", "ccc", "dd"]
    words.sort(key=lambda w: len(w), reverse=True)
    return x * ks[0] + ks.index(5) + len(words[0]), words, ks.count(4)


def list_of_outside_mutated(x, xs):
    xs.sort(key=lambda v: -v)
    xs.extend([7, 0])
    return x * xs[0]


def dict_methods(x, d):
    e = d.copy()
    e["new"] = x * 3
    got = d.get("a") + d.get("missing", x)
    d.setdefault("b", x + 10)
    first = d.setdefault("a", x * 0)
    popped = d.pop("a")
    absent = d.pop("zz", 5)
    d.update({"c": x - 1}, z=x)
    d.update([("w", 2.0)])
    k, v = e.popitem()
    return got + first + popped + absent + v, k, list(e)


def dict_clear_items(x, d):
    total = x
    for key, value in d.items():
        total = total + value
    copy = d.copy()
    d.clear()
    return total, len(copy), len(d)


def set_methods(x, s):
    t = {3, 1, 2}
    t.add(7)
    t.discard(1)
    t.remove(2)
    t.update([9, 8], (5,))
    u = t | {100} | s
    w = t & {3, 9, 42}
    d = t - w
    t.intersection_update({3, 7, 8, 9})
    popped = t.pop()
    t -= {9}
    t |= {1}
    n = len(u) + len(w) + popped + sum(d)
    return x * n + t.issubset({1, 3, 7, 8}) + s.isdisjoint(t), list(u), t, d.union(w), frozenset(t)


def set_comprehension(x, names):
    seen = {n.upper() for n in names if n}
    more = {*names, "z"}
    return x + len(seen) + ("A" in seen) + ("q" in more), seen, more


def set_builtin(x, xs):
    s = set([3, 3, 1]) | set(range(4))
    f = frozenset({1: 2, 5: 6})
    return x + sum(s) + len(f) + max(s), sorted(s), s


def dict_builtin_and_slice_assignment(x, xs):
    cfg = dict(a=1, b=2)
    merged = dict(cfg, c=3)
    pairs = dict([("k", x), ("j", 2.0)])
    ks = [1, 2, 3, 4]
    ks[1:3] = [9]
    xs[:1] = [x * 5, x]
    return pairs["k"] + merged["c"] + sum(ks) + len(xs), list(merged)


CASES = {
    "tuple.count/index": (tuple_count_index, pair),
    "list.insert/pop/remove": (list_insert_pop_remove, lambda: (tensor(1.0), [tensor(2.0), tensor(3.0)])),
    "list.copy/clear/reverse/extend": (list_copy_clear_reverse_extend, lambda: (tensor(1.0), [tensor(2.0), 4])),
    "list.sort": (list_sort, lambda: (tensor(1.0, 2.0), [])),
    "list from outside sorted": (list_of_outside_mutated, lambda: (tensor(1.0), [3, 9, 1])),
    "dict methods": (dict_methods, lambda: (tensor(1.0, 2.0), {"a": tensor(5.0, 6.0), "b": tensor(0.5, 1.5)})),
    "dict.clear/items": (dict_clear_items, lambda: (tensor(1.0), {"a": tensor(2.0), "b": 3.0})),
    "set methods": (set_methods, lambda: (tensor(1.0, 2.0), {4, 5})),
    "set comprehension": (set_comprehension, lambda: (tensor(1.0), ["a", "b", "", "a"])),
    "set() and frozenset()": (set_builtin, lambda: (tensor(1.0), [])),
    "dict() and slice assignment": (dict_builtin_and_slice_assignment, lambda: (tensor(1.0), [tensor(2.0), 3])),
}


@pytest.mark.parametrize("name", CASES)
def test_a_container_method_is_captured_like_eager(name):
    fn, make_args = CASES[name]
    report = explained_like_eager(fn, make_args)
    assert report.breaks == []


def test_the_cached_translation_gives_a_new_set_each_call():
    jit = sot.to_static(fresh(set_builtin))
    first, second = jit(tensor(1.0), [])[2], jit(tensor(1.0), [])[2]
    first.add(99)
    assert second == set(range(4)) and jit.sot_translator.translations == 1


def mutates_a_set_argument(x, s):
    y = x * 2
    s.add(len(s))
    return y + len(s)


def test_mutating_a_set_from_outside_breaks_at_the_call_only():
    report = explained_like_eager(mutates_a_set_argument, lambda: (tensor(1.0), {1, 2}))
    assert [e.code for e in report.breaks] == ["SOT-S001"] and report.graph_count == 2


def returns_a_grown_set(x):
    s = set(range(8))
    for k in range(7):
        s.discard(k)
    s.update([40, 24, 16])
    return x + 1, s


def test_a_set_a_new_one_would_not_iterate_alike_is_never_returned_reordered():
    x = tensor(1.0)
    eager = returns_a_grown_set(x)[1]
    assert list(eager.copy()) != list(eager)  # (the case this test is about: a copy iterates otherwise)
    jit = sot.to_static(fresh(returns_a_grown_set))
    assert list(jit(x)[1]) == list(eager)


def pops_empty(x, xs):
    y = x + 1
    return y + [].pop()


def index_missing(x):
    return x + (1, 2).index(3)


@pytest.mark.parametrize("fn", [pops_empty, index_missing])
def test_a_failing_method_raises_what_eager_raises(fn):
    with pytest.raises(Exception) as eager:
        fn(tensor(1.0), []) if fn is pops_empty else fn(tensor(1.0))
    with pytest.raises(type(eager.value)):
        jit = sot.to_static(fresh(fn))
        jit(tensor(1.0), []) if fn is pops_empty else jit(tensor(1.0))


def compares_tensors(x, y):
    return x + [x, y].index(x) + [y, x].index(y)


def test_finding_a_tensor_by_identity_needs_no_break():
    report = explained_like_eager(compares_tensors, pair)
    assert report.breaks == []


def compares_unlike_tensors(x, y):
    z = x * 2
    return z + [x].count(y)


def test_comparing_distinct_tensors_breaks_the_graph():
    report = explained_like_eager(compares_unlike_tensors, lambda: (tensor(1.0, 2.0)[:1], tensor(1.0)))
    assert [e.code for e in report.breaks] == ["SOT-B001"]


def reads_then_replaces_then_breaks(x, d):
    old = d["a"]
    d["a"] = x * 2
    d.pop("b")
    n = int(x.sum().item())  # a break: the writes above are made before it
    return old + n, d["a"]


def test_a_tensor_read_before_a_write_into_its_dict_keeps_its_value_after_a_break():
    report = explained_like_eager(reads_then_replaces_then_breaks,
                                  lambda: (tensor(1.0, 2.0), {"a": tensor(5.0, 6.0), "b": tensor(7.0, 8.0)}))
    assert [e.code for e in report.breaks] == ["SOT-B002"]


def repeat_a_list(x):
    ts = [x * 2] * 3
    return paddle.concat(ts)


def repeat_a_tuple_from_the_left(x):
    pair = 2 * (x, x + 1)
    return paddle.stack(list(pair))


def repeat_a_nested_list(x):
    rows = [[x]] * 2  # one inner list, twice: appending to it shows in both rows, as eagerly
    rows[0].append(x + 1)
    return [len(r) for r in rows], paddle.concat(rows[1])


def repeat_by_zero_and_a_negative_count(x):
    return [x] * 0, (x,) * -1, [x * 2] * True


@pytest.mark.parametrize("fn", [repeat_a_list, repeat_a_tuple_from_the_left, repeat_a_nested_list,
                                repeat_by_zero_and_a_negative_count])
def test_a_sequence_of_tensors_repeated_by_a_constant_is_captured(fn):
    report = explained_like_eager(fn, lambda: (paddle.to_tensor(np.array([1.0, 2.0], "float32")),))
    assert report.break_count == 0, str(report)


def test_a_list_repeated_in_place_is_still_eager_correct():
    def f(x, lst):
        lst *= 2
        return x * len(lst)

    jit = sot.to_static(fresh(f))
    x = paddle.ones([2])
    lst_eager, lst_jit = [1, 2], [1, 2]
    np.testing.assert_array_equal(jit(x, lst_jit).numpy(), f(x, lst_eager).numpy())
    assert lst_jit == lst_eager


def ordered_dicts(x, a, b):
    made = collections.OrderedDict(first=x * 2)
    made["second"] = x + 1
    made.update([("third", x - 1)])
    return made, a == b, a == dict(b), f"{a}", str(a), list(a)


def test_ordered_dicts_made_compared_and_shown_as_eagerly():
    """An OrderedDict made in the function comes back an OrderedDict in its order; two compare in order
    (unlike dicts), and one shows as an OrderedDict (before, both were folded as plain dicts)."""
    x = paddle.to_tensor(np.array([1.0, 2.0], "float32"))
    a = collections.OrderedDict([("p", 1), ("q", 2)])
    b = collections.OrderedDict([("q", 2), ("p", 1)])
    jit = jit_of(ordered_dicts)
    got, want = jit(x, a, b), ordered_dicts(x, a, b)
    assert_same_result(got, want)
    assert [t.fallbacks for t in translators(jit)] == [[]]


def ordered_dict_at_a_break(x):
    made = collections.OrderedDict()
    made["b"] = x * 2
    made["a"] = x
    if x.sum() > 0:  # the OrderedDict is live at the break: made again there, in its order
        made["c"] = x + 1
    return made


def test_an_ordered_dict_live_at_a_break():
    for sign in (1.0, -1.0):
        x = paddle.to_tensor(np.array([1.0, 2.0], "float32") * sign)
        assert_same_result(jit_of(ordered_dict_at_a_break)(x), ordered_dict_at_a_break(x))


def losses_by_kind(feats):
    losses = collections.defaultdict(float)  # a missing key starts at float() == 0.0
    for name, value in feats.items():
        losses[name.split("_")[0]] += value.mean()
    return dict(losses)


def grouped_by_parity(x):
    groups = collections.defaultdict(list)
    for i in range(4):
        groups[i % 2].append(x * i)
    return groups, [paddle.add_n(groups[k]) for k in sorted(groups)]


def test_a_defaultdict_made_in_the_function_is_captured_in_one_graph():
    x = paddle.to_tensor(np.array([1.0, 3.0], "float32"))
    feats = {"cls_a": x, "cls_b": x * 2, "box_a": x * 3}
    want = losses_by_kind(feats)
    np.testing.assert_allclose([want["cls"].numpy(), want["box"].numpy()], [6.0, 6.0])  # mean 2, 4 / mean 6
    report = explained_like_eager(losses_by_kind, lambda: (feats,))
    assert (report.graph_count, report.break_count) == (1, 0)


def test_a_returned_defaultdict_keeps_its_factory_and_order():
    x = paddle.to_tensor(np.array([1.0, 2.0], "float32"))
    jit = jit_of(grouped_by_parity)
    (got, sums), (want, want_sums) = jit(x), grouped_by_parity(x)
    assert_same_result((got, sums), (want, want_sums))
    np.testing.assert_array_equal(want_sums[1].numpy(), [4.0, 8.0])  # x * 1 + x * 3
    assert got.default_factory is list and got["new"] == []  # still a defaultdict of lists
    assert [t.fallbacks for t in translators(jit)] == [[]]


def counted_across_a_break(x):
    counts = collections.defaultdict(int)
    counts["a"] += 1
    if float(x.sum()) > 0:  # a break with the defaultdict live: made again, with its factory
        counts["b"] += 2
    counts["c"]
    return counts, x + counts["a"]


def test_a_defaultdict_live_at_a_break_keeps_its_factory():
    for sign in (1.0, -1.0):
        x = paddle.to_tensor(np.array([1.0, 2.0], "float32") * sign)
        jit = jit_of(counted_across_a_break)
        (got, y), (want, want_y) = jit(x), counted_across_a_break(x)
        assert got == want and got.default_factory is int
        assert_same_result(y, want_y)
        # the resume function takes the defaultdict in and fills it, written back after its graph
        assert [[b.code for b in t.breaks] for t in translators(jit)] == [["SOT-B002"], []]


def without_a_factory(x):
    d = collections.defaultdict(None, {"a": x})
    return d["b"]


def fills_a_given_defaultdict(d, x):
    return d["a"] * x + d["missing"]  # eager stores float() under "missing" in the caller's dict


def test_a_defaultdict_without_a_factory_raises_and_one_passed_in_is_filled_as_eagerly():
    x = paddle.to_tensor(np.array([1.0, 2.0], "float32"))
    with pytest.raises(KeyError, match="'b'"):
        jit_of(without_a_factory)(x)
    eager_d, jit_d = (collections.defaultdict(float, {"a": x * 2}) for _ in range(2))
    assert_same_result(jit_of(fills_a_given_defaultdict)(jit_d, x), fills_a_given_defaultdict(eager_d, x))
    assert dict(jit_d) == {"a": jit_d["a"], "missing": 0.0} and list(jit_d) == list(eager_d)


def missing_of(d, x):
    return x * 2, d["missing"]


def test_a_defaultdict_passed_in_is_guarded_on_its_factory():
    jit, x = jit_of(missing_of), paddle.to_tensor(np.array([1.0], "float32"))
    for factory, made in ((float, 0.0), (int, 0), (list, []), (float, 0.0)):
        d = collections.defaultdict(factory, {"a": 1})
        value = jit(d, x)[1]
        assert type(value) is factory and value == made and d == {"a": 1, "missing": made}
    assert jit.sot_translator.translations == 3
