"""F.max/avg/adaptive pools against per-window NumPy references written from Paddle's kernel
rules, gradients against finite differences, and error cases."""
import math

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import fd_grad, t

rng = np.random.default_rng(7)


def ref_pool(x, k, s, pads, ceil_mode, kind, exclusive=True, divisor_override=None):
    """Paddle's pool kernel, one window at a time: [start, min(start + k, size + pad_after)) clipped
    to the input; avg divides by the clipped cell count (exclusive) or the unclipped one."""
    nd = x.ndim - 2
    size = x.shape[2:]
    out = [(size[i] + pads[2 * i] + pads[2 * i + 1] - k[i] + (s[i] - 1 if ceil_mode else 0)) // s[i] + 1
           for i in range(nd)]
    res = np.zeros(x.shape[:2] + tuple(out))
    mask = np.zeros(res.shape, np.int32)
    for idx in np.ndindex(*res.shape):
        starts = [idx[2 + i] * s[i] - pads[2 * i] for i in range(nd)]
        ends = [min(starts[i] + k[i], size[i] + pads[2 * i + 1]) for i in range(nd)]
        lo = [max(v, 0) for v in starts]
        hi = [min(v, size[i]) for i, v in enumerate(ends)]
        region = x[idx[:2] + tuple(slice(a, b) for a, b in zip(lo, hi))]
        if kind == "max":
            res[idx] = region.max()
            local = np.unravel_index(np.argmax(region), region.shape)  # first maximum, row-major
            mask[idx] = np.ravel_multi_index(tuple(a + b for a, b in zip(lo, local)), size)
        else:
            count = region.size if exclusive else math.prod(e - b for b, e in zip(starts, ends))
            res[idx] = region.sum() / count
            if divisor_override is not None:
                res[idx] *= math.prod(k) / divisor_override
    return res, mask


def ref_adaptive(x, out, kind):
    nd = x.ndim - 2
    size = x.shape[2:]
    res = np.zeros(x.shape[:2] + tuple(out))
    mask = np.zeros(res.shape, np.int32)
    for idx in np.ndindex(*res.shape):
        lo = [idx[2 + i] * size[i] // out[i] for i in range(nd)]
        hi = [-(-(idx[2 + i] + 1) * size[i] // out[i]) for i in range(nd)]
        region = x[idx[:2] + tuple(slice(a, b) for a, b in zip(lo, hi))]
        if kind == "max":
            res[idx] = region.max()
            local = np.unravel_index(np.argmax(region), region.shape)
            mask[idx] = np.ravel_multi_index(tuple(a + b for a, b in zip(lo, local)), size)
        else:
            res[idx] = region.mean()
    return res, mask


# kernel, stride, padding argument, resolved pads, ceil_mode
WINDOWS_2D = [
    (2, None, 0, (0, 0, 0, 0), False),
    (3, 2, 1, (1, 1, 1, 1), False),
    ([3, 2], [2, 1], [1, 0, 0, 1], (1, 0, 0, 1), True),
    (3, 2, [1, 1], (1, 1, 1, 1), True),
    ((2, 3), (3, 2), [[0, 0], [0, 0], [1, 0], [1, 1]], (1, 0, 1, 1), True),
    (3, 2, "SAME", (1, 1, 0, 1), False),  # 7x6 input: out 4x3, totals 2 and 1
    (2, 2, "VALID", (0, 0, 0, 0), False),
]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@pytest.mark.parametrize("kernel,stride,padding,pads,ceil_mode", WINDOWS_2D)
def test_max_pool2d_and_mask_match_reference(kernel, stride, padding, pads, ceil_mode):
    x = rng.standard_normal((2, 3, 7, 6))
    out, mask = F.max_pool2d(t(x), kernel, stride, padding, return_mask=True, ceil_mode=ceil_mode)
    k = _pair(kernel)
    ref, ref_mask = ref_pool(x, k, _pair(stride) if stride is not None else k, pads, ceil_mode, "max")
    np.testing.assert_array_equal(out.numpy(), ref)
    assert mask.dtype == paddle.int32
    np.testing.assert_array_equal(mask.numpy(), ref_mask)


@pytest.mark.parametrize("kernel,stride,padding,pads,ceil_mode", WINDOWS_2D)
@pytest.mark.parametrize("exclusive", [True, False])
def test_avg_pool2d_matches_reference(kernel, stride, padding, pads, ceil_mode, exclusive):
    x = rng.standard_normal((2, 3, 7, 6))
    out = F.avg_pool2d(t(x), kernel, stride, padding, ceil_mode=ceil_mode, exclusive=exclusive)
    k = _pair(kernel)
    ref, _ = ref_pool(x, k, _pair(stride) if stride is not None else k, pads, ceil_mode, "avg", exclusive)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-12)


def test_avg_pool2d_divisor_override_scales_like_paddle():
    # Paddle: output * (kh * kw) / divisor_override, on top of the exclusive average
    x = rng.standard_normal((1, 2, 5, 5))
    out = F.avg_pool2d(t(x), 3, 2, 1, divisor_override=4)
    ref, _ = ref_pool(x, (3, 3), (2, 2), (1, 1, 1, 1), False, "avg", True, 4)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-12)


def test_nhwc_matches_nchw():
    x = rng.standard_normal((2, 3, 7, 6))
    xh = t(x.transpose(0, 2, 3, 1))
    for fn, kw in ((F.max_pool2d, {}), (F.avg_pool2d, {"exclusive": False})):
        ref = fn(t(x), 3, 2, [1, 0, 1, 1], ceil_mode=True, **kw).numpy()
        got = fn(xh, 3, 2, [[0, 0], [1, 0], [1, 1], [0, 0]], ceil_mode=True, data_format="NHWC", **kw).numpy()
        np.testing.assert_allclose(got.transpose(0, 3, 1, 2), ref, atol=1e-12)
    ref = F.adaptive_avg_pool2d(t(x), [3, None]).numpy()
    got = F.adaptive_avg_pool2d(xh, [3, None], data_format="NHWC").numpy()
    np.testing.assert_allclose(got.transpose(0, 3, 1, 2), ref, atol=1e-12)


def test_1d_and_3d_pools_match_reference():
    x1 = rng.standard_normal((2, 3, 9))
    out, mask = F.max_pool1d(t(x1), 3, 2, 1, return_mask=True, ceil_mode=True)
    ref, ref_mask = ref_pool(x1, (3,), (2,), (1, 1), True, "max")
    np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_array_equal(mask.numpy(), ref_mask)
    np.testing.assert_allclose(F.avg_pool1d(t(x1), 4, 3, [2, 1], exclusive=False).numpy(),
                               ref_pool(x1, (4,), (3,), (2, 1), False, "avg", False)[0], atol=1e-12)
    x3 = rng.standard_normal((1, 2, 4, 5, 3))
    np.testing.assert_array_equal(F.max_pool3d(t(x3), 2, [2, 2, 1], [0, 1, 1]).numpy(),
                                  ref_pool(x3, (2, 2, 2), (2, 2, 1), (0, 0, 1, 1, 1, 1), False, "max")[0])
    np.testing.assert_allclose(F.avg_pool3d(t(x3), [2, 3, 2], padding=1).numpy(),
                               ref_pool(x3, (2, 3, 2), (2, 3, 2), (1,) * 6, False, "avg")[0], atol=1e-12)


@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), (3, 2)), ((1, 2, 4, 6), (5, 4)), ((1, 1, 6, 6), (1, 1)),
                                       ((2, 3, 6, 4), (3, 2)), ((1, 2, 6, 5), (2, 1))])
