"""Shared fixtures: every test starts from the same seed and default dtype."""
import os

# One BLAS thread: small test matrices gain nothing from threads, and on a busy 2-core
# machine spinning BLAS threads slow the suite down by an order of magnitude.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import runtime as paddle  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_state():
    np.random.seed(0)
    if hasattr(paddle, "seed"):
        paddle.seed(0)
    paddle.set_default_dtype("float32")
    yield
    paddle.set_default_dtype("float32")


@pytest.fixture
def static_mode():
    """Build in static mode for the test, and always return to eager mode after it."""
    paddle.enable_static()
    try:
        yield
    finally:
        paddle.disable_static()
