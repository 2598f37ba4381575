"""The module paths Paddle model files import (`paddle.base`, `paddle.regularizer`, `paddle.incubate`,
`paddle.tensor`, `paddle.metric`, `paddle.distributed`), `gather` with an [N, 1] index and the
Parameter attributes model code touches. Numbers come from real Paddle 3.3.1, recorded by
tests/fixtures/paddle/record_modules.py into modules_reference.json."""
import json
import pathlib
import sys

import numpy as np
import pytest

import runtime as paddle
import sot
from helpers import fd_grad, t
from sot_helpers import assert_same_result, captured, jit_of

REF = json.loads((pathlib.Path(__file__).parent / "fixtures" / "paddle" / "modules_reference.json").read_text())


def f32(a):
    return np.asarray(a, dtype="float32")


# ------------------------------------------------------------------------------------------ paddle.base
def test_base_names_are_the_runtime_objects():
    import runtime.base.dygraph.base as dygraph_base
    from runtime.base.framework import EagerParamBase, default_main_program, in_dygraph_mode
    from runtime.base.param_attr import ParamAttr
    assert ParamAttr is paddle.ParamAttr and paddle.base.ParamAttr is paddle.ParamAttr
    assert EagerParamBase is paddle.Parameter
    assert isinstance(paddle.nn.Linear(2, 2).weight, EagerParamBase)
    assert default_main_program is paddle.static.default_main_program
    assert paddle.base.dygraph.no_grad is paddle.no_grad and dygraph_base.grad is paddle.grad
    assert paddle.base.core.CPUPlace is paddle.CPUPlace
    assert in_dygraph_mode() is True and paddle.base.framework.in_pir_mode() is False


def test_base_top_level_aliases():
    base = paddle.base
    for name in ("Executor", "global_scope", "scope_guard", "Program", "Variable", "default_main_program",
                 "default_startup_program", "program_guard"):
        assert getattr(base, name) is getattr(paddle.static, name), name
    for name in ("get_flags", "set_flags", "is_compiled_with_cuda", "CPUPlace", "CUDAPlace", "CUDAPinnedPlace"):
        assert getattr(base, name) is getattr(paddle, name), name
    assert base.core.is_compiled_with_cuda is paddle.is_compiled_with_cuda
    assert base.core.Scope is paddle.static.Scope
    assert base.framework.in_dynamic_or_pir_mode() is True


def test_in_dygraph_mode_follows_enable_static(static_mode):
    assert paddle.base.framework.in_dygraph_mode() is False
    assert paddle.base.framework.in_dynamic_or_pir_mode() is False
    assert paddle.base.dygraph.enabled() is False


def test_dygraph_guard_runs_eagerly_and_restores_static_mode(static_mode):
    with paddle.base.dygraph.guard():
        assert paddle.in_dynamic_mode()
        out = paddle.to_tensor([1.0, 2.0]) * 3
        np.testing.assert_array_equal(out.numpy(), [3.0, 6.0])
    assert not paddle.in_dynamic_mode()


def test_dygraph_guard_restores_static_mode_after_an_error(static_mode):
    with pytest.raises(KeyError):
        with paddle.base.dygraph.guard():
            raise KeyError("inside")
    assert not paddle.in_dynamic_mode()


def test_dygraph_guard_in_dygraph_mode_leaves_it_on():
    with paddle.base.dygraph.guard():
        pass
    assert paddle.in_dynamic_mode()


def test_to_variable_keeps_numpy_dtype_and_returns_tensors_unchanged():
    to_variable = paddle.base.dygraph.to_variable
    v = to_variable([1.5, 2.0])
    assert v.dtype == paddle.float64 and v.stop_gradient  # np.array of Python floats, as Paddle 2.x
    np.testing.assert_array_equal(v.numpy(), [1.5, 2.0])
    assert to_variable(np.ones(2, "int32"), dtype="float32").dtype == paddle.float32
    x = paddle.ones([2])
    assert to_variable(x) is x
    arr = np.zeros(2)
    to_variable(arr).add_(paddle.ones([2], "float64"))
    assert arr.tolist() == [0.0, 0.0]  # a copy: the array is not shared


