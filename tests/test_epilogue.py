"""Epilogue passes in the compiled path: conv/linear/matmul + eval BatchNorm + activations as one
`fused_epilogue` op, max_pool without a dead mask, and opt-in BatchNorm folding. JIT results are
compared with eager ones: bit-identical for fusion and mask elimination, within float32 rounding
for folding; gradient programs keep their ops and values."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot
from runtime import static
from runtime.executor import executor as executor_module
from runtime.flags import get_flags, set_flags
from runtime.ops import TensorSpec, fused_conv, get_op
from runtime.static.passes import apply_passes

from sot_helpers import fresh

FLAGS = ("FLAGS_enable_epilogue_fusion", "FLAGS_enable_dead_mask_elimination", "FLAGS_fold_batch_norm")


@pytest.fixture(autouse=True)
def restore_flags():
    saved = get_flags(list(FLAGS))
    yield
    set_flags(saved)


@pytest.fixture
def ran_ops(monkeypatch):
    """The op types of every program the executor prepared, after its passes, in build order."""
    found = []
    core_for = executor_module.Executor.core_for

    def recording(self, *args, **kwargs):
        core = core_for(self, *args, **kwargs)
        found.append([op.type for op in core.program.global_block().ops])
        return core
    monkeypatch.setattr(executor_module.Executor, "core_for", recording)
    return found


def arr(rng, *shape, low=None):
    a = rng.standard_normal(shape).astype("float32")
    return np.abs(a) + low if low is not None else a


def t(a):
    return paddle.to_tensor(a)


def bn_stats(rng, c):
    """Non-trivial running mean, variance, scale and shift of c channels."""
    return [t(arr(rng, c)), t(arr(rng, c, low=0.3)), t(arr(rng, c)), t(arr(rng, c))]


def jit_and_eager(fn, *inputs):
    """(JIT result, eager result) of fn on the inputs, under no_grad."""
    jit = sot.to_static(fresh(fn))
    with paddle.no_grad():
        got = jit(*inputs)
        with sot.disable():
            want = fn(*inputs)
    assert jit.sot_translator.fallbacks == []
    return got.numpy(), want.numpy()


ACTIVATIONS = {"relu": F.relu, "tanh": paddle.tanh, "sigmoid": F.sigmoid, "leaky_relu": F.leaky_relu,
               "relu6": F.relu6, "gelu": F.gelu, "none": lambda v: v}


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
@pytest.mark.parametrize("bias,groups,stride,fmt", [(True, 1, 1, "NCHW"), (False, 1, 2, "NCHW"),
                                                     (True, 2, 1, "NCHW"), (True, 1, 1, "NHWC")])
def test_conv_batch_norm_activation_is_one_op_bit_identical_to_eager(ran_ops, act, bias, groups, stride, fmt):
    rng = np.random.default_rng(0)
    x = t(arr(rng, 2, 4, 6, 6) if fmt == "NCHW" else arr(rng, 2, 6, 6, 4))
    w, b = t(arr(rng, 6, 4 // groups, 3, 3)), t(arr(rng, 6)) if bias else None
    stats = bn_stats(rng, 6)
    activation = ACTIVATIONS[act]

    def f(x, w, b, mean, var, gamma, beta):
        y = F.conv2d(x, w, b, stride=stride, padding=1, groups=groups, data_format=fmt)
        return activation(F.batch_norm(y, mean, var, gamma, beta, training=False, data_format=fmt))
    got, want = jit_and_eager(f, x, w, b, *stats)
    np.testing.assert_array_equal(got, want)
    assert "fused_epilogue" in ran_ops[-1] and "conv" not in ran_ops[-1]


def test_in_place_steps_keep_the_bits_of_signed_zeros_nan_payloads_and_infinities():
    # a 1x1 conv with weight 1 hands its input through (zeros as +0), and neg makes -0 of them
    special = np.array([0x80000000, 0, 0x7fc00001, 0xffc12345, 0x7f800000, 0xff800000, 0x00000001, 0x80000001,
                        0x3f800000, 0xbf800000], np.uint32).view(np.float32)
    x = np.random.default_rng(12).choice(special, size=(3, 1, 4, 5)).astype(np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    mean, var, gamma, beta = (np.array([v], np.float32) for v in (0.0, 1.0, 1.0, 0.0))
    conv = (("channel_last", False), ("dilation", (1, 1)), ("groups", 1), ("padding", (0, 0, 0, 0)),
            ("stride", (1, 1)))
    bn = ("batch_norm_infer", (-1, 3, 4, 5, 6), (("channel_axis", 1), ("epsilon", 0.0)))
    for steps in [(("relu", (-1,), ()),), (bn, ("relu", (-1,), ())), (("neg", (-1,), ()), ("relu", (-1,), ())),
                  (bn, ("neg", (-1,), ()), ("relu", (-1,), ()), ("neg", (-1,), ()))]:
        got = get_op("fused_epilogue").kernel(np, x, w, None, mean, var, gamma, beta, head="conv",
                                              head_attrs=conv, steps=steps, fold=False, pool=())
        want = get_op("conv").kernel(np, x, w, None, **dict(conv))
        arrays = (x, w, None, mean, var, gamma, beta)
        for name, refs, attrs in steps:
            want = get_op(name).kernel(np, *[want if r == -1 else arrays[r] for r in refs], **dict(attrs))
        assert got.tobytes() == want.tobytes(), steps


@pytest.mark.parametrize("gamma_sign,mean_nan,pooled_first", [(1, False, True), (-1, False, False),
                                                                  (1, True, False)])
def test_pooling_before_relu_and_batch_norm_gives_the_same_bits_and_only_when_they_keep_the_order(
        monkeypatch, gamma_sign, mean_nan, pooled_first):
    decisions = []
    commutes = fused_conv._commutes_with_max

    def recording(*args):
        decisions.append(commutes(*args))
        return decisions[-1]
    monkeypatch.setattr(fused_conv, "_commutes_with_max", recording)
    special = np.array([0x80000000, 0, 0x7fc00001, 0xffc12345, 0x7f800000, 0xff800000, 0x00000001, 0x80000001,
                        0x3f800000, 0xbf800000, 0x40000000, 0xc0400000], np.uint32).view(np.float32)
    rng = np.random.default_rng(14)
    x = rng.choice(special, size=(2, 1, 6, 6)).astype(np.float32)
    w = np.ones((3, 1, 1, 1), np.float32)               # a 1x1 conv passing x to three channels
    mean = np.array([0.5, np.nan if mean_nan else -1.0, 0.0], np.float32)
    var, beta = np.array([1.0, 0.25, 4.0], np.float32), np.array([0.0, -0.0, 2.0], np.float32)
    gamma = np.array([1.0, 0.5, 2.0], np.float32) * gamma_sign
    conv = (("channel_last", False), ("dilation", (1, 1)), ("groups", 1), ("padding", (0, 0, 0, 0)),
            ("stride", (1, 1)))
    bn = ("batch_norm_infer", (-1, 3, 4, 5, 6), (("channel_axis", 1), ("epsilon", 0.0)))
    pool = (("ceil_mode", True), ("channel_last", False), ("kernel_size", (2, 2)), ("padding", (1, 1, 0, 0)),
            ("stride", (2, 2)))
    got = get_op("fused_epilogue").kernel(np, x, w, None, mean, var, gamma, beta, head="conv", head_attrs=conv,
                                          steps=(bn, ("relu", (-1,), ())), fold=False, pool=pool)
    want = get_op("conv").kernel(np, x, w, None, **dict(conv))
    want = get_op("relu").kernel(np, get_op("batch_norm_infer").kernel(np, want, mean, var, gamma, beta,
                                                                        epsilon=0.0, channel_axis=1))
    want = get_op("max_pool").kernel(np, want, **dict(pool))[0]
    assert got.tobytes() == want.tobytes()
    assert decisions == [pooled_first]


class Cnn(nn.Layer):
    """W5's shape, small: 2 x (conv3x3 + BatchNorm + ReLU), max pool 2, flatten, Linear."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2D(3, 4, 3, padding=1), nn.BatchNorm2D(4)
        self.conv2, self.bn2 = nn.Conv2D(4, 8, 3, padding=1), nn.BatchNorm2D(8)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(paddle.flatten(self.pool(x), 1))


