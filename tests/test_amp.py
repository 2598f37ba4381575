"""paddle.amp against real Paddle 3.3.1 (CPU build), recorded in tests/fixtures/paddle/amp/amp_reference.json
by record_amp.py there.

On a CPU place Paddle's auto_cast, GradScaler and decorate check their arguments, warn and change
nothing: runtime must do the same (same warnings, same errors, results equal to the same code without
amp). Where a scaler is enabled (a GPU place: here the CuPy stand-in) its dynamic loss scaling must follow
Paddle's state machine step for step, recorded with inf/nan gradients injected.
"""
import contextlib
import io
import json
import pathlib
import warnings

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from runtime.amp.state import amp_state

REF = json.loads((pathlib.Path(__file__).parent / "fixtures/paddle/amp/amp_reference.json").read_text())
CPU = REF["cpu"]
# the steps whose loss the recorder multiplied by inf or nan (see record_amp.py)
INF_STEPS = {1: float("inf"), 2: float("nan"), 6: float("inf"), 7: float("inf"), 8: float("inf")}


@pytest.fixture(autouse=True)
def _amp_dtype_restored():
    """auto_cast leaves the amp dtype behind (as Paddle); each test starts from the process's initial one."""
    before = amp_state.amp_dtype
    amp_state.amp_dtype = "float32"
    yield
    amp_state.amp_dtype = before


def caught(fn):
    """(result or {"error": [type, message]}, [[category, text] of each warning]), as the recorder writes it."""
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001 - compared with what Paddle raised
            result = {"error": [type(e).__name__, str(e).strip("'") if isinstance(e, KeyError) else str(e)]}
    return result, [[w.category.__name__, str(w.message)] for w in ws]


def _normalised(recorded):
    result, ws = recorded
    if isinstance(result, dict) and result.get("error", [""])[0] == "KeyError":
        result = {"error": ["KeyError", result["error"][1].strip("'")]}
    return result, ws


def _inputs():
    rng = np.random.default_rng(0)
    return [paddle.to_tensor(rng.random(s).astype("float32")) for s in ([2, 3], [3, 4], [1, 2, 4, 4], [3, 2, 3, 3])]


def _forward(x, w, img, kernel):
    return [paddle.matmul(x, w), F.conv2d(img, kernel), F.softmax(x), x + x, F.relu(x)]