def test_to_variable_refuses_other_types():
    with pytest.raises(TypeError, match="to_variable: argument 'value'"):
        paddle.base.dygraph.to_variable(3.0)


def test_enable_and_disable_dygraph_switch_modes():
    paddle.base.disable_dygraph()
    try:
        assert not paddle.in_dynamic_mode()
        paddle.base.enable_dygraph()
        assert paddle.in_dynamic_mode()
    finally:
        paddle.disable_static()


# ------------------------------------------------------------------------------------------ paddle.regularizer
def test_regularizer_module_paths():
    import runtime.regularizer
    from runtime.regularizer import L1Decay, L2Decay
    assert paddle.regularizer is runtime.regularizer
    assert paddle.regularizer.L2Decay is L2Decay and paddle.regularizer.L1Decay is L1Decay
    assert L2Decay(0.5).coeff == 0.5


def test_regularizer_from_param_attr_reaches_the_parameter():
    ref = REF["parameter"]["linear_w"]
    lin = paddle.nn.Linear(2, 3, weight_attr=paddle.ParamAttr(learning_rate=0.5, do_model_average=False,
                                                              regularizer=paddle.regularizer.L2Decay(0.1)))
    assert type(lin.weight.regularizer).__name__ == ref["regularizer"]
    assert lin.weight.regularizer.coeff == pytest.approx(ref["coeff"])
    assert lin.weight.optimize_attr == ref["optimize_attr"]
    assert lin.weight.do_model_average is ref["do_model_average"]
    assert lin.bias.do_model_average is REF["parameter"]["linear_b"]["do_model_average"]


# ------------------------------------------------------------------------------------------ Parameter attributes
def test_parameter_attributes_match_paddle():
    p = paddle.create_parameter([2, 3], "float32")
    for attr, want in REF["parameter"]["create"].items():
        assert getattr(p, attr) == want, attr


def test_setting_trainable_flips_stop_gradient():
    p = paddle.create_parameter([2, 3], "float32")
    p.trainable = False
    assert [p.stop_gradient, p.trainable] == REF["parameter"]["after_false"]
    p.stop_gradient = False
    assert p.trainable is True


def test_a_frozen_parameter_gets_no_gradient():
    lin = paddle.nn.Linear(2, 2)
    lin.weight.trainable = False
    lin(paddle.ones([1, 2])).sum().backward()
    assert lin.weight.grad is None and lin.bias.grad is not None


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_trainable_must_be_a_bool(value):
    assert REF["parameter"]["bad_trainable"] == "ValueError"
    p = paddle.create_parameter([2], "float32")
    with pytest.raises(ValueError, match="trainable"):
        p.trainable = value
    assert p.trainable is True


def test_parameter_block_is_the_global_block_of_the_main_program():
    assert REF["parameter"]["block_is_global"]
    p = paddle.create_parameter([2], "float32")
    assert p.block is paddle.static.default_main_program().global_block()


def test_parameter_constructor_takes_paddles_keywords():
    p = paddle.Parameter(np.ones(2, "float32"), do_model_average=True, is_distributed=True, need_clip=False)
    assert (p.do_model_average, p.is_distributed, p.need_clip) == (True, True, False)


# ------------------------------------------------------------------------------------------ gather, [N, 1] index
def test_gather_n_by_1_index_matches_paddle():
    ref = REF["gather_n1"]
    x = paddle.to_tensor(np.arange(12, dtype="float32").reshape(4, 3), stop_gradient=False)
    out = paddle.gather(x, paddle.to_tensor([[0], [2], [0]]))
    np.testing.assert_array_equal(out.numpy(), ref["out"])
    (out * paddle.to_tensor(np.arange(9, dtype="float32").reshape(3, 3))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), ref["grad"])
    assert paddle.gather(x, paddle.to_tensor([[0], [2]]), axis=1).shape == ref["axis1_shape"]


