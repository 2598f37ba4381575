"""`Tensor.cpu()` / `.cuda()` in translated code: `cpu()` where no GPU can exist is the tensor itself
(captured, guarded on there being no GPU); any other device move breaks the graph and runs for real."""
import pytest

import runtime as paddle
import sot

from sot_helpers import assert_same_result, events, fresh, jit_of, rand

pytestmark = pytest.mark.skipif(paddle.is_compiled_with_cuda(), reason="checks a CPU-only machine")


def cpu_of_product(x):
    t = x * 2
    u = t.cpu()
    return u + 1, u is t


def test_cpu_of_a_cpu_tensor_is_captured_as_the_tensor_itself():
    x = rand(3)
    report = sot.explain(fresh(cpu_of_product), x)
    assert_same_result(report.result, cpu_of_product(x))
    assert report.graph_count == 1 and report.fallbacks == [] and report.breaks == [], str(report)


def cuda_of_product(x):
    t = x * 2
    return t.cuda() + 1


def test_cuda_without_a_gpu_breaks_and_raises_as_eager():
    x = rand(3)
    with pytest.raises(Exception) as eager:
        cuda_of_product(x)
    jit = jit_of(cuda_of_product)
    with pytest.raises(type(eager.value)) as got:
        jit(x)
    assert str(got.value) == str(eager.value)
    moves = "`t.cuda()` calls Tensor.cuda, which moves a tensor"
    assert any(moves in reason for _, reason, _ in events(jit)), events(jit)
