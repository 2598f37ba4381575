"""F.pixel_shuffle / pixel_unshuffle / channel_shuffle and their layers: the index maps Paddle documents
(checked with NumPy loops), the numbers PaddlePaddle 3.3.1 gave (tests/fixtures/paddle/record_shuffle.py),
gradients, a static program with an unknown batch size, and the JIT."""
import json
import pathlib

import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import assert_same_result, fresh

F = paddle.nn.functional
REF = json.loads((pathlib.Path(__file__).parent / "fixtures" / "paddle" / "shuffle_reference.json").read_text())
CASES = {name: tuple(case) for name, case in REF["cases"].items()}  # function, input shape, factor, format


def _arange(shape):
    return np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)


def _pixel_shuffle_loops(x, r):
    """out[n, c, h*r + i, w*r + j] = x[n, c*r*r + i*r + j, h, w] (NCHW)."""
    n, cin, h, w = x.shape
    out = np.zeros((n, cin // (r * r), h * r, w * r), x.dtype)
    for c in range(cin // (r * r)):
        for i in range(r):
            for j in range(r):
                out[:, c, i::r, j::r] = x[:, c * r * r + i * r + j]
    return out


def _channel_shuffle_loops(x, g):
    """Channel k*(C/g) + m of the input becomes channel m*g + k (NCHW)."""
    out = np.zeros_like(x)
    per = x.shape[1] // g
    for k in range(g):
        for m in range(per):
            out[:, m * g + k] = x[:, k * per + m]
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_gives_what_paddle_gave(name):
    fn, shape, factor, fmt = CASES[name]
    out = getattr(F, fn)(paddle.to_tensor(_arange(shape)), factor, data_format=fmt)
    want = REF["outputs"][name]
    assert out.shape == want["shape"]
    np.testing.assert_array_equal(out.numpy().ravel(), np.array(want["values"], "float32"))


def test_pixel_shuffle_is_the_documented_index_map_and_unshuffle_inverts_it():
    x = np.random.default_rng(0).standard_normal((2, 18, 2, 3)).astype("float32")
    out = F.pixel_shuffle(paddle.to_tensor(x), 3)
    np.testing.assert_array_equal(out.numpy(), _pixel_shuffle_loops(x, 3))
    np.testing.assert_array_equal(F.pixel_unshuffle(out, 3).numpy(), x)
    nhwc = F.pixel_shuffle(paddle.to_tensor(x.transpose(0, 2, 3, 1)), 3, data_format="NHWC")
    np.testing.assert_array_equal(nhwc.numpy(), _pixel_shuffle_loops(x, 3).transpose(0, 2, 3, 1))


def test_channel_shuffle_is_the_documented_index_map_in_both_layouts():
    x = np.random.default_rng(1).standard_normal((2, 12, 2, 2)).astype("float32")
    np.testing.assert_array_equal(F.channel_shuffle(paddle.to_tensor(x), 4).numpy(), _channel_shuffle_loops(x, 4))
    nhwc = F.channel_shuffle(paddle.to_tensor(x.transpose(0, 2, 3, 1)), 4, data_format="NHWC")
    np.testing.assert_array_equal(nhwc.numpy(), _channel_shuffle_loops(x, 4).transpose(0, 2, 3, 1))


def test_gradient_is_the_upstream_gradient_moved_back():
    x = paddle.to_tensor(_arange([1, 8, 2, 2]), stop_gradient=False)
    weights = np.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype("float32")
    (paddle.nn.PixelShuffle(2)(x) * paddle.to_tensor(weights)).sum().backward()
    np.testing.assert_array_equal(_pixel_shuffle_loops(x.grad.numpy(), 2), weights)


def test_layers_check_their_arguments_and_repr_as_paddle():
    x = paddle.zeros([1, 8, 2, 2])
    errors = {
        "pixel_shuffle_float_factor": lambda: F.pixel_shuffle(x, 2.0),
        "pixel_shuffle_bad_format": lambda: F.pixel_shuffle(x, 2, data_format="NCL"),
        "PixelShuffle_float_factor": lambda: paddle.nn.PixelShuffle(2.0),
        "PixelUnshuffle_zero_factor": lambda: paddle.nn.PixelUnshuffle(0),
        "ChannelShuffle_zero_groups": lambda: paddle.nn.ChannelShuffle(0),
        "ChannelShuffle_bad_format": lambda: paddle.nn.ChannelShuffle(2, data_format="NCDHW"),
    }
    assert sorted(errors) == sorted(REF["errors"])
    for key, call in errors.items():
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value).__name__ == REF["errors"][key], key
    assert repr(paddle.nn.PixelShuffle(2, data_format="NHWC")) == REF["repr"]["PixelShuffle"]
    assert repr(paddle.nn.ChannelShuffle(3)) == REF["repr"]["ChannelShuffle"]
    with pytest.raises(ValueError, match="divisible"):
        F.pixel_shuffle(paddle.zeros([1, 6, 2, 2]), 2)


def test_static_program_keeps_an_unknown_batch_size(static_mode):
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        x = paddle.static.data("x", [None, 8, 2, 3], "float32")
        out = F.channel_shuffle(F.pixel_shuffle(x, 2), 2)
    feed = np.random.default_rng(3).standard_normal((3, 8, 2, 3)).astype("float32")
    (got,) = paddle.static.Executor().run(main, feed={"x": feed}, fetch_list=[out])
    np.testing.assert_array_equal(got, _channel_shuffle_loops(_pixel_shuffle_loops(feed, 2), 2))


def test_compiled_layers_are_one_graph_like_eager():
    up, shuffle = paddle.nn.PixelShuffle(2), paddle.nn.ChannelShuffle(2)

    def head(x):
        return shuffle(up(x)) + F.pixel_unshuffle(x, 2, data_format="NHWC").sum()

    x = paddle.to_tensor(np.random.default_rng(4).standard_normal((2, 16, 2, 2)).astype("float32"))
    report = sot.explain(fresh(head), x)
    assert_same_result(report.result, head(x))
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)
