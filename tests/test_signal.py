"""paddle.signal: istft inverts stft across configurations, frame / overlap_add against NumPy, and stft
against a direct NumPy spectrogram (Paddle's own numbers are in test_fft.py)."""
import numpy as np
import pytest

import runtime as paddle


def _x(*shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("center,onesided,normalized,win_length", [
    (True, True, False, 16), (True, False, True, 16), (False, True, True, 16), (False, False, False, 16),
    (True, True, True, 12), (True, False, False, 12)])
def test_istft_inverts_stft(center, onesided, normalized, win_length):
    x = _x(2, 70)
    n_fft, hop = 16, 4
    window = paddle.to_tensor(np.hanning(win_length) + 0.05)
    kw = dict(n_fft=n_fft, hop_length=hop, win_length=win_length, window=window, center=center,
              normalized=normalized, onesided=onesided)
    spec = paddle.signal.stft(paddle.to_tensor(x), **kw)
    assert spec.shape[1] == (n_fft // 2 + 1 if onesided else n_fft) and spec.dtype == paddle.complex128
    y = paddle.signal.istft(spec, **kw)
    # the whole frames span (frames - 1) * hop + n_fft samples of the (centre-padded) signal; istft gives
    # them back, less the centring pads
    padded = 70 + (2 * (n_fft // 2) if center else 0)
    span = ((padded - n_fft) // hop) * hop + n_fft - (2 * (n_fft // 2) if center else 0)
    assert y.shape == [2, span]
    np.testing.assert_allclose(y.numpy(), x[:, :span], atol=1e-10)


def test_istft_with_a_zero_padded_window_and_no_centring_breaks_nola():
    """A window shorter than n_fft is zero-padded: uncentred, the first samples get no weight at all."""
    spec = paddle.signal.stft(paddle.to_tensor(_x(2, 70)), 16, hop_length=4, win_length=12, center=False)
    with pytest.raises(ValueError, match="istft: Abort istft because Nonzero Overlap Add"):
        paddle.signal.istft(spec, 16, hop_length=4, win_length=12, center=False)


def test_istft_length_and_one_dimensional_input():
    x = _x(50, dtype="float32")
    window = paddle.to_tensor(np.hanning(8).astype("float32") + 0.1)
    spec = paddle.signal.stft(paddle.to_tensor(x), 8, hop_length=2, window=window)
    assert spec.shape == [5, 26] and spec.dtype == paddle.complex64
    y = paddle.signal.istft(spec, 8, hop_length=2, window=window, length=50)
    assert y.shape == [50] and y.dtype == paddle.float32
    np.testing.assert_allclose(y.numpy(), x, atol=1e-5)


def test_complex_signal_roundtrip_with_return_complex():
    z = _x(1, 40) + 1j * _x(1, 40, seed=1)
    window = paddle.to_tensor(np.hanning(8) + 0.1)
    spec = paddle.signal.stft(paddle.to_tensor(z), 8, hop_length=2, window=window, onesided=None)
    assert spec.shape == [1, 8, 21]  # onesided=None: two-sided for a complex signal
    y = paddle.signal.istft(spec, 8, hop_length=2, window=window, onesided=False, return_complex=True)
    np.testing.assert_allclose(y.numpy(), z, atol=1e-10)
    with pytest.raises(ValueError, match="stft: onesided should be False"):
        paddle.signal.stft(paddle.to_tensor(z), 8, hop_length=2, window=window, onesided=True)


@pytest.mark.parametrize("pad_mode", ["reflect", "constant"])
def test_stft_matches_a_numpy_spectrogram(pad_mode):
    x = _x(3, 33)
    n_fft, hop = 10, 3
    window = np.hamming(n_fft)
    padded = np.pad(x, [(0, 0), (n_fft // 2, n_fft // 2)], mode=pad_mode)
    frames = np.stack([padded[:, i:i + n_fft] for i in range(0, padded.shape[1] - n_fft + 1, hop)], axis=1)
    want = np.fft.rfft(frames * window, axis=-1).transpose(0, 2, 1)
    got = paddle.signal.stft(paddle.to_tensor(x), n_fft, hop_length=hop, window=paddle.to_tensor(window),
                             pad_mode=pad_mode)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


@pytest.mark.parametrize("length,hop", [(11, 3), (12, 3), (9, 4), (7, 1)])
def test_frame_and_overlap_add_match_numpy(length, hop):
    x = _x(2, length)
    fl = 4
    n = 1 + (length - fl) // hop
    want = np.stack([x[:, i * hop:i * hop + fl] for i in range(n)], axis=-1)
    frames = paddle.signal.frame(paddle.to_tensor(x), fl, hop)
    np.testing.assert_array_equal(frames.numpy(), want)
    np.testing.assert_array_equal(paddle.signal.frame(paddle.to_tensor(x.T.copy()), fl, hop, axis=0).numpy(),
                                  want.transpose(2, 1, 0))
    summed = np.zeros((2, (n - 1) * hop + fl))
    for i in range(n):
        summed[:, i * hop:i * hop + fl] += want[..., i]
    np.testing.assert_allclose(paddle.signal.overlap_add(frames, hop).numpy(), summed, rtol=1e-15)
    back = paddle.signal.overlap_add(paddle.to_tensor(want.transpose(2, 1, 0).copy()), hop, axis=0)
    np.testing.assert_allclose(back.numpy(), summed.T, rtol=1e-15)


def test_istft_rejects_a_window_that_breaks_nola():
    spec = paddle.signal.stft(paddle.to_tensor(_x(1, 40)), 8, hop_length=2)
    window = np.hanning(8)
    window[:] = 0.0
    with pytest.raises(ValueError, match="istft: Abort istft because Nonzero Overlap Add"):
        paddle.signal.istft(spec, 8, hop_length=2, window=paddle.to_tensor(window))
