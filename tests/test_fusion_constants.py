"""Constants inside fused elementwise chains, and the chains' scalar path: to_static results are
bit-identical to eager (dtype, shape and bytes), for every float dtype, mixed int/float
promotion, inf/nan results and random chains; the program the executor runs holds the
constants as chain steps, not as ops feeding the chain."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime as paddle
from runtime.ops import fused, get_op
from runtime.static.passes import apply_passes
from sot_helpers import fresh, jit_of

import sot


def computing(program):
    return [op for op in program.global_block().ops if op.type not in ("feed", "fetch")]


def same_bits(jit, eager):
    """Equal dtype, shape and bytes (so -0.0, nan payloads and inf count)."""
    j, e = jit.numpy(), eager.numpy()
    assert j.dtype == e.dtype and j.shape == e.shape
    assert j.tobytes() == e.tobytes(), (j, e)


def source_of(op):
    """The generated source of a fused op's chain (one input signature compiled)."""
    (source,) = fused._compiled(op.attrs["chain"], len(op.inputs)).sources.values()
    return source


def numbers_chain(n):
    """def f(x): x = x + g_0; ...; with globals g_i (as the W1b benchmark)."""
    namespace = {f"g_{i}": 0.001 * (i + 1) for i in range(n)}
    exec("def f(x):\n" + "".join(f"    x = x + g_{i}\n" for i in range(n)) + "    return x\n", namespace)  # noqa: S102
    return namespace["f"]


def test_a_chain_of_global_numbers_runs_as_scalars_with_the_constants_inside(ran):
    f = numbers_chain(100)
    x = paddle.to_tensor(np.array([1.25], np.float32))
    jit = sot.to_static(f)
    for _ in range(2):
        same_bits(jit(x), f(x))
    (program,) = ran
    (op,) = computing(program)
    assert op.type == "fused_elementwise" and len(op.inputs) == 1
    assert [s[0] for s in op.attrs["chain"]] == ["assign_value"] * 100 + ["add"] * 100
    assert not any(o.type == "assign_value" for o in program.global_block().ops)
    lines = source_of(op).splitlines()
    assert lines[1] == "    s0 = v0[0]" and lines[2].endswith(" = s0 + c1")


def test_a_chain_on_arrays_with_constants_matches_eager_and_writes_in_one_buffer(ran):
    def f(x):
        for _ in range(5):
            x = paddle.tanh(x * 1.01 + 0.1)
        return x
    x = paddle.to_tensor(np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32))
    same_bits(jit_of(f)(x), f(x))
    (op,) = computing(ran[0])
    assert op.inputs == [op.inputs[0]] and len(op.attrs["chain"]) == 2 + 15  # two distinct constants
    body = [line.strip() for line in source_of(op).splitlines()[1:] if " = " in line]
    assert body[0] == "v3 = u2(v0, c1)" and all("out=" in line or line.startswith("v") for line in body)
    assert sum("out=" in line for line in body) == 14


def test_scalar_result_is_fresh_writable_and_shaped_like_eager():
    def f(x):
        return (x * 2.0 + 1.0) / 3.0
    jit = jit_of(f)
    for shape in [(1,), (), (1, 1), (1, 1, 1)]:
        x = paddle.to_tensor(np.full(shape, 0.3, np.float32))
        got = jit(x)
        same_bits(got, f(x))
        got.numpy()[...] = 7.0           # the caller owns the result: the next call is not affected
        same_bits(jit(x), f(x))