def forward_under_auto_cast(**kw):
    """The recorder's probe: output dtypes and is_autocast_enabled inside auto_cast(**kw); also checks the
    values equal those of the same ops outside it (auto_cast makes no effect on a CPU place)."""
    inputs = _inputs()
    with paddle.amp.auto_cast(**kw):
        outs = _forward(*inputs)
        enabled = paddle.amp.is_autocast_enabled()
    for got, want in zip(outs, _forward(*inputs)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    return [o.dtype.name for o in outs] + [enabled]


AUTO_CAST_CASES = {
    **{f"auto_cast/{level}/{dtype}": dict(level=level, dtype=dtype)
       for level in ["O0", "O1", "O2", "OD", "o1"] for dtype in ["float16", "bfloat16", "BFloat16"]},
    "auto_cast/disabled": dict(enable=False),
    "auto_cast/disabled_float32": dict(enable=False, dtype="float32"),
    "auto_cast/bad_level": dict(level="O3"),
    "auto_cast/bad_level_disabled": dict(enable=False, level="O3"),
    "auto_cast/float32": dict(dtype="float32"),
    "auto_cast/overlap": dict(custom_white_list={"matmul_v2"}, custom_black_list=["matmul_v2"]),
    "auto_cast/custom_lists": dict(custom_white_list={"softmax"}, custom_black_list=["matmul_v2"]),
}


@pytest.mark.parametrize("case", sorted(AUTO_CAST_CASES))
def test_auto_cast_on_the_cpu_warns_errs_and_computes_as_paddle(case):
    assert caught(lambda: forward_under_auto_cast(**AUTO_CAST_CASES[case])) == _normalised(CPU[case])


def test_auto_cast_accepts_a_runtime_dtype_and_works_as_a_decorator():
    @paddle.amp.auto_cast(dtype=paddle.float16)
    def forward(x, w):
        return paddle.matmul(x, w)

    x, w = _inputs()[:2]
    got, ws = caught(lambda: forward(x, w))
    assert ws == CPU["auto_cast/O1/float16"][1]
    np.testing.assert_array_equal(got.numpy(), x.numpy() @ w.numpy())


def test_auto_cast_checks_its_arguments_when_entered_as_paddle():
    cm = paddle.amp.auto_cast(level="O3")  # nothing is checked yet
    with pytest.raises(ValueError, match="level should be O0, OD, O1 or O2"):
        with cm:
            pass


def test_the_default_op_lists_are_paddles():
    assert {"white": paddle.amp.white_list(), "black": paddle.amp.black_list()} == {
        name: {dt: {lv: set(ops) for lv, ops in by_level.items()} for dt, by_level in lists.items()}
        for name, lists in REF["lists"].items()}


def test_the_op_lists_are_fresh_copies():
    paddle.amp.white_list()["float16"]["O1"].add("relu")
    assert "relu" not in paddle.amp.white_list()["float16"]["O1"]


@pytest.mark.parametrize("case", ["is_autocast_enabled", "is_float16_supported", "is_float16_supported/cpu",
                                  "is_bfloat16_supported/bad"])
def test_amp_queries_on_the_cpu_answer_as_paddle(case):
    """The answers, or the error type for a device that is no place (runtime words the message itself)."""
    name, _, device = case.partition("/")
    fn = getattr(paddle.amp, name)
    got, want = caught(lambda: fn(device) if device else fn())[0], CPU[case][0]
    assert (got["error"][0] == want["error"][0]) if isinstance(want, dict) else got is want


def test_bfloat16_is_never_supported_since_runtime_has_no_bfloat16():
    """A deviation: Paddle's CPU build answers True for the CPU."""
    assert CPU["is_bfloat16_supported/cpu"][0] is True
    assert paddle.amp.is_bfloat16_supported("cpu") is False
    assert paddle.amp.is_bfloat16_supported() is False


def scaler_attributes(**kw):
    s = paddle.amp.GradScaler(**kw)
    loss = paddle.to_tensor(3.0)
    return {"is_enable": s.is_enable(), "is_use_dynamic_loss_scaling": s.is_use_dynamic_loss_scaling(),
            "init_loss_scaling": s.get_init_loss_scaling(), "state_dict": s.state_dict(),
            "scale": s.scale(loss).numpy().tolist(), "scale_is_input": s.scale(loss) is loss}


@pytest.mark.parametrize("case,kw", [("GradScaler()", {}), ("GradScaler(enable=False)", {"enable": False}),
                                     ("GradScaler(init_loss_scaling=1024)", {"init_loss_scaling": 1024})])
def test_a_grad_scaler_on_the_cpu_is_disabled_with_paddles_warning(case, kw):
    assert caught(lambda: scaler_attributes(**kw)) == _normalised(CPU[case])


def disabled_scaler_training(step_kind):
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(0.1, parameters=lin.parameters())
    s = paddle.amp.GradScaler()
    out = []
    for factor in [1.0, float("inf"), 1.0]:
        loss = (lin(paddle.ones([3, 2])) * factor).sum()
        scaled = s.scale(loss)
        assert scaled is loss
        scaled.backward()
        if step_kind == "minimize":
            s.minimize(opt, scaled)
        else:
            s.unscale_(opt)
            s.step(opt)
            s.update()
        opt.clear_grad()
        out.append([None, bool(np.isfinite(lin.weight.numpy()).all())])
    return out


@pytest.mark.parametrize("step_kind", ["step", "minimize"])
def test_a_disabled_scaler_passes_an_inf_gradient_to_the_optimizer_as_paddle(step_kind):
    got, ws = caught(lambda: disabled_scaler_training(step_kind))
    want, want_ws = CPU[f"disabled_training/{step_kind}"]
    assert ws == want_ws and [finite for _, finite in got] == [finite for _, finite in want]


def decorated(level="O2", dtype="float16", with_opt=True, **kw):
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.Adam(0.1, parameters=lin.parameters())
    r = paddle.amp.decorate(models=lin, optimizers=opt if with_opt else None, level=level, dtype=dtype, **kw)
    same = [r[0] is lin, r[1] is opt] if with_opt else r is lin
    return {"tuple": isinstance(r, tuple), "same": same, "weight_dtype": lin.weight.dtype.name}


DECORATE_CASES = {
    **{f"decorate/{level}/{with_opt}": dict(level=level, with_opt=with_opt)
       for level in ["O1", "O2"] for with_opt in [True, False]},
    "decorate/O2/bfloat16": dict(level="O2", dtype="bfloat16"),
    "decorate/O2/master_weight": dict(level="O2", master_weight=True, save_dtype="float32"),
    "decorate/OD": dict(level="OD"), "decorate/O0": dict(level="O0"), "decorate/O3": dict(level="O3"),
    "decorate/float32": dict(level="O2", dtype="float32"),
}


@pytest.mark.parametrize("case", sorted(DECORATE_CASES))
def test_decorate_on_the_cpu_returns_its_arguments_as_paddle(case):
    assert caught(lambda: decorated(**DECORATE_CASES[case])) == _normalised(CPU[case])


# ------------------------------------------------------------------ an enabled scaler (a GPU place)
OPTIMIZERS = {"sgd": lambda ps: paddle.optimizer.SGD(0.1, parameters=ps),
              "adam": lambda ps: paddle.optimizer.Adam(0.1, parameters=ps),
              "momentum": lambda ps: paddle.optimizer.Momentum(0.1, momentum=0.9, parameters=ps)}


@pytest.fixture
def gpu(fake_gpu):
    paddle.set_device("gpu")
    return fake_gpu


def scaler_run(run, opt_name, api, dynamic=True, amp_dtype="float16"):
    """The recorder's 10 steps on runtime, from the recorded initial parameters and input."""
    # what the recorder's auto_cast(dtype=amp_dtype) left behind (runtime refuses bfloat16 on a GPU place)
    amp_state.amp_dtype = amp_dtype
    lin = paddle.nn.Linear(3, 2)
    lin.weight.set_value(paddle.to_tensor(np.array(run["init_weight"], np.float32)))
    lin.bias.set_value(paddle.to_tensor(np.array(run["init_bias"], np.float32)))
    opt = OPTIMIZERS[opt_name](lin.parameters())
    s = paddle.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=3, decr_every_n_nan_or_inf=2,
                              use_dynamic_loss_scaling=dynamic)
    x = paddle.to_tensor(np.array(run["x"], np.float32))
    steps = []
    for i in range(10):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            scaled = s.scale((lin(x) ** 2 * INF_STEPS.get(i, 1.0)).mean())
        scaled.backward()
        step = {"scaled_loss": scaled.numpy(), "warnings": [str(w.message) for w in ws]}
        before = [p.numpy() for p in lin.parameters()]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            if api == "minimize":
                s.minimize(opt, scaled)
            else:
                if api == "unscale":
                    s.unscale_(opt)
                    step["unscaled_grad"] = lin.weight.grad.numpy()
                s.step(opt)
                s.update()
        opt.clear_grad()
        state = s.state_dict()
        step.update(printed=printed.getvalue(), scale=state["scale"].tolist() if state else None,
                    incr_count=state.get("incr_count"), decr_count=state.get("decr_count"),
                    weight=lin.weight.numpy(), bias=lin.bias.numpy(), before=before)
        steps.append(step)
    return steps


