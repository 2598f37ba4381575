"""Random programs with nested `cond` and `while_loop`: the static program (run sequentially and
threaded, which makes the conds and loops non-strict) against the same code run eagerly, values
and gradients; eager itself is the reference for Python's `if` and `while` (dynamic mode runs
them as such)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime as paddle
from runtime import static
from runtime.static.nn import cond, while_loop

UNARY = (paddle.tanh, paddle.sin, lambda v: v * 0.5, lambda v: v + 1.0)


def _random_expression(rng, depth):
    """A function (x, y) -> tensor of shape [4], built from unary and binary ops, conds on the
    sign of a sum and while_loops with a data-dependent trip count (at most 3 trips)."""
    pick = rng.integers(0, 6 if depth > 0 else 2)
    if pick == 0:
        return lambda x, y: x
    if pick == 1:
        return lambda x, y: y
    if pick == 2:
        f, g = _random_expression(rng, depth - 1), UNARY[rng.integers(len(UNARY))]
        return lambda x, y: g(f(x, y))
    if pick == 3:
        f, g = _random_expression(rng, depth - 1), _random_expression(rng, depth - 1)
        mul = bool(rng.integers(2))
        return lambda x, y: f(x, y) * g(x, y) if mul else f(x, y) + g(x, y)
    if pick == 4:
        p, f, g = (_random_expression(rng, depth - 1) for _ in range(3))
        return lambda x, y: cond(p(x, y).sum() > 0.0, lambda: f(x, y), lambda: g(x, y))
    f, step = _random_expression(rng, depth - 1), UNARY[rng.integers(len(UNARY))]
    trips = float(rng.integers(0, 4))

    def loop(x, y):
        start = f(x, y)
        limit = paddle.clip(paddle.abs(start.sum()), 0.0, trips)   # from the data, at most `trips`
        counter = paddle.zeros([1], start.dtype)
        return while_loop(lambda i, v: i < limit, lambda i, v: [i + 1.0, step(v) + y], [counter, start])[1]
    return loop


def _eager(fn, xv, yv):
    paddle.disable_static()
    try:
        x, y = paddle.to_tensor(xv, stop_gradient=False), paddle.to_tensor(yv, stop_gradient=False)
        out = fn(x, y)
        out.sum().backward()
        zeros = np.zeros_like(xv)
        return [out.numpy(), zeros if x.grad is None else x.grad.numpy(), zeros if y.grad is None else y.grad.numpy()]
    finally:
        paddle.enable_static()


def _static(fn, xv, yv, mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x, y = static.data("x", [4], "float32"), static.data("y", [4], "float32")
        x.stop_gradient = y.stop_gradient = False
        out = fn(x, y)
        grads = static.gradients([out.sum()], [x, y]) if not out.stop_gradient else [None, None]
    fetch = [out] + [g for g in grads if g is not None]
    saved = paddle.get_flags(["FLAGS_executor_parallel"])
    paddle.set_flags({"FLAGS_executor_parallel": mode})
    try:
        got = static.Executor().run(main, feed={"x": xv, "y": yv}, fetch_list=fetch, scope=static.Scope())
    finally:
        paddle.set_flags(saved)
    it = iter(got[1:])
    return [got[0]] + [np.zeros_like(xv) if g is None else next(it) for g in grads]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])   # static mode throughout
@given(seed=st.integers(0, 2**32 - 1))
def test_random_control_flow_programs_match_eager_values_and_gradients(static_mode, seed):
    rng = np.random.default_rng(seed)
    fn = _random_expression(rng, depth=3)
    xv = rng.standard_normal(4).astype("float32")
    yv = rng.standard_normal(4).astype("float32")
    want = _eager(fn, xv, yv)
    for mode in ("never", "always"):
        for got, w in zip(_static(fn, xv, yv, mode), want):
            np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", [3, 17, 41])
def test_the_generator_makes_control_flow(seed):
    # the property above is only worth something if its programs hold conds and loops
    paddle.enable_static()
    try:
        found = set()
        rng = np.random.default_rng(seed)
        for _ in range(20):
            main = static.Program()
            with static.program_guard(main, static.Program()):
                _random_expression(rng, depth=3)(static.data("x", [4], "float32"), static.data("y", [4], "float32"))
            found |= {op.type for b in main.blocks for op in b.ops}
        assert {"cond", "while"} <= found
    finally:
        paddle.disable_static()