def test_adaptive_pools_2d_match_reference(shape, out):
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(F.adaptive_avg_pool2d(t(x), out).numpy(), ref_adaptive(x, out, "avg")[0], atol=1e-12)
    got, mask = F.adaptive_max_pool2d(t(x), out, return_mask=True)
    ref, ref_mask = ref_adaptive(x, out, "max")
    np.testing.assert_array_equal(got.numpy(), ref)
    np.testing.assert_array_equal(mask.numpy(), ref_mask)


def test_adaptive_pools_1d_3d_and_none_sizes():
    x1 = rng.standard_normal((2, 3, 10))
    np.testing.assert_allclose(F.adaptive_avg_pool1d(t(x1), 4).numpy(), ref_adaptive(x1, (4,), "avg")[0], atol=1e-12)
    np.testing.assert_array_equal(F.adaptive_max_pool1d(t(x1), 3).numpy(), ref_adaptive(x1, (3,), "max")[0])
    x3 = rng.standard_normal((1, 2, 3, 5, 4))
    np.testing.assert_allclose(F.adaptive_avg_pool3d(t(x3), [2, None, 3]).numpy(),
                               ref_adaptive(x3, (2, 5, 3), "avg")[0], atol=1e-12)
    np.testing.assert_array_equal(F.adaptive_max_pool3d(t(x3), 2).numpy(), ref_adaptive(x3, (2, 2, 2), "max")[0])
    x2 = rng.standard_normal((1, 2, 5, 7))
    assert F.adaptive_avg_pool2d(t(x2), [None, 3]).shape == [1, 2, 5, 3]


def test_max_pool_gradient_goes_to_the_first_maximum():
    x = np.ones((1, 1, 4, 4))
    xt = t(x, grad=True)
    (g,) = paddle.grad(F.max_pool2d(xt, 2).sum(), [xt])
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 1.0
    np.testing.assert_array_equal(g.numpy()[0, 0], expected)


