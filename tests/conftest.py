"""Shared fixtures: every test starts from the same seed and default dtype."""
import numpy as np
import pytest

import runtime as paddle


@pytest.fixture(autouse=True)
def _fresh_state():
    np.random.seed(0)
    if hasattr(paddle, "seed"):
        paddle.seed(0)
    paddle.set_default_dtype("float32")
    yield
    paddle.set_default_dtype("float32")