def test_index_select_takes_an_n_by_1_index_too():
    a = np.random.rand(4, 3)
    out = paddle.index_select(t(a), paddle.to_tensor(np.array([[2], [0]])), axis=1)
    np.testing.assert_array_equal(out.numpy(), a[:, [2, 0]])


def test_gather_n_by_1_gradient_matches_finite_differences():
    a = np.random.rand(4, 3)
    idx = paddle.to_tensor(np.array([[1], [3], [1]]))
    w = np.random.rand(3, 3)
    x = t(a, grad=True)
    (paddle.gather(x, idx) * t(w)).sum().backward()
    want = fd_grad(lambda: float((np.take(a, [1, 3, 1], axis=0) * w).sum()), a)
    np.testing.assert_allclose(x.grad.numpy(), want, atol=1e-6)


@pytest.mark.parametrize("index, key", [([[0, 1]], "bad_2d"), (np.zeros((2, 1, 1), "int64"), "bad_3d")])
def test_gather_refuses_other_index_shapes(index, key):
    assert REF["gather_n1"][key] == "ValueError"
    with pytest.raises(ValueError, match="gather: argument 'index'"):
        paddle.gather(paddle.ones([4, 3]), paddle.to_tensor(index))


def test_gather_n_by_1_in_a_static_program(static_mode):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [4, 3], "float32")
        i = paddle.static.data("i", [None, 1], "int64")
        out = paddle.gather(x, i)
    assert out.shape == [-1, 3]
    xv = np.arange(12, dtype="float32").reshape(4, 3)
    got, = paddle.static.Executor().run(main, feed={"x": xv, "i": np.array([[3], [0]])}, fetch_list=[out])
    np.testing.assert_array_equal(got, xv[[3, 0]])


def test_gather_n_by_1_under_to_static_matches_eager():
    def f(x, idx):
        return paddle.gather(x, idx, axis=0) * 2

    captured(f, paddle.rand([4, 3]), paddle.to_tensor([[2], [0], [2]]))


# ------------------------------------------------------------------------------------------ paddle.tensor
def test_tensor_namespace_functions_are_the_runtime_ops():
    import runtime.tensor.creation
    import runtime.tensor.linalg as linalg
    from runtime.tensor import manipulation, matmul
    from runtime.tensor.math import add, max as tensor_max
    from runtime.tensor.search import topk
    assert matmul is paddle.matmul and paddle.tensor.matmul is paddle.matmul
    assert add is paddle.add and tensor_max is paddle.max and topk is paddle.topk
    assert manipulation.reshape is paddle.reshape and linalg.matmul is paddle.matmul
    assert runtime.tensor.creation.zeros is paddle.zeros
    assert paddle.tensor.Tensor is paddle.Tensor


def test_tensor_namespace_names_exist_in_paddles_modules():
    from runtime import tensor_api
    names = REF["tensor_module_names"]
    for sub, module in tensor_api.SUBMODULES.items():
        missing = [n for n in module.__all__ if n not in names[sub]]
        assert missing == [], (sub, missing)
        for name in module.__all__:
            assert getattr(paddle.tensor, name) is getattr(module, name)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_elementwise_with_axis_matches_paddle(op):
    ref = REF["with_axis"]
    fn = getattr(paddle.tensor.math, f"_{op}_with_axis")
    x, y = paddle.to_tensor(f32(ref["x"])), paddle.to_tensor(f32(ref["y"]))
    np.testing.assert_allclose(fn(x, y, axis=1).numpy(), ref[op], rtol=1e-6)
    np.testing.assert_allclose(fn(y, x, axis=1).numpy(), getattr(np, op)(f32(ref["y"])[:, None], f32(ref["x"])),
                               rtol=1e-6)  # the lower-rank operand on the left lines up the same way
    np.testing.assert_array_equal(fn(x, x[0, 0]).numpy(), getattr(paddle, op)(x, x[0, 0]).numpy())


def test_elementwise_with_axis_bad_axis():
    with pytest.raises(ValueError, match="argument 'axis' must be in \\[0, 2\\]"):
        paddle.tensor.math._multiply_with_axis(paddle.ones([3, 4, 2]), paddle.ones([4]), axis=3)


