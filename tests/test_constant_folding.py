"""Constant folding (FLAGS_enable_constant_folding): a static op whose inputs are all constants is
evaluated once by the passes with its own kernel and becomes an assign_value op. Every result is
compared with the same program run with the pass off, and with eager (to_static) code."""
import warnings

import numpy as np
import pytest

import runtime as paddle
from runtime import static
from runtime.flags import get_flags, set_flags
from runtime.static.passes import apply_passes
from sot_helpers import assert_same_result, jit_of

FLAGS = ("FLAGS_enable_constant_folding", "FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion",
         "FLAGS_enable_inplace")


@pytest.fixture
def flags():
    saved = get_flags(list(FLAGS))
    try:
        yield
    finally:
        set_flags(saved)


@pytest.fixture
def static_mode(flags):
    paddle.enable_static()
    try:
        yield
    finally:
        paddle.disable_static()


def build(fn, *data):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        out = fn(*[static.data(*d) for d in data])
    return main, [o.name for o in (out if isinstance(out, (tuple, list)) else (out,))]


def computing(program):
    """The ops of the global block other than the executor's feed and fetch ops."""
    return [op for op in program.global_block().ops if op.type not in ("feed", "fetch")]


def types(program):
    return [op.type for op in computing(program)]


def folding_only(on=True):
    set_flags({f: on and f == "FLAGS_enable_constant_folding" for f in FLAGS})


def run(program, feed, fetch, folding):
    set_flags({f: folding and f == "FLAGS_enable_constant_folding" for f in FLAGS})
    return static.Executor().run(program, feed=feed, fetch_list=fetch)


def test_a_constant_only_subexpression_is_evaluated_once_with_its_kernel(static_mode):
    def net(x):
        c = paddle.sqrt(paddle.full([3], 0.7) * 3.0 - paddle.to_tensor(np.float32(0.25)))
        return x + c
    main, fetch = build(net, ("x", [3]))
    assert types(main) == ["full", "assign_value", "multiply", "assign_value", "subtract", "sqrt", "add"]
    folding_only()
    new = apply_passes(main, {"x", *fetch})
    assert types(new) == ["full", "assign_value", "assign_value", "assign_value", "assign_value", "assign_value", "add"]
    c = np.sqrt(np.full([3], 0.7, np.float32) * np.float32(3.0) - np.float32(0.25))
    assert new.global_block().ops[-2].attrs["values"] == tuple(c.tolist())
    x = np.arange(3, dtype=np.float32)
    (on,) = run(main, {"x": x}, fetch, folding=True)
    (off,) = run(main, {"x": x}, fetch, folding=False)
    assert on.tobytes() == off.tobytes() == (x + c).tobytes()


def test_arithmetic_is_never_reassociated(ran, flags):
    def f(x):
        return (x * 0.1) * 3.0
    x = paddle.to_tensor(np.linspace(-5, 5, 101, dtype=np.float32))
    jit = jit_of(f)
    assert_same_result(jit(x), f(x))
    assert not np.array_equal(f(x).numpy(), x.numpy() * np.float32(0.3))  # folding 0.1 * 3 would differ
    (program,) = ran
    (op,) = computing(program)
    assert [(s[0], dict(s[2]).get("values")) for s in op.attrs["chain"]] == [
        ("assign_value", (np.float32(0.1).item(),)), ("assign_value", (3.0,)), ("multiply", None), ("multiply", None)]


def test_to_static_folds_constant_subexpressions_and_matches_eager(ran, flags):
    def f(x):
        k = paddle.sqrt(paddle.full([4], 2.0)) * 1.5
        return x * k
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal(4).astype(np.float32))
    assert_same_result(jit_of(f)(x), f(x))
    (program,) = ran
    assert types(program) == ["assign_value", "multiply"]   # sqrt(full) * 1.5 became one constant
    k = np.sqrt(np.full([4], 2.0, np.float32)) * np.float32(1.5)
    assert computing(program)[0].attrs["values"] == tuple(k.tolist())


