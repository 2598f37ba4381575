"""Static mode builds Programs with the same public API as eager mode."""
import numpy as np
import pytest

import runtime as paddle
from runtime import static


def _linear_mse_example():
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[16, 16], name="x")
        label = static.data(shape=[16, 1], name="label")
        out = paddle.nn.Linear(in_features=16, out_features=1)(x)
        loss = paddle.nn.MSELoss()(out, label)
    return main, startup, x, label, out, loss


def test_mode_switch(static_mode):
    assert not paddle.in_dynamic_mode()
    paddle.disable_static()
    assert paddle.in_dynamic_mode()
    assert isinstance(paddle.ones([1]) + 1, paddle.Tensor)
    paddle.enable_static()


def test_linear_mse_example_structure(static_mode):
    main, startup, x, label, out, loss = _linear_mse_example()
    block = main.global_block()
    assert [op.type for op in block.ops] == ["linear", "subtract", "square", "mean"]
    for op in block.ops:
        for name in op.input_arg_names + op.output_arg_names:
            assert block.has_var(name)
    params = block.all_parameters()
    assert len(params) == 2 and all(p.persistable for p in params)
    w, b = params
    assert w.name.endswith(".w_0") and b.name.endswith(".b_0")
    assert not x.persistable and x.need_check_feed
    # startup holds only the initialisers of w and b, each ending in a write to the parameter
    writes = [op.outputs[0] for op in startup.global_block().ops if op.type == "assign"]
    assert writes == [w.name, b.name]
    assert out.shape == [16, 1] and loss.shape == [] and loss.dtype == paddle.float32


def test_output_meta_is_known_at_build_time_and_errors_name_op_and_line(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 4])
        y = paddle.matmul(x, paddle.ones([4, 3]))
        assert y.shape == [-1, 3]
        with pytest.raises(ValueError, match=r"matmul.*while building op 'matmul' at .*test_static_program.py"):
            paddle.matmul(x, paddle.ones([5, 3]))


def test_program_guard_restores_defaults_even_on_error(static_mode):
    before = static.default_main_program()
    main = static.Program()
    with pytest.raises(RuntimeError):
        with static.program_guard(main):
            assert static.default_main_program() is main
            raise RuntimeError("boom")
    assert static.default_main_program() is before
    with pytest.raises(TypeError, match="main_program"):
        with static.program_guard("not a program"):
            pass


def test_clone_keeps_hash_and_changes_change_it(static_mode):
    main, startup, x, label, out, loss = _linear_mse_example()
    h = main.structural_hash()
    clone = main.clone()
    assert clone.structural_hash() == h
    assert clone.global_block().ops[0] is not main.global_block().ops[0]
    with static.program_guard(clone):
        paddle.exp(clone.global_block().var(out.name))
    assert clone.structural_hash() != h
    assert main.structural_hash() == h


def test_static_variables_have_no_values(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2, 2])
        with pytest.raises(TypeError, match="no value at build time"):
            x.numpy()
        with pytest.raises(TypeError, match="no value at build time"):
            bool(x > 0)
        y = x
        y += 1  # records a new var, the original keeps its name
        assert y is not x and x.name == "x"


def test_shapes_of_known_size_and_pure_ops_of_them_have_values_at_build_time(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2, 3, 8, 6])
        size = paddle.shape(x)[2:] * 2
        assert size.tolist() == [16, 12] and size.numpy().dtype == np.int32 and bool(size[0] > 4)
        y = paddle.nn.functional.interpolate(x, size=size, mode="bilinear")  # reads the size as numbers
        assert y.shape == [2, 3, 16, 12]
        batch = static.data("batch", [-1, 3])
        with pytest.raises(TypeError, match="no value at build time"):
            paddle.shape(batch).tolist()  # a dim known only at run time
        with pytest.raises(TypeError, match="no value at build time"):
            (paddle.shape(x) + paddle.shape(batch)[0]).tolist()  # one input without a value
        with pytest.raises(TypeError, match="no value at build time"):
            paddle.randint(0, 5, [2]).tolist()  # random: never computed at build time
    xs = np.random.default_rng(0).standard_normal((2, 3, 8, 6)).astype("float32")
    (got, got_size) = static.Executor().run(main, feed={"x": xs}, fetch_list=[y, size])
    paddle.disable_static()
    want = paddle.nn.functional.interpolate(paddle.to_tensor(xs), size=[16, 12], mode="bilinear")
    np.testing.assert_array_equal(got, want.numpy())
    np.testing.assert_array_equal(got_size, [16, 12])  # the program computes what the build time knew


def test_a_known_value_is_forgotten_when_an_op_writes_its_variable(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [3])
        c = paddle.to_tensor(np.array([1.0, 2.0, 3.0], "float32")) * 1.0
        assert c.tolist() == [1.0, 2.0, 3.0]
        c.add_(x)  # an in-place method writes into c's own var: its value now depends on the feed
        with pytest.raises(TypeError, match="no value at build time"):
            c.tolist()


def test_linear_mse_example_forward_runs_and_matches_numpy(static_mode):
    main, startup, x, label, out, loss = _linear_mse_example()
    exe = static.Executor(paddle.CPUPlace())
    scope = static.Scope()
    exe.run(startup, scope=scope)
    xs, ys = np.random.default_rng(0).normal(size=(16, 16)).astype(np.float32), np.ones((16, 1), np.float32)
    (value,) = exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
    w = scope.find_var(main.global_block().all_parameters()[0].name).get_tensor()
    b = scope.find_var(main.global_block().all_parameters()[1].name).get_tensor()
    np.testing.assert_allclose(value, ((xs @ w + b - ys) ** 2).mean(), rtol=1e-5)


def test_variable_rank_and_bad_scalar_operand(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3, 4])
        assert x.dim() == x.ndimension() == x.ndim == 3
        with pytest.raises(TypeError, match="add: argument 'y' must be a Tensor or a number, got str"):
            paddle.add(x, "a")


@pytest.mark.parametrize("passes", [True, False])
def test_in_place_methods_on_static_variables_update_the_variable(static_mode, passes):
    # x.add_(y) as a statement: the op writes into x's own var (a new var would be lost)
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [4])
        c = paddle.full([4], 1.0)
        c.add_(x)
        c.exp_()
        out = c * 2.0
    flags = ("FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion", "FLAGS_enable_inplace")
    saved = paddle.get_flags(list(flags))
    paddle.set_flags({f: passes for f in flags})
    try:
        exe = static.Executor()
        for seed in range(2):
            xs = np.random.default_rng(seed).standard_normal(4).astype("float32")
            (got,) = exe.run(main, feed={"x": xs}, fetch_list=[out])
            np.testing.assert_allclose(got, np.exp(1.0 + xs) * 2.0, rtol=1e-6)
    finally:
        paddle.set_flags(saved)


def test_a_bad_static_in_place_update_raises_and_leaves_the_program_unchanged(static_mode):
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data("x", [3, 4])
        c = paddle.full([4], 1.0)
        before = str(main)
        with pytest.raises(ValueError, match=r"add_: the in-place result has shape \[3, 4\]"):
            c.add_(x)  # broadcasting may not grow an in-place target
        assert str(main) == before
        w = paddle.create_parameter([4], "float32")
        with pytest.raises(NotImplementedError, match="requires grad"):
            w.add_(c)