def _check_grad(fn, ref, x):
    xt = t(x, grad=True)
    out = fn(xt)
    v = rng.standard_normal(out.shape)
    (g,) = paddle.grad((out * t(v)).sum(), [xt])
    np.testing.assert_allclose(g.numpy(), fd_grad(lambda: (ref(x) * v).sum(), x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_gradients_match_finite_differences(kind):
    x = rng.permutation(2 * 5 * 6).reshape(1, 2, 5, 6) / 10.0  # distinct values: no ties
    fn = F.max_pool2d if kind == "max" else F.avg_pool2d
    _check_grad(lambda a: fn(a, 3, 2, [1, 0, 0, 1], ceil_mode=True),
                lambda a: ref_pool(a, (3, 3), (2, 2), (1, 0, 0, 1), True, kind)[0], x)
    _check_grad(lambda a: fn(a, [2, 3], 1, 1, data_format="NHWC"),
                lambda a: ref_pool(a.transpose(0, 3, 1, 2), (2, 3), (1, 1), (1, 1, 1, 1), False, kind)[0]
                .transpose(0, 2, 3, 1), x)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("out", [(3, 4), (1, 1), (7, 1)])
def test_adaptive_gradients_match_finite_differences(kind, out):
    x = rng.permutation(2 * 2 * 7 * 5).reshape(2, 2, 7, 5) / 10.0
    fn = F.adaptive_max_pool2d if kind == "max" else F.adaptive_avg_pool2d
    _check_grad(lambda a: fn(a, list(out)), lambda a: ref_adaptive(a, out, kind)[0], x)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_double_backward(kind):
    x = rng.permutation(2 * 6 * 5).reshape(1, 2, 6, 5) / 10.0
    u = rng.standard_normal(x.shape)
    fn = F.max_pool2d if kind == "max" else F.avg_pool2d

    def first_grad_dot(x_, create_graph=False):
        xt_ = t(x_, grad=True)
        (gx,) = paddle.grad((fn(xt_, 2, 1, 1) ** 2).sum(), [xt_], create_graph=create_graph)
        return (gx * t(u)).sum(), xt_

    h, xt_ = first_grad_dot(x, create_graph=True)
    (g2,) = paddle.grad(h, [xt_])
    np.testing.assert_allclose(g2.numpy(), fd_grad(lambda: first_grad_dot(x)[0].item(), x), rtol=1e-5, atol=1e-6)


def test_float32_stays_float32():
    x = t(rng.standard_normal((1, 2, 4, 4)).astype(np.float32))
    assert F.max_pool2d(x, 2).dtype == paddle.float32
    assert F.avg_pool2d(x, 2).dtype == paddle.float32
    assert F.adaptive_avg_pool2d(x, 3).dtype == paddle.float32


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: F.max_pool2d(x, 2, padding="VALID", ceil_mode=True), ValueError,
     r"when 'padding' is 'VALID', 'ceil_mode' must be False"),
    (lambda x: F.max_pool2d(x, 2, return_mask=True, data_format="NHWC"), ValueError,
     r"return_mask=True needs data_format 'NCHW'"),
    (lambda x: F.max_pool2d(x, 2, padding="full"), ValueError, r"argument 'padding' must be 'SAME', 'VALID'"),
    (lambda x: F.avg_pool2d(x, 6), ValueError, r"avg_pool2d: the window \(kernel 6, dilation 1\) does not fit"),
    (lambda x: F.max_pool1d(x, 2), ValueError, r"max_pool1d: argument 'x' must be a 3-D tensor \(NCL\)"),
    (lambda x: F.max_pool2d(x, [2, 2, 2]), ValueError, r"argument 'kernel_size' must be an int or a list of 2 ints"),
    (lambda x: F.max_pool2d(x, 0), ValueError, r"argument 'kernel_size' must hold ints >= 1"),
    (lambda x: F.avg_pool2d(x, 2, data_format="NWHC"), ValueError, r"argument 'data_format' must be 'NCHW' or"),
    (lambda x: F.avg_pool2d(x, 2, divisor_override=0), ValueError, r"'divisor_override' must be a non-zero number"),
    (lambda x: F.adaptive_avg_pool2d(x, [2, 2, 2]), ValueError, r"'output_size' must be an int or 2 entries"),
    (lambda x: F.adaptive_max_pool2d(x, 0), ValueError, r"'output_size' must hold ints >= 1"),
    (lambda x: F.adaptive_avg_pool3d(x, 2), ValueError, r"adaptive_avg_pool3d: argument 'x' must be a 5-D tensor"),
    (lambda x: F.avg_pool2d(t(np.zeros((1, 1, 4, 4), np.int64)), 2), TypeError,
     r"avg_pool2d: argument 'x' must be a floating tensor"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(t(np.zeros((1, 2, 5, 5))))