def cnn(seed=0, positive_gamma=False):
    """An eval-mode Cnn with non-trivial running statistics and affine parameters (scales > 0: batch
    norm keeps the order of values, so the pooling may run before it)."""
    paddle.seed(seed)
    model = Cnn()
    rng = np.random.default_rng(seed)
    for bn in (model.bn1, model.bn2):
        c = bn._mean.shape[0]
        bn._mean.set_value(arr(rng, c))
        bn._variance.set_value(arr(rng, c, low=0.3))
        bn.weight.set_value(arr(rng, c, low=0.1) if positive_gamma else arr(rng, c))
        bn.bias.set_value(arr(rng, c))
    model.eval()
    return model


@pytest.mark.parametrize("positive_gamma", [False, True])
def test_cnn_inference_is_bit_identical_to_eager_with_fused_epilogues_and_no_mask(ran_ops, positive_gamma):
    model = cnn(positive_gamma=positive_gamma)
    x = t(np.random.default_rng(1).standard_normal((4, 3, 8, 8)).astype("float32"))
    jit = sot.to_static(model)
    with paddle.no_grad():
        for _ in range(2):
            got = jit(x).numpy()
            with sot.disable():
                want = model(x).numpy()
            assert got.tobytes() == want.tobytes()
    ops = ran_ops[-1]
    assert ops.count("fused_epilogue") == 2   # the second one ends with the pooling
    assert not {"conv", "batch_norm_infer", "relu", "max_pool", "max_pool_values"} & set(ops)


