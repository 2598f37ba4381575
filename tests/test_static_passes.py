"""Static passes: dead-op elimination, elementwise-chain fusion,
in-place buffer reuse. Results with and without each pass are bit-identical, and equal a
hand-written NumPy reference."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from runtime import static
from runtime.flags import get_flags, set_flags
from runtime.ops import all_ops, get_op
from runtime.ops import fused
from runtime.ops.fused import inplace_kernel
from runtime.static.passes import apply_passes

PASS_FLAGS = ("FLAGS_enable_constant_folding", "FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion",
              "FLAGS_enable_inplace", "FLAGS_enable_epilogue_fusion", "FLAGS_enable_dead_mask_elimination")


@pytest.fixture
def static_mode():
    saved = get_flags(list(PASS_FLAGS))
    paddle.enable_static()
    try:
        yield
    finally:
        paddle.disable_static()
        set_flags(saved)


def only(*enabled):
    """Turn on exactly the named passes."""
    set_flags({f: f in enabled for f in PASS_FLAGS})


def run_ops(program, feed, fetch):
    """Run the global block in order, honouring `_inplace_pairs` as an executor does.

    Returns the fetched arrays and the indices of ops whose result landed in an input's buffer.
    """
    env = dict(feed)
    pairs = getattr(program, "_inplace_pairs", {})
    reused = []
    for i, op in enumerate(program.global_block().ops):
        arrays = [None if n is None else env[n] for n in op.inputs]
        if i in pairs:
            slot, _ = pairs[i]
            res = inplace_kernel(op.type)(np, arrays[slot], *arrays, **op.attrs)
            if res is arrays[slot]:
                reused.append(i)
        else:
            res = get_op(op.type).kernel(np, *arrays, **op.attrs)
        for name, value in zip(op.outputs, res if len(op.outputs) > 1 else (res,)):
            env[name] = np.asarray(value)
    return [env[n] for n in fetch], reused


def build(fn, *data):
    """A main program built by fn(*vars) from static.data specs (name, shape[, dtype])."""
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        out = fn(*[static.data(*d) for d in data])
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return main, startup, [o.name for o in outs]


def types(program):
    return [op.type for op in program.global_block().ops]


RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- dead-op elimination
def test_dead_ops_are_dropped_and_fetches_and_protected_vars_survive(static_mode):
    def net(x):
        y = paddle.exp(x)
        paddle.sin(y)          # dead: nothing reads it
        z = paddle.cos(x)      # protected below, not fetched
        paddle.sqrt(z)         # dead
        return paddle.tanh(y)
    only("FLAGS_enable_dead_op_elimination")
    main, _, fetch = build(net, ("x", [3, 4]))
    z_name = main.global_block().ops[2].outputs[0]
    new = apply_passes(main, {"x", z_name, *fetch})
    assert types(main) == ["exp", "sin", "cos", "sqrt", "tanh"]
    assert types(new) == ["exp", "cos", "tanh"]
    assert not any(n.startswith(("sin_", "sqrt_")) for n in new.global_block().vars)
    x = f32(3, 4)
    (got, z), _ = run_ops(new, {"x": x}, [*fetch, z_name])
    np.testing.assert_array_equal(got, np.tanh(np.exp(x)))
    np.testing.assert_array_equal(z, np.cos(x))
    exe = static.Executor()
    np.testing.assert_array_equal(exe.run(new, feed={"x": x}, fetch_list=fetch)[0], got)


def test_dead_op_elimination_keeps_random_side_effect_and_persistable_writes(static_mode):
    only("FLAGS_enable_dead_op_elimination")
    main = static.Program()
    block = main.global_block()
    x = block.create_var("x", [4], "float32", need_check_feed=True)
    p = block.create_parameter("p", [4], "float32")
    g = block.create_var("g", [4], "float32")
    lr = block.create_var("lr", [1], "float32", need_check_feed=True)
    for name in ("d", "mask", "w", "e"):
        block.create_var(name, [4], "float32" if name != "mask" else "bool")
    block.append_op("dropout", ["x"], ["d", "mask"], {"p": 0.5, "axis": None, "mode": "upscale_in_train"})
    block.append_op("assign", ["x"], ["p"])                  # writes a persistable var
    block.append_op("exp", ["x"], ["g"])
    block.append_op("sgd", ["p", "g", "lr"], ["p"], {})       # in place, side effect
    block.append_op("exp", ["x"], ["e"])                      # dead
    new = apply_passes(main, {"x", "lr"})
    assert types(new) == ["dropout", "assign", "exp", "sgd"]
    assert "e" not in new.global_block().vars and "p" in new.global_block().vars


# ---------------------------------------------------------------- fusion
CHAIN = [  # (public function, NumPy reference) pairs: the kernels' own formulas
    (lambda t, y: paddle.add(t, y), lambda t, y: t + y),
    (lambda t, y: F.relu(t), lambda t, y: np.maximum(t, 0)),
    (lambda t, y: paddle.multiply(t, y), lambda t, y: t * y),
    (lambda t, y: paddle.tanh(t), np.tanh),
    (lambda t, y: paddle.scale(t, 2.0, 0.5), lambda t, y: t * np.float32(2.0) + np.float32(0.5)),
    (lambda t, y: paddle.subtract(t, y), lambda t, y: t - y),
    (lambda t, y: paddle.exp(t), np.exp),
]


def _chain_net(x, y):
    t = x
    for fn, _ in CHAIN:
        t = fn(t, y)
    return t


def _chain_ref(x, y):
    t = x
    for _, ref in CHAIN:
        t = ref(t, y) if ref not in (np.tanh, np.exp) else ref(t)
    return t


@pytest.mark.parametrize("inplace", [False, True])
def test_chain_of_n_elementwise_ops_becomes_one_fused_op(static_mode, inplace):
    only("FLAGS_enable_fusion", *(["FLAGS_enable_inplace"] if inplace else []))
    main, _, fetch = build(_chain_net, ("x", [None, 5]), ("y", [5]))
    assert len(main.global_block().ops) == len(CHAIN)
    new = apply_passes(main, {"x", "y", *fetch})
    assert types(new) == ["fused_elementwise"]
    (op,) = new.global_block().ops
    assert op.inputs == ["x", "y"] and op.outputs == fetch
    assert [step[0] for step in op.attrs["chain"]] == ["add", "relu", "multiply", "tanh", "scale", "subtract", "exp"]
    assert set(new.global_block().vars) == {"x", "y", *fetch}   # the intermediates are gone
    assert new._inplace_pairs == {}                             # its inputs are feeds
    x, y = f32(4, 5), f32(5)
    feed = {"x": x.copy(), "y": y.copy()}
    (got,), _ = run_ops(new, feed, fetch)
    (plain,), _ = run_ops(main, {"x": x, "y": y}, fetch)
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(got, _chain_ref(x, y))
    np.testing.assert_array_equal(feed["x"], x)
    np.testing.assert_array_equal(feed["y"], y)
    exe = static.Executor()
    np.testing.assert_array_equal(exe.run(new, feed={"x": x, "y": y}, fetch_list=fetch)[0], plain)


def test_fused_chain_runs_in_one_buffer(static_mode):
    only("FLAGS_enable_fusion")
    main, _, fetch = build(_chain_net, ("x", [4, 5]), ("y", [5]))
    chain = apply_passes(main, {"x", "y", *fetch}).global_block().ops[0].attrs["chain"]
    x, y = f32(4, 5), f32(5)
    out = get_op("fused_elementwise").kernel(np, x, y, chain=chain)
    np.testing.assert_array_equal(out, _chain_ref(x, y))
    (source,) = fused._compiled(chain, 2).sources.values()
    calls = [line.strip() for line in source.splitlines()[1:] if " = " in line]
    # only the first step allocates; every later step writes into that buffer
    assert calls == ["v2 = u0(v0, v1)", "v3 = i1(v2, v2)", "v4 = u2(v3, v1, out=v3)", "v5 = u3(v4, out=v4)",
                     "v6 = i4(v5, v5)", "v7 = u5(v6, v1, out=v6)", "v8 = u6(v7, out=v7)"]


def test_fusion_stops_at_protected_and_shared_intermediates(static_mode):
    def net(x):
        a = paddle.exp(x)
        b = paddle.tanh(a)       # b is fetched: the chain ends here
        c = paddle.sin(b)
        d = paddle.cos(c)        # c is read twice (cos and multiply): no fusion across c
        e = paddle.multiply(c, d)
        return b, e
    only("FLAGS_enable_fusion")
    main, _, fetch = build(net, ("x", [3]))
    new = apply_passes(main, {"x", *fetch})
    assert types(new) == ["fused_elementwise", "sin", "fused_elementwise"]
    assert [s[0] for s in new.global_block().ops[0].attrs["chain"]] == ["exp", "tanh"]
    assert [s[0] for s in new.global_block().ops[2].attrs["chain"]] == ["cos", "multiply"]
    x = f32(3)
    got, _ = run_ops(new, {"x": x}, fetch)
    b = np.tanh(np.exp(x))
    c = np.sin(b)
    np.testing.assert_array_equal(got[0], b)
    np.testing.assert_array_equal(got[1], c * np.cos(c))


def test_fusion_leaves_non_elementwise_ops_and_fuses_across_broadcast_and_cast(static_mode):
    def net(x, w, b):
        h = paddle.matmul(x, w)
        z = paddle.cast(F.relu(paddle.add(h, b)), "float64")
        return paddle.sum(paddle.sigmoid(z))
    only("FLAGS_enable_fusion")
    main, _, fetch = build(net, ("x", [2, 3]), ("w", [3, 4]), ("b", [4]))
    new = apply_passes(main, {"x", "w", "b", *fetch})
    assert types(new) == ["matmul", "fused_elementwise", "sum"]
    assert [s[0] for s in new.global_block().ops[1].attrs["chain"]] == ["add", "relu", "cast", "sigmoid"]
    x, w, b = f32(2, 3), f32(3, 4), f32(4)
    (got,), _ = run_ops(new, {"x": x, "w": w, "b": b}, fetch)
    (plain,), _ = run_ops(main, {"x": x, "w": w, "b": b}, fetch)
    np.testing.assert_array_equal(got, plain)
    z = np.maximum(x @ w + b, 0).astype(np.float64)
    np.testing.assert_allclose(got, (1 / (1 + np.exp(-z))).sum(), rtol=1e-12)


def test_fusion_does_not_move_a_read_past_a_later_write(static_mode):
    only("FLAGS_enable_fusion")
    main = static.Program()
    block = main.global_block()
    for name in ("x", "y"):
        block.create_var(name, [3], "float32", need_check_feed=True)
    for name in ("v", "a", "b"):
        block.create_var(name, [3], "float32")
    block.append_op("assign", ["x"], ["v"])
    block.append_op("exp", ["v"], ["a"])      # reads v ...
    block.append_op("assign", ["y"], ["v"])   # ... which is overwritten before a's consumer
    block.append_op("tanh", ["a"], ["b"])
    new = apply_passes(main, {"x", "y", "b"})
    assert types(new) == ["assign", "exp", "assign", "tanh"]
    x, y = f32(3), f32(3)
    (got,), _ = run_ops(new, {"x": x, "y": y}, ["b"])
    np.testing.assert_array_equal(got, np.tanh(np.exp(x)))


# ---------------------------------------------------------------- in-place marks
def test_inplace_reuses_dead_intermediates_never_feeds(static_mode):
    def net(x, y):
        a = paddle.exp(x)          # x is fed: never overwritten
        b = paddle.tanh(a)         # may overwrite a (fresh, dead after)
        c = paddle.add(b, y)       # may overwrite b
        return paddle.sqrt(paddle.abs(c))
    only("FLAGS_enable_inplace")
    main, _, fetch = build(net, ("x", [3, 4]), ("y", [4]))
    new = apply_passes(main, {"x", "y", *fetch})
    assert types(new) == types(main)
    assert new._inplace_pairs == {1: (0, 0), 2: (0, 0), 3: (0, 0), 4: (0, 0)}
    x, y = f32(3, 4), f32(4)
    feed = {"x": x.copy(), "y": y.copy()}
    (got,), reused = run_ops(new, feed, fetch)
    assert reused == [1, 2, 3, 4]
    (plain,), _ = run_ops(main, {"x": x, "y": y}, fetch)
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(got, np.sqrt(np.abs(np.tanh(np.exp(x)) + y)))
    np.testing.assert_array_equal(feed["x"], x)
    np.testing.assert_array_equal(feed["y"], y)


def test_inplace_skips_protected_live_broadcast_and_aliased_inputs(static_mode):
    def net(x):
        a = paddle.exp(x)
        b = paddle.tanh(a)             # a is fetched: not reused
        c = paddle.sin(b)              # b is read again below: not reused
        d = paddle.add(b, c)           # b dead after this: reused (slot 0)
        e = paddle.add(paddle.exp(paddle.ones([1])), d)  # slot 0 is [1]-shaped: only d (slot 1) fits
        r = paddle.reshape(e, [4, 3])  # a view of e lives on: e is not reused below
        f = paddle.cos(e)
        return a, paddle.add(paddle.reshape(f, [4, 3]), r)
    only("FLAGS_enable_inplace")
    main, _, fetch = build(net, ("x", [3, 4]))
    assert types(main) == ["exp", "tanh", "sin", "add", "full", "exp", "add", "reshape", "cos", "reshape", "add"]
    new = apply_passes(main, {"x", *fetch})
    # tanh: a is fetched; sin: b is read later; exp(full): full is not known to return a fresh
    # buffer; cos: a reshape (a view) of e was taken earlier; the last add: reshape outputs
    assert new._inplace_pairs == {3: (0, 0), 6: (1, 0)}
    x = f32(3, 4)
    got, _ = run_ops(new, {"x": x}, fetch)
    plain, _ = run_ops(main, {"x": x}, fetch)
    for g, p in zip(got, plain):
        np.testing.assert_array_equal(g, p)
    a = np.exp(x)
    b = np.tanh(a)
    e = np.exp(np.ones([1], np.float32)) + (b + np.sin(b))
    np.testing.assert_array_equal(got[0], a)
    np.testing.assert_array_equal(got[1], np.cos(e).reshape(4, 3) + e.reshape(4, 3))


def test_fused_op_writes_into_a_dead_input(static_mode):
    def net(x, w):
        h = paddle.matmul(x, w)                 # fresh, read only by the chain
        return paddle.tanh(F.relu(paddle.add(h, h)))
    only("FLAGS_enable_fusion", "FLAGS_enable_inplace")
    main, _, fetch = build(net, ("x", [2, 3]), ("w", [3, 4]))
    new = apply_passes(main, {"x", "w", *fetch})
    assert types(new) == ["matmul", "fused_elementwise"]
    assert new._inplace_pairs == {1: (0, 0)}
    x, w = f32(2, 3), f32(3, 4)
    (got,), reused = run_ops(new, {"x": x, "w": w}, fetch)
    assert reused == [1]
    h = x @ w
    np.testing.assert_array_equal(got, np.tanh(np.maximum(h + h, 0)))


def _float_samples(op):
    for s in op.samples():
        for dt in (np.float64, np.float32):
            arrays = [a.astype(dt) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in s.inputs]
            yield arrays, s.attrs


@pytest.mark.parametrize("name", sorted(n for n in all_ops() if inplace_kernel(n) is not None
                                        and n != "fused_elementwise"))
def test_out_forms_are_bit_identical_to_kernels(name):
    op = get_op(name)
    for arrays, attrs in _float_samples(op):
        want = np.asarray(op.kernel(np, *arrays, **attrs))
        for slot, a in enumerate(arrays):
            buf = np.array(a, copy=True)
            args = [buf if k == slot else x for k, x in enumerate(arrays)]
            got = inplace_kernel(name)(np, buf, *args, **attrs)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want, err_msg=f"{name} into input {slot}")
            assert (got is buf) == (buf.shape == want.shape and buf.dtype == want.dtype and buf.size > 1), name


_MENU = [  # (op, number of operands, attrs)
    ("add", 2, ()), ("subtract", 2, ()), ("multiply", 2, ()), ("divide", 2, ()), ("maximum", 2, ()),
    ("relu", 1, ()), ("tanh", 1, ()), ("exp", 1, ()), ("sin", 1, ()), ("abs", 1, ()), ("rsqrt", 1, ()),
    ("sigmoid", 1, ()), ("square", 1, ()), ("gelu", 1, (("approximate", False),)),
    ("scale", 1, (("bias", 0.25), ("bias_after_scale", False), ("scale", -1.5))),
    ("clip", 1, (("max", 0.5), ("min", -0.5))),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN / inf from rsqrt or divide must match too
@pytest.mark.parametrize("seed", range(40))
def test_random_fused_chains_are_bit_identical_to_their_ops(seed):
    rng = np.random.default_rng(seed)
    dt = np.float32 if seed % 2 else np.float64
    shapes = [(3, 4), (4,), (1, 4), (), (3, 1)][: 2 + seed % 4]
    inputs = [rng.uniform(0.2, 2.0, size=sh).astype(dt) for sh in shapes]
    chain, n = [], len(inputs)
    for k in range(int(rng.integers(2, 9))):
        name, arity, attrs = _MENU[rng.integers(len(_MENU))]
        prev = n + k - 1 if k else int(rng.integers(n))
        refs = (prev,) if arity == 1 else (prev, int(rng.integers(n + k)))
        if name == "scale" and seed % 3 == 0:
            chain.append(("cast", (prev,), (("dtype", np.dtype(np.float64 if dt == np.float32 else np.float32)),)))
            continue
        chain.append((name, refs, attrs))
    chain = tuple(chain)
    vals = list(inputs)
    for name, refs, attrs in chain:
        vals.append(np.asarray(get_op(name).kernel(np, *[vals[r] for r in refs], **dict(attrs))))
    got = get_op("fused_elementwise").kernel(np, *inputs, chain=chain)
    np.testing.assert_array_equal(got, vals[-1])
    assert got.dtype == vals[-1].dtype and got.shape == vals[-1].shape
    for slot in range(n):   # any input may be granted to the chain's out= writes
        args = [a.copy() for a in inputs]
        res = inplace_kernel("fused_elementwise")(np, args[slot], *args, chain=chain)
        np.testing.assert_array_equal(res, vals[-1])
        for k, a in enumerate(args):
            if k != slot:
                np.testing.assert_array_equal(a, inputs[k])


# ---------------------------------------------------------------- the whole pipeline
def test_user_program_is_unchanged_and_flags_off_gives_a_plain_copy(static_mode):
    main, _, fetch = build(_chain_net, ("x", [None, 5]), ("y", [5]))
    before, text = main.structural_hash(), str(main)
    on = apply_passes(main, {"x", "y", *fetch})
    assert main.structural_hash() == before and str(main) == text
    assert on is not main and on.structural_hash() != before
    only()
    off = apply_passes(main, {"x", "y", *fetch})
    assert off.structural_hash() == before and off._inplace_pairs == {}


def test_fused_elementwise_meta_rejects_bad_chains():
    meta = get_op("fused_elementwise").meta
    from runtime.ops.registry import TensorSpec
    x = TensorSpec((3,), np.dtype("float32"))
    with pytest.raises(ValueError, match="at least one step"):
        meta(x, chain=())
    with pytest.raises(ValueError, match="step 0 op 'matmul' is not an elementwise op or a constant"):
        meta(x, x, chain=(("matmul", (0, 1), ()),))
    with pytest.raises(ValueError, match=r"step 1 \('exp'\) refers to \(5,\)"):
        meta(x, chain=(("exp", (0,), ()), ("exp", (5,), ())))
    with pytest.raises(ValueError, match="add: "):
        meta(x, TensorSpec((4,), np.dtype("float32")), chain=(("add", (0, 1), ()),))


# ---------------------------------------------------------------- through the Executor
def _run_with(passes, program, feed, fetch, scope=None):
    only(*(PASS_FLAGS if passes else ()))
    return static.Executor().run(program, feed=feed, fetch_list=fetch, scope=scope)


def test_executor_results_are_bit_identical_with_passes_on_and_off(static_mode):
    def net(x, y):
        paddle.exp(paddle.sin(x))                      # dead
        h = F.relu(paddle.matmul(x, paddle.transpose(y, [1, 0])))
        return paddle.tanh(paddle.scale(h * 2.0 + 1.0, 0.5)), paddle.sum(h)
    main, _, fetch = build(net, ("x", [None, 6]), ("y", [4, 6]))
    for batch in (3, 5):
        x, y = f32(batch, 6), f32(4, 6)
        feed = {"x": x.copy(), "y": y.copy()}
        on = _run_with(True, main, feed, fetch)
        off = _run_with(False, main, feed, fetch)
        for a, b in zip(on, off):
            np.testing.assert_array_equal(a, b)
        h = np.maximum(x @ y.T, 0)
        np.testing.assert_allclose(on[0], np.tanh((h * 2 + 1) * 0.5), rtol=1e-6)
        np.testing.assert_array_equal(feed["x"], x)
        np.testing.assert_array_equal(feed["y"], y)


def test_training_with_passes_equals_training_without(static_mode):
    def program():
        main, startup = static.Program(), static.Program()
        with static.program_guard(main, startup):
            x = static.data("x", [8, 5])
            label = static.data("label", [8], "int64")
            h = F.relu(paddle.nn.Linear(5, 7)(x))
            loss = F.cross_entropy(paddle.nn.Linear(7, 3)(h * 0.5 + 0.1), label)
            paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
        return main, startup, loss.name
    main, startup, loss = program()
    params = [p.name for p in main.all_parameters()]
    assert any(op.type == "fused_elementwise" for op in apply_passes(main, {loss, *params}).global_block().ops)
    scopes = {True: static.Scope(), False: static.Scope()}
    for passes, scope in scopes.items():
        _run_with(passes, startup, {}, [], scope)
    init = {n: np.array(scopes[True].find_var(n).get_tensor()) for n in params}
    for n in params:
        scopes[False].find_var(n).set(init[n])
    for _ in range(3):
        feed = {"x": f32(8, 5), "label": RNG.integers(0, 3, 8)}
        got = {passes: _run_with(passes, main, feed, [loss], scope)[0] for passes, scope in scopes.items()}
        np.testing.assert_array_equal(got[True], got[False])
    for n in params:
        a, b = (np.asarray(s.find_var(n).get_tensor()) for s in scopes.values())
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, init[n])


# ---------------------------------------------------------------- constants folded at build time
def _folded_types(main, feed, fetch, passes):
    only(*(PASS_FLAGS if passes else ()))
    core = static.Executor().core_for(main, list(feed), fetch, scope=static.Scope())
    return core, sorted(core.plan.instructions[i].type for i in core._code.folded)


@pytest.mark.parametrize("passes", [True, False])
def test_constants_are_made_once_at_build_and_every_run_equals_numpy(static_mode, passes):
    def net(x):
        c = paddle.full([4], 2.5)
        k = paddle.to_tensor(np.array([1.0, -1.0, 0.5, 2.0], "float32"))  # assign_value
        return x * c + k, paddle.full([2], 7.0)  # the second constant is fetched: handed out, not folded
    main, _, fetch = build(net, ("x", [4]))
    core, folded = _folded_types(main, {"x": None}, fetch, passes)
    if passes:  # the fused chain holds both constants as steps, made once when it is compiled
        fused_op = apply_passes(main, {"x", *fetch}).global_block().ops[-2]
        assert [s[0] for s in fused_op.attrs["chain"]] == ["full", "assign_value", "multiply", "add"]
        assert fused_op.inputs == ["x"] and folded == []
    else:
        assert "full" in folded and "assign_value" in folded
    for seed in range(3):
        x = f32(4)
        out, seven = core.run([x])
        np.testing.assert_allclose(out, x * 2.5 + np.array([1.0, -1.0, 0.5, 2.0], "float32"), rtol=1e-6)
        np.testing.assert_array_equal(seven, [7.0, 7.0])
        seven[...] = -1  # the caller owns what it fetched: the next run makes the constant again
        out_again, seven_again = core.run([x])
        np.testing.assert_array_equal(out_again, out)
        np.testing.assert_array_equal(seven_again, [7.0, 7.0])
