"""Builtins the translation folds or simulates, each argument form the real builtin accepts, under
to_static against eager: a `key=` made in the frame (a lambda, a closure) is called as eager calls
it, the real builtin decides (3.12's compensated float `sum` included), tensors go through where the
builtin accepts them, and a call eager code rejects raises eager's exception."""
import math

import numpy as np
import pytest

import runtime as paddle
from sot_helpers import assert_same_result, jit_of, translators

SIZES = [1, 2, 3]
WORDS = ["b", "A", "c", "B"]


def _x():
    return paddle.to_tensor(np.arange(6, dtype="float32").reshape(3, 2))


def negated(v):
    return -v


# (name, function of x); every one is captured whole (no break, no fallback)
CASES = [
    ("max_key_lambda", lambda x: x * max(SIZES, key=lambda s: -s)),
    ("min_key_lambda", lambda x: x * min(SIZES, key=lambda s: -s)),
    ("max_key_closure", lambda x: (lambda k: x * max(SIZES, key=lambda s: (s - k) ** 2))(2)),
    ("max_key_global_function", lambda x: x * max(SIZES, key=negated)),
    ("max_key_builtin", lambda x: x * max([-5, 3, 4], key=abs)),
    ("max_key_none", lambda x: x * max(SIZES, key=None)),
    ("max_args_key_tie_goes_to_first", lambda x: x * max(3, 1, 2, key=lambda v: (v - 2) ** 2)),
    ("min_args", lambda x: x * min(3, 1.5, 2)),
    ("max_default_empty", lambda x: x * max([], default=4)),
    ("max_default_unused", lambda x: x * max([1, 7], default=4)),
    ("max_of_shape", lambda x: x * max(x.shape)),
    ("min_of_shape_and_number", lambda x: x * min(x.shape[0], 2)),
    ("min_key_over_tensors", lambda x: min([x, x[:1], x[:2]], key=lambda t: t.shape[0]) + 1),
    ("max_key_with_tensor_work", lambda x: max([x, x * 2], key=lambda t: (t + 1).shape[1]) * 3),
    ("max_over_generator", lambda x: x * max(s * 2 for s in SIZES)),
    ("sorted_key_lambda", lambda x: [x * s for s in sorted(SIZES, key=lambda s: -s)]),
    ("sorted_reverse", lambda x: [x * s for s in sorted([2, 3, 1], reverse=True)]),
    ("sorted_key_reverse_stable", lambda x: sorted(WORDS, key=lambda w: w.lower(), reverse=True)),
    ("sorted_key_len", lambda x: sorted(["ccc", "a", "bb"], key=len)),
    ("sorted_tensors_by_shape", lambda x: sorted([x, x[:1]], key=lambda t: t.shape[0])[0] * 2),
    ("sorted_dict_keys", lambda x: sorted({"b": 1, "a": 2})),
    ("sum_floats", lambda x: sum([0.1] * 10)),
    ("sum_floats_start", lambda x: sum([0.1] * 10, start=0.5)),
    ("sum_ints_start_positional", lambda x: sum([1, 2], 10)),
    ("sum_tensors", lambda x: sum([x, x * 2])),
    ("sum_tensors_start_tensor", lambda x: sum([x, x], x)),
    ("sum_floats_then_tensor", lambda x: sum([0.1, 0.2, 0.3, x])),
    ("sum_generator_of_tensors", lambda x: sum(x * i for i in range(3))),
    ("sum_of_shape", lambda x: x * sum(x.shape)),
    ("sum_lists", lambda x: sum([[1], [2]], [])),
    ("any_list", lambda x: x * any([0, 0, 3])),
    ("all_generator", lambda x: x * all(s > 0 for s in SIZES)),
    ("any_generator_of_shapes", lambda x: x * any(d > 2 for d in x.shape)),
    ("enumerate_start", lambda x: [x * i for i, _ in enumerate(SIZES, 1)]),
    ("enumerate_start_keyword", lambda x: [x * i for i, _ in enumerate(SIZES, start=2)]),
    ("zip_three", lambda x: [x * (a + b + c) for a, b, c in zip(SIZES, [4, 5], (7, 8, 9))]),
    ("zip_strict", lambda x: [x * a * b for a, b in zip(SIZES, SIZES, strict=True)]),
    ("zip_iterator_and_list", lambda x: (lambda it: ([x * a for a, _ in zip(it, [0])], next(it)))(iter(SIZES))),
    ("enumerate_iterator", lambda x: (lambda it: ([i for i, _ in zip(range(1), enumerate(it))], next(it)))(
        iter(SIZES))),
    ("reversed_list", lambda x: [x * s for s in reversed(SIZES)]),
    ("reversed_range", lambda x: list(reversed(range(3)))),
    ("next_default", lambda x: x * next(iter([]), 5)),
    ("next_of_iter", lambda x: (lambda it: x * next(it) + next(it))(iter(SIZES))),
    ("iter_of_iterator_is_itself", lambda x: (lambda it: (next(iter(it)), next(it)))(iter(SIZES))),
    ("round_ndigits", lambda x: x * round(2.675, 2)),
    ("divmod_pow_mod", lambda x: x * divmod(7, 3)[1] + pow(3, 4, 5)),
    ("int_base", lambda x: x * int("ff", 16)),
    ("math_functions", lambda x: x * math.fsum([0.1] * 10) + math.prod([2, 3], start=2)),
    ("str_join_generator", lambda x: "-".join(str(s) for s in SIZES)),
]


