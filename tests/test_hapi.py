"""paddle.Model and paddle.callbacks against real Paddle 3.3.1 (tests/fixtures/paddle/hapi/hapi.json, from
record_hapi.py there): the same losses, metrics, predictions and parameters with the same weights and data;
the hooks in Paddle's order with Paddle's logs; the printed progress at verbose 0, 1 and 2 (timings
left out); the files save and the checkpoint callbacks write; EarlyStopping, LRScheduler and
ReduceLROnPlateau acting on the same epochs and steps. A network compiled with to_static trains to the
same losses as the eager one."""
import contextlib
import io
import os

import numpy as np
import pytest

import runtime as paddle
import sot
from fixtures.paddle.hapi.cases import (BATCH, arrays, dataset, hook_logger, load, mlp, model, params_logger, plain,
                                        stream, structure, untimed)

REF = load()


@pytest.fixture(autouse=True)
def _terminal_80_columns(monkeypatch):
    # the progress bar's width follows the terminal's, as Paddle's does; the recording used 80 columns
    monkeypatch.setenv("COLUMNS", "80")


def printed(fn):
    """fn()'s result and what it printed, without timings."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = fn()
    return result, untimed(buf.getvalue())


def close(ours, theirs, tol=2e-5):
    """Equal structure and equal values, floats to within float32 rounding of 3 Adam steps."""
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            close(o, t, tol)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), (ours, theirs)
        for k in theirs:
            close(ours[k], theirs[k], tol)
    elif isinstance(theirs, float) and not isinstance(ours, bool):
        assert ours == pytest.approx(theirs, abs=tol, rel=tol)
    else:
        assert ours == theirs


def same_structure(ours, theirs):
    """As `close`, except that a metric may be a Python float where Paddle gives np.float64 (a subclass
    of float: the same value and arithmetic)."""
    if "npscalar" in theirs and theirs["npscalar"] == "float64" and ours.get("py") == "float":
        close(ours["value"], theirs["value"])
    elif isinstance(theirs, dict) and len(theirs) == 1 and isinstance(next(iter(theirs.values())), list) \
            and next(iter(theirs)) in ("list", "tuple", "dict"):
        kind = next(iter(theirs))
        assert list(ours) == [kind], (ours, theirs)
        assert len(ours[kind]) == len(theirs[kind])
        for o, t in zip(ours[kind], theirs[kind]):
            if kind == "dict":
                assert o[0] == t[0]
                same_structure(o[1], t[1])
            else:
                same_structure(o, t)
    else:
        close(ours, theirs)


def train(m, events, **kwargs):
    options = dict(batch_size=BATCH, epochs=2, log_freq=1, verbose=2, shuffle=False)
    options.update(kwargs)
    return printed(lambda: m.fit(dataset(paddle, "train"), dataset(paddle, "eval"), **options,
                                 callbacks=[hook_logger(paddle, events)] + options.pop("callbacks", [])))


# ---------------------------------------------------------------- fit / evaluate / predict
def test_fit_evaluate_predict_call_paddles_hooks_with_paddles_logs_and_print_its_lines():
    m = model(paddle)
    events = []
    _, text = train(m, events)
    assert text == REF["fit_v2"]
    close(events, REF["fit_events"])
    events.clear()
    result, text = printed(lambda: m.evaluate(dataset(paddle, "eval"), batch_size=BATCH, log_freq=1, verbose=2,
                                              callbacks=[hook_logger(paddle, events)]))
    assert text == REF["evaluate_v2"]
    close(events, REF["evaluate_events"])
    same_structure(structure(result), REF["evaluate"])
    events.clear()
    result, text = printed(lambda: m.predict(dataset(paddle, "eval", labels=False), batch_size=BATCH, verbose=2,
                                             callbacks=[hook_logger(paddle, events)]))
    assert text == REF["predict_v2"]
    close(events, REF["predict_events"])
    same_structure(structure(result), REF["predict"])
    stacked = m.predict(dataset(paddle, "eval", labels=False), batch_size=BATCH, verbose=0, stack_outputs=True)
    same_structure(structure(stacked), REF["predict_stacked"])
    # the fields past the input specs (labels) are not fed to the network
    labelled = m.predict(dataset(paddle, "eval"), batch_size=BATCH, verbose=0, stack_outputs=True)
    np.testing.assert_array_equal(labelled[0], stacked[0])
    close({k: plain(v.numpy()) for k, v in m.network.state_dict().items()}, REF["params_after_fit"])


@pytest.mark.parametrize("verbose", [0, 1, 3])
def test_fit_evaluate_predict_print_paddles_progress_at_verbose(verbose):
    m = model(paddle)
    assert train(m, [], verbose=verbose)[1] == REF[f"fit_v{verbose}"]
    assert printed(lambda: m.evaluate(dataset(paddle, "eval"), batch_size=BATCH, log_freq=1,
                                      verbose=verbose))[1] == REF[f"evaluate_v{verbose}"]
    assert printed(lambda: m.predict(dataset(paddle, "eval", labels=False), batch_size=BATCH,
                                     verbose=verbose))[1] == REF[f"predict_v{verbose}"]


def test_fit_logs_every_log_freq_steps_and_the_last_step():
    m = model(paddle)
    assert printed(lambda: m.fit(dataset(paddle, "train"), batch_size=BATCH, epochs=1,
                                 shuffle=False))[1] == REF["fit_default_log_freq"]


def test_a_model_without_metrics_or_input_specs_splits_batches_by_forwards_arguments():
    m = model(paddle, metrics=False, spec=False)
    text = printed(lambda: m.fit(dataset(paddle, "train"), dataset(paddle, "eval"), batch_size=BATCH, epochs=1,
                                 log_freq=1, shuffle=False))[1]
    assert text == REF["fit_no_metrics_no_spec"]
    same_structure(structure(m.evaluate(dataset(paddle, "eval"), batch_size=BATCH, verbose=0)),
                   REF["evaluate_no_metrics"])


@pytest.mark.parametrize("name, kwargs", [("shuffle", dict(shuffle=True)),
                                          ("drop_last", dict(drop_last=True, shuffle=False)),
                                          ("eval_freq", dict(eval_freq=2, epochs=3, shuffle=False)),
                                          ("batch_sizes", dict(batch_size=[4, 3], shuffle=False))])
def test_fit_options_give_paddles_steps_and_losses(name, kwargs):
    # shuffling draws from a RandomState seeded by the epoch, as Paddle's DistributedBatchSampler does
    options = dict(batch_size=BATCH, epochs=2, verbose=0)
    options.update(kwargs)
    events = []
    model(paddle).fit(dataset(paddle, "train"), dataset(paddle, "eval"), callbacks=[hook_logger(paddle, events)],
                      **options)
    close([e[:-1] + [e[-1]["loss"] if e[-1] and e[0].endswith("batch_end") else None] for e in events],
          REF["fit_variants"][name])


def test_callbacks_get_paddles_params():
    seen = []
    m = model(paddle)
    m.fit(dataset(paddle, "train"), dataset(paddle, "eval"), batch_size=BATCH, epochs=1, verbose=0, shuffle=False,
          callbacks=[params_logger(paddle, seen)])
    m.evaluate(dataset(paddle, "eval"), batch_size=BATCH, verbose=0, callbacks=[params_logger(paddle, seen)])
    m.predict(dataset(paddle, "eval", labels=False), batch_size=BATCH, verbose=0,
              callbacks=[params_logger(paddle, seen)])
    assert seen == REF["callback_params"]


def test_fit_over_data_of_unknown_length_prints_steps_without_a_total():
    m = model(paddle)
    text = printed(lambda: m.fit(paddle.io.DataLoader(stream(paddle), batch_size=BATCH), epochs=1, log_freq=1,
                                 verbose=2))[1]
    assert text == REF["fit_unknown_length"]


def test_batch_methods_return_paddles_structures_and_values():
    a = arrays()
    m = model(paddle)
    same_structure(structure(m.train_batch([a["x_train"][:4]], [a["y_train"][:4]])), REF["train_batch"])
    same_structure(structure(m.eval_batch([a["x_eval"][:4]], [a["y_eval"][:4]])), REF["eval_batch"])
    same_structure(structure(m.predict_batch([a["x_eval"][:2]])), REF["predict_batch"])
    # one array (or Tensor) instead of a list of them
    m = model(paddle)
    same_structure(structure(m.train_batch(a["x_train"][:4], paddle.to_tensor(a["y_train"][:4]))), REF["train_batch"])
    m = model(paddle, metrics=False)
    same_structure(structure(m.train_batch([a["x_train"][:4]], [a["y_train"][:4]])), REF["train_batch_no_metrics"])
    same_structure(structure(m.eval_batch([a["x_eval"][:4]], [a["y_eval"][:4]])), REF["eval_batch_no_metrics"])


def _eager_losses(epochs, accumulate=1):
    """The per-step losses of the same training written as a plain eager loop (Model's oracle)."""
    a = arrays()
    net = mlp(paddle)
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=net.parameters())
    loss_fn = paddle.nn.CrossEntropyLoss()
    losses = []
    steps = -(-len(a["x_train"]) // BATCH)
    for _ in range(epochs):
        for step in range(steps):
            rows = slice(step * BATCH, (step + 1) * BATCH)
            loss = loss_fn(net(paddle.to_tensor(a["x_train"][rows])), paddle.to_tensor(a["y_train"][rows]))
            loss.backward()
            if (step + 1) % accumulate == 0 or step + 1 == steps:
                opt.step()
                opt.clear_grad()
            losses.append(float(loss))
    return losses


def _fit_losses(m, **kwargs):
    events = []
    m.fit(dataset(paddle, "train"), batch_size=BATCH, verbose=0, shuffle=False,
          callbacks=[hook_logger(paddle, events)], **kwargs)
    return [e[2]["loss"][0] for e in events if e[0] == "on_train_batch_end"]


@pytest.mark.parametrize("accumulate", [1, 2])
def test_fit_trains_as_a_plain_eager_loop(accumulate):
    losses = _fit_losses(model(paddle), epochs=2, accumulate_grad_batches=accumulate)
    assert losses == pytest.approx([round(x, 6) for x in _eager_losses(2, accumulate)], abs=1e-6)


@pytest.mark.parametrize("compile_network", [paddle.jit.to_static, sot.to_static])
def test_a_compiled_network_trains_evaluates_and_predicts_as_the_eager_one(compile_network):
    eager = model(paddle)
    compiled = model(paddle)
    compiled.network = compile_network(compiled.network)
    assert _fit_losses(compiled, epochs=2) == _fit_losses(eager, epochs=2)
    assert compiled.evaluate(dataset(paddle, "eval"), batch_size=BATCH, verbose=0) == \
        eager.evaluate(dataset(paddle, "eval"), batch_size=BATCH, verbose=0)
    [compiled_out], [eager_out] = (m.predict(dataset(paddle, "eval", labels=False), batch_size=BATCH, verbose=0,
                                             stack_outputs=True) for m in (compiled, eager))
    np.testing.assert_array_equal(compiled_out, eager_out)
    translator = compiled.network.forward.__func__.sot_translator
    assert translator.fallbacks == [] and translator.translations >= 1  # it ran compiled, not eagerly


def test_num_iters_stops_fit_and_evaluate_after_that_many_steps():
    m = model(paddle)
    events = []
    m.fit(dataset(paddle, "train"), batch_size=BATCH, verbose=0, shuffle=False, num_iters=4,
          callbacks=[hook_logger(paddle, events, with_logs=False)])
    assert [e[:2] for e in events if e[0] in ("on_epoch_begin", "on_train_batch_end")] == [
        ["on_epoch_begin", 0], ["on_train_batch_end", 0], ["on_train_batch_end", 1], ["on_train_batch_end", 2],
        ["on_epoch_begin", 1], ["on_train_batch_end", 0]]
    m = model(paddle)
    full = m.evaluate(dataset(paddle, "eval"), batch_size=2, verbose=0)
    first = m.evaluate(dataset(paddle, "eval"), batch_size=2, verbose=0, num_iters=1)
    assert first != full
    assert first == m.evaluate(paddle.io.Subset(dataset(paddle, "eval"), [0, 1]), batch_size=2, verbose=0)


# ---------------------------------------------------------------- save / load
def test_save_writes_paddles_files_and_load_restores_training(tmp_path):
    m = model(paddle)
    m.fit(dataset(paddle, "train"), batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
    m.save(str(tmp_path / "train" / "ckpt"))
    assert sorted(os.listdir(tmp_path / "train")) == REF["save_files"]["train"]
    saved = {k: v.numpy().copy() for k, v in m.network.state_dict().items()}
    continued = _fit_losses(m, epochs=1)
    # back to the checkpoint (the optimizer's state is keyed by parameter name, so the same network)
    m.load(str(tmp_path / "train" / "ckpt.pdparams"))
    for key, value in m.network.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), saved[key])
    assert _fit_losses(m, epochs=1) == continued  # Adam's moments came back too