def test_with_the_passes_off_the_program_keeps_its_ops(ran_ops):
    set_flags({"FLAGS_enable_epilogue_fusion": False, "FLAGS_enable_dead_mask_elimination": False})
    model = cnn()
    x = t(np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype("float32"))
    with paddle.no_grad():
        got = sot.to_static(model)(x).numpy()
        with sot.disable():
            want = model(x).numpy()
    np.testing.assert_array_equal(got, want)
    assert {"conv", "batch_norm_infer", "max_pool"} <= set(ran_ops[-1]) and "fused_epilogue" not in ran_ops[-1]


@pytest.mark.parametrize("bias", [True, False])
def test_linear_batch_norm_is_fused_and_matmul_bias_activation_left_to_elementwise_fusion(ran_ops, bias):
    rng = np.random.default_rng(2)
    x, w, b = t(arr(rng, 5, 6)), t(arr(rng, 6, 4)), t(arr(rng, 4)) if bias else None
    y, c = t(arr(rng, 4, 6)), t(arr(rng, 4))
    stats = bn_stats(rng, 4)

    def f(x, w, b, y, c, mean, var, gamma, beta):
        h = F.relu(F.batch_norm(F.linear(x, w, b), mean, var, gamma, beta, training=False))
        return paddle.concat([h, paddle.tanh(paddle.matmul(x, y, transpose_y=True) + c) * 2.0])
    got, want = jit_and_eager(f, x, w, b, y, c, *stats)
    np.testing.assert_array_equal(got, want)
    ops = ran_ops[-1]
    assert ops.count("fused_epilogue") == 1 and "linear" not in ops and "batch_norm_infer" not in ops
    assert "matmul" in ops and "fused_elementwise" in ops


def test_an_intermediate_the_caller_fetches_is_not_absorbed():
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [2, 3, 5, 5])
            y = F.conv2d(x, static.data("w", [4, 3, 3, 3]))
            out = F.relu(y)
    finally:
        paddle.disable_static()
    types = [op.type for op in apply_passes(main, {"x", "w", out.name, y.name}).global_block().ops]
    assert types == ["conv", "relu"]
    types = [op.type for op in apply_passes(main, {"x", "w", out.name}).global_block().ops]
    assert types == ["fused_epilogue"]


def test_max_pool_with_a_read_mask_keeps_the_mask_and_values_match_with_nan_and_ceil_mode(ran_ops):
    rng = np.random.default_rng(4)
    a = arr(rng, 2, 3, 7, 7)
    a[0, 0, 1, 1], a[1, 2, 4, 5] = np.nan, -np.inf
    x = t(a)

    def values(x):
        return F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)

    def with_mask(x):
        return F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, return_mask=True)
    got, want = jit_and_eager(values, x)
    np.testing.assert_array_equal(got, want)
    assert "max_pool_values" in ran_ops[-1] and "max_pool" not in ran_ops[-1]
    jit = sot.to_static(fresh(with_mask))
    (v, m), (ev, em) = jit(x), with_mask(x)
    np.testing.assert_array_equal(v.numpy(), ev.numpy())
    np.testing.assert_array_equal(m.numpy(), em.numpy())
    assert "max_pool" in ran_ops[-1]


def test_the_mask_free_kernel_equals_max_pool_on_its_samples():
    values = get_op("max_pool_values").kernel
    for s in get_op("max_pool").samples():
        np.testing.assert_array_equal(values(np, *s.inputs, **s.attrs), get_op("max_pool").kernel(np, *s.inputs,
                                                                                                    **s.attrs)[0])


