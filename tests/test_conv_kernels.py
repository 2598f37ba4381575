"""The fast CPU paths of the conv / pool / batch-norm kernels against direct-loop NumPy references.

Each kernel picks a path by case (stride, padding, groups, window count...); every path is
checked here in float64 (exact up to rounding) and float32 (within float32 rounding of the
float64 result), forward and both gradients."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import fd_grad, t

rng = np.random.default_rng(11)


@pytest.mark.parametrize("n", [300, 70000])
def test_max_pool_mask_past_narrow_tap_index_widths(n):
    # n taps in one window: the scan's tap index no longer fits uint8 (300) or uint16 (70000)
    # and the kernel must widen it
    x = rng.standard_normal((1, 2, n))
    x[0, 0, n - 7] = 10.0
    x[0, 1, 123] = 10.0
    out, mask = F.max_pool1d(t(x), n, return_mask=True)
    np.testing.assert_array_equal(out.numpy()[0, :, 0], x[0].max(axis=1))
    np.testing.assert_array_equal(mask.numpy()[0, :, 0], x[0].argmax(axis=1))


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 3, 1), (1, 1, 1), (3, 2, 1), (2, 1, 0)])
def test_max_pool_gradient_routes_to_the_mask_with_and_without_overlap(kernel, stride, padding):
    # disjoint windows store each gradient once; overlapping ones must add; windows lying wholly in
    # padding (kernel 1, padding 1) have mask -1 and must send their gradient nowhere
    x = rng.standard_normal((2, 3, 5, 6))
    xt = t(x, grad=True)
    out, mask = F.max_pool2d(xt, kernel, stride, padding, return_mask=True)
    v = rng.standard_normal(out.shape)
    (g,) = paddle.grad(out, [xt], t(v))  # padded windows output the lowest float: no product
    want = np.zeros((2 * 3, 5 * 6))
    m, vv = mask.numpy().reshape(6, -1), v.reshape(6, -1)
    for plane in range(6):
        for cell, grad in zip(m[plane], vv[plane]):
            if cell >= 0:
                want[plane, cell] += grad
    np.testing.assert_allclose(g.numpy(), want.reshape(x.shape), rtol=1e-12, atol=1e-12)
    if kernel == 1:
        assert (mask.numpy() == -1).any()


def ref_batch_norm(x, w, b, axis, eps=1e-5):
    """Batch norm one channel at a time, in float64: (x - mean) / sqrt(biased var + eps) * w + b."""
    x = np.asarray(x, np.float64)
    y = np.empty_like(x)
    for c in range(x.shape[axis]):
        v = x.take(c, axis=axis)
        out = (v - v.mean()) / np.sqrt(v.var() + eps)
        out = out * (1.0 if w is None else w[c]) + (0.0 if b is None else b[c])
        index = [slice(None)] * x.ndim
        index[axis] = c
        y[tuple(index)] = out
    return y


BN_CASES = [  # shape, data_format, channel axis, with weight and bias, offset of the data
    ((4, 3, 5, 6), "NCHW", 1, True, 0.0),
    ((4, 5, 6, 3), "NHWC", 3, True, 0.0),
    ((6, 4), "NC", 1, False, 0.0),
    ((2, 3, 7), "NCL", 1, True, 300.0),  # mean far from zero: the variance must be taken centred
]


def _bn_call(x, w, b, fmt):
    c = x.shape[1] if fmt.startswith("NC") else x.shape[-1]
    return F.batch_norm(x, paddle.zeros([c], x.dtype), paddle.ones([c], x.dtype), w, b, training=True,
                        data_format=fmt)


@pytest.mark.parametrize("shape,fmt,axis,affine,offset", BN_CASES)
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-5)])
def test_batch_norm_train_forward_matches_reference(shape, fmt, axis, affine, offset, dtype, tol):
    x = rng.standard_normal(shape) * 2.0 + offset
    c = shape[axis]
    w, b = (rng.uniform(0.5, 1.5, c), rng.standard_normal(c)) if affine else (None, None)
    args = [None if a is None else t(np.asarray(a).astype(dtype)) for a in (w, b)]
    y = _bn_call(t(x.astype(dtype)), *args, fmt)
    assert y.dtype == getattr(paddle, dtype)
    ref = ref_batch_norm(x.astype(dtype), w, b, axis)
    np.testing.assert_allclose(y.numpy(), ref, rtol=tol, atol=tol * np.abs(ref).max())


@pytest.mark.parametrize("shape,fmt,axis,affine,offset", BN_CASES)
def test_batch_norm_train_gradients_match_finite_differences(shape, fmt, axis, affine, offset):
    x = rng.standard_normal(shape) + offset
    c = shape[axis]
    w, b = (rng.uniform(0.5, 1.5, c), rng.standard_normal(c)) if affine else (None, None)
    v = rng.standard_normal(shape)
    xt = t(x, grad=True)
    params = [t(a, grad=True) for a in (w, b)] if affine else [None, None]
    loss = (_bn_call(xt, *params, fmt) * t(v)).sum()
    grads = paddle.grad(loss, [xt] + ([p for p in params] if affine else []))
    np.testing.assert_allclose(grads[0].numpy(), fd_grad(lambda: (ref_batch_norm(x, w, b, axis) * v).sum(), x),
                               rtol=1e-5, atol=1e-6)
    if affine:
        np.testing.assert_allclose(grads[1].numpy(), fd_grad(lambda: (ref_batch_norm(x, w, b, axis) * v).sum(), w),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grads[2].numpy(), fd_grad(lambda: (ref_batch_norm(x, w, b, axis) * v).sum(), b),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,fmt,axis,affine,offset", BN_CASES)
def test_batch_norm_float32_gradients_match_float64(shape, fmt, axis, affine, offset):
    x = rng.standard_normal(shape) + offset
    c = shape[axis]
    w, b = (rng.uniform(0.5, 1.5, c), rng.standard_normal(c)) if affine else (None, None)
    v = rng.standard_normal(shape)

    def grads(dtype):
        xt = t(x.astype(dtype), grad=True)
        params = [t(np.asarray(a).astype(dtype), grad=True) for a in (w, b)] if affine else [None, None]
        loss = (_bn_call(xt, *params, fmt) * t(v.astype(dtype))).sum()
        return [g.numpy() for g in paddle.grad(loss, [xt] + (params if affine else []))]

    for got, want in zip(grads("float32"), grads("float64")):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())



def test_batch_norm_constant_channel_outputs_its_bias_and_routes_no_gradient_through_its_mean():
    # a channel whose values are all equal has variance 0: its output is exactly its bias (NumPy's
    # float64 reference gives the same), and the input gradient of the x - mean term sums to zero.
    # Taking the variance as E[x^2] - mean^2 would leave rounding noise there, scaled by 1/sqrt(eps)
    x = rng.standard_normal((4, 3, 5, 6)).astype(np.float32)
    x[:, 1] = np.float32(0.5)  # exact in binary: its mean is exactly 0.5
    w, b = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    xt, wt, bt = t(x, grad=True), t(w, grad=True), t(b, grad=True)
    y = _bn_call(xt, wt, bt, "NCHW")
    ref = ref_batch_norm(x, w, b, 1)
    np.testing.assert_array_equal(y.numpy()[:, 1], np.full((4, 5, 6), b[1]))
    np.testing.assert_allclose(y.numpy(), ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())
    v = rng.standard_normal(x.shape).astype(np.float32)
    gx, gw, gb = paddle.grad((y * t(v)).sum(), [xt, wt, bt])
    np.testing.assert_allclose(gb.numpy(), v.sum(axis=(0, 2, 3)), rtol=1e-5)
    assert gw.numpy()[1] == 0


CONV_CASES = [  # x shape, weight shape, keyword arguments, flat pads
    ((2, 4, 5, 6), (6, 4, 1, 1), {}, (0, 0, 0, 0)),  # 1x1: the columns are x itself
    ((2, 4, 5, 6), (6, 2, 3, 3), {"padding": 1, "groups": 2}, (1, 1, 1, 1)),
    ((3, 3, 6, 5), (3, 1, 3, 2), {"stride": 2, "padding": [1, 0, 0, 1], "groups": 3}, (1, 0, 0, 1)),
]


@pytest.mark.parametrize("xshape,wshape,kw,pads", CONV_CASES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv2d_and_its_gradients_match_reference(xshape, wshape, kw, pads, with_bias):
    from test_conv import ref_conv  # noqa: PLC0415 - the direct-loop reference lives with the conv tests
    x, w = rng.standard_normal(xshape), rng.standard_normal(wshape)
    b = rng.standard_normal(wshape[0]) if with_bias else None
    stride = (kw.get("stride", 1),) * 2
    groups = kw.get("groups", 1)

    def ref(x_, w_, b_=None):
        return ref_conv(x_, w_, b_, stride, pads, (1, 1), groups)

    arrays = [x, w] + ([b] if with_bias else [])
    tensors = [t(a, grad=True) for a in arrays]
    out = F.conv2d(*tensors[:2], tensors[2] if with_bias else None, **kw)
    np.testing.assert_allclose(out.numpy(), ref(*arrays), rtol=1e-10, atol=1e-10)
    v = rng.standard_normal(out.shape)
    grads = paddle.grad((out * t(v)).sum(), tensors)
    for a, g in zip(arrays, grads):
        np.testing.assert_allclose(g.numpy(), fd_grad(lambda: (ref(*arrays) * v).sum(), a), rtol=1e-6, atol=1e-6)
    out32 = F.conv2d(*[t(a.astype(np.float32)) for a in arrays[:2]],
                     t(b.astype(np.float32)) if with_bias else None, **kw)
    np.testing.assert_allclose(out32.numpy(), ref(*arrays), rtol=1e-5, atol=1e-5)


def test_conv_results_do_not_share_the_reused_work_array():
    # the im2col columns live in a per-thread work array reused by the next call: nothing a
    # kernel returns may alias it, whatever the next call's shape and dtype
    x1, w1 = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    y1 = F.conv2d(t(x1), t(w1), padding=1)
    gx1 = F.conv2d_transpose(t(rng.standard_normal((2, 4, 6, 6))), t(w1), padding=1)
    kept = y1.numpy().copy(), gx1.numpy().copy()
    x2, w2 = rng.standard_normal((3, 5, 9, 9)).astype(np.float32), rng.standard_normal((2, 5, 3, 3)).astype(np.float32)
    F.conv2d(t(x2), t(w2), t(rng.standard_normal(2).astype(np.float32)), padding=2)
    F.conv2d_transpose(t(rng.standard_normal((3, 5, 9, 9))), t(rng.standard_normal((5, 2, 3, 3))))
    np.testing.assert_array_equal(y1.numpy(), kept[0])
    np.testing.assert_array_equal(gx1.numpy(), kept[1])


def test_conv_in_parallel_threads_matches_sequential():
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    # big enough that the copy and the matmul release the GIL: threads run them at the same time
    jobs = [(rng.standard_normal((4, 8, 24 + i, 24)), rng.standard_normal((8, 8, 3, 3))) for i in range(6)]
    want = [F.conv2d(t(x), t(w), padding=1).numpy() for x, w in jobs]
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda job: F.conv2d(t(job[0]), t(job[1]), padding=1).numpy(), jobs * 4))
    for i, g in enumerate(got):
        np.testing.assert_array_equal(g, want[i % len(jobs)])


CONV_T_CASES = [  # x shape, weight shape, keyword arguments, flat pads: unit strides (a direct conv
    # with the flipped kernel while in_channels <= 2 * out_channels), else col2im
    ((2, 4, 5, 6), (4, 3, 3, 3), {"padding": 1}, (1, 1, 1, 1)),
    ((2, 4, 5, 6), (4, 1, 3, 2), {"padding": [1, 0, 0, 1], "dilation": 2, "groups": 2}, (1, 0, 0, 1)),
    ((1, 2, 4, 4), (2, 3, 1, 1), {}, (0, 0, 0, 0)),
    ((2, 6, 4, 5), (6, 2, 3, 3), {"padding": 1}, (1, 1, 1, 1)),  # in_channels 6 > 2 * 2: col2im
    ((1, 2, 6, 6), (2, 2, 3, 3), {"padding": 3}, (3, 3, 3, 3)),  # padding past the kernel's reach: col2im
    ((2, 4, 3, 3), (4, 2, 3, 3), {"stride": 2, "padding": 1}, (1, 1, 1, 1)),
]


@pytest.mark.parametrize("xshape,wshape,kw,pads", CONV_T_CASES)
def test_conv2d_transpose_routes_match_reference(xshape, wshape, kw, pads):
    from test_conv import ref_conv_t  # noqa: PLC0415 - the direct-loop reference lives with the conv tests
    x, w = rng.standard_normal(xshape), rng.standard_normal(wshape)
    groups = kw.get("groups", 1)
    b = rng.standard_normal(wshape[1] * groups)
    out = F.conv2d_transpose(t(x), t(w), t(b), **kw)
    stride, dil = (kw.get("stride", 1),) * 2, (kw.get("dilation", 1),) * 2
    size = tuple((s - 1) * stride[i] - pads[2 * i] - pads[2 * i + 1] + dil[i] * (wshape[2 + i] - 1) + 1
                 for i, s in enumerate(xshape[2:]))
    want = ref_conv_t(x, w, b, stride, pads, dil, groups, size)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-10)
    out32 = F.conv2d_transpose(*[t(a.astype(np.float32)) for a in (x, w, b)], **kw)
    assert out32.dtype == paddle.float32
    np.testing.assert_allclose(out32.numpy(), want, rtol=1e-5, atol=1e-5)


BLOCK_CASES = [  # x shape, weight shape, keyword arguments, flat pads: 5 images, blocks of 2 (the last one short)
    ((5, 4, 5, 6), (6, 2, 3, 3), {"padding": 1, "groups": 2}, (1, 1, 1, 1)),
    ((5, 3, 6, 5), (4, 3, 3, 2), {"stride": 2, "padding": [1, 0, 0, 1], "dilation": 1}, (1, 0, 0, 1)),
    ((5, 2, 4, 5), (6, 2, 3, 3), {"padding": 1}, (1, 1, 1, 1)),  # its input gradient takes the col2im route
]


@pytest.mark.parametrize("xshape,wshape,kw,pads", BLOCK_CASES)
def test_conv_a_block_of_images_at_a_time_matches_reference(xshape, wshape, kw, pads, monkeypatch):
    # the kernels copy the columns of a few images at a time into the work array; with blocks of
    # two images over five, the bias row, the last short block and the weight gradient's sum over
    # blocks must all come out as the direct loops do
    from runtime.ops import conv  # noqa: PLC0415
    from test_conv import ref_conv  # noqa: PLC0415
    x, w, b = rng.standard_normal(xshape), rng.standard_normal(wshape), rng.standard_normal(wshape[0])
    stride, groups = (kw.get("stride", 1),) * 2, kw.get("groups", 1)
    blocks = []
    monkeypatch.setattr(conv, "_block", lambda xp, n, image_bytes: blocks.append(n) or min(n, 2))

    def ref(x_, w_, b_):
        return ref_conv(x_, w_, b_, stride, pads, (1, 1), groups)

    tensors = [t(a, grad=True) for a in (x, w, b)]
    out = F.conv2d(*tensors, **kw)
    np.testing.assert_allclose(out.numpy(), ref(x, w, b), rtol=1e-10, atol=1e-10)
    v = rng.standard_normal(out.shape)
    for a, g in zip((x, w, b), paddle.grad((out * t(v)).sum(), tensors)):
        np.testing.assert_allclose(g.numpy(), fd_grad(lambda: (ref(x, w, b) * v).sum(), a), rtol=1e-6, atol=1e-6)
    assert blocks == [5, 5, 5]  # forward, input gradient and weight gradient each went a block at a time


def test_conv_of_an_empty_batch_has_zero_weight_gradient():
    # no image, no block of columns: the weight gradient is a sum over nothing
    x = t(np.zeros((0, 3, 5, 5)), grad=True)
    w, b = t(rng.standard_normal((4, 3, 3, 3)), grad=True), t(rng.standard_normal(4), grad=True)
    y = F.conv2d(x, w, b, padding=1)
    assert y.shape == [0, 4, 5, 5]
    gx, gw, gb = paddle.grad(y.sum(), [x, w, b])
    assert gx.shape == [0, 3, 5, 5]
    np.testing.assert_array_equal(gw.numpy(), np.zeros((4, 3, 3, 3)))
    np.testing.assert_array_equal(gb.numpy(), np.zeros(4))

def test_padded_pooling_results_do_not_share_the_reused_work_array():
    # padded pooling windows read a padded copy of x kept in a per-thread work array, which the
    # next padded call (pooling or convolution) overwrites: no result may alias it
    x = rng.standard_normal((2, 3, 6, 7))
    mx, mask = F.max_pool2d(t(x), 3, 2, padding=1, return_mask=True)
    avg = F.avg_pool2d(t(x), 3, 2, padding=1)
    kept = [a.numpy().copy() for a in (mx, mask, avg)]
    x2 = rng.standard_normal((3, 2, 9, 8)) + 5.0
    F.max_pool2d(t(x2), 2, 1, padding=1)
    F.avg_pool2d(t(x2), 3, 1, padding=1)
    F.conv2d(t(x2), t(rng.standard_normal((4, 2, 3, 3))), padding=2)
    for got, want in zip((mx, mask, avg), kept):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(kept[0], F.max_pool2d(t(x), 3, 2, padding=1).numpy())