def test_load_refuses_a_mismatched_checkpoint_unless_told_to_skip(tmp_path):
    m = model(paddle)
    m.save(str(tmp_path / "ckpt"))
    other = paddle.Model(paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 5)))
    with pytest.raises(ValueError, match=r"2.weight receives a shape \[8, 3\], but the expected shape is \[8, 5\]"):
        other.load(str(tmp_path / "ckpt"))
    with pytest.warns(UserWarning, match=r"Skip loading for 2\.(weight|bias)"):
        other.load(str(tmp_path / "ckpt"), skip_mismatch=True)
    np.testing.assert_array_equal(other.network[0].weight.numpy(), m.network[0].weight.numpy())
    with pytest.raises(ValueError, match="Failed to load parameters"):
        other.load(str(tmp_path / "missing"))


def test_save_for_inference_exports_what_jit_save_exports(tmp_path):
    m = model(paddle)
    m.save(str(tmp_path / "infer" / "net"), training=False)
    paddle.jit.save(mlp(paddle), str(tmp_path / "direct" / "net"),
                    input_spec=[paddle.static.InputSpec([None, 4], "float32", "x")])
    assert sorted(os.listdir(tmp_path / "infer")) == sorted(os.listdir(tmp_path / "direct"))
    x = paddle.to_tensor(arrays()["x_eval"])
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "infer" / "net"))(x).numpy(),
                               m.network(x).numpy(), rtol=1e-6)