FLOAT_DTYPES = ["float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(1,), (), (3, 4)])
def test_chains_with_constants_of_every_float_dtype(dtype, shape):
    def f(x):
        y = x * 1.01 + 0.1
        y = y - 3 / 7
        y = paddle.exp(y) * 0.5
        return paddle.sqrt(paddle.abs(y)) / 1.7 - 2
    x = paddle.to_tensor(np.random.default_rng(2).uniform(-3, 3, shape).astype(dtype))
    same_bits(jit_of(f)(x), f(x))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float64"])
def test_python_int_float_and_bool_constants_promote_as_in_eager(dtype):
    def f(x):
        return ((x + 1) * 3 - True) * 2.5 + 7 // 2
    x = paddle.to_tensor(np.array([[1, -2, 3]], dtype))
    same_bits(jit_of(f)(x), f(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (4,)])
@pytest.mark.parametrize("policy", ["ignore", "warn", "raise"])
def test_division_by_zero_and_overflow_give_eager_values_and_warnings(dtype, shape, policy):
    def f(x):
        y = x * 1e200 * 1e200           # overflows to inf
        return (y / 0.0) - y * 0.0   # inf / 0 = inf; inf * 0 = nan
    jit = jit_of(f)
    x = paddle.to_tensor(np.full(shape, 3.0, dtype))
    with np.errstate(all="ignore"):
        jit(x)   # translated and compiled: the calls below run the cached program
    outcomes = []
    for fn in (jit, f):
        with np.errstate(all=policy), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                outcomes.append(("value", fn(x).numpy().tobytes()))
            except FloatingPointError:
                outcomes.append(("raised", None))
        outcomes.append(sorted({w.category.__name__ for w in caught}))
    assert outcomes[:2] == outcomes[2:]
    assert outcomes[0][0] == ("raised" if policy == "raise" else "value")
    assert outcomes[1] == (["RuntimeWarning"] if policy == "warn" else [])


def test_a_baked_constant_is_never_written():
    chain = (("assign_value", (), (("dtype", np.dtype("float32")), ("shape", (4,)), ("values", (1.0, 2.0, 3.0, 4.0)))),
             ("add", (0, 1), ()), ("tanh", (2,), ()))
    x = np.zeros(4, np.float32)
    first = get_op("fused_elementwise").kernel(np, x, chain=chain)
    buf = x.copy()
    again = fused.inplace_kernel("fused_elementwise")(np, buf, buf, chain=chain)
    np.testing.assert_array_equal(first, np.tanh(np.array([1.0, 2.0, 3.0, 4.0], np.float32)))
    np.testing.assert_array_equal(again, first)


def test_scalar_steps_give_the_bits_of_one_element_arrays():
    """The scalar path relies on NumPy's scalar arithmetic and ufunc loops giving, for float32 and
    float64, the bits of the same call on one-element arrays: checked here on this platform."""
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3e38, -3e38, 1.0, -1.0, 0.5, 2.0, 1e300]
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.float64):
        with np.errstate(all="ignore"):
            a = np.concatenate([rng.standard_normal(300) * 10, np.array(specials)]).astype(dt)
        b = rng.permutation(a)
        for name in [*fused._SCALAR_OPERATORS, *fused._SCALAR_UFUNCS]:
            ufunc = getattr(np, fused._UFUNC_STEPS[name])
            args = (a, b)[:ufunc.nin]
            with np.errstate(all="ignore"):
                arrays = np.array([ufunc(*[v[i:i + 1] for v in args])[0] for i in range(len(a))], dt)
                scalars = np.array([ufunc(*[v[i] for v in args]) for i in range(len(a))], dt)
                if name in fused._SCALAR_OPERATORS:
                    operator = eval(f"lambda p, q: p {fused._SCALAR_OPERATORS[name]} q")  # noqa: S307
                    by_operator = np.array([operator(p, q) for p, q in zip(a, b)], dt)
                    assert by_operator.tobytes() == arrays.tobytes(), (dt, name)
            assert scalars.tobytes() == arrays.tobytes(), (dt, name)


_STEPS = [("add", 1.5), ("subtract", 0.25), ("multiply", -1.01), ("divide", 3.0), ("tanh", None), ("exp", None),
          ("sqrt", None), ("abs", None), ("maximum", 0.1), ("rdivide", 2.0), ("neg", None), ("square", None)]


def _random_chain(steps):
    lines = ["def f(x, y):"]
    for k, (name, arg, use_y) in enumerate(steps):
        other = "y" if use_y else repr(arg)
        expr = {"add": f"x + {other}", "subtract": f"x - {other}", "multiply": f"x * {other}",
                "divide": f"x / {other}", "maximum": "paddle.maximum(x, y)", "rdivide": f"{other} / x",
                "tanh": "paddle.tanh(x)", "exp": "paddle.exp(x)", "sqrt": "paddle.sqrt(x)", "abs": "paddle.abs(x)",
                "neg": "-x", "square": "paddle.square(x)"}[name]
        lines.append(f"    x = {expr}")
    namespace = {"paddle": paddle}
    exec("\n".join(lines + ["    return x"]), namespace)  # noqa: S102
    return namespace["f"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_STEPS) - 1), st.booleans()), min_size=2, max_size=12),
       st.sampled_from(["float32", "float64", "float16"]), st.sampled_from([(1,), (), (2, 3)]),
       st.integers(0, 2 ** 16))
def test_random_chains_with_constants_are_bit_identical_to_eager(picks, dtype, shape, seed):
    steps = [(*_STEPS[i], use_y) for i, use_y in picks]
    f = _random_chain(steps)
    rng = np.random.default_rng(seed)
    x = paddle.to_tensor(rng.uniform(-4, 4, shape).astype(dtype))
    y = paddle.to_tensor(rng.uniform(-4, 4, shape).astype(dtype))
    with np.errstate(all="ignore"):
        want = f(x, y)
        jit = sot.to_static(fresh(f))
        for _ in range(2):
            same_bits(jit(x, y), want)


def test_pow_of_one_element_arrays_keeps_the_arrays_bits():
    """NumPy's power loop on two contiguous arrays differs in the last bit from the scalar one for
    x ** -1: a one-element chain with pow must not take the scalar path."""
    def f(x, y):
        return (x + 0.0) ** y
    x = paddle.to_tensor(np.array([3.4922657], np.float32))
    y = paddle.to_tensor(np.array([-1.0], np.float32))
    same_bits(jit_of(f)(x, y), f(x, y))


def test_a_constant_with_unhashable_attributes_stays_an_input_of_the_chain():
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        block = main.global_block()
        block.create_var("x", [3], "float32", need_check_feed=True)
        for name in ("c", "a", "b"):
            block.create_var(name, [3], "float32")
        block.append_op("full", [], ["c"], {"shape": [3], "fill_value": 2.0, "dtype": np.dtype("float32")})
        block.append_op("add", ["x", "c"], ["a"])
        block.append_op("tanh", ["a"], ["b"])
        new = apply_passes(main, {"x", "b"})
        assert [op.type for op in new.global_block().ops] == ["full", "fused_elementwise"]
        assert new.global_block().ops[1].inputs == ["x", "c"]
        x = np.arange(3, dtype=np.float32)
        (got,) = paddle.static.Executor().run(main, feed={"x": x}, fetch_list=["b"])
        assert got.tobytes() == np.tanh(x + np.float32(2.0)).tobytes()
    finally:
        paddle.disable_static()
