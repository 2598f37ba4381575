"""`paddle.device.cuda` (streams, events, memory, properties) and `paddle.device.synchronize`, on the CuPy
stand-in (its trace shows where records, waits and syncs happen) and, for what needs no stand-in
trace, on a real GPU where there is one."""
import numpy as np
import pytest

import runtime as paddle
from runtime.device import cuda

GPU = paddle.CUDAPlace(0)


def test_device_count_and_properties_come_from_the_gpu(any_gpu):
    assert cuda.device_count() == any_gpu.cuda.runtime.getDeviceCount() >= 1
    props = cuda.get_device_properties()
    assert props.name == cuda.get_device_name(0) == cuda.get_device_name("gpu:0") and props.name
    assert cuda.get_device_capability(GPU) == (props.major, props.minor) and props.major >= 3
    assert props.total_memory > 0 and props.multi_processor_count > 0


def test_ops_in_a_stream_guard_queue_on_that_stream_and_an_event_orders_another(fake_gpu):
    x = paddle.to_tensor(np.ones(4, np.float32), place=GPU)
    side = cuda.Stream()
    with cuda.stream_guard(side):
        assert cuda.current_stream() == side
        y = x * 2.0
        done = side.record_event()
    cuda.current_stream().wait_event(done)
    z = y + 1.0
    trace = fake_gpu.trace
    launch_on_side = next(i for i, e in enumerate(trace) if e[0] == "launch" and e[1] == side._stream.name)
    record = trace.index(("record", side._stream.name, done._event.id))
    wait = trace.index(("wait", "null", done._event.id))
    last_launch = max(i for i, e in enumerate(trace) if e[0] == "launch" and e[1] == "null")
    assert launch_on_side < record < wait < last_launch
    np.testing.assert_array_equal(z.numpy(), np.full(4, 3.0, np.float32))
    assert cuda.current_stream() != side and side.query() and done.query()


def test_synchronize_waits_for_the_device_and_is_nothing_on_the_cpu(fake_gpu):
    cuda.synchronize()
    assert fake_gpu.trace[-1] == ("sync", "device.synchronize")
    fake_gpu.trace.clear()
    paddle.device.synchronize("cpu")
    assert fake_gpu.trace == []
    paddle.device.synchronize("gpu:0")
    assert fake_gpu.trace == [("sync", "device.synchronize")]


def test_memory_figures_count_what_the_pool_holds(any_gpu):
    cuda.empty_cache()
    before = cuda.memory_allocated()
    keep = paddle.to_tensor(np.zeros(1 << 16, np.float32), place=GPU)
    assert cuda.memory_allocated() >= before + keep._data.nbytes
    assert cuda.memory_reserved() >= cuda.memory_allocated()


def test_timed_events_are_recorded_around_the_work_and_measure_it(any_gpu):
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    paddle.to_tensor(np.ones(8, np.float32), place=GPU).sum()
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0
    if any_gpu.__name__ == "fake_cupy":   # the stand-in times nothing: check where the records went instead
        trace = any_gpu.trace
        first, last = (trace.index(("record", "null", e._event.id)) for e in (start, end))
        assert first < next(i for i, e in enumerate(trace) if e[0] == "launch" and e[2].endswith("sum")) < last
        assert trace[-1] == ("sync", f"event{end._event.id}.synchronize")


def test_bad_arguments_raise_naming_them(fake_gpu):
    with pytest.raises(ValueError, match="device 3 is not available"):
        cuda.synchronize(3)
    with pytest.raises(ValueError, match="must name a GPU"):
        cuda.get_device_name("cpu")
    with pytest.raises(TypeError, match="argument 'device'"):
        cuda.memory_allocated(1.5)
    with pytest.raises(ValueError, match="'priority' must be 1"):
        cuda.Stream(priority=0)
    with pytest.raises(TypeError, match="must be a Stream"):
        with cuda.stream_guard("s"):
            pass


@pytest.mark.skipif(paddle.is_compiled_with_cuda(), reason="checks a machine without a GPU")
def test_without_a_gpu_the_cuda_api_says_so():
    assert cuda.device_count() == 0
    cuda.empty_cache()   # nothing to give back
    paddle.device.synchronize()   # the CPU: nothing to wait for
    for call in (cuda.synchronize, cuda.memory_allocated, cuda.get_device_properties, cuda.Stream, cuda.Event):
        with pytest.raises(ValueError, match="CuPy with a usable GPU is not available"):
            call()


def test_a_compiled_function_synchronizes_for_real_on_every_call(fake_gpu):
    from sot_helpers import assert_same_result, events, jit_of  # noqa: PLC0415

    def step(x):
        y = x * 2.0
        paddle.device.cuda.synchronize()
        return y + 1.0

    x = paddle.to_tensor(np.ones(3, np.float32), place=GPU)
    jit = jit_of(step)
    for _ in range(2):
        fake_gpu.trace.clear()
        assert_same_result(jit(x), step(x))
        assert fake_gpu.trace.count(("sync", "device.synchronize")) == 2   # the compiled call's, then eager's
    assert [(code, "runs for real" in reason) for code, reason, _ in events(jit)] == [("SOT-S001", True)]
