"""The CuPy stand-in keeps the rules device code is tested against (tests/fake_cupy.py): if it stopped
refusing what CuPy refuses, the device tests would pass code that fails on a GPU."""
import pickle

import numpy as np
import pytest

import fake_cupy as cp


@pytest.fixture(autouse=True)
def _clean():
    cp.reset()
    yield
    cp.reset()


def test_device_arrays_are_not_numpy_arrays_and_refuse_implicit_conversion():
    x = cp.asarray(np.arange(4.0))
    assert not isinstance(x, np.ndarray) and isinstance(x, cp.ndarray)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x)
    assert np.array_equal(x.get(), np.arange(4.0)) and np.array_equal(cp.asnumpy(x), np.arange(4.0))


def test_numpy_functions_dispatch_to_the_device_and_mixing_with_host_arrays_raises():
    x = cp.asarray(np.arange(4.0))
    y = np.exp(x) + 1.0
    assert type(y) is cp.ndarray and np.allclose(y.get(), np.exp(np.arange(4.0)) + 1.0)
    assert type(np.concatenate([x, x])) is cp.ndarray
    with pytest.raises(TypeError, match="numpy.ndarray"):
        x + np.ones(4)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        np.ones(4) * x
    assert type(x * np.float32(2)) is cp.ndarray   # NumPy scalars are scalars


def test_reductions_give_0d_device_arrays_and_host_moves_copy():
    host = np.arange(6.0)
    x = cp.asarray(host)
    s = x.sum()
    assert type(s) is cp.ndarray and s.shape == () and float(s) == 15.0
    host[0] = 100.0
    assert x.get()[0] == 0.0
    back = x.get()
    back[1] = -1.0
    assert x.get()[1] == 1.0


def test_cupy_has_no_errstate_no_writeable_flag_and_refuses_pickling_device_arrays():
    with pytest.raises(AttributeError):
        cp.errstate
    x = cp.zeros(3)
    assert x.flags.c_contiguous and not hasattr(x.flags, "writeable")
    with pytest.raises(TypeError, match="get"):
        pickle.dumps(x)


def test_in_place_operators_and_out_return_the_same_device_array():
    x = cp.zeros(3)
    y = x
    x += 2.0
    assert x is y and np.array_equal(x.get(), [2.0, 2.0, 2.0])
    out = cp.empty(3)
    assert cp.add(x, 1.0, out=out) is out and np.array_equal(out.get(), [3.0, 3.0, 3.0])


def test_streams_and_events_are_logged_where_they_happen():
    s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()
    with s1:
        a = cp.ones(2) * 3.0
        e = s1.record()
    s2.wait_event(e)
    with s2:
        b = a + 1.0
    kinds = [(entry[0], entry[1]) for entry in cp.trace if entry[0] in ("launch", "record", "wait")]
    assert kinds.index(("record", s1.name)) < kinds.index(("wait", s2.name)) < kinds.index(("launch", s2.name))
    assert ("launch", s1.name) in kinds and float(b[0]) == 4.0


def test_capture_does_not_run_the_work_and_a_launch_does():
    s = cp.cuda.Stream()
    x = cp.asarray(np.ones(3))
    acc = cp.zeros(3)
    s.begin_capture()
    with s:
        y = x * 2.0
        cp.add(acc, y, out=acc)
    graph = s.end_capture()
    assert np.isnan(y.get()).all() and np.array_equal(acc.get(), np.zeros(3))  # nothing ran yet
    graph.launch(s)
    assert np.array_equal(y.get(), [2.0] * 3) and np.array_equal(acc.get(), [2.0] * 3)
    x[...] = 5.0
    graph.launch(s)
    assert np.array_equal(y.get(), [10.0] * 3) and np.array_equal(acc.get(), [12.0] * 3)


def test_a_host_sync_during_capture_raises_and_invalidates_it():
    s = cp.cuda.Stream()
    x = cp.ones(2)
    s.begin_capture()
    with pytest.raises(cp.CUDARuntimeError, match="Capture"):
        float(x.sum())
    with pytest.raises(cp.CUDARuntimeError, match="Invalidated"):
        s.end_capture()
    with pytest.raises(cp.CUDARuntimeError):
        cp.cuda.Stream.null.begin_capture()


def test_kernels_cannot_compile_and_say_so():
    k = cp.ElementwiseKernel("T x", "T y", "y = x", "copy")
    with pytest.raises(cp.CompileException):
        k(cp.ones(2))


def test_what_cupy_lacks_is_missing_here_too():
    with pytest.raises(AttributeError):
        cp.insert
    with pytest.raises(AttributeError):
        cp.linalg.multi_dot
    with pytest.raises(AttributeError):
        cp.zeros(2).resize
    with pytest.raises(TypeError, match="no implementation"):
        np.insert(cp.zeros(2), 0, 1.0)
    assert cp.lib.stride_tricks.as_strided is not None and cp.linalg.norm is not None