RUNS = {"sgd/step": ("sgd", "step", {}), "adam/step": ("adam", "step", {}), "momentum/step": ("momentum", "step", {}),
        "sgd/minimize": ("sgd", "minimize", {}), "adam/unscale": ("adam", "unscale", {}),
        "sgd/static_scaling": ("sgd", "step", {"dynamic": False}),
        "sgd/bfloat16": ("sgd", "step", {"amp_dtype": "bfloat16"})}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_dynamic_loss_scaling_follows_paddles_state_machine(gpu, name):
    """Scale, step counts, skipped steps, printed decreases and warnings step for step; the parameters
    as Paddle's (its Adam rounds differently in the last bits; exactness is the next test's) and, on a skipped step,
    exactly unchanged."""
    run = REF["scaler_runs"][name]
    opt_name, api, kw = RUNS[name]
    for i, (got, want) in enumerate(zip(scaler_run(run, opt_name, api, **kw), run["steps"])):
        where = f"{name} step {i}"
        assert (got["scale"], got["incr_count"], got["decr_count"]) == (
            want["scale"], want["incr_count"], want["decr_count"]), where
        assert (got["printed"], got["warnings"]) == (want["printed"], want["warnings"]), where
        np.testing.assert_allclose(got["scaled_loss"], np.array(want["scaled_loss"], np.float32), rtol=1e-4,
                                   err_msg=where)
        np.testing.assert_allclose(got["weight"], np.array(want["weight"], np.float32), rtol=1e-4, atol=1e-5,
                                   err_msg=where)
        np.testing.assert_allclose(got["bias"], np.array(want["bias"], np.float32), rtol=1e-4, atol=1e-5,
                                   err_msg=where)
        if i in INF_STEPS and want["scale"] is not None:  # an enabled scaler skips the step
            for before, after in zip(got["before"], [got["weight"], got["bias"]]):
                np.testing.assert_array_equal(after, before, err_msg=where)
        if "unscaled_grad" in want and i not in INF_STEPS:
            np.testing.assert_allclose(got["unscaled_grad"], np.array(want["unscaled_grad"], np.float32),
                                       rtol=1e-4, atol=1e-5, err_msg=where)


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_scaled_training_equals_unscaled_training_without_the_inf_steps(gpu, opt_name):
    """Power-of-two scales make scaling and unscaling exact: the parameters equal, bit for bit, those of
    plain training that leaves out the steps the scaler skipped."""
    run = REF["scaler_runs"][f"{opt_name}/step"]
    got = scaler_run(run, opt_name, "step")
    lin = paddle.nn.Linear(3, 2)
    lin.weight.set_value(paddle.to_tensor(np.array(run["init_weight"], np.float32)))
    lin.bias.set_value(paddle.to_tensor(np.array(run["init_bias"], np.float32)))
    opt = OPTIMIZERS[opt_name](lin.parameters())
    x = paddle.to_tensor(np.array(run["x"], np.float32))
    for i, step in enumerate(got):
        if i not in INF_STEPS:
            (lin(x) ** 2).mean().backward()
            opt.step()
            opt.clear_grad()
        np.testing.assert_array_equal(step["weight"], lin.weight.numpy(), err_msg=f"step {i}")
        np.testing.assert_array_equal(step["bias"], lin.bias.numpy(), err_msg=f"step {i}")


