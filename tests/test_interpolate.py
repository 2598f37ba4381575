"""F.interpolate / F.upsample against per-pixel references written from Paddle's kernel formulas
(float32 ratios as Paddle computes them), gradients against finite differences, errors."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import fd_grad, t

rng = np.random.default_rng(9)
f32 = np.float32


def ratio(n_in, n_out, align_corners, scale):
    """Paddle: (in-1)/(out-1) with align_corners, else 1/scale when a scale is given, else in/out (float32)."""
    if n_out <= 1:
        return f32(0)
    if align_corners:
        return f32(n_in - 1) / f32(n_out - 1)
    return f32(1.0 / float(f32(scale))) if scale else f32(n_in) / f32(n_out)


def linear_src(k, r, n, align_corners, align_mode):
    """Paddle's linear source: (low index, high index, weight of high)."""
    if align_mode == 0 and not align_corners:
        src = float(r) * (k + 0.5) - 0.5
        lo = max(int(src), 0)  # C++ truncation
        frac = max(f32(src), f32(0)) - f32(lo)
    else:
        src = r * f32(k)
        lo = int(src)
        frac = src - f32(lo)
    return lo, min(lo + 1, n - 1), float(frac)


def cubic_coeffs(tt, a=-0.75):
    near = lambda v: ((a + 2) * v - (a + 3)) * v * v + 1  # noqa: E731
    far = lambda v: ((a * v - 5 * a) * v + 8 * a) * v - 4 * a  # noqa: E731
    return [far(tt + 1), near(tt), near(1 - tt), far(2 - tt)]


def ref_interp(x, out, mode, align_corners=False, align_mode=0, scale=None):
    """x (N, C, *S) resized to `out`, one output pixel at a time."""
    nd = x.ndim - 2
    size = x.shape[2:]
    if tuple(size) == tuple(out):
        return x.copy()
    scale = (None,) * nd if scale is None else scale
    r = [ratio(size[i], out[i], align_corners, scale[i]) for i in range(nd)]
    res = np.zeros(x.shape[:2] + tuple(out))
    for pos in np.ndindex(*out):
        if mode == "nearest":
            src = tuple(int(r[i] * f32(p)) for i, p in enumerate(pos))
            res[(slice(None), slice(None)) + pos] = x[(slice(None), slice(None)) + src]
            continue
        if mode == "linear":
            per_axis = []
            for i, p in enumerate(pos):
                lo, hi, fr = linear_src(p, r[i], size[i], align_corners, align_mode)
                per_axis.append([(lo, 1 - fr), (hi, fr)])
        else:  # bicubic
            per_axis = []
            for i, p in enumerate(pos):
                src = float(r[i] * f32(p)) if align_corners else float(r[i]) * (p + 0.5) - 0.5
                base = int(np.floor(src))
                coeffs = cubic_coeffs(src - base)
                per_axis.append([(min(max(base - 1 + j, 0), size[i] - 1), coeffs[j]) for j in range(4)])
        acc = 0.0
        for combo in np.ndindex(*(len(a) for a in per_axis)):
            idx = tuple(per_axis[i][c][0] for i, c in enumerate(combo))
            w = np.prod([per_axis[i][c][1] for i, c in enumerate(combo)])
            acc = acc + w * x[(slice(None), slice(None)) + idx]
        res[(slice(None), slice(None)) + pos] = acc
    return res


@pytest.mark.parametrize("size,scale,out", [
    ((7, 3), None, (7, 3)), ((6, 9), None, (6, 9)), (None, 2, (8, 10)), (None, (1.5, 0.7), (6, 3)),
    (None, 1.7, (6, 8)),
])
def test_nearest_matches_reference(size, scale, out):
    x = rng.standard_normal((2, 3, 4, 5))
    got = F.interpolate(t(x), size=size, scale_factor=scale, mode="nearest")
    sc = None if scale is None else ((scale, scale) if np.isscalar(scale) else scale)
    np.testing.assert_array_equal(got.numpy(), ref_interp(x, out, "nearest", scale=sc))


