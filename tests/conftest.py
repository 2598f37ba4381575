"""Shared fixtures: every test starts from the same seed and default dtype.

Hypothesis runs the "ci" profile unless HYPOTHESIS_PROFILE names another: derandomized (the same
examples on every run, so a failure is never a matter of luck), no deadline (a loaded machine is
slow, not wrong), no example database. "explore" (`make fuzz`) draws new random examples each run,
more of them where a test does not set its own max_examples."""
import os
import sys

# One BLAS thread: small test matrices gain nothing from threads, and on a busy 2-core
# machine spinning BLAS threads slow the suite down by an order of magnitude.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

import runtime as paddle  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True, database=None)
settings.register_profile("explore", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items):
    """Tests marked `gpu` need CuPy and a GPU: where either is missing they are skipped, saying so."""
    if paddle.is_compiled_with_cuda():
        return
    skip = pytest.mark.skip(reason="needs CuPy and a CUDA GPU (the `gpu` extra on a machine with one)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fresh_state():
    np.random.seed(0)
    if hasattr(paddle, "seed"):
        paddle.seed(0)
    paddle.set_default_dtype("float32")
    yield
    paddle.set_default_dtype("float32")


@pytest.fixture
def fake_gpu(monkeypatch):
    """A GPU for the device code paths on a machine without one: `runtime` sees CuPy and one device,
    and CuPy is the host-backed stand-in in tests/fake_cupy.py (its rules and its log are there)."""
    import fake_cupy  # noqa: PLC0415
    from runtime import place  # noqa: PLC0415 - patched for the test only
    fake_cupy.reset()
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setitem(sys.modules, "cupyx", fake_cupy.cupyx)
    monkeypatch.setattr(place, "_cupy", lambda: fake_cupy)
    monkeypatch.setattr(place, "_current", place._current)
    yield fake_cupy
    fake_cupy.reset()


@pytest.fixture(params=["stand-in", pytest.param("cuda", marks=pytest.mark.gpu)])
def any_gpu(request):
    """The GPU a device test runs on: the CuPy stand-in everywhere, and also the real GPU where there is
    one (that case is marked `gpu`). Results on the stand-in are NumPy's bits; on CUDA, tests state a tolerance."""
    if request.param == "stand-in":
        yield request.getfixturevalue("fake_gpu")
        return
    import cupy  # noqa: PLC0415 - only where the gpu mark let the test run
    from runtime import place  # noqa: PLC0415
    saved = place._current
    yield cupy
    place._current = saved


@pytest.fixture
def ran(monkeypatch):
    """The programs the executor runs, as `apply_passes` returned them (after its passes), in build order."""
    from runtime.static import frontend  # noqa: PLC0415 - patched for the test only
    out = []
    apply_passes = frontend.apply_passes

    def recording(program, protected):
        new = apply_passes(program, protected)
        out.append(new)
        return new
    monkeypatch.setattr(frontend, "apply_passes", recording)
    return out


@pytest.fixture
def static_mode():
    """Build in static mode for the test, and always return to eager mode after it."""
    paddle.enable_static()
    try:
        yield
    finally:
        paddle.disable_static()
