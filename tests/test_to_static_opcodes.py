"""to_static captures frames with control flow on Python values, containers and builtins whole.

Every JIT result is compared with the eager result of the same function on the same inputs, and
the frame must have been translated (no fallback recorded).
"""

import pytest

import runtime as paddle
from sot_helpers import assert_same_result, captured, events, jit_of, rand

SCALES = [1, 2, 3]


def branch_on_constant(x, n):
    if n > 2:
        x = x * 2
    elif n == 2 or not n:
        x = x - 1
    else:
        x = -x
    return x if n is not None else x + 1


def optional_arg(x, bias=None):
    if bias is None:
        return x
    return x + bias


def loop_over_range(x):
    for i in range(4):
        if i == 1:
            continue
        if i == 3:
            break
        x = x + i
    return x


def loop_over_tensors(xs):
    total = xs[0]
    for t in xs[1:]:
        total = total + t
    return total


def while_loop(x):
    i = 0
    while i < 3:
        x = x * 2
        i += 1
    return x


def containers(x, y):
    pair = (x, y)
    d = {"a": x, "b": pair[1]}
    a, b = pair
    out = [a + b, d["a"] * 2]
    out.append(y - 1)
    return out, tuple(out[:2]), {"sum": out[0], "n": len(out)}


def comprehension(xs):
    return [t * 2 for t in xs]


def tensor_indexing(x):
    return x[0], x[1:, ::2], x[:, 1]


def builtins_on_values(xs, n):
    out = []
    for i, t in enumerate(xs):
        out.append(t * i)
    for a, b in zip(xs, SCALES):
        out.append(a + b)
    k = max(n, 2) + min(1, n) + abs(-n) + sum([1, 2]) + int(2.5) + float(n) + bool(n)
    return out, len(xs), k, isinstance(xs[0], paddle.Tensor), isinstance(n, (int, float)), 3 in SCALES


def constant_membership(x, mode):
    if mode in ("double", "twice"):
        return x * 2
    if mode not in ["neg"]:
        return x
    return -x


CASES = [
    (branch_on_constant, lambda: (rand(3), 3)), (branch_on_constant, lambda: (rand(3), 2)),
    (branch_on_constant, lambda: (rand(3), 0)), (branch_on_constant, lambda: (rand(3), 1)),
    (optional_arg, lambda: (rand(3),)), (optional_arg, lambda: (rand(3), rand(3))),
    (loop_over_range, lambda: (rand(2),)), (loop_over_tensors, lambda: ([rand(3), rand(3), rand(3)],)),
    (loop_over_tensors, lambda: ((rand(2), rand(2)),)), (while_loop, lambda: (rand(2),)),
    (containers, lambda: (rand(2), rand(2))),
    (tensor_indexing, lambda: (rand(3, 4),)), (builtins_on_values, lambda: ([rand(2), rand(2)], 3)),
    (constant_membership, lambda: (rand(2), "twice")), (constant_membership, lambda: (rand(2), "x")),
    (constant_membership, lambda: (rand(2), "neg")),
]


@pytest.mark.parametrize("fn,inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_frame_is_captured_and_matches_eager(fn, inputs):
    captured(fn, *inputs())


def test_comprehensions_are_captured_on_every_version():
    # 3.12+ inline comprehensions into the frame; 3.11 makes a nested function the executor inlines
    captured(comprehension, [rand(2), rand(2)])


def test_a_different_python_value_translates_again():
    jit = captured(branch_on_constant, rand(3), 3)
    for n, translations in [(3, 1), (2, 2), (3, 2), (1, 3)]:
        x = rand(3)
        assert_same_result(jit(x, n), branch_on_constant(x, n))
        assert jit.sot_translator.translations == translations


def test_a_list_of_another_length_translates_again():
    jit = captured(loop_over_tensors, [rand(2), rand(2)])
    xs = [rand(2), rand(2)]
    assert_same_result(jit(xs), loop_over_tensors(xs))
    assert jit.sot_translator.translations == 1
    xs = [rand(2), rand(2), rand(2)]
    assert_same_result(jit(xs), loop_over_tensors(xs))
    assert jit.sot_translator.translations == 2
    xs = (rand(2), rand(2))  # a tuple is another type
    assert_same_result(jit(xs), loop_over_tensors(xs))
    assert jit.sot_translator.translations == 3


def test_a_rebound_global_list_translates_again(monkeypatch):
    jit = captured(builtins_on_values, [rand(2)], 1)
    monkeypatch.setitem(globals(), "SCALES", [5, 6])
    xs = [rand(2)]
    assert_same_result(jit(xs, 1), builtins_on_values(xs, 1))
    assert jit.sot_translator.translations == 2


def tensor_condition(x):
    if x.sum() > 0:
        return x
    return -x


def test_a_condition_on_a_tensor_breaks_the_graph():
    jit = jit_of(tensor_condition)
    x = rand(3)
    assert_same_result(jit(x), tensor_condition(x))
    ((code, reason, _),) = events(jit)
    assert code == "SOT-B001" and "POP_JUMP_IF_FALSE" in reason and "a condition on" in reason


def bad_index(xs):
    return xs[5]


def bad_unpack(xs):
    a, b = xs
    return a


@pytest.mark.parametrize("fn", [bad_index, bad_unpack])
def test_errors_are_the_eager_errors(fn):
    xs = [rand(2), rand(2), rand(2)]
    with pytest.raises(Exception) as eager:
        fn(xs)
    with pytest.raises(Exception) as compiled:
        jit_of(fn)(xs)
    assert type(compiled.value) is type(eager.value) and str(compiled.value) == str(eager.value)


def scaled_by_config(x, config):
    factor, shift = config
    return x * factor + shift


def test_an_item_of_a_tuple_argument_is_guarded_by_value():
    jit = captured(scaled_by_config, rand(2), (2, 1))
    for config, translations in [((2, 1), 1), ((2, 5), 2), ((3, 1), 3), ((2, 1.0), 4)]:
        x = rand(2)
        assert_same_result(jit(x, config), scaled_by_config(x, config))
        assert jit.sot_translator.translations == translations