def test_elementwise_with_axis_under_to_static_matches_eager():
    def f(state, new_state, mask):
        return (paddle.tensor.math._multiply_with_axis(new_state, mask, axis=0)
                - paddle.tensor.math._multiply_with_axis(state, mask - 1, axis=0))

    captured(f, paddle.rand([3, 4]), paddle.rand([3, 4]), paddle.to_tensor([1.0, 0.0, 1.0]))


def test_unknown_tensor_namespace_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_an_op'"):
        paddle.tensor.not_an_op  # noqa: B018
    assert not hasattr(paddle.tensor, "not_an_op")


def test_tensor_namespace_leaves_builtins_alone_inside_the_tensor_module():
    # runtime/tensor.py calls the builtin any() on nested lists; the namespace's `any` op must not shadow it
    out = paddle.to_tensor([paddle.ones([2]), paddle.zeros([2])])
    np.testing.assert_array_equal(out.numpy(), [[1.0, 1.0], [0.0, 0.0]])


def test_tensor_arrays_are_python_lists():
    ref = REF["array"]
    arr = paddle.tensor.create_array("float32")
    assert type(arr).__name__ == ref["create"]
    i = paddle.zeros([1], "int64")
    a, b = paddle.ones([2]), paddle.full([2], 2.0)
    assert (paddle.tensor.array_write(a, i, arr) is arr) is ref["write_returns_same"]
    paddle.tensor.array_write(b, i + 1, arr)
    assert repr(paddle.tensor.array_length(arr)) == "2" and int(ref["length"]) == 1
    assert paddle.tensor.array_read(arr, i + 1) is b
    paddle.tensor.array_write(b, i, arr)  # an existing position is replaced
    assert arr == [b, b]
    fresh = paddle.tensor.array_write(a, i)
    assert fresh == [a]
    assert paddle.tensor.create_array("float32", [a, b]) == [a, b]


@pytest.mark.parametrize("call, key, error", [
    (lambda arr: paddle.tensor.array_write(paddle.ones([2]), paddle.full([1], 3, "int64"), arr),
     "write_past_end", AssertionError),
    (lambda arr: paddle.tensor.array_read(arr, 0), "read_bad_index", AssertionError),
    (lambda arr: paddle.tensor.create_array("float32", 3), "init_bad", TypeError),
])
def test_tensor_array_bad_arguments_raise_paddles_errors(call, key, error):
    assert REF["array"][key] == error.__name__
    arr = paddle.tensor.array_write(paddle.ones([2]), paddle.zeros([1], "int64"))
    with pytest.raises(error, match="array_write|array_read|create_array"):
        call(arr)


def test_tensor_array_write_in_static_mode_is_a_clear_error(static_mode):
    with pytest.raises(TypeError, match="static Variable .* has no value at build time") as info:
        paddle.tensor.array_write(paddle.ones([2]), paddle.zeros([1], "int64"))
    assert any("array_write: a tensor array is a Python list" in note for note in info.value.__notes__)


def test_tensor_arrays_under_to_static_give_the_eager_result():
    def f(x):
        arr = paddle.tensor.create_array("float32")
        i = paddle.zeros([1], "int64")
        paddle.tensor.array_write(x * 2, i, arr)
        paddle.tensor.array_write(x + 1, i + 1, arr)
        return paddle.tensor.array_read(arr, i + 1) + paddle.tensor.array_length(arr)

    x = paddle.rand([2, 3])
    report = sot.explain(jit_of(f), x)  # each array op needs its index's value: a graph break, no fallback
    assert_same_result(report.result, f(x))
    assert report.fallbacks == [] and [b.code for b in report.breaks] == ["SOT-B002"] * 3
    jit = jit_of(f)
    assert_same_result(jit(x), f(x))
    assert_same_result(jit(x), f(x))