def test_a_constant_division_by_zero_is_left_to_the_run(static_mode):
    def net(x):
        return x + paddle.full([2], 1.0) / paddle.full([2], 0.0)
    main, fetch = build(net, ("x", [2]))
    folding_only()
    assert "divide" in types(apply_passes(main, {"x", *fetch}))
    for folding in (True, False):
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            (got,) = run(main, {"x": np.ones(2, np.float32)}, fetch, folding)
        np.testing.assert_array_equal(got, [np.inf, np.inf])
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        run(main, {"x": np.ones(2, np.float32)}, fetch, folding=True)


def test_what_is_not_folded(static_mode):
    def net(x):
        big = paddle.full([100], 2.0) * 3.0              # 100 elements: over the limit
        noise = paddle.rand([2]) * 2.0                    # random: never a constant
        fetched = paddle.full([2], 5.0) * 2.0             # fetched: protected
        return paddle.sum(x + big) + paddle.sum(noise), fetched
    main, fetch = build(net, ("x", [100]))
    folding_only()
    new = apply_passes(main, {"x", *fetch})
    assert types(new).count("multiply") == 3
    folding_only(False)
    assert types(apply_passes(main, {"x", *fetch})) == types(main)


def test_persistable_and_sub_block_vars_are_left_alone(static_mode):
    main = static.Program()
    block = main.global_block()
    block.create_var("x", [2], "float32", need_check_feed=True)
    block.create_parameter("p", [2], "float32")
    for name in ("c", "d", "e"):
        block.create_var(name, [2], "float32")
    block.append_op("full", [], ["c"], {"shape": (2,), "fill_value": 1.0, "dtype": np.dtype("float32")})
    block.append_op("sqrt", ["c"], ["p"])     # writes a persistable var
    block.append_op("sqrt", ["c"], ["d"])     # folded
    block.append_op("add", ["x", "d"], ["e"])
    folding_only()
    assert types(apply_passes(main, {"x", "e"})) == ["full", "sqrt", "assign_value", "add"]

    def net(x):
        d = paddle.sqrt(paddle.full([2], 4.0))   # read inside the branches: left alone
        return static.nn.cond(paddle.sum(x) > 0, lambda: x + d, lambda: x - d)
    main, fetch = build(net, ("x", [2]))
    assert "sqrt" in types(apply_passes(main, {"x", *fetch}))
    x = np.ones(2, np.float32)
    (on,) = run(main, {"x": x}, fetch, folding=True)
    (off,) = run(main, {"x": x}, fetch, folding=False)
    assert on.tobytes() == off.tobytes() == (x + 2).tobytes()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_folded_values_keep_every_dtype_exactly(static_mode, dtype):
    def net(x):
        c = paddle.full([5], 3, dtype=dtype)
        k = paddle.cast(paddle.full([5], 1.1, dtype="float64") * 7.3, dtype) + c
        return x + k
    main, fetch = build(net, ("x", [5], dtype))
    folding_only()
    new = apply_passes(main, {"x", *fetch})
    assert types(new)[-1] == "add" and "cast" not in types(new)
    x = np.ones(5, dtype)
    (on,) = run(main, {"x": x}, fetch, folding=True)
    (off,) = run(main, {"x": x}, fetch, folding=False)
    assert on.dtype == off.dtype and on.tobytes() == off.tobytes()


def test_folding_never_warns_at_pass_time(static_mode):
    def net(x):
        return x * paddle.sqrt(paddle.full([2], -1.0))   # nan: invalid value, left to the run
    main, fetch = build(net, ("x", [2]))
    folding_only()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = apply_passes(main, {"x", *fetch})
    assert "sqrt" in types(new)


def test_library_functions_of_constants_are_left_to_the_run(static_mode):
    """exp, tanh, pow... may round differently in another array module (CuPy): the run computes them."""
    def net(x):
        return x * paddle.exp(paddle.full([2], 0.5)) + paddle.tanh(paddle.full([2], 0.5)) ** 2.0
    main, fetch = build(net, ("x", [2]))
    folding_only()
    new = apply_passes(main, {"x", *fetch})
    assert {"exp", "tanh", "pow"} <= set(types(new))
    x = np.ones(2, np.float32)
    (on,) = run(main, {"x": x}, fetch, folding=True)
    (off,) = run(main, {"x": x}, fetch, folding=False)
    assert on.tobytes() == off.tobytes()