def test_unscale_multiplies_by_the_float32_reciprocal_of_the_scale(gpu):
    amp_state.amp_dtype = "float16"
    p = paddle.create_parameter([3], "float32")
    opt = paddle.optimizer.SGD(0.1, parameters=[p])
    s = paddle.amp.GradScaler(init_loss_scaling=3.0)
    g = np.array([1.0, 7.0, -5.5], np.float32)
    (s.scale((p * paddle.to_tensor(g)).sum())).backward()
    s.unscale_(opt)
    np.testing.assert_array_equal(p.grad.numpy(), (g * np.float32(3.0)) * (np.float32(1) / np.float32(3.0)))


def test_a_float16_gradient_is_unscaled_in_float32_and_stays_float16(gpu):
    amp_state.amp_dtype = "float16"
    p = paddle.create_parameter([2], "float16")
    opt = paddle.optimizer.SGD(0.1, parameters=[p])
    s = paddle.amp.GradScaler(init_loss_scaling=1024.0)
    g = np.array([0.5, -3.0], np.float16)
    p.grad = paddle.to_tensor(g)
    s.unscale_(opt)
    assert p.grad.dtype == paddle.float16
    np.testing.assert_array_equal(p.grad.numpy(), (g.astype(np.float32) * np.float32(1 / 1024)).astype(np.float16))


def test_a_step_reads_the_device_once_for_all_gradients(gpu):
    """The inf/nan check of every gradient is combined on the device: one host read per step, whatever
    the number of parameters (the optimizer step itself reads none)."""
    amp_state.amp_dtype = "float16"
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.Linear(4, 2))
    opt = paddle.optimizer.Adam(0.1, parameters=net.parameters())
    s = paddle.amp.GradScaler()
    x = paddle.ones([2, 3])
    s.scale(net(x).sum()).backward()
    gpu.trace.clear()
    opt.step()
    plain = sum(1 for e in gpu.trace if e[0] == "sync")
    gpu.trace.clear()
    s.step(opt)
    assert sum(1 for e in gpu.trace if e[0] == "sync") == plain + 1


@pytest.mark.parametrize("calls", [["unscale_", "unscale_"], ["step", "unscale_"], ["step", "step"]])
def test_misused_steps_raise_paddles_errors(gpu, calls):
    amp_state.amp_dtype = "float16"
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(0.1, parameters=lin.parameters())
    s = paddle.amp.GradScaler()
    s.scale(lin(paddle.ones([1, 2])).sum()).backward()

    def run():
        for c in calls:
            getattr(s, c)(opt)

    assert caught(run)[0] == REF["scaler_misuse"]["+".join(calls)]


def test_a_state_dict_round_trips_as_paddle(gpu):
    want = REF["scaler_load_state"]
    s = paddle.amp.GradScaler(init_loss_scaling=8.0)
    assert caught(lambda: s.load_state_dict({}))[0] == want["empty"]
    s.load_state_dict({**want["state"], "scale": np.array(want["state"]["scale"], np.float32)})
    state = s.state_dict()
    assert {**state, "scale": state["scale"].tolist()} == want["state"]
    assert float(s.get_init_loss_scaling()) == want["init_loss_scaling"]


def test_on_a_gpu_place_auto_cast_warns_that_it_casts_nothing(gpu):
    x, w = _inputs()[:2]
    with pytest.warns(UserWarning, match="no mixed-precision kernels"):
        with paddle.amp.auto_cast():
            y = paddle.matmul(x, w)
    assert y.dtype == paddle.float32
    np.testing.assert_array_equal(y.numpy(), x.numpy() @ w.numpy())


@pytest.mark.parametrize("call", [lambda: paddle.amp.auto_cast(dtype="bfloat16").__enter__(),
                                  lambda: paddle.amp.decorate(paddle.nn.Linear(2, 2), level="O2", dtype="bfloat16")])
def test_on_a_gpu_place_bfloat16_is_refused_by_name(gpu, call):
    with pytest.raises(ValueError, match="dtype='bfloat16' is not supported"):
        call()