# ------------------------------------------------------------------------------------------ paddle.metric
PRED = f32([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
LABEL = np.array([[1], [1], [2], [1]], "int64")


@pytest.mark.parametrize("k", [1, 2])
def test_accuracy_matches_paddle(k):
    ref = REF["accuracy"][f"k{k}"]
    correct, total = paddle.zeros([1], "int32"), paddle.zeros([1], "int32")
    acc = paddle.metric.accuracy(paddle.to_tensor(PRED), paddle.to_tensor(LABEL), k=k, correct=correct, total=total)
    assert acc.shape == ref["shape"] and acc.dtype == paddle.float32 and ref["dtype"] == "float32"
    assert acc.item() == pytest.approx(ref["acc"])
    assert correct.item() == ref["correct"] and total.item() == ref["total"]
    assert correct.dtype == paddle.int32


def test_accuracy_with_int32_labels():
    acc = paddle.metric.accuracy(paddle.to_tensor(PRED), paddle.to_tensor(LABEL.astype("int32")))
    assert acc.item() == pytest.approx(REF["accuracy"]["int32_label"])


@pytest.mark.parametrize("kwargs, error, match", [
    ({"k": 0}, ValueError, "argument 'k'"),
    ({"label": paddle.to_tensor(LABEL.astype("float32"))}, TypeError, "argument 'label'"),
    ({"input": PRED}, TypeError, "argument 'input'"),
])
def test_accuracy_bad_arguments(kwargs, error, match):
    args = {"input": paddle.to_tensor(PRED), "label": paddle.to_tensor(LABEL), **kwargs}
    with pytest.raises(error, match=f"accuracy: {match}"):
        paddle.metric.accuracy(**args)


def test_static_accuracy_builds_ops_into_the_program(static_mode):
    assert paddle.static.accuracy is paddle.metric.accuracy
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 3], "float32")
        y = paddle.static.data("y", [None, 1], "int64")
        acc = paddle.static.accuracy(x, y, k=2)
    assert [op.type for op in main.global_block().ops][:1] == ["topk"]
    got, = paddle.static.Executor().run(main, feed={"x": PRED, "y": LABEL}, fetch_list=[acc])
    assert float(got) == pytest.approx(REF["accuracy"]["k2"]["acc"])
    got, = paddle.static.Executor().run(main, feed={"x": PRED[:2], "y": LABEL[:2]}, fetch_list=[acc])
    assert float(got) == pytest.approx(1.0)  # the batch size is read when the program runs


def test_accuracy_under_to_static_matches_eager():
    def f(x, y):
        return paddle.metric.accuracy(x, y, k=2)

    captured(f, paddle.to_tensor(PRED), paddle.to_tensor(LABEL))


def test_accuracy_metric_matches_paddle():
    ref = REF["Accuracy"]
    m = paddle.metric.Accuracy(topk=(1, 2))
    c = m.compute(paddle.to_tensor(PRED), paddle.to_tensor(LABEL))
    assert c.dtype == paddle.float32 and ref["compute_dtype"] == "float32"
    np.testing.assert_array_equal(c.numpy(), ref["compute"])
    assert m.update(c) == pytest.approx(ref["update"])
    assert m.name() == ref["name"]
    c2 = m.compute(paddle.to_tensor(PRED[:2]), paddle.to_tensor(LABEL[:2, 0]))
    assert m.update(c2) == pytest.approx(ref["update2"])
    assert m.accumulate() == pytest.approx(ref["accumulate"])
    m.reset()
    assert m.accumulate() == ref["after_reset"]


def test_accuracy_metric_one_hot_labels_and_names():
    ref = REF["Accuracy"]
    m = paddle.metric.Accuracy()
    onehot = np.eye(3, dtype="float32")[LABEL[:, 0]]
    assert m.update(m.compute(paddle.to_tensor(PRED), paddle.to_tensor(onehot))) == pytest.approx(ref["top1_onehot"])
    assert m.name() == ref["top1_name"]
    assert paddle.metric.Accuracy(topk=(1, 3), name="a").name() == ref["named"]


def test_accuracy_metric_bad_topk():
    with pytest.raises(ValueError, match="Accuracy: argument 'topk'"):
        paddle.metric.Accuracy(topk=(0,))