def test_save_for_inference_without_inputs_uses_the_trained_shapes_and_says_so(tmp_path):
    m = model(paddle, spec=False)
    with pytest.raises(RuntimeError, match="Saving inference model needs 'inputs'"):
        m.save(str(tmp_path / "net"), training=False)
    m.fit(dataset(paddle, "train"), batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
    with pytest.warns(UserWarning, match=r"The input shape to be saved is \[\[4, 4\]\]"):
        m.save(str(tmp_path / "net"), training=False)
    x = paddle.to_tensor(arrays()["x_eval"][:4])
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "net"))(x).numpy(), m.network(x).numpy(), rtol=1e-6)


# ---------------------------------------------------------------- callbacks
def test_model_checkpoint_saves_every_save_freq_epochs_and_at_the_end(tmp_path):
    m = model(paddle)
    text = printed(lambda: m.fit(dataset(paddle, "train"), batch_size=BATCH, epochs=3, verbose=0, shuffle=False,
                                 save_dir=str(tmp_path / "ckpts"), save_freq=2))[1]
    assert sorted(os.listdir(tmp_path / "ckpts")) == REF["checkpoint_files"]
    assert text.replace(str(tmp_path), "TMP") == REF["checkpoint_printed"]


@pytest.mark.parametrize("name, kwargs", [("acc_max", dict(monitor="acc", mode="max", patience=1)),
                                          ("loss_baseline", dict(monitor="loss", mode="min", patience=2, baseline=0.0)),
                                          ("unknown_monitor", dict(monitor="nope", patience=0))])
