"""Differential test of dynamic dims: Hypothesis chains ops that shrink, grow, slice, squeeze,
broadcast and read the length of a tensor `x` of shape [n, 3], and the compiled function is called
with n = 5, 6, 2, 3, 7, 1, 4 (dim 0 turns dynamic on the second call; later sizes hit that entry or
specialise it). Each call must give eager's value and gradients (of x and of w, broadcast along
the last dim), or raise eager's exception type: sizes of 1 and 0 reached through a dynamic dim,
`squeeze`, `ndim` and sizes that cancel included. A second generator does the same with images
[b, 3, h, w] through strided convs, pools, upsampling, crops and global pooling."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime as paddle
import runtime.nn.functional as F
import sot

STEPS = {
    "drop_first": "t = t[1:]",
    "drop_last": "t = t[:-1]",
    "last_two": "t = t[-2:]",
    "every_other": "t = t[::2]",
    "last": "t = t[-1:]",
    "last_by_size": "t = t[t.shape[0] - 1:]",
    "all_but_last_by_size": "t = t[:t.shape[0] - 1]",
    "grow": "t = paddle.concat([t, t[:1]])",
    "times_w": "t = t * w",
    "sum_rows": "t = t.sum(0, keepdim=True)",
    "times_mean": "t = t.mean(0, keepdim=True) * t",
    "squeeze": "t = t.squeeze()",
    "unsqueeze": "t = t.unsqueeze(0)",
    "rows_of_3": "t = t.reshape([-1, 3])",
    "flatten": "t = t.reshape([-1])",
    "transpose": "t = t.T",
    "on_ndim": "t = t * 2 if t.ndim == 2 else t + 1",
    "times_length": "t = t * t.shape[0]",
    "maximum": "t = paddle.maximum(t, t.mean())",
    "split_first": "t = paddle.split(t, [1, t.shape[0] - 1], axis=0)[1]",
    "pool_rows": "t = F.avg_pool1d(t.T.unsqueeze(0), 2)[0].T",
    "plus_positions": "t = t + paddle.arange(t.shape[0], t.shape[0] + 1, dtype='float32')",
    "times_ones": "t = t * paddle.ones([t.shape[0], 1])",
    "times_rows": "t = t * paddle.arange(t.shape[0], dtype='float32').unsqueeze(-1)",
    "gram": "t = paddle.matmul(t, t, transpose_y=True) if t.ndim == 2 else t",
    "rows_by_size": "t = t.reshape([t.shape[0], -1])",
    "length_difference": "t = t * (t.shape[0] - t.T.shape[-1] + 1)",
    "last_mask_row": "t = t * paddle.tril(paddle.ones([t.shape[0], t.shape[0]]))[t.shape[0] - 1:, :].sum()",
}
SIZES = (5, 6, 2, 3, 7, 1, 4)
IMAGE_STEPS = {
    "strided_conv": "t = F.conv2d(t, w, stride=2, padding=1)",
    "conv": "t = F.conv2d(t, w, padding=1)",
    "max_pool": "t = F.max_pool2d(t, 2)",
    "avg_pool_ceil": "t = F.avg_pool2d(t, 2, ceil_mode=True)",
    "upsample": "t = F.interpolate(t, scale_factor=2, mode='nearest')",
    "upsample_to_input": "t = F.interpolate(t, size=x.shape[2:], mode='bilinear', align_corners=False)",
    "skip_if_same_size": "t = paddle.concat([t, t], axis=1)[:, :3] if t.shape[2:] == x.shape[2:] else t",
    "times_global_pool": "t = F.adaptive_avg_pool2d(t, 1) * t",
    "as_tokens_and_back": "t = t.flatten(2).transpose([0, 2, 1]).reshape([t.shape[0], t.shape[2], t.shape[3], 3])"
                          ".transpose([0, 3, 1, 2])",
    "crop": "t = t[:, :, 1:, :-1]",
    "squeezed_means": "t = t.mean(axis=[2, 3], keepdim=True).squeeze() * 1.0 + t.sum()",
    "relu": "t = F.relu(t)",
}
IMAGE_SIZES = ((1, 8, 8), (2, 6, 10), (1, 2, 2), (2, 3, 5), (1, 9, 7), (1, 1, 4), (2, 4, 4))


def _compiled(table: dict[str, str], steps: list[str]):
    source = "def chain(x, w):\n    t = x\n" + "".join(f"    {table[s]}\n" for s in steps) + \
        "    return t.sum() + (t * 0).sum()\n"
    namespace = {"paddle": paddle, "F": F}
    exec(compile(source, f"<chain: {', '.join(steps)}>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace["chain"]


def _outcome(fn, x_shape: tuple, w_shape: tuple, seed: int):
    """(value, x's gradient, w's gradient), or the type of the exception raised."""
    rng = np.random.default_rng(seed)
    x = paddle.to_tensor(rng.standard_normal(x_shape).astype("float32"), stop_gradient=False)
    w = paddle.to_tensor(rng.standard_normal(w_shape).astype("float32"), stop_gradient=False)
    try:
        out = fn(x, w)
        out.backward()
    except Exception as e:  # noqa: BLE001 - eager's exception type is the expected outcome
        return type(e)
    return [None if t is None else t.numpy() for t in (out, x.grad, w.grad)]


def _assert_eagers(table: dict[str, str], steps: list[str], calls: list[tuple]) -> None:
    fn = _compiled(table, steps)
    jit = sot.to_static(fn)
    for call in calls:
        with sot.disable():
            want = _outcome(fn, *call)
        got = _outcome(jit, *call)
        if isinstance(want, type) or isinstance(got, type):
            assert got is want, (steps, call)
            continue
        for g, e in zip(got, want):
            assert (g is None) == (e is None), (steps, call)
            if e is not None:
                assert g.shape == e.shape, (steps, call)
                np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5, equal_nan=True, err_msg=f"{steps} {call}")


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4))
def test_chains_over_a_dynamic_dim_give_eagers_values_gradients_and_errors(steps):
    _assert_eagers(STEPS, steps, [((n, 3), (3,), n) for n in SIZES])


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(IMAGE_STEPS)), min_size=1, max_size=4))
def test_chains_over_dynamic_image_sizes_give_eagers_values_gradients_and_errors(steps):
    _assert_eagers(IMAGE_STEPS, steps, [((b, 3, h, w), (3, 3, 3, 3), h * 100 + w) for b, h, w in IMAGE_SIZES])


def test_eager_chains_agree_with_numpy():
    """The eager side of one chain per kind of step, against NumPy (n = 5)."""
    x = np.random.default_rng(5).standard_normal((5, 3)).astype("float32")
    w = np.random.default_rng(5).standard_normal((5, 3)).astype("float32")[0]  # (a stand-in: not _outcome's w)
    cases = {
        ("drop_first", "times_w"): (x[1:] * w).sum(),
        ("last_by_size", "grow"): np.concatenate([x[4:], x[4:][:1]]).sum(),
        ("pool_rows",): ((x[0:4:2] + x[1:4:2]) / 2).sum(),
        ("plus_positions",): (x + 5.0).sum(),
        ("all_but_last_by_size", "times_length"): (x[:4] * 4).sum(),
    }
    for steps, expected in cases.items():
        with sot.disable():
            out = _compiled(STEPS, list(steps))(paddle.to_tensor(x), paddle.to_tensor(w))
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, err_msg=str(steps))
    image = np.random.default_rng(6).standard_normal((1, 3, 4, 6)).astype("float32")
    image_cases = {
        ("max_pool", "crop"): image.reshape(1, 3, 2, 2, 3, 2).max(axis=(3, 5))[:, :, 1:, :-1].sum(),
        ("times_global_pool",): (image.mean(axis=(2, 3), keepdims=True) * image).sum(),
        ("upsample",): image.repeat(2, axis=2).repeat(2, axis=3).sum(),
    }
    for steps, expected in image_cases.items():
        with sot.disable():
            out = _compiled(IMAGE_STEPS, list(steps))(paddle.to_tensor(image), paddle.ones([3, 3, 3, 3]))
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, err_msg=str(steps))