def test_metric_is_abstract_and_compute_passes_through():
    with pytest.raises(TypeError):
        paddle.metric.Metric()

    class Count(paddle.metric.Metric):
        def reset(self):
            self.n = 0

        def update(self, *args):
            self.n += len(args)

        def accumulate(self):
            return self.n

        def name(self):
            return "count"

    m = Count()
    m.reset()
    m.update(*m.compute(1, 2))
    assert m.compute(1, 2) == (1, 2) and m.accumulate() == 2


def test_precision_and_recall_match_paddle():
    preds = f32([0.1, 0.6, 0.8, 0.4, 0.9, 0.5])
    labels = np.array([0, 1, 0, 1, 1, 0], "int64")
    p, r = paddle.metric.Precision(), paddle.metric.Recall()
    p.update(preds, labels)
    r.update(paddle.to_tensor(preds), paddle.to_tensor(labels))
    assert p.accumulate() == pytest.approx(REF["Precision"]["acc"]) and p.name() == REF["Precision"]["name"]
    assert r.accumulate() == pytest.approx(REF["Recall"]["acc"]) and r.name() == REF["Recall"]["name"]
    assert REF["Precision"]["bad"] == "ValueError"
    with pytest.raises(ValueError, match="Precision.update: argument 'preds'"):
        p.update([0.1], labels)
    p.reset()
    r.reset()
    assert p.accumulate() == 0.0 and r.accumulate() == 0.0


# ------------------------------------------------------------------------------------------ paddle.distributed
def test_distributed_single_process_values_match_paddle():
    ref = REF["distributed"]
    dist = paddle.distributed
    dist.init_parallel_env()
    assert dist.get_rank() == ref["rank"] and dist.get_world_size() == ref["world_size"]
    assert dist.is_initialized() is ref["is_initialized"]
    env = dist.ParallelEnv()
    for attr, want in ref["env"].items():
        assert getattr(env, attr) == want, attr
    assert env.device_id == 0 and env.dev_id == 0 and env.nrings == 1
    assert dist.is_available() is True


def test_data_parallel_keeps_paddles_deprecated_methods_as_no_ops():
    dp = paddle.DataParallel(paddle.nn.Linear(2, 2))
    loss = paddle.ones([1])
    assert dp.scale_loss(loss) is loss and dp.apply_collective_grads() is None


def test_data_parallel_refuses_static_mode(static_mode):
    with pytest.raises(RuntimeError, match="DataParallel: it is not supported in static graph mode"):
        paddle.DataParallel(paddle.nn.Linear(2, 2))


def test_data_parallel_wraps_the_layer_like_paddle():
    ref = REF["distributed"]
    lin = paddle.nn.Linear(2, 2)
    dp = paddle.DataParallel(lin)
    assert list(dp.state_dict()) == ref["dp_state_keys"]
    assert [n for n, _ in dp.named_parameters()] == ref["dp_named_params"]
    assert [id(p) for p in dp.parameters()] == [id(p) for p in lin.parameters()]
    x = paddle.rand([3, 2])
    np.testing.assert_array_equal(dp(x).numpy(), lin(x).numpy())
    state = {k: paddle.full(v.shape, 0.5) for k, v in lin.state_dict().items()}
    dp.set_state_dict(state)
    np.testing.assert_array_equal(lin.weight.numpy(), np.full([2, 2], 0.5, "float32"))


def test_data_parallel_refuses_a_non_layer():
    with pytest.raises(TypeError, match="DataParallel: argument 'layers'"):
        paddle.DataParallel(lambda x: x)


def test_collectives_on_one_process_leave_the_tensor_alone():
    dist = paddle.distributed
    x = paddle.to_tensor([1.0, 2.0])
    assert dist.all_reduce(x) is None and dist.all_reduce(x, op=dist.ReduceOp.MAX) is None
    dist.broadcast(x, src=0)
    dist.reduce(x, dst=0)
    dist.barrier()
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    gathered = []
    dist.all_gather(gathered, x)
    assert gathered == [x]