def test_early_stopping_stops_and_saves_the_best_model_as_paddle(tmp_path, name, kwargs):
    m = model(paddle, lr=0.05)
    events = []
    save_dir = tmp_path / f"early_{name}"
    with contextlib.ExitStack() as stack:
        if name == "unknown_monitor":
            stack.enter_context(pytest.warns(UserWarning, match="Monitor of EarlyStopping should be loss or metric"))
        text = printed(lambda: m.fit(dataset(paddle, "train"), dataset(paddle, "eval"), batch_size=BATCH, epochs=6,
                                     verbose=0, shuffle=False, save_dir=str(save_dir),
                                     callbacks=[paddle.callbacks.EarlyStopping(**kwargs),
                                                hook_logger(paddle, events, with_logs=False)]))[1]
    ref = REF["early_stopping"][name]
    assert [e[1] for e in events if e[0] == "on_epoch_begin"] == ref["epochs"]
    assert text.replace(str(tmp_path), "TMP") == ref["printed"]
    assert sorted(os.listdir(save_dir)) == ref["files"]


def test_early_stopping_without_eval_data_warns():
    m = model(paddle)
    with pytest.warns(UserWarning, match="EarlyStopping needs validation data"):
        m.fit(dataset(paddle, "train"), batch_size=BATCH, verbose=0, callbacks=[paddle.callbacks.EarlyStopping()])


@pytest.mark.parametrize("name", ["default", "by_epoch"])
def test_lr_scheduler_callback_steps_the_schedule_by_step_or_by_epoch(name):
    cbks = [] if name == "default" else [paddle.callbacks.LRScheduler(by_step=False, by_epoch=True)]
    m = model(paddle, lr=paddle.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5))
    seen = []

    class LrLog(paddle.callbacks.Callback):
        def on_train_batch_begin(self, step, logs=None):
            seen.append(float(self.model._optimizer.get_lr()))

    m.fit(dataset(paddle, "train"), batch_size=BATCH, epochs=2, verbose=0, shuffle=False, callbacks=cbks + [LrLog()])
    assert seen == pytest.approx(REF["lr_scheduler"][name])


