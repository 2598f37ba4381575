"""to_static captures frames with control flow on Python values, containers and builtins whole.

Every JIT result is compared with the eager result of the same function on the same inputs, and
the frame must have been translated (no fallback recorded).
"""

import numpy as np
import pytest

import runtime as paddle
from sot_helpers import assert_same_result, captured, events, explained_like_eager, jit_of, rand

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
    assert code == "SOT-B001" and reason == "`x.sum() > 0` decides on a tensor's value"


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


# ----- opcodes that used to make the whole frame run eagerly: each case is captured, results as eager's
def ramp():
    """The same small tensor on every call (eager and JIT get equal arguments)."""
    return paddle.to_tensor(np.array([0.5, 1.5], "float32"))


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):  # (the arguments after the call are compared with eager's)
        return type(other) is Point and (self.x, self.y) == (other.x, other.y)


def matches(x, subject):
    match subject:
        case {"k": v, **rest}:
            return x + v + len(rest)
        case [a, b, *more]:
            return x * a + b + len(more)
        case Point(x=px, y=0):
            return x * px
        case Point(px, py):
            return x - px - py
        case int(n) | float(n):
            return x * n
        case "name":
            return -x
        case _:
            return x + 100


def catches_its_own_raise(x, k):
    try:
        y = x * 2
        if k > 1:
            raise ValueError("too big")
        if k < 0:
            raise KeyError
        y = y + 1
    except (KeyError, ValueError) as e:
        y = x - k
    finally:
        y = y * 3
    return y


def deletes(x):
    d = {"a": 1, "b": 2}
    del d["a"]
    xs = [1, 2, 3]
    del xs[0]
    z = 5

    def uses_z():
        return z
    scale = uses_z()
    del z
    return x * scale + len(d) + sum(xs)


OPCODE_CASES = {
    "match mapping": (matches, lambda: (ramp(), {"k": 2, "j": 3})),
    "match sequence": (matches, lambda: (ramp(), (1, 2, 3, 4))),
    "match class keywords": (matches, lambda: (ramp(), Point(2, 0))),
    "match class positional": (matches, lambda: (ramp(), Point(2, 5))),
    "match int": (matches, lambda: (ramp(), 3)),
    "match float": (matches, lambda: (ramp(), 2.5)),
    "match a constant": (matches, lambda: (ramp(), "name")),
    "match nothing": (matches, lambda: (ramp(), None)),
    "try without raising": (catches_its_own_raise, lambda: (ramp(), 0)),
    "try raising ValueError": (catches_its_own_raise, lambda: (ramp(), 5)),
    "try raising KeyError": (catches_its_own_raise, lambda: (ramp(), -1)),
    "del subscripts and cells": (deletes, lambda: (ramp(),)),
}


@pytest.mark.parametrize("name", OPCODE_CASES)
def test_an_opcode_is_simulated_and_the_frame_captured(name):
    fn, make_args = OPCODE_CASES[name]
    report = explained_like_eager(fn, make_args)
    assert report.breaks == []


def reraises(x, k):
    try:
        if k:
            raise ValueError("kept")
    except KeyError:
        return x
    return x + 1


def test_an_exception_no_clause_catches_is_raised_as_eager_raises():
    jit = jit_of(reraises)
    with pytest.raises(ValueError, match="kept"):
        jit(ramp(), 1)
    assert_same_result(jit(ramp(), 0), reraises(ramp(), 0))


def defines_a_class(x):
    y = x + 1

    class Local:
        scale = 2
    return y * Local.scale


def test_a_class_defined_in_the_frame_breaks_the_graph_there_only():
    report = explained_like_eager(defines_a_class, lambda: (ramp(),))
    assert [e.code for e in report.breaks][:1] == ["SOT-U001"]


def grid():
    """A 2x3 tensor of known values, made anew on each call (a frame may write into it)."""
    return paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))


def ellipsis_reads(x):
    return x[..., 0] + x[0, ...].sum() + x[..., 1:][0]


def ellipsis_writes_a_tensor_of_the_frame(x):
    y = x * 2
    y[..., 0] = 1.0
    y[1, ...] = x[0, ...] + 3  # (a view of y itself would make the write unsafe to capture: see the docs)
    return y


def writes_into_its_argument(x):
    x[0] = 1.0
    x[1, ...] = -2.0
    x[..., 2] = 5.0
    return x * 2


INDEX_CASES = {
    "Ellipsis read": ellipsis_reads,
    "Ellipsis written into a tensor of the frame": ellipsis_writes_a_tensor_of_the_frame,
    "item assignment into a tensor argument": writes_into_its_argument,
}


@pytest.mark.parametrize("name", INDEX_CASES)
def test_an_index_is_captured_and_the_argument_written_as_eager_writes_it(name):
    report = explained_like_eager(INDEX_CASES[name], lambda: (grid(),))
    assert report.breaks == []


def test_writes_into_an_argument_step_its_version_as_eager_does():
    eager_x, jit_x = grid(), grid()
    writes_into_its_argument(eager_x)
    jit_of(writes_into_its_argument)(jit_x)
    assert jit_x._version == eager_x._version == 3


def used_then_written(x, w):
    y = x * w
    x[0] = 1.0
    return y


def test_backward_through_a_value_written_in_place_fails_as_eager_fails():
    for fn in (used_then_written, jit_of(used_then_written)):
        y = fn(grid(), paddle.to_tensor(np.ones((2, 3), "float32"), stop_gradient=False))
        with pytest.raises(RuntimeError, match="in-place"):
            y.sum().backward()


class CountedError(ValueError):
    made = 0

    def __init__(self, message):
        super().__init__(message)
        CountedError.made += 1


def catches_an_error_of_its_own_class(x):
    try:
        raise CountedError("counted")
    except ValueError:
        return x + 1


def test_an_exception_class_with_python_code_is_made_for_real():
    jit = jit_of(catches_an_error_of_its_own_class)
    before = CountedError.made
    assert_same_result(jit(ramp()), catches_an_error_of_its_own_class(ramp()))
    assert CountedError.made == before + 2  # once eagerly, once under the JIT (the frame ran eagerly)


def keeps_its_caught_exception(x):
    try:
        raise ValueError("kept")
    except ValueError as e:
        err = e
    return x + 1, err.__traceback__ is None, str(err)


def test_a_caught_exception_kept_across_a_break_is_the_raised_one():
    x = ramp()
    assert_same_result(jit_of(keeps_its_caught_exception)(x), keeps_its_caught_exception(x))