@pytest.mark.parametrize("call, error, match", [
    (lambda x: paddle.distributed.all_reduce(x, op=7), ValueError, "all_reduce: argument 'op'"),
    (lambda x: paddle.distributed.broadcast(x, src=1), ValueError, "broadcast: argument 'src'"),
    (lambda x: paddle.distributed.all_reduce([1.0]), TypeError, "all_reduce: argument 'tensor'"),
    (lambda x: paddle.distributed.all_gather((), x), TypeError, "all_gather: argument 'tensor_list'"),
])
def test_collective_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call(paddle.ones([2]))


def test_rank_query_under_to_static_matches_eager():
    def f(x):
        return x * (paddle.distributed.get_rank() + paddle.distributed.get_world_size())

    x = paddle.rand([2])
    jit = jit_of(f)
    assert_same_result(jit(x), f(x))


# ------------------------------------------------------------------------------------------ paddle.incubate
def test_softmax_mask_fuse_matches_paddle():
    ref = REF["softmax_mask_fuse"]
    out = paddle.incubate.softmax_mask_fuse(paddle.to_tensor(f32(ref["x"])), paddle.to_tensor(f32(ref["mask"])))
    np.testing.assert_allclose(out.numpy(), ref["out"], rtol=1e-6, atol=1e-7)


def test_softmax_mask_fuse_refuses_a_per_head_mask():
    ref = REF["softmax_mask_fuse"]
    assert ref["bad_mask"] == "ValueError"
    x = paddle.to_tensor(f32(ref["x"]))
    with pytest.raises(ValueError, match="softmax_mask_fuse: argument 'mask'"):
        paddle.incubate.softmax_mask_fuse(x, x)