@pytest.mark.parametrize("align_corners,align_mode", [(False, 0), (False, 1), (True, 0)])
@pytest.mark.parametrize("size,scale,out", [((7, 3), None, (7, 3)), (None, (1.5, 2.0), (6, 10)),
                                            ((2, 9), None, (2, 9)), ((1, 1), None, (1, 1))])
def test_bilinear_matches_reference(align_corners, align_mode, size, scale, out):
    x = rng.standard_normal((2, 3, 4, 5))
    got = F.interpolate(t(x), size=size, scale_factor=scale, mode="bilinear", align_corners=align_corners,
                        align_mode=align_mode)
    np.testing.assert_allclose(got.numpy(), ref_interp(x, out, "linear", align_corners, align_mode, scale),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_matches_reference(align_corners):
    x = rng.standard_normal((1, 2, 5, 4))
    got = F.interpolate(t(x), size=[8, 3], mode="bicubic", align_corners=align_corners)
    np.testing.assert_allclose(got.numpy(), ref_interp(x, (8, 3), "cubic", align_corners), rtol=1e-6, atol=1e-6)


def test_linear_and_trilinear_and_nearest_3d():
    x1 = rng.standard_normal((2, 3, 5))
    np.testing.assert_allclose(F.interpolate(t(x1), size=[9], mode="linear", data_format="NCW").numpy(),
                               ref_interp(x1, (9,), "linear"), rtol=1e-6, atol=1e-6)
    # the 'NCHW' default on a 3-D input means 'NCW'
    np.testing.assert_allclose(F.interpolate(t(x1), scale_factor=0.6, mode="linear", align_corners=True).numpy(),
                               ref_interp(x1, (3,), "linear", True), rtol=1e-6, atol=1e-6)
    x3 = rng.standard_normal((1, 2, 3, 4, 2))
    np.testing.assert_allclose(F.interpolate(t(x3), size=[5, 3, 4], mode="trilinear", align_mode=1).numpy(),
                               ref_interp(x3, (5, 3, 4), "linear", False, 1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(F.interpolate(t(x3), scale_factor=2, mode="nearest", data_format="NCDHW").numpy(),
                                  ref_interp(x3, (6, 8, 4), "nearest"))


def test_nhwc_matches_nchw():
    x = rng.standard_normal((2, 3, 4, 5))
    for mode in ("nearest", "bilinear", "bicubic"):
        ref = F.interpolate(t(x), size=[6, 7], mode=mode).numpy()
        got = F.interpolate(t(x.transpose(0, 2, 3, 1)), size=[6, 7], mode=mode, data_format="NHWC").numpy()
        np.testing.assert_allclose(got.transpose(0, 3, 1, 2), ref, atol=1e-12)


def test_unchanged_size_is_a_copy_even_with_a_scale():
    # Paddle copies when every output size equals the input size (here int(3 * 1.2) == 3)
    x = rng.standard_normal((1, 2, 3, 3))
    xt = t(x)
    out = F.interpolate(xt, scale_factor=1.2, mode="bilinear")
    np.testing.assert_array_equal(out.numpy(), x)
    assert out._data is not xt._data and not np.shares_memory(out._data, xt._data)


def test_area_is_adaptive_average_pooling_and_upsample_is_an_alias():
    x = rng.standard_normal((2, 3, 7, 5))
    np.testing.assert_allclose(F.interpolate(t(x), size=[3, 2], mode="area").numpy(),
                               F.adaptive_avg_pool2d(t(x), [3, 2]).numpy(), atol=1e-12)
    for kw in ({"size": [5, 8], "mode": "bilinear", "align_corners": True}, {"scale_factor": 2}):
        np.testing.assert_array_equal(F.upsample(t(x), **kw).numpy(), F.interpolate(t(x), **kw).numpy())


@pytest.mark.parametrize("kw", [
    {"size": [7, 3], "mode": "nearest"},
    {"scale_factor": 1.5, "mode": "bilinear"},
    {"size": [3, 7], "mode": "bilinear", "align_corners": True},
    {"size": [6, 3], "mode": "bilinear", "align_mode": 1, "data_format": "NHWC"},
    {"size": [6, 5], "mode": "bicubic"},
    {"size": [3, 2], "mode": "area"},
])
def test_gradients_match_finite_differences(kw):
    x = rng.standard_normal((1, 2, 4, 5))
    xt = t(x, grad=True)
    out = F.interpolate(xt, **kw)
    v = rng.standard_normal(out.shape)
    (g,) = paddle.grad((out * t(v)).sum(), [xt])
    np.testing.assert_allclose(g.numpy(), fd_grad(lambda: (F.interpolate(t(x), **kw).numpy() * v).sum(), x),
                               rtol=1e-6, atol=1e-6)


def test_double_backward():
    x = rng.standard_normal((1, 2, 3, 4))
    u = rng.standard_normal(x.shape)

    def first_grad_dot(x_, create_graph=False):
        xt_ = t(x_, grad=True)
        out = F.interpolate(xt_, size=[5, 6], mode="bilinear")
        (gx,) = paddle.grad((out ** 3).sum(), [xt_], create_graph=create_graph)
        return (gx * t(u)).sum(), xt_

    h, xt_ = first_grad_dot(x, create_graph=True)
    (g2,) = paddle.grad(h, [xt_])
    np.testing.assert_allclose(g2.numpy(), fd_grad(lambda: first_grad_dot(x)[0].item(), x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: F.interpolate(x, size=[4, 4], mode="nearest", align_corners=True), ValueError,
     r"align_corners option can only be set with the interpolating modes"),
    (lambda x: F.interpolate(x, size=[4, 4], mode="cubic"), ValueError, r"argument 'mode' must be one of"),
    (lambda x: F.interpolate(x, size=[4], mode="linear"), ValueError, r"mode 'linear' needs a 3-D input"),
    (lambda x: F.interpolate(x, size=[4, 4], mode="trilinear"), ValueError, r"mode 'trilinear' needs a 5-D input"),
    (lambda x: F.interpolate(x, mode="bilinear"), ValueError, r"one of 'size' and 'scale_factor' must be given"),
    (lambda x: F.interpolate(x, size=[4, 4], scale_factor=2), ValueError, r"only one of 'size' and 'scale_factor'"),
    (lambda x: F.interpolate(x, size=[4, 4, 4]), ValueError, r"argument 'size' must have 2 entries"),
    (lambda x: F.interpolate(x, size=[4, 0]), ValueError, r"argument 'size' must hold positive ints"),
    (lambda x: F.interpolate(x, scale_factor=-1.0), ValueError, r"'scale_factor' must hold positive numbers"),
    (lambda x: F.interpolate(x, scale_factor=0.1), ValueError, r"output size \[0, 0\] must be positive"),
    (lambda x: F.interpolate(x, size=[4, 4], mode="bilinear", align_mode=2), ValueError,
     r"'align_mode' must be 0 or 1"),
    (lambda x: F.interpolate(x, size=[4, 4], mode="bilinear", align_corners=1), TypeError,
     r"'align_corners' must be a bool"),
    (lambda x: F.interpolate(x, size=[4, 4], data_format="HWNC"), ValueError, r"argument 'data_format' must be"),
    (lambda x: F.interpolate(x, scale_factor=2, mode="area"), ValueError, r"mode 'area' needs 'size'"),
    (lambda x: F.interpolate(x.astype("int64"), size=[4, 4]), TypeError, r"must be a floating tensor"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(t(np.zeros((1, 2, 3, 3))))