def test_lr_scheduler_callback_rejects_both_modes():
    with pytest.raises(ValueError) as err:
        paddle.callbacks.LRScheduler(by_step=True, by_epoch=True)
    assert str(err.value) == REF["lr_scheduler_both"]


def test_reduce_lr_on_plateau_cuts_a_float_learning_rate_as_paddle():
    m = model(paddle, lr=0.05)
    seen = []

    class EpochLr(paddle.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            seen.append(float(self.model._optimizer.get_lr()))

    text = printed(lambda: m.fit(dataset(paddle, "train"), dataset(paddle, "eval"), batch_size=BATCH, epochs=5,
                                 verbose=0, shuffle=False, callbacks=[paddle.callbacks.ReduceLROnPlateau(
                                     monitor="acc", patience=1, factor=0.5, verbose=1), EpochLr()]))[1]
    assert seen == pytest.approx(REF["reduce_lr"]["lrs"])
    assert text == REF["reduce_lr"]["printed"]


def test_reduce_lr_on_plateau_leaves_a_schedule_alone_and_says_so():
    m = model(paddle, lr=paddle.optimizer.lr.StepDecay(0.1, step_size=100))
    with pytest.warns(UserWarning, match="Expected learning_rate be float"):
        m.fit(dataset(paddle, "train"), dataset(paddle, "eval"), batch_size=BATCH, verbose=0,
              callbacks=[paddle.callbacks.ReduceLROnPlateau(patience=0)])
    assert m._optimizer.get_lr() == pytest.approx(0.1)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        paddle.callbacks.ReduceLROnPlateau(factor=1.0)


def test_callbacks_module_has_paddles_callbacks():
    names = sorted(n for n in dir(paddle.callbacks) if not n.startswith("_") and n[0].isupper())
    assert names == REF["callbacks_names"]
    for name in ("Model", "callbacks", "flops", "progressbar", "summary"):
        assert name in REF["hapi_names"] and hasattr(paddle.hapi, name)
    assert paddle.Model is paddle.hapi.Model and paddle.summary is paddle.hapi.summary


def test_tracking_callbacks_name_their_missing_package():
    with pytest.raises(ImportError, match="pip install wandb"):
        paddle.callbacks.WandbCallback(project="p")
    m = model(paddle)
    with pytest.raises(ImportError, match="pip install visualdl"):  # as Paddle: at the first write
        m.fit(dataset(paddle, "train"), batch_size=BATCH, verbose=0, callbacks=[paddle.callbacks.VisualDL("logs")])


def test_a_callback_stops_training_by_setting_stop_training():
    class StopAfterFirstEpoch(paddle.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.stop_training = True

    m = model(paddle)
    events = []
    m.fit(dataset(paddle, "train"), batch_size=BATCH, epochs=3, verbose=0,
          callbacks=[StopAfterFirstEpoch(), hook_logger(paddle, events, with_logs=False)])
    assert [e[1] for e in events if e[0] == "on_epoch_begin"] == [0]


# ---------------------------------------------------------------- misuse
def test_misuse_raises_clear_errors():
    net = mlp(paddle)
    with pytest.raises(RuntimeError, match="call `model.prepare\\(\\)` first"):
        paddle.Model(net).train_batch([arrays()["x_train"]], [arrays()["y_train"]])
    with pytest.raises(ValueError, match=r"Requires Input\[0\].name != None"):
        paddle.Model(net, paddle.static.InputSpec([None, 4], "float32"))
    with pytest.raises(TypeError, match="'loss' must be sub classes"):
        paddle.Model(net).prepare(loss=3)
    with pytest.raises(TypeError, match="is not sub class of Metric"):
        paddle.Model(net).prepare(metrics=[object()])
    with pytest.raises(NotImplementedError, match="amp_configs"):
        paddle.Model(net).prepare(amp_configs="O1")
    with pytest.raises(ValueError, match="train_data must be given"):
        model(paddle).fit()
    with pytest.raises(ValueError, match="batch_size length error"):
        model(paddle).fit(dataset(paddle, "train"), batch_size=[1, 2, 3])


def test_static_mode_is_refused():
    paddle.enable_static()
    try:
        with pytest.raises(NotImplementedError, match="static graph mode is not supported"):
            paddle.Model(mlp(paddle))
    finally:
        paddle.disable_static()