def test_softmax_mask_fuse_upper_triangle_is_a_causal_softmax():
    a = np.random.randn(2, 2, 4, 4)
    x = t(a, grad=True)
    out = paddle.incubate.softmax_mask_fuse_upper_triangle(x)
    causal = np.where(np.tril(np.ones((4, 4), bool)), a, -np.inf)
    want = np.exp(causal - causal.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    assert (out.numpy()[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0).all()
    w = np.random.rand(2, 2, 4, 4)
    (out * t(w)).sum().backward()

    def value():
        c = np.where(np.tril(np.ones((4, 4), bool)), a, -np.inf)
        e = np.exp(c - c.max(-1, keepdims=True))
        return float((e / e.sum(-1, keepdims=True) * w).sum())

    np.testing.assert_allclose(x.grad.numpy(), fd_grad(value, a), atol=1e-6)


@pytest.mark.parametrize("name", ["segment_sum", "segment_mean", "segment_max", "segment_min"])
def test_segment_ops_match_paddle(name):
    ref = REF["segment"]
    data = paddle.to_tensor(f32(ref["data"]), stop_gradient=False)
    out = getattr(paddle.incubate, name)(data, paddle.to_tensor(np.array(ref["ids"])))
    np.testing.assert_allclose(out.numpy(), ref[name]["out"], rtol=1e-6)
    (out * paddle.to_tensor(np.arange(out.size, dtype="float32").reshape(out.shape))).sum().backward()
    np.testing.assert_allclose(data.grad.numpy(), ref[name]["grad"], rtol=1e-6)


@pytest.mark.parametrize("ids, error, match", [
    (np.array([0, 1], "int64"), ValueError, "one id per row"),
    (np.array([1, 0, 0], "int64"), ValueError, "sorted"),
    (np.array([0.0, 0.0, 1.0], "float32"), TypeError, "int32 or int64"),
])
def test_segment_ops_bad_ids(ids, error, match):
    with pytest.raises(error, match=f"segment_sum: .*{match}"):
        paddle.incubate.segment_sum(paddle.ones([3, 2]), paddle.to_tensor(ids))


def test_segment_ops_in_static_mode_are_a_clear_error(static_mode):
    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        data = paddle.static.data("data", [3, 2], "float32")
        ids = paddle.static.data("ids", [3], "int64")
        with pytest.raises(TypeError, match="static Variable .* has no value at build time") as info:
            paddle.incubate.segment_max(data, ids)
    assert any("segment_max: the number of segments" in note for note in info.value.__notes__)


def test_segment_ops_under_to_static_break_the_graph_and_match_eager():
    def f(x, ids):
        return paddle.incubate.segment_sum(x * 2, ids) + 1

    jit = jit_of(f)
    for ids in ([0, 0, 1], [0, 1, 2], [0, 0, 1]):
        x, i = paddle.rand([3, 2]), paddle.to_tensor(ids)
        assert_same_result(jit(x, i), f(x, i))
    report = sot.explain(jit_of(f), x, i)
    assert report.fallbacks == [] and [b.code for b in report.breaks] == ["SOT-B002"]


def test_swiglu_and_fused_dropout_add_match_paddle():
    F = paddle.incubate.nn.functional
    y = f32(REF["swiglu"]["x"])
    np.testing.assert_allclose(F.swiglu(paddle.to_tensor(y)).numpy(), REF["swiglu"]["out1"], rtol=1e-6)
    np.testing.assert_allclose(F.swiglu(paddle.to_tensor(y), paddle.to_tensor(y[::-1].copy())).numpy(),
                               REF["swiglu"]["out2"], rtol=1e-6)
    out = F.fused_dropout_add(paddle.to_tensor(y), paddle.to_tensor(y), p=0.5, training=False)
    np.testing.assert_array_equal(out.numpy(), REF["fused_dropout_add"])
    with pytest.raises(ValueError, match="swiglu: the last dimension"):
        F.swiglu(paddle.ones([2, 3]))


def test_fused_matmul_bias_and_fused_linear_compute_matmul_plus_bias():
    # Paddle's CPU build has no kernel for these; the reference is their definition
    F = paddle.incubate.nn.functional
    x, w, b = np.random.rand(2, 3), np.random.rand(4, 3), np.random.rand(4)
    np.testing.assert_allclose(F.fused_matmul_bias(t(x), t(w), t(b), transpose_y=True).numpy(), x @ w.T + b)
    np.testing.assert_allclose(F.fused_linear(t(x), t(w.T)).numpy(), x @ w.T)
    np.testing.assert_allclose(F.fused_linear(t(x), t(w), t(b), transpose_weight=True).numpy(), x @ w.T + b)


IMPLEMENTED_INCUBATE = {"nn", "functional", "softmax_mask_fuse", "softmax_mask_fuse_upper_triangle", "segment_sum",
                        "segment_mean", "segment_max", "segment_min", "fused_matmul_bias", "fused_linear",
                        "fused_dropout_add", "swiglu"}
PLACEHOLDERS = [(path, name) for path in ("runtime.incubate", "runtime.incubate.nn", "runtime.incubate.nn.functional")
                for name in __import__(path, fromlist=["__all__"]).__all__ if name not in IMPLEMENTED_INCUBATE]


def test_every_incubate_name_is_implemented_or_a_placeholder():
    assert len(PLACEHOLDERS) == 27
    assert ("runtime.incubate.nn.functional", "fused_rotary_position_embedding") in PLACEHOLDERS


@pytest.mark.parametrize("path, name", PLACEHOLDERS)
def test_unsupported_incubate_apis_import_and_raise_naming_themselves(path, name):
    module = sys.modules[path]
    api = getattr(module, name)
    qualname = path.replace("runtime", "paddle", 1) + "." + name
    with pytest.raises(NotImplementedError, match=f"{qualname} is not supported by runtime"):
        api(paddle.ones([2]))


def test_static_accuracy_writes_correct_and_total(static_mode):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 3], "float32")
        y = paddle.static.data("y", [None, 1], "int64")
        correct = paddle.static.data("correct", [1], "int32")
        total = paddle.static.data("total", [1], "int32")
        acc = paddle.static.accuracy(x, y, k=2, correct=correct, total=total)
    zeros = np.zeros(1, "int32")
    got = paddle.static.Executor().run(main, feed={"x": PRED, "y": LABEL, "correct": zeros, "total": zeros},
                                       fetch_list=[acc, correct, total])
    ref = REF["accuracy"]["k2"]
    assert [float(got[0]), int(got[1][0]), int(got[2][0])] == [pytest.approx(ref["acc"]), ref["correct"], ref["total"]]
