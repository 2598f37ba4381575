"""F.conv1d/2d/3d and their transposes against direct-loop NumPy references, finite
differences (first and second order) and error cases."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import fd_grad, t

rng = np.random.default_rng(5)


def pad_zeros(x, pads):
    """x (N, C, *S) zero-padded by flat (before, after) pairs."""
    nd = x.ndim - 2
    out = np.zeros(x.shape[:2] + tuple(s + pads[2 * i] + pads[2 * i + 1] for i, s in enumerate(x.shape[2:])))
    out[(slice(None), slice(None)) + tuple(slice(pads[2 * i], pads[2 * i] + x.shape[2 + i]) for i in range(nd))] = x
    return out


def ref_conv(x, w, b, stride, pads, dil, groups):
    """Direct convolution: one dot product per output position."""
    nd = x.ndim - 2
    n, o, cg, k = x.shape[0], w.shape[0], w.shape[1], w.shape[2:]
    xp = pad_zeros(x, pads)
    out_sp = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((n, o, *out_sp))
    og = o // groups
    for idx in np.ndindex(n, o, *out_sp):
        bn, oc, pos = idx[0], idx[1], idx[2:]
        g = oc // og
        win = tuple(slice(p * s, p * s + d * (kk - 1) + 1, d) for p, s, d, kk in zip(pos, stride, dil, k))
        out[idx] = (xp[(bn, slice(g * cg, (g + 1) * cg)) + win] * w[oc]).sum()
    if b is not None:
        out += b.reshape((o,) + (1,) * nd)
    return out


def ref_conv_t(x, w, b, stride, pads, dil, groups, out_size):
    """Direct transposed convolution: every input value scatters its kernel-weighted copy."""
    nd = x.ndim - 2
    n, cin, cog, k = x.shape[0], x.shape[1], w.shape[1], w.shape[2:]
    cig = cin // groups
    reach = [(x.shape[2 + i] - 1) * stride[i] + dil[i] * (k[i] - 1) + 1 for i in range(nd)]
    full_sp = [max(out_size[i] + pads[2 * i] + pads[2 * i + 1], reach[i]) for i in range(nd)]
    full = np.zeros((n, cog * groups, *full_sp))
    for idx in np.ndindex(*x.shape):
        bn, ci, pos = idx[0], idx[1], idx[2:]
        g = ci // cig
        for kk in np.ndindex(*k):
            dst = tuple(p * s + q * d for p, s, q, d in zip(pos, stride, kk, dil))
            full[(bn, slice(g * cog, (g + 1) * cog)) + dst] += x[idx] * w[(ci, slice(None)) + kk]
    out = full[(slice(None), slice(None)) + tuple(slice(pads[2 * i], pads[2 * i] + out_size[i]) for i in range(nd))]
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * nd)
    return out


# padding argument, resolved flat pads (for 2-D)
PADDINGS = [
    (0, (0, 0, 0, 0)),
    (1, (1, 1, 1, 1)),
    ([1, 2], (1, 1, 2, 2)),
    ([1, 0, 2, 1], (1, 0, 2, 1)),
    ([[0, 0], [0, 0], [1, 0], [2, 1]], (1, 0, 2, 1)),
    ("VALID", (0, 0, 0, 0)),
    ("valid", (0, 0, 0, 0)),
]


@pytest.mark.parametrize("padding,pads", PADDINGS)
@pytest.mark.parametrize("stride,dil,groups", [((1, 1), (1, 1), 1), ((2, 1), (1, 2), 2), ((2, 2), (2, 1), 4)])
def test_conv2d_matches_reference(padding, pads, stride, dil, groups):
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((4, 4 // groups, 3, 2))
    b = rng.standard_normal(4)
    out = F.conv2d(t(x), t(w), t(b), stride=stride, padding=padding, dilation=dil, groups=groups)
    np.testing.assert_allclose(out.numpy(), ref_conv(x, w, b, stride, pads, dil, groups), rtol=1e-10, atol=1e-10)


def test_conv2d_same_padding_follows_paddle():
    # 'SAME': out = ceil(in / stride), pad total split low/high, and dilation is forced to 1 (as Paddle)
    x = rng.standard_normal((1, 2, 7, 6))
    w = rng.standard_normal((3, 2, 3, 4))
    out = F.conv2d(t(x), t(w), stride=2, padding="SAME", dilation=2)
    assert out.shape == [1, 3, 4, 3]
    # H: total = (4-1)*2 + 3 - 7 = 2 -> (1, 1); W: total = (3-1)*2 + 4 - 6 = 2 -> (1, 1)
    np.testing.assert_allclose(out.numpy(), ref_conv(x, w, None, (2, 2), (1, 1, 1, 1), (1, 1), 1), atol=1e-10)


def test_conv2d_nhwc_matches_nchw():
    x = rng.standard_normal((2, 5, 6, 4))
    w = rng.standard_normal((6, 2, 3, 3))
    b = rng.standard_normal(6)
    out = F.conv2d(t(x), t(w), t(b), stride=(1, 2), padding=[[0, 0], [1, 1], [2, 0], [0, 0]], groups=2,
                   data_format="NHWC")
    ref = ref_conv(x.transpose(0, 3, 1, 2), w, b, (1, 2), (1, 1, 2, 0), (1, 1), 2).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-10)


def test_conv1d_and_conv3d_match_reference():
    x1 = rng.standard_normal((2, 3, 9))
    w1 = rng.standard_normal((4, 3, 3))
    b1 = rng.standard_normal(4)
    out1 = F.conv1d(t(x1), t(w1), t(b1), stride=2, padding=[2, 1], dilation=2)
    np.testing.assert_allclose(out1.numpy(), ref_conv(x1, w1, b1, (2,), (2, 1), (2,), 1), atol=1e-10)
    out1c = F.conv1d(t(x1.transpose(0, 2, 1)), t(w1), t(b1), stride=2, padding=[2, 1], dilation=2,
                     data_format="NLC")
    np.testing.assert_allclose(out1c.numpy(), out1.numpy().transpose(0, 2, 1), atol=1e-10)
    x3 = rng.standard_normal((1, 2, 4, 3, 5))
    w3 = rng.standard_normal((2, 1, 2, 2, 3))
    out3 = F.conv3d(t(x3), t(w3), stride=(1, 2, 1), padding=(1, 0, 1), groups=2)
    np.testing.assert_allclose(out3.numpy(), ref_conv(x3, w3, None, (1, 2, 1), (1, 1, 0, 0, 1, 1), (1, 1, 1), 2),
                               atol=1e-10)


def test_float32_in_float32_out():
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = F.conv2d(t(x), t(w), padding=1)
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), ref_conv(x.astype(np.float64), w.astype(np.float64), None, (1, 1),
                                                     (1, 1, 1, 1), (1, 1), 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stride,padding,dil,groups,extra", [
    ((2, 2), (1, 1, 1, 1), (1, 1), 1, {"output_padding": 1}),
    ((2, 1), (0, 1, 1, 0), (1, 2), 2, {}),
    ((3, 2), (1, 1, 0, 0), (1, 1), 1, {"output_size": [9, 8]}),
])
def test_conv2d_transpose_matches_reference(stride, padding, dil, groups, extra):
    x = rng.standard_normal((2, 4, 3, 4))
    w = rng.standard_normal((4, 3, 3, 2))
    b = rng.standard_normal(3 * groups)
    out = F.conv2d_transpose(t(x), t(w), t(b), stride=stride, padding=list(padding), dilation=dil, groups=groups,
                             **extra)
    infer = [(s - 1) * st - padding[2 * i] - padding[2 * i + 1] + d * (k - 1) + 1
             for i, (s, st, d, k) in enumerate(zip((3, 4), stride, dil, (3, 2)))]
    if "output_size" in extra:
        size = extra["output_size"]
    else:
        size = [v + extra.get("output_padding", 0) for v in infer]
    assert out.shape == [2, 3 * groups, *size]
    np.testing.assert_allclose(out.numpy(), ref_conv_t(x, w, b, stride, padding, dil, groups, size), atol=1e-10)


def test_conv_transpose_nhwc_1d_and_same():
    x = rng.standard_normal((2, 4, 4, 4))
    w = rng.standard_normal((4, 2, 3, 3))
    out = F.conv2d_transpose(t(x.transpose(0, 2, 3, 1)), t(w), stride=2, padding=1, data_format="NHWC")
    np.testing.assert_allclose(out.numpy().transpose(0, 3, 1, 2), ref_conv_t(x, w, None, (2, 2), (1,) * 4, (1, 1), 1,
                                                                             (7, 7)), atol=1e-10)
    # 'SAME' (Paddle): the pads a forward conv would use on the input size, dilation 1 -> out = in * stride here
    same = F.conv2d_transpose(t(x), t(w), stride=2, padding="SAME", dilation=3)
    assert same.shape == [2, 2, 8, 8]
    np.testing.assert_allclose(same.numpy(), ref_conv_t(x, w, None, (2, 2), (0, 1, 0, 1), (1, 1), 1, (8, 8)),
                               atol=1e-10)
    x1 = rng.standard_normal((1, 4, 5))
    w1 = rng.standard_normal((4, 1, 2))
    out1 = F.conv1d_transpose(t(x1), t(w1), stride=3, groups=2, output_padding=2)
    np.testing.assert_allclose(out1.numpy(), ref_conv_t(x1, w1, None, (3,), (0, 0), (1,), 2, (16,)), atol=1e-10)


def test_conv_transpose_is_the_adjoint_of_conv():
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((6, 2, 3, 2))
    kw = {"stride": (2, 1), "padding": [1, 0, 2, 1], "dilation": (1, 2), "groups": 2}
    y = F.conv2d(t(x), t(w), **kw).numpy()
    v = rng.standard_normal(y.shape)
    back = F.conv2d_transpose(t(v), t(w), output_size=[7, 6], **kw).numpy()
    np.testing.assert_allclose((y * v).sum(), (x * back).sum(), rtol=1e-12)


def _check_grads(fn, ref, arrays):
    """paddle.grad of sum(fn(*tensors) * v) against finite differences of the NumPy reference."""
    tensors = [t(a, grad=True) for a in arrays]
    out = fn(*tensors)
    v = rng.standard_normal(out.shape)
    grads = paddle.grad((out * t(v)).sum(), tensors)
    for a, g in zip(arrays, grads):
        np.testing.assert_allclose(g.numpy(), fd_grad(lambda: (ref(*arrays) * v).sum(), a), rtol=1e-6, atol=1e-6)


def test_conv2d_gradients_match_finite_differences():
    x = rng.standard_normal((2, 4, 5, 4))
    w = rng.standard_normal((6, 2, 3, 2))
    b = rng.standard_normal(6)
    kw = {"stride": (2, 1), "padding": [1, 0, 1, 1], "dilation": (1, 2), "groups": 2}
    _check_grads(lambda *a: F.conv2d(*a, **kw),
                 lambda x_, w_, b_: ref_conv(x_, w_, b_, (2, 1), (1, 0, 1, 1), (1, 2), 2), [x, w, b])


def test_conv2d_nhwc_and_transpose_gradients_match_finite_differences():
    x = rng.standard_normal((1, 4, 3, 2))
    w = rng.standard_normal((3, 2, 2, 2))
    _check_grads(lambda a, b: F.conv2d(a, b, padding=1, data_format="NHWC"),
                 lambda a, b: ref_conv(a.transpose(0, 3, 1, 2), b, None, (1, 1), (1,) * 4, (1, 1), 1)
                 .transpose(0, 2, 3, 1), [x, w])
    xt = rng.standard_normal((1, 4, 3, 3))
    wt = rng.standard_normal((4, 1, 3, 2))
    bt = rng.standard_normal(2)
    _check_grads(lambda a, b, c: F.conv2d_transpose(a, b, c, stride=2, padding=[1, 0, 0, 1], groups=2,
                                                    output_padding=1),
                 lambda a, b, c: ref_conv_t(a, b, c, (2, 2), (1, 0, 0, 1), (1, 1), 2, (7, 6)), [xt, wt, bt])


@pytest.mark.parametrize("fn,xshape,wshape,kw", [
    (F.conv2d, (1, 2, 4, 4), (3, 2, 3, 3), {"stride": 2, "padding": 1}),
    (F.conv2d, (1, 4, 3, 4), (4, 2, 2, 3), {"padding": [1, 0, 0, 1], "groups": 2, "data_format": "NHWC"}),
    (F.conv2d_transpose, (1, 4, 2, 3), (4, 1, 3, 2), {"stride": 2, "groups": 2, "output_padding": 1}),
])
def test_double_backward(fn, xshape, wshape, kw):
    x = rng.standard_normal(xshape)
    w = rng.standard_normal(wshape)
    out_shape = fn(t(x), t(w), **kw).shape
    v = rng.standard_normal(out_shape)
    u = rng.standard_normal(x.shape)

    def first_grad_dot(x_, w_, create_graph=False):
        xt_, wt_ = t(x_, grad=True), t(w_, grad=True)
        (gx,) = paddle.grad((fn(xt_, wt_, **kw) ** 2 * t(v)).sum(), [xt_], create_graph=create_graph)
        return (gx * t(u)).sum(), xt_, wt_

    h, xt_, wt_ = first_grad_dot(x, w, create_graph=True)
    gx2, gw2 = paddle.grad(h, [xt_, wt_])
    np.testing.assert_allclose(gw2.numpy(), fd_grad(lambda: first_grad_dot(x, w)[0].item(), w), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx2.numpy(), fd_grad(lambda: first_grad_dot(x, w)[0].item(), x), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- errors
def test_channel_mismatch_names_both():
    with pytest.raises(ValueError, match=r"conv2d: the number of input channels of 'x' \(4.*weight.shape\[1\] \* "
                                         r"groups = 3 \* 1 = 3"):
        F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 3, 3, 3))))
    with pytest.raises(ValueError, match=r"conv2d_transpose: the number of input channels of 'x' \(4.*"
                                         r"weight.shape\[0\] \(3"):
        F.conv2d_transpose(t(np.zeros((1, 4, 5, 5))), t(np.zeros((3, 3, 3, 3))))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: F.conv2d(t(np.zeros((1, 6, 5, 5))), t(np.zeros((2, 3, 3, 3))), groups=4), ValueError,
     r"input channels \(6\) must be divisible by groups \(4\)"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((3, 2, 3, 3))), groups=2), ValueError,
     r"output channels weight.shape\[0\] \(3\) must be divisible by groups \(2\)"),
    (lambda: F.conv2d(t(np.zeros((4, 5, 5))), t(np.zeros((2, 4, 3, 3)))), ValueError,
     r"conv2d: argument 'x' must be a 4-D tensor \(NCHW\)"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3)))), ValueError,
     r"argument 'weight' must be a 4-D tensor"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), padding="FULL"), ValueError,
     r"argument 'padding' must be 'SAME', 'VALID'"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), padding=[1, 2, 3]), ValueError,
     r"argument 'padding' must be an int, 2 or 4 ints, or 4 \[before, after\] pairs"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), padding=[[1, 0], [0, 0], [1, 1], [1, 1]]),
     ValueError, r"pads the batch or channel dimension"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 2, 5))), t(np.zeros((2, 4, 3, 3)))), ValueError,
     r"does not fit spatial dimension 0 of size 2.*non-positive"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), stride=0), ValueError,
     r"argument 'stride' must hold ints >= 1"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), stride=[1, 1, 1]), ValueError,
     r"argument 'stride' must be an int or a list of 2 ints"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), data_format="NCWH"), ValueError,
     r"argument 'data_format' must be 'NCHW' or 'NHWC'"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), t(np.zeros(3))), ValueError,
     r"argument 'bias' must have shape \[2\]"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3), np.float32))), TypeError,
     r"argument 'weight' has dtype float32 but 'x' has float64"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5), np.int64)), t(np.zeros((2, 4, 3, 3)))), TypeError,
     r"conv2d: argument 'x' must be a floating tensor"),
    (lambda: F.conv2d(np.zeros((1, 4, 5, 5)), t(np.zeros((2, 4, 3, 3)))), TypeError,
     r"conv2d: argument 'x' must be a Tensor"),
    (lambda: F.conv2d(t(np.zeros((1, 4, 5, 5))), t(np.zeros((2, 4, 3, 3))), groups=0), ValueError,
     r"argument 'groups' must be a positive int"),
    (lambda: F.conv2d_transpose(t(np.zeros((1, 4, 3, 3))), t(np.zeros((4, 2, 3, 3))), stride=2, output_padding=2),
     ValueError, r"'output_padding' \[2, 2\] must be smaller than 'stride' \[2, 2\]"),
    (lambda: F.conv2d_transpose(t(np.zeros((1, 4, 3, 3))), t(np.zeros((4, 2, 3, 3))), stride=2, output_padding=1,
                                output_size=[8, 8]), ValueError, r"mutually exclusive"),
    (lambda: F.conv2d_transpose(t(np.zeros((1, 4, 3, 3))), t(np.zeros((4, 2, 3, 3))), stride=2, output_size=[9, 7]),
     ValueError, r"output size 9 of spatial dimension 0 is not reachable: it must lie in \[7, 8\]"),
    (lambda: F.conv2d_transpose(t(np.zeros((1, 4, 1, 3))), t(np.zeros((4, 2, 1, 3))), padding=[1, 1, 0, 0]),
     ValueError, r"output size along spatial dimension 0 would be -1"),
    (lambda: F.conv1d(t(np.zeros((1, 4, 5))), t(np.zeros((2, 4, 3))), data_format="NCHW"), ValueError,
     r"conv1d: argument 'data_format' must be 'NCL' or 'NLC'"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
