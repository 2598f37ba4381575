"""F.pad: Paddle's pad-list conventions and the four modes against an index-mapping reference,
gradients (the fold-back adjoint) against finite differences, and error cases."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import fd_grad, t

rng = np.random.default_rng(11)


def source(i, before, n, mode):
    """The input index a padded position reads (None: the constant value)."""
    j = i - before
    if 0 <= j < n:
        return j
    if mode == "constant":
        return None
    if mode == "replicate":
        return min(max(j, 0), n - 1)
    if mode == "reflect":  # mirror without repeating the edge
        return -j if j < 0 else 2 * (n - 1) - j
    return j % n  # circular


def ref_pad(x, pairs, mode, value=0.0):
    """pairs: (before, after) for every dim of x."""
    out = np.empty(tuple(s + b + a for s, (b, a) in zip(x.shape, pairs)), dtype=x.dtype)
    for idx in np.ndindex(*out.shape):
        src = [source(i, b, n, mode) for i, (b, _), n in zip(idx, pairs, x.shape)]
        out[idx] = value if any(s is None for s in src) else x[tuple(src)]
    return out


MODES = ["constant", "reflect", "replicate", "circular"]


@pytest.mark.parametrize("mode", MODES)
def test_4d_spatial_pads_list_width_first(mode):
    x = rng.standard_normal((2, 3, 4, 5))
    out = F.pad(t(x), [1, 3, 2, 0], mode=mode, value=0.5)  # [left, right, top, bottom]
    np.testing.assert_array_equal(out.numpy(), ref_pad(x, [(0, 0), (0, 0), (2, 0), (1, 3)], mode, 0.5))
    out_h = F.pad(t(x.transpose(0, 2, 3, 1)), [1, 3, 2, 0], mode=mode, value=0.5, data_format="NHWC")
    np.testing.assert_array_equal(out_h.numpy(), ref_pad(x.transpose(0, 2, 3, 1),
                                                         [(0, 0), (2, 0), (1, 3), (0, 0)], mode, 0.5))


@pytest.mark.parametrize("mode", MODES)
def test_3d_and_5d_inputs(mode):
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_array_equal(F.pad(t(x), [2, 3], mode=mode, data_format="NCL").numpy(),
                                  ref_pad(x, [(0, 0), (0, 0), (2, 3)], mode))
    np.testing.assert_array_equal(F.pad(t(x), [2, 1], mode=mode, data_format="NLC").numpy(),
                                  ref_pad(x, [(0, 0), (2, 1), (0, 0)], mode))
    x5 = rng.standard_normal((1, 2, 3, 3, 4))
    np.testing.assert_array_equal(F.pad(t(x5), [1, 2, 0, 2, 2, 1], mode=mode, data_format="NCDHW").numpy(),
                                  ref_pad(x5, [(0, 0), (0, 0), (2, 1), (0, 2), (1, 2)], mode))


def test_constant_full_length_pads_from_the_first_dim():
    x = rng.standard_normal((2, 3, 4))
    out = F.pad(t(x), [1, 0, 0, 2, 3, 1], value=-1.0)  # 2 * ndim entries: (before, after) of dims 0, 1, 2
    np.testing.assert_array_equal(out.numpy(), ref_pad(x, [(1, 0), (0, 2), (3, 1)], "constant", -1.0))
    x2 = rng.standard_normal((3, 2))
    np.testing.assert_array_equal(F.pad(t(x2), [0, 1, 2, 0]).numpy(), ref_pad(x2, [(0, 1), (2, 0)], "constant"))


def test_constant_short_list_pads_from_the_last_dim():
    x = rng.standard_normal((2, 3, 4, 5))
    np.testing.assert_array_equal(F.pad(t(x), [1, 2]).numpy(),
                                  ref_pad(x, [(0, 0), (0, 0), (0, 0), (1, 2)], "constant"))
    np.testing.assert_array_equal(F.pad(t(x), [1, 2, 0, 1, 2, 2]).numpy(),
                                  ref_pad(x, [(0, 0), (2, 2), (0, 1), (1, 2)], "constant"))


def test_integer_input_and_tensor_pad():
    x = np.arange(12, dtype=np.int64).reshape(1, 1, 3, 4)
    out = F.pad(t(x), t(np.array([1, 1, 0, 1])), value=7)
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy(), ref_pad(x, [(0, 0), (0, 0), (0, 1), (1, 1)], "constant", 7))


@pytest.mark.parametrize("mode,pad", [("constant", [1, 2, 0, 3]), ("reflect", [3, 4, 2, 1]),
                                      ("replicate", [4, 2, 3, 3]), ("circular", [5, 1, 2, 4])])
def test_gradients_fold_back(mode, pad):
    x = rng.standard_normal((1, 2, 4, 5))
    xt = t(x, grad=True)
    out = F.pad(xt, pad, mode=mode)
    v = rng.standard_normal(out.shape)
    (g,) = paddle.grad((out * t(v)).sum(), [xt])
    pairs = [(0, 0), (0, 0), (pad[2], pad[3]), (pad[0], pad[1])]
    np.testing.assert_allclose(g.numpy(), fd_grad(lambda: (ref_pad(x, pairs, mode) * v).sum(), x),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_double_backward(mode):
    x = rng.standard_normal((1, 1, 3, 3))
    u = rng.standard_normal(x.shape)

    def first_grad_dot(x_, create_graph=False):
        xt_ = t(x_, grad=True)
        (gx,) = paddle.grad((F.pad(xt_, [2, 1, 1, 2], mode=mode) ** 3).sum(), [xt_], create_graph=create_graph)
        return (gx * t(u)).sum(), xt_

    h, xt_ = first_grad_dot(x, create_graph=True)
    (g2,) = paddle.grad(h, [xt_])
    np.testing.assert_allclose(g2.numpy(), fd_grad(lambda: first_grad_dot(x)[0].item(), x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: F.pad(x, [3, 0, 0, 0], mode="reflect"), ValueError,
     r"'reflect' padding \(3, 0\) of dimension 3 must be smaller than its size 3"),
    (lambda x: F.pad(x, [0, 0, 0, 4], mode="circular"), ValueError,
     r"'circular' padding \(0, 4\) of dimension 2 must not exceed its size 3"),
    (lambda x: F.pad(x, [1, 1, 1]), ValueError, r"must have an even number of entries"),
    (lambda x: F.pad(x, [1, 1], mode="reflect"), ValueError,
     r"mode 'reflect' pads the spatial dims .* got 2 entries for a 4-D input"),
    (lambda x: F.pad(x, [1] * 10), ValueError, r"a 4-D input takes at most 8"),
    (lambda x: F.pad(x, [1, 1, 1, 1], mode="edge"), ValueError, r"argument 'mode' must be one of"),
    (lambda x: F.pad(x, [1, 1, 1, 1], data_format="CHWN"), ValueError, r"argument 'data_format' must be one of"),
    (lambda x: F.pad(x, [1, -1, 1, 1]), ValueError, r"pads must be non-negative"),
    (lambda x: F.pad(x, [1.5, 1, 1, 1]), TypeError, r"argument 'pad' must hold ints"),
    (lambda x: F.pad(x, 2), TypeError, r"argument 'pad' must be a list, tuple or Tensor of ints"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(t(np.zeros((1, 2, 3, 3))))