def test_training_step_programs_give_the_same_values_with_and_without_the_passes():
    """A static program with backward and optimizer ops: eval batch norm on a conv whose output a
    gradient op reads stays unfused where it must, and every fetched value is the same."""
    def run():
        paddle.seed(5)
        main, startup = static.Program(), static.Program()
        paddle.enable_static()
        try:
            with static.program_guard(main, startup):
                x = static.data("x", [2, 3, 6, 6])
                conv, bn = nn.Conv2D(3, 4, 3, padding=1), nn.BatchNorm2D(4, use_global_stats=True)
                h = F.max_pool2d(F.relu(bn(conv(x))), 2)
                loss = paddle.mean(h * h)
                paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
            keep = {"x", loss.name, *(v.name for v in main.list_vars() if v.persistable)}
            types = [op.type for op in apply_passes(main, keep).global_block().ops]
            exe = static.Executor()
            exe.run(startup)
            feed = {"x": np.random.default_rng(6).standard_normal((2, 3, 6, 6)).astype("float32")}
            return types, [exe.run(main, feed=feed, fetch_list=[loss, conv.weight, bn.weight]) for _ in range(3)]
        finally:
            paddle.disable_static()
    types, on = run()
    # the gradient ops read the conv's output and the pool's mask: both ops stay as they are
    assert {"conv", "batch_norm_infer", "max_pool", "max_pool_scatter"} <= set(types)
    assert "fused_epilogue" not in types and "max_pool_values" not in types
    set_flags({"FLAGS_enable_epilogue_fusion": False, "FLAGS_enable_dead_mask_elimination": False})
    _, off = run()
    for a, b in zip(on, off):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)


def test_folding_is_opt_in_close_to_eager_and_recomputed_only_when_parameters_change(ran_ops):
    set_flags({"FLAGS_fold_batch_norm": True})
    model = cnn(seed=7)
    x = t(np.random.default_rng(8).standard_normal((4, 3, 8, 8)).astype("float32"))
    jit = sot.to_static(model)

    def check():
        with paddle.no_grad():
            got = jit(x).numpy()
            with sot.disable():
                want = model(x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    check()
    start = fused_conv.folds_computed()
    for _ in range(3):
        check()
    assert fused_conv.folds_computed() == start  # frozen parameters: each fold is reused
    model.train()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    with sot.disable():
        paddle.mean(model(x) ** 2).backward()
    opt.step()
    model.eval()
    check()
    assert fused_conv.folds_computed() == start + 2  # new weights and statistics: both folds recomputed
    check()
    assert fused_conv.folds_computed() == start + 2


def test_folding_changes_rounding_only_under_its_flag():
    model = cnn(seed=9)
    x = t(np.random.default_rng(10).standard_normal((4, 3, 8, 8)).astype("float32"))
    with paddle.no_grad():
        with sot.disable():
            want = model(x).numpy()
        plain = sot.to_static(cnn(seed=9))(x).numpy()
        set_flags({"FLAGS_fold_batch_norm": True})
        folded = sot.to_static(cnn(seed=9))(x).numpy()
    np.testing.assert_array_equal(plain, want)
    np.testing.assert_allclose(folded, want, rtol=1e-4, atol=1e-4)
    assert not np.array_equal(folded, want)


@pytest.mark.parametrize("bias", [True, False])
def test_a_linear_batch_norm_fold_is_close_to_eager_and_follows_new_statistics(bias):
    set_flags({"FLAGS_fold_batch_norm": True})
    rng = np.random.default_rng(13)
    x, w, b = t(arr(rng, 6, 5)), t(arr(rng, 5, 4)), t(arr(rng, 4)) if bias else None
    mean, var, gamma, beta = bn_stats(rng, 4)

    def f(x, w, b, mean, var, gamma, beta):
        return F.relu(F.batch_norm(F.linear(x, w, b), mean, var, gamma, beta, training=False))
    jit = sot.to_static(fresh(f))
    start = fused_conv.folds_computed()
    for _ in range(2):
        with paddle.no_grad():
            got = jit(x, w, b, mean, var, gamma, beta).numpy()
            with sot.disable():
                want = f(x, w, b, mean, var, gamma, beta).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        mean.set_value(arr(rng, 4))                 # in place: the same array, new values
    assert jit.sot_translator.fallbacks == [] and fused_conv.folds_computed() == start + 2


def test_the_fused_meta_rejects_a_step_that_is_not_elementwise_and_a_reference_past_the_inputs():
    meta = get_op("fused_epilogue").meta
    specs = (TensorSpec((2, 3), np.dtype("float32")), TensorSpec((3, 4), np.dtype("float32")))
    head = (("transpose_x", False), ("transpose_y", False))
    with pytest.raises(ValueError, match="'softmax' is not elementwise"):
        meta(*specs, head="matmul", head_attrs=head, steps=(("softmax", (-1,), ()),), fold=False, pool=())
    with pytest.raises(ValueError, match=r"refers to \(-1, 5\)"):
        meta(*specs, head="matmul", head_attrs=head, steps=(("add", (-1, 5), ()),), fold=False, pool=())
