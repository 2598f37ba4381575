"""F.affine_grid, F.grid_sample, F.unfold, F.fold and nn.Unfold / nn.Fold: the numbers and gradients
PaddlePaddle 3.3.1 gave (tests/fixtures/paddle/record_grid_ops.py, grid points past the edges and exactly
on edges, mirrors and rounding ties included), NumPy oracles, gradients by finite differences, Paddle's
argument errors, a static program and one to_static graph equal to eager."""
import builtins
import inspect
import itertools
import json
import pathlib

import numpy as np
import pytest

import runtime as paddle
import sot
from helpers import fd_grad
from sot_helpers import assert_like_eager_with_grads, assert_same_result, fresh, run_with_grads

F = paddle.nn.functional
HERE = pathlib.Path(__file__).parent / "fixtures" / "paddle"
REF = np.load(HERE / "grid_ops.npz")
ERRORS = json.loads((HERE / "grid_ops_errors.json").read_text())
MODES = list(itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"], [True, False]))
# as record_grid_ops.py: unfold's arguments per case; fold pads case b symmetrically (Paddle's fold rejects
# top != bottom)
WINDOWS = {
    "a": dict(kernel_sizes=2),
    "b": dict(kernel_sizes=[2, 3], strides=[2, 1], paddings=[1, 0, 2, 1], dilations=[1, 2]),
    "c": dict(kernel_sizes=[3, 2], strides=2, paddings=[1, 2], dilations=1),
}
FOLD_PADDINGS = {"b": [1, 0, 1, 0]}


def _t(a, grad=False):
    return paddle.to_tensor(a, stop_gradient=not grad)


@pytest.mark.parametrize("prefix", ["gs", "gs5", "gse"])
@pytest.mark.parametrize("mode,padding_mode,align_corners", MODES)
def test_grid_sample_gives_what_paddle_gave(prefix, mode, padding_mode, align_corners):
    key = f"{prefix}_{mode}_{padding_mode}_{int(align_corners)}"
    x, grid = _t(REF[f"{prefix}_x"], grad=True), _t(REF[f"{prefix}_grid"], grad=True)
    out = F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    np.testing.assert_allclose(out.numpy(), REF[key], rtol=1e-12, atol=1e-12)
    weights = REF[key + "_w"] if key + "_w" in REF else np.ones(out.shape)  # the edge cases weigh by 1
    (out * _t(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), REF[key + "_gx"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grid.grad.numpy(), REF[key + "_ggrid"], rtol=1e-12, atol=1e-12)


def test_grid_sample_and_affine_grid_defaults_are_paddles():
    assert [(p.name, p.default) for p in inspect.signature(F.grid_sample).parameters.values()][2:] == [
        ("mode", "bilinear"), ("padding_mode", "zeros"), ("align_corners", True), ("name", None)]
    assert inspect.signature(F.affine_grid).parameters["align_corners"].default is True
    np.testing.assert_allclose(F.grid_sample(_t(REF["gs_x"]), _t(REF["gs_grid"])).numpy(), REF["gs_default"],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F.affine_grid(_t(REF["ag_theta"]), [2, 3, 4, 5]).numpy(), REF["ag_default"],
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("align_corners", [True, False])
def test_affine_grid_gives_what_paddle_gave_in_2d_and_3d(align_corners):
    ac = int(align_corners)
    got2 = F.affine_grid(_t(REF["ag_theta"]), [2, 3, 4, 5], align_corners=align_corners)
    got3 = F.affine_grid(_t(REF["ag_theta3"]), (1, 1, 2, 3, 4), align_corners=align_corners)
    assert got2.shape == [2, 4, 5, 2] and got3.shape == [1, 2, 3, 4, 3]
    np.testing.assert_allclose(got2.numpy(), REF[f"ag_{ac}"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got3.numpy(), REF[f"ag3_{ac}"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("align_corners", [True, False])
def test_identity_transform_reads_every_pixel_back(align_corners):
    """The spatial transformer's identity: theta = [I | 0] samples each pixel's centre."""
    x = np.random.default_rng(0).normal(size=(2, 3, 4, 5))
    theta = np.tile(np.eye(2, 3), (2, 1, 1))
    for mode in ("bilinear", "nearest"):
        grid = F.affine_grid(_t(theta), [2, 3, 4, 5], align_corners=align_corners)
        out = F.grid_sample(_t(x), grid, mode=mode, align_corners=align_corners)
        np.testing.assert_allclose(out.numpy(), x, rtol=1e-12, atol=1e-12)


def test_grid_sample_reads_points_as_x_then_y():
    """grid[..., 0] moves along W and grid[..., 1] along H: a half-pixel step right averages two columns."""
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    grid = np.array([[[[-1.0 + 1 / 3, -1.0], [-1.0, 0.0]]]])  # (x, y), align_corners: W step 2/3, H step 1
    out = F.grid_sample(_t(x), _t(grid), align_corners=True).numpy().ravel()
    np.testing.assert_allclose(out, [0.5, 4.0], rtol=1e-12)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_gradients_match_finite_differences(padding_mode, align_corners):
    rng = np.random.default_rng(5)
    x, grid, w = rng.normal(size=(1, 2, 3, 4)), rng.uniform(-2.2, 2.2, size=(1, 2, 3, 2)), rng.normal(size=(1, 2, 2, 3))

    def loss():
        return float((F.grid_sample(_t(x), _t(grid), padding_mode=padding_mode,
                                    align_corners=align_corners).numpy() * w).sum())

    tx, tg = _t(x, grad=True), _t(grid, grad=True)
    (F.grid_sample(tx, tg, padding_mode=padding_mode, align_corners=align_corners) * _t(w)).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), fd_grad(loss, x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tg.grad.numpy(), fd_grad(loss, grid), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_second_derivatives_match_finite_differences_of_the_gradient(padding_mode):
    """create_graph=True: the gradient is differentiable again (a gradient penalty through a sampler)."""
    rng = np.random.default_rng(6)
    x, grid = rng.normal(size=(1, 2, 3, 4)), rng.uniform(-1.8, 1.8, size=(1, 2, 2, 2))
    w, u, v = rng.normal(size=(1, 2, 2, 2)), rng.normal(size=x.shape), rng.normal(size=grid.shape)

    def penalty(tx, tg, create_graph):
        y = F.grid_sample(tx, tg, padding_mode=padding_mode, align_corners=False)
        gx, gg = paddle.grad((y * _t(w)).sum(), [tx, tg], create_graph=create_graph)
        return (gx * _t(u)).sum() + (gg * _t(v)).sum()

    tx, tg = _t(x, grad=True), _t(grid, grad=True)
    hx, hg = paddle.grad(penalty(tx, tg, True), [tx, tg])

    def numeric():
        return float(penalty(_t(x, grad=True), _t(grid, grad=True), False).numpy())

    np.testing.assert_allclose(hx.numpy(), fd_grad(numeric, x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hg.numpy(), fd_grad(numeric, grid), rtol=1e-5, atol=1e-7)


def _unfold_loops(x, kernel, stride, pads, dilation):
    """im2col by loops; pads are (top, left, bottom, right) as Paddle lists them."""
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (w + left + right - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    out = np.zeros((n, c, kernel[0], kernel[1], oh, ow))
    for i, j, p, q in itertools.product(range(kernel[0]), range(kernel[1]), range(oh), range(ow)):
        out[:, :, i, j, p, q] = xp[:, :, p * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]]
    return out.reshape(n, c * kernel[0] * kernel[1], oh * ow)


@pytest.mark.parametrize("case", sorted(WINDOWS))
def test_unfold_and_fold_give_what_paddle_gave(case):
    kw = WINDOWS[case]
    np.testing.assert_array_equal(F.unfold(_t(REF["uf_x"]), **kw).numpy(), REF[f"uf_{case}"])
    fold_kw = dict(kw, paddings=FOLD_PADDINGS.get(case, kw.get("paddings", 0)))
    np.testing.assert_allclose(F.fold(_t(REF[f"fo_{case}_x"]), [5, 6], **fold_kw).numpy(), REF[f"fo_{case}"],
                               rtol=1e-12, atol=1e-12)


def test_unfold_is_im2col_and_fold_its_adjoint():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 5, 6))
    cols = F.unfold(_t(x), [2, 3], strides=[2, 1], paddings=[1, 0, 2, 1], dilations=[1, 2])
    np.testing.assert_array_equal(cols.numpy(), _unfold_loops(x, (2, 3), (2, 1), (1, 0, 2, 1), (1, 2)))
    y = rng.normal(size=cols.shape)
    back = F.fold(_t(y), [5, 6], [2, 3], strides=[2, 1], paddings=[1, 0, 2, 1], dilations=[1, 2])
    np.testing.assert_allclose((cols.numpy() * y).sum(), (x * back.numpy()).sum(), rtol=1e-12)


def test_unfold_and_fold_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(1, 2, 4, 5)), rng.normal(size=(1, 2, 4, 5))

    def roundtrip(t):
        return F.fold(F.unfold(t, 2, paddings=[1, 0]) * 3.0, [4, 5], 2, paddings=[1, 0])

    tx = _t(x, grad=True)
    (roundtrip(tx) * _t(w)).sum().backward()
    numeric = fd_grad(lambda: float((roundtrip(_t(x)).numpy() * w).sum()), x)
    np.testing.assert_allclose(tx.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_bad_arguments_raise_paddles_error_types_naming_op_and_argument():
    x, grid = _t(REF["gs_x"]), _t(REF["gs_grid"])
    ux, cols = _t(REF["uf_x"]), _t(REF["uf_a"])
    calls = {
        "grid_sample_mode": (lambda: F.grid_sample(x, grid, mode="bicubic"), "mode"),
        "grid_sample_padding_mode": (lambda: F.grid_sample(x, grid, padding_mode="circular"), "padding_mode"),
        "grid_sample_grid_last_dim": (lambda: F.grid_sample(x, _t(REF["gs_grid"][..., :1].copy())), "grid"),
        "grid_sample_batch": (lambda: F.grid_sample(x, _t(REF["gs_grid"][:1].copy())), "batch"),
        "affine_grid_theta_not_tensor": (lambda: F.affine_grid(REF["ag_theta"], [2, 3, 4, 5]), "theta"),
        "unfold_kernel_sizes_len": (lambda: F.unfold(ux, [1, 2, 3]), "kernel_sizes"),
        "unfold_paddings_len": (lambda: F.unfold(ux, 2, paddings=[1, 2, 3]), "paddings"),
        "unfold_too_big": (lambda: F.unfold(ux, 7), "kernel"),
        "unfold_rank": (lambda: F.unfold(_t(REF["uf_x"][0]), 2), "'x'"),
        "fold_output_sizes_len": (lambda: F.fold(cols, [5, 6, 7], 2), "output_sizes"),
        "fold_channels": (lambda: F.fold(_t(REF["uf_a"][:, :5]), [5, 6], 2), "kernel_sizes"),
        "fold_blocks": (lambda: F.fold(cols, [5, 7], 2), "blocks"),
    }
    for key, (call, arg) in calls.items():
        want = next(name for name in ERRORS[key][1] if hasattr(builtins, name))  # Paddle's builtin base
        with pytest.raises(Exception) as info:
            call()
        assert want in [c.__name__ for c in type(info.value).__mro__], (key, info.value)
        op = key.split("_")[0] if not key.startswith(("grid_sample", "affine_grid")) else "_".join(key.split("_")[:2])
        assert str(info.value).startswith(f"{op}:") and arg in str(info.value), (key, info.value)


def test_other_bad_arguments_name_op_and_argument():
    x = _t(REF["gs_x"])
    with pytest.raises(TypeError, match="grid_sample: argument 'align_corners'"):
        F.grid_sample(x, _t(REF["gs_grid"]), align_corners=1)
    np.testing.assert_array_equal(F.grid_sample(x, _t(REF["gs_grid"]), align_corners=None).numpy(),
                                  F.grid_sample(x, _t(REF["gs_grid"]), align_corners=False).numpy())
    with pytest.raises(TypeError, match="grid_sample: argument 'grid' has dtype float32"):
        F.grid_sample(x, _t(REF["gs_grid"].astype("float32")))
    with pytest.raises(ValueError, match="affine_grid: argument 'theta' must have shape"):
        F.affine_grid(_t(REF["ag_theta3"]), [1, 3, 4, 5])  # Paddle runs this and reads past theta
    with pytest.raises(ValueError, match="affine_grid: argument 'out_shape'"):
        F.affine_grid(_t(REF["ag_theta"]), [2, 4, 5])
    with pytest.raises(TypeError, match="unfold: argument 'strides' must hold ints"):
        F.unfold(_t(REF["uf_x"]), 2, strides=[1.0, 1])
    with pytest.raises(ValueError, match="fold: argument 'dilations' must hold ints >= 1"):
        F.fold(_t(REF["uf_a"]), [5, 6], 2, dilations=0)


def test_layers_forward_to_the_functions_and_repr_as_paddle():
    x = _t(REF["uf_x"])
    unfold = paddle.nn.Unfold([2, 3], dilations=[1, 2], paddings=[1, 0, 2, 1], strides=[2, 1])
    np.testing.assert_array_equal(unfold(x).numpy(), REF["uf_b"])
    fold = paddle.nn.Fold([5, 6], 2)
    np.testing.assert_allclose(fold(_t(REF["fo_a_x"])).numpy(), REF["fo_a"], rtol=1e-12, atol=1e-12)
    assert repr(unfold) == "Unfold(kernel_size=[2, 3], dilation=[1, 2], padding=[1, 0, 2, 1], stride=[2, 1])"
    assert repr(fold) == "Fold(kernel_size=2, dilation=1, padding=0, stride=1)"


def _transformer_then_patches(x, theta):
    """affine_grid -> grid_sample -> unfold -> fold, and a scalar loss of it."""
    grid = F.affine_grid(theta, [2, 2, 4, 3], align_corners=False)
    sampled = F.grid_sample(x, grid, padding_mode="reflection", align_corners=False)
    back = F.fold(F.unfold(sampled, 2, paddings=1), [4, 3], 2, paddings=1)
    return sampled, back, (back * back).sum()


def test_static_program_builds_forward_and_gradients_like_eager(static_mode):
    rng = np.random.default_rng(3)
    feed = {"x": rng.normal(size=(2, 2, 5, 6)).astype("float32"),
            "theta": rng.normal(size=(2, 2, 3)).astype("float32")}
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        x = paddle.static.data("x", [None, 2, 5, 6], "float32")
        theta = paddle.static.data("theta", [None, 2, 3], "float32")
        x.stop_gradient = theta.stop_gradient = False
        sampled, back, loss = _transformer_then_patches(x, theta)
        assert list(sampled.shape) == [2, 2, 4, 3] and list(back.shape) == [2, 2, 4, 3]
        assert list(F.unfold(x, 2, paddings=1).shape) == [-1, 8, 42]
        gx, gtheta = paddle.static.gradients(loss, [x, theta])
    got = paddle.static.Executor().run(main, feed=feed, fetch_list=[sampled, back, gx, gtheta])
    paddle.disable_static()
    try:
        ex, etheta = _t(feed["x"], grad=True), _t(feed["theta"], grad=True)
        e_sampled, e_back, e_loss = _transformer_then_patches(ex, etheta)
        e_loss.backward()
        want = [e_sampled.numpy(), e_back.numpy(), ex.grad.numpy(), etheta.grad.numpy()]
    finally:
        paddle.enable_static()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def _penalty_gradients(x, grid, w, u, v, grad):
    """Gradients of a gradient penalty through grid_sample, with `grad` = paddle.grad or static.gradients."""
    y = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
    gx, gg = grad((y * w).sum(), [x, grid])
    return grad((gx * u).sum() + (gg * v).sum(), [x, grid])


def test_static_program_differentiates_grid_sample_twice_like_eager(static_mode):
    rng = np.random.default_rng(7)
    x, grid = rng.normal(size=(2, 2, 3, 4)), rng.uniform(-1.8, 1.8, size=(2, 3, 2, 2))
    w, u, v = rng.normal(size=(2, 2, 3, 2)), rng.normal(size=x.shape), rng.normal(size=grid.shape)
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        sx = paddle.static.data("x", [2, 2, 3, 4], "float64")
        sg = paddle.static.data("grid", [2, 3, 2, 2], "float64")
        sx.stop_gradient = sg.stop_gradient = False
        consts = [paddle.to_tensor(a) for a in (w, u, v)]
        fetch = _penalty_gradients(sx, sg, *consts, paddle.static.gradients)
    got = paddle.static.Executor().run(main, feed={"x": x, "grid": grid}, fetch_list=list(fetch))
    paddle.disable_static()
    try:
        want = _penalty_gradients(_t(x, grad=True), _t(grid, grad=True), _t(w), _t(u), _t(v),
                                  lambda out, ins: paddle.grad(out, ins, create_graph=True))
    finally:
        paddle.enable_static()
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-12, atol=1e-12)


def test_compiled_spatial_transformer_is_one_graph_like_eager_with_gradients():
    """A spatial transformer (theta from a linear layer, affine_grid, grid_sample) feeding a patch head."""
    paddle.seed(1)
    loc = paddle.nn.Linear(2 * 5 * 6, 6)
    unfold = paddle.nn.Unfold(2, strides=2)
    identity = paddle.to_tensor(np.eye(2, 3, dtype="float32"))

    def head(x):
        theta = paddle.reshape(loc(paddle.flatten(x, 1)) * 0.1, [-1, 2, 3]) + identity
        grid = F.affine_grid(theta, [x.shape[0], 2, 4, 4], align_corners=False)
        warped = F.grid_sample(x, grid, align_corners=False, padding_mode="border")
        return F.fold(unfold(warped), [4, 4], 2, strides=2) + warped

    rng = np.random.default_rng(4)
    x = _t(rng.normal(size=(2, 2, 5, 6)).astype("float32"), grad=True)
    want, want_grads, want_mode = run_with_grads(head, [x])
    report = sot.explain(fresh(head), x)
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)
    x.clear_gradient()
    jit = sot.to_static(fresh(head))
    got, got_grads, got_mode = run_with_grads(jit, [x])
    assert_like_eager_with_grads(got, want, got_grads, want_grads, got_mode, want_mode)
    assert_same_result(report.result, want)