@pytest.mark.parametrize("fn", [fn for _, fn in CASES], ids=[name for name, _ in CASES])
def test_a_builtin_gives_eagers_result_and_is_captured(fn):
    jit = jit_of(fn)
    for _ in range(2):  # the translation, then its cached code
        assert_same_result(jit(_x()), fn(_x()))
    root = translators(jit)[0]
    assert root.translations == 1 and root.fallbacks == [] and root.breaks == []


def test_a_key_lambda_is_called_once_per_item_in_eagers_order():
    def keyed(x, seen):
        return x * max(SIZES, key=lambda s: seen.append(s) or -s), sorted(WORDS, key=lambda w: seen.append(w) or w)

    eager_seen, jit_seen = [], []
    assert_same_result(jit_of(keyed)(_x(), jit_seen), keyed(_x(), eager_seen))
    assert jit_seen == eager_seen == [1, 2, 3, *WORDS]


def total(t):
    return t.sum().item()


def test_a_key_function_that_reads_a_tensor_value_breaks_and_gives_eagers_result():
    def keyed(x):
        return max([x, x * 2, -x], key=total) + 1

    jit = jit_of(keyed)
    for _ in range(2):
        assert_same_result(jit(_x()), keyed(_x()))
    root = translators(jit)[0]
    assert root.breaks and root.fallbacks == []  # the value is not known at translation time: max runs for real


@pytest.mark.parametrize("keyed", [
    lambda x: max([x, x * 2, -x], key=lambda t: t.sum().item()) + 1,
    lambda x: x * max(SIZES, key=lambda s: (x * s).sum().item() % 4),  # a closure
], ids=["lambda", "closure"])
def test_a_key_lambda_that_reads_a_tensor_value_breaks_at_the_call_with_its_reason(keyed):
    jit = jit_of(keyed)
    assert_same_result(jit(_x()), keyed(_x()))  # never a key taken as None
    root = translators(jit)[0]  # the lambda (and the cell it closes over) is made again where max runs for real
    assert [b.code for b in root.breaks] == ["SOT-B002"] and root.fallbacks == []


@pytest.mark.parametrize("call, error", [
    (lambda x: max([]), ValueError),
    (lambda x: min(SIZES, default=1, bogus=2), TypeError),
    (lambda x: max(1, 2, default=3), TypeError),
    (lambda x: sorted([1, "a"]), TypeError),
    (lambda x: sum(["a", "b"], ""), TypeError),
    (lambda x: sum(iterable=[1]), TypeError),
    (lambda x: list(zip([1, 2], [1], strict=True)), ValueError),
    (lambda x: next(iter([])), StopIteration),
    (lambda x: reversed(s for s in SIZES), TypeError),
    (lambda x: reversed(iter(SIZES)), TypeError),
    (lambda x: int("zz"), ValueError),
], ids=["max_empty", "min_bad_keyword", "max_args_with_default", "sorted_mixed", "sum_strings",
        "sum_iterable_keyword", "zip_strict_lengths", "next_exhausted", "reversed_generator", "reversed_iterator",
        "int_bad_text"])
def test_a_builtin_call_eager_rejects_raises_eagers_exception(call, error):
    with pytest.raises(error):
        call(_x())
    with pytest.raises(error):
        jit_of(call)(_x())
    with pytest.raises(error):  # even in full-graph mode: the frame runs eagerly and raises it
        jit_of(call, fallback=False)(_x())


def test_a_dict_view_is_live_and_can_be_iterated_again():
    def views(x):
        d = {"a": 1}
        keys, values = d.keys(), d.values()
        d["b"] = 2  # a view sees the writes made after it was taken
        return x * len(list(keys)) + len(list(keys)), sorted(values), list(reversed(d.items())), "b" in keys

    jit = jit_of(views)
    assert_same_result(jit(_x()), views(_x()))
    root = translators(jit)[0]
    assert root.fallbacks == [] and root.breaks == []
