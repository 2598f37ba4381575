"""Generators consumed under to_static run as far as eager code runs them, in eager's order: an
inlined generator's body runs to its next `yield` per item taken (`next`, `any`/`all`, a shorter
`zip`, a `break`), so its side effects (appends, prints, counters) happen as often and in the same
order as eagerly. Where a generator cannot be simulated exactly (a yield inside a `try`, a break
while it is live), the frame runs eagerly with its reason; `fallback=False` raises GraphBreakError
instead of differing."""
import contextlib
import io

import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import assert_same_result, jit_of, translators

LOG = []


def _x():
    return paddle.to_tensor(np.arange(4, dtype="float32"))


def counted(x, n=5):
    for i in range(n):
        LOG.append(i)
        yield x + i


def next_of_generator(x):
    return next(counted(x))


def next_twice(x):
    g = counted(x)
    return next(g) * next(g)


def any_of_genexp(x):
    return x * any(LOG.append(i) or i > 1 for i in range(5))


def all_of_genexp(x):
    return x * all(LOG.append(i) or i < 2 for i in range(5))


def next_of_genexp(x):
    return x * next(i for i in range(5) if LOG.append(i) or i == 2)


def zip_with_shorter(x):
    return [a * b for a, b in zip(counted(x), [1, 2])]


def zip_shorter_first(x):
    return [a * b for b, a in zip([1, 2], counted(x))]


def break_out_of_loop(x):
    total = x
    for v in counted(x):
        total = total + v
        if len(LOG) == 2:
            break
    return total


def interleaved(x):
    total = x
    for v in counted(x, 3):
        LOG.append("body")
        total = total + v
    return total


def enumerate_and_stop(x):
    for i, v in enumerate(counted(x)):
        if i == 1:
            return v
    return x


def consumed_whole(x):
    return sum(counted(x, 3)), list(counted(x, 2))


def partially_then_list(x):
    g = counted(x, 4)
    first = next(g)
    return first, list(g)


GENERATORS = [next_of_generator, next_twice, any_of_genexp, all_of_genexp, next_of_genexp, zip_with_shorter,
              zip_shorter_first, break_out_of_loop, interleaved, enumerate_and_stop, consumed_whole,
              partially_then_list]


@pytest.mark.parametrize("fn", GENERATORS, ids=lambda f: f.__name__)
def test_a_generator_runs_as_far_and_in_the_order_eager_runs_it(fn):
    jit = jit_of(fn)
    for _ in range(2):  # the translation, then its cached code
        LOG.clear()
        want = fn(_x())
        eager_log = list(LOG)
        LOG.clear()
        assert_same_result(jit(_x()), want)
        assert LOG == eager_log
    root = translators(jit)[0]
    assert root.translations == 1 and root.fallbacks == [] and root.breaks == []


def printing(x):
    for i in range(3):
        print("made", i)
        yield x * i


def test_a_generators_prints_come_as_eagers():
    def consume(x):
        return next(printing(x)), any(True for _ in printing(x))

    outputs = []
    for fn in (consume, jit_of(consume)):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            fn(_x())
        outputs.append(buffer.getvalue())
    assert outputs[0] == outputs[1] == "made 0\nmade 0\n"


def guarded(x):
    try:
        yield x + 1
        yield x + 2
    finally:
        LOG.append("closed")


def left_in_a_try(x):
    return next(guarded(x))


def breaking(x):
    for i in range(3):
        LOG.append(i)
        yield (x * i).sum().item()


def first_of_a_breaking_generator(x):
    return x * next(breaking(x))


@pytest.mark.parametrize("fn, reason", [(left_in_a_try, "yields inside a try"),
                                        (first_of_a_breaking_generator, "reads a tensor's value into Python")],
                         ids=["a generator left inside a try", "a generator whose body breaks"])
def test_a_generator_that_cannot_be_simulated_runs_the_frame_eagerly_with_its_reason(fn, reason):
    LOG.clear()
    want = fn(_x())
    eager_log = list(LOG)
    LOG.clear()
    jit = jit_of(fn)
    assert_same_result(jit(_x()), want)
    assert LOG == eager_log
    (fallback,) = translators(jit)[0].fallbacks
    assert reason in fallback.reason
    with pytest.raises(sot.GraphBreakError, match=reason):
        jit_of(fn, fallback=False)(_x())
