"""The executor's scenario tests in PARALLEL mode: the scenario tests written against the
sequential executor, collected again here and run with FLAGS_executor_parallel="always", once
with CPU kernels on the host pool and once with every kernel on an emulated device stream
(memcpy copies included). The fixture fails a test that never went through the parallel runner,
so each one below really shows its scenario threaded (tests that only inspect a plan stay in
their own modules: a plan is the same in every mode). Tests that assert the plan of a host
program pin the host placement themselves (`host_placement`); the scheduler-mode variants are
the single-threaded reference and are skipped here. docs/static.md ("How it is tested") says
which file covers which mechanism of the executor."""
import threading

import numpy as np
import pytest

import runtime as paddle
from runtime import static
from runtime.executor.parallel import ParallelRunner
from test_executor import (test_adam_training_updates_in_place_and_both_run_modes_agree,  # noqa: F401
                           test_bad_feeds_and_fetches_name_the_var_and_change_nothing, test_build_once_run_many,
                           test_dynamic_batch_runs_on_the_same_core, test_fetch_order_duplicates_names_and_empty_program,
                           test_in_place_update_of_a_fed_var_never_writes_the_callers_array,
                           test_no_registry_or_scope_lookups_after_the_build,
                           test_trailing_updates_are_checked_before_the_first_one_runs,
                           test_updates_are_committed_only_after_a_successful_run)
from test_executor_gc import (test_chain_peak_is_two_activations_and_each_temp_dies_after_its_last_user,  # noqa: F401
                              test_counters_do_not_drift_and_a_failed_run_does_not_poison_the_next,
                              test_diamond_peak_and_ref_count, test_fetched_fed_and_persistable_vars_are_never_freed,
                              test_in_place_marks_of_the_passes_are_honoured, test_shape_only_input_does_not_extend_a_life,
                              test_skip_gc_vars_leave_the_plan)
from test_executor_plan import (test_random_ops_are_chained_and_seeded_runs_agree,  # noqa: F401
                                test_raw_chain_and_shrink_of_transitive_edge, test_war_edge_and_values_over_200_runs,
                                test_waw_with_a_reader_between)
from test_static_backward import (test_grad_accumulation_is_one_add_n_and_matches_finite_differences,  # noqa: F401
                                  test_ops_off_the_loss_path_and_stop_gradient_inputs_get_no_grad_ops)
from test_static_training import (test_b4_optimizer_ops_in_param_name_order_after_clip_ops,  # noqa: F401
                                  test_linear_mse_example_matches_numpy_adam_and_loss_falls,
                                  test_scenario_22_accumulators_are_persistable_and_reset_by_startup)
from test_static_passes import (static_mode,  # noqa: F401 - conftest's, and it restores the pass flags
                                test_executor_results_are_bit_identical_with_passes_on_and_off,
                                test_training_with_passes_equals_training_without)
from executor_helpers import host_placement, live_bytes, no_passes  # noqa: F401 - fixtures of the tests above


@pytest.fixture(autouse=True, params=["host", "device"])
def forced_parallel(request, monkeypatch):
    """Every run threaded, on the host pool or on emulated device streams; the test must have
    run the parallel runner at least once."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("scheduler") is True:
        pytest.skip("scheduler=True is the single-threaded reference mode")
    names = ["FLAGS_executor_parallel", "FLAGS_executor_stream_policy"]
    saved = paddle.get_flags(names)
    paddle.set_flags({"FLAGS_executor_parallel": "always",
                      "FLAGS_executor_stream_policy": "host" if request.param == "host" else "single"})
    runs = []
    real = ParallelRunner.run

    def counted(self, *args, **kwargs):
        runs.append(threading.get_ident())
        return real(self, *args, **kwargs)
    monkeypatch.setattr(ParallelRunner, "run", counted)
    try:
        yield
    finally:
        paddle.set_flags(saved)
    assert runs, "this test never ran the parallel runner"


def test_a_threaded_first_run_is_correct(static_mode):
    # a fresh core's first run is its build run; threaded, its fetches are right
    main, startup = static.Program(), static.Program()
    with static.program_guard(main, startup):
        x = static.data(shape=[4, 16], name="x")
        out = paddle.nn.Linear(16, 1)(x)
    exe, scope = static.Executor(), static.Scope()
    exe.run(startup, scope=scope)
    xs = np.random.default_rng(0).normal(size=(4, 16)).astype(np.float32)
    (o,) = exe.run(main, feed={"x": xs}, fetch_list=[out], scope=scope)
    w, b = (scope.find_var(p.name).get_tensor() for p in main.global_block().all_parameters())
    np.testing.assert_allclose(o, xs @ w + b, rtol=1e-5)
    assert exe.core_for(main, ["x"], [out], scope=scope).stats["runs"] == 1


def test_the_inplace_pass_lowers_the_peak_and_spares_feeds_and_fetches(static_mode, host_placement):
    # in-place safety threaded: with the in-place pass a chain of elementwise ops reuses dead
    # buffers (fewer live bytes at every op's end), results are bit-identical, the caller's
    # array is unchanged and no fetched array shares a buffer with another (host placement: on
    # device streams a release waits for its stream, so the bytes live at an op's end vary)
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = static.data("x", [None, 512], "float64")
        a = paddle.exp(x)
        b = paddle.tanh(a)
        c = paddle.sin(b)
        d = paddle.abs(c)
        e = paddle.sqrt(d)
    xs = np.random.default_rng(0).normal(size=(4, 512))
    keep = xs.copy()
    results = {}
    for inplace in (False, True):
        paddle.set_flags({"FLAGS_enable_fusion": False, "FLAGS_enable_inplace": inplace})
        core = static.Executor().core_for(main, ["x"], [b, e], scope=static.Scope())
        plan, peak = core.plan, [0]

        def hook(event, i, slots):
            if event == "end":
                peak[0] = max(peak[0], live_bytes(slots, plan, set(plan.feed_names)))
        out = core.run([xs], hook=hook)
        assert not np.shares_memory(out[0], out[1])
        results[inplace] = out, peak[0]
    for got, want in zip(results[True][0], results[False][0]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(results[True][0][1], np.sqrt(np.abs(np.sin(np.tanh(np.exp(keep))))))
    assert results[True][1] < results[False][1]
    np.testing.assert_array_equal(xs, keep)
