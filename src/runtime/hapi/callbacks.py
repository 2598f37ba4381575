"""`paddle.callbacks`: the hooks `paddle.Model.fit/evaluate/predict` call, and Paddle's callbacks.

`config_callbacks` builds the list a run uses as Paddle does: a ProgBarLogger first (unless verbose=0
or one is given), the user's callbacks, then a ModelCheckpoint and an LRScheduler unless given. Each
hook gets the Model's logs dict: 'loss' (a list, one float per loss), each metric's running value,
'step' and 'batch_size'; the dict is shared by every run of one Model, so a hook sees the values of
the previous run until the first batch of its own (Paddle's behaviour)."""
from __future__ import annotations

import numbers
import os
import time
import warnings
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from ..distributed import ParallelEnv
from ..optimizer.lr import LRScheduler as _Schedule
from ..utils import try_import
from .progressbar import ProgressBar

if TYPE_CHECKING:
    from .model import Model

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "VisualDL", "LRScheduler", "EarlyStopping",
           "ReduceLROnPlateau", "WandbCallback"]

_MODES = ("train", "eval", "predict")


def _is_rank0() -> bool:
    return ParallelEnv().local_rank == 0


def config_callbacks(callbacks: Sequence[Callback] | Callback | None = None, model: Model | None = None,
                     batch_size: int | None = None, epochs: int | None = None, steps: int | None = None,
                     log_freq: int = 2, verbose: int = 2, save_freq: int = 1, save_dir: str | None = None,
                     metrics: list[str] | None = None, mode: str = "train") -> CallbackList:
    """The callbacks of one run, in Paddle's order, bound to `model` and given the run's params."""
    cbks = list(callbacks if isinstance(callbacks, (list, tuple)) else [callbacks] if callbacks else [])
    if verbose and not any(isinstance(k, ProgBarLogger) for k in cbks):
        cbks = [ProgBarLogger(log_freq, verbose=verbose), *cbks]
    if not any(isinstance(k, ModelCheckpoint) for k in cbks):
        cbks = [*cbks, ModelCheckpoint(save_freq, save_dir)]
    for k in cbks:
        if isinstance(k, EarlyStopping):
            k.save_dir = save_dir
    if not any(isinstance(k, LRScheduler) for k in cbks):
        cbks = [*cbks, LRScheduler()]
    cbk_list = CallbackList(cbks)
    cbk_list.set_model(model)
    cbk_list.set_params({"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
                         "metrics": (metrics or []) if mode != "test" else []})
    return cbk_list


class CallbackList:
    """Calls one hook on every callback, in order."""

    def __init__(self, callbacks: Sequence[Callback]):
        self.callbacks = list(callbacks)
        self.params: dict = {}
        self.model: Model | None = None

    def append(self, callback: Callback) -> None:
        self.callbacks.append(callback)

    def __iter__(self) -> Iterator[Callback]:
        return iter(self.callbacks)

    def set_params(self, params: dict) -> None:
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model: Model | None) -> None:
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, name: str, *args: Any) -> None:
        for c in self.callbacks:
            getattr(c, name)(*args)

    @staticmethod
    def _check_mode(mode: str) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode should be train, eval or predict, got {mode!r}")

    def on_begin(self, mode: str, logs: dict | None = None) -> None:
        self._check_mode(mode)
        self._call(f"on_{mode}_begin", logs)

    def on_end(self, mode: str, logs: dict | None = None) -> None:
        self._check_mode(mode)
        self._call(f"on_{mode}_end", logs)

    def on_epoch_begin(self, epoch: int | None = None, logs: dict | None = None) -> None:
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch: int | None = None, logs: dict | None = None) -> None:
        self._call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, mode: str, step: int | None = None, logs: dict | None = None) -> None:
        self._check_mode(mode)
        self._call(f"on_{mode}_batch_begin", step, logs)

    def on_batch_end(self, mode: str, step: int | None = None, logs: dict | None = None) -> None:
        self._check_mode(mode)
        self._call(f"on_{mode}_batch_end", step, logs)


class Callback:
    """Base of the callbacks: every hook does nothing. A callback stops training by setting
    `self.model.stop_training = True`. `params` holds batch_size, epochs, steps, verbose, metrics."""

    def __init__(self) -> None:
        self.model: Model | None = None
        self.params: dict = {}

    def set_params(self, params: dict) -> None:
        self.params = params

    def set_model(self, model: Model | None) -> None:
        self.model = model

    def on_train_begin(self, logs: dict | None = None) -> None:
        """Before the first epoch of fit."""

    def on_train_end(self, logs: dict | None = None) -> None:
        """After the last epoch of fit (logs: the last run's logs)."""

    def on_eval_begin(self, logs: dict | None = None) -> None:
        """Before evaluating (logs: 'steps' and 'metrics' names)."""

    def on_eval_end(self, logs: dict | None = None) -> None:
        """After evaluating (logs: 'loss', metrics and 'batch_size' of the last batch)."""

    def on_predict_begin(self, logs: dict | None = None) -> None:
        """Before predicting (logs: 'steps')."""

    def on_predict_end(self, logs: dict | None = None) -> None:
        """After predicting."""

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        """At the start of each training epoch (logs: None)."""

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        """At the end of each training epoch, before its evaluation."""

    def on_train_batch_begin(self, step: int, logs: dict | None = None) -> None:
        """Before each training step."""

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        """After each training step (logs: this step's loss, running metrics, batch_size)."""

    def on_eval_batch_begin(self, step: int, logs: dict | None = None) -> None:
        """Before each evaluation step."""

    def on_eval_batch_end(self, step: int, logs: dict | None = None) -> None:
        """After each evaluation step."""

    def on_predict_batch_begin(self, step: int, logs: dict | None = None) -> None:
        """Before each prediction step."""

    def on_predict_batch_end(self, step: int, logs: dict | None = None) -> None:
        """After each prediction step."""


class _Progress:
    """One mode's progress bar, step count, sample count and metric names."""

    def __init__(self, steps: int | None, metrics: list[str], verbose: int):
        self.steps = steps
        self.metrics = metrics
        self.step = 0
        self.samples = 0
        self.bar = ProgressBar(num=steps, verbose=verbose)
        self.timer = {"data_time": 0.0, "batch_time": 0.0, "count": 0, "samples": 0,
                      "batch_start_time": time.time(), "batch_data_end_time": 0.0}

    def batch_begin(self) -> None:
        now = time.time()
        self.timer["batch_data_end_time"] = now
        self.timer["data_time"] += now - self.timer["batch_start_time"]

    def batch_end(self, logs: dict) -> None:
        self.step += 1
        self.samples += logs.get("batch_size", 1)
        self.timer["batch_time"] += time.time() - self.timer["batch_data_end_time"]
        self.timer["count"] += 1
        self.timer["samples"] += logs.get("batch_size", 1)

    def show(self, logs: dict, verbose: int) -> None:
        values: list[tuple[str, Any]] = [(k, logs[k]) for k in self.metrics if k in logs]
        if verbose == 3:  # Paddle's timing columns, reset at each print
            t = self.timer
            count = t["count"] or 1.0
            values += [("avg_reader_cost", f"{t['data_time'] / count:.5f} sec"),
                       ("avg_batch_cost", f"{t['batch_time'] / count:.5f} sec"),
                       ("ips", f"{(t['samples'] or 1.0) / (t['data_time'] + t['batch_time']):.5f} samples/sec")]
            t.update(count=0, samples=0, data_time=0.0, batch_time=0.0)
        self.bar.update(self.step, values)


class ProgBarLogger(Callback):
    """Prints progress: 'Epoch i/n', a step line every `log_freq` steps and at the end of an epoch,
    'Eval begin...'/'Eval samples: N' and 'Predict begin...'/'Predict samples: N'. verbose: 0 silent,
    1 progress bar, 2 one line per log, 3 with timings."""

    def __init__(self, log_freq: int = 1, verbose: int = 2):
        super().__init__()
        self.epochs: int | None = None
        self.steps: int | None = None
        self.verbose = verbose
        self.log_freq = log_freq
        self._runs: dict[str, _Progress] = {}

    def _is_print(self) -> bool:
        return bool(self.verbose) and _is_rank0()

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.epochs = self.params["epochs"]
        self.train_metrics = self.params["metrics"]
        if self._is_print():
            print("The loss value printed in the log is the current step, and the metric is the average value "
                  "of previous steps.")

    def on_epoch_begin(self, epoch: int | None = None, logs: dict | None = None) -> None:
        self.steps = self.params["steps"]
        self.epoch = epoch
        if self.epochs and self._is_print():
            print(f"Epoch {epoch + 1}/{self.epochs}")
        self._runs["train"] = _Progress(self.steps, self.train_metrics, self.verbose)

    def _batch_end(self, mode: str, logs: dict | None) -> None:
        logs = logs or {}
        run = self._runs[mode]
        run.batch_end(logs)
        # the last step is shown by the end hook, once
        if self._is_print() and run.step % self.log_freq == 0 and (run.steps is None or run.step < run.steps):
            run.show(logs, self.verbose)
        run.timer["batch_start_time"] = time.time()

    def on_train_batch_begin(self, step: int, logs: dict | None = None) -> None:
        self._runs["train"].batch_begin()

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        self._batch_end("train", logs)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self._is_print() and self.steps is not None:
            self._runs["train"].show(logs or {}, self.verbose)

    def on_eval_begin(self, logs: dict | None = None) -> None:
        logs = logs or {}
        self._runs["eval"] = _Progress(logs.get("steps"), logs.get("metrics", []), self.verbose)
        if self._is_print():
            print("Eval begin...")

    def on_eval_batch_begin(self, step: int, logs: dict | None = None) -> None:
        self._runs["eval"].batch_begin()

    def on_eval_batch_end(self, step: int, logs: dict | None = None) -> None:
        self._batch_end("eval", logs)

    def on_eval_end(self, logs: dict | None = None) -> None:
        run = self._runs["eval"]
        if self._is_print() and run.steps is not None:
            run.show(logs or {}, self.verbose)
            print(f"Eval samples: {run.samples}")

    def on_predict_begin(self, logs: dict | None = None) -> None:
        logs = logs or {}
        self._runs["predict"] = _Progress(logs.get("steps"), logs.get("metrics", []), self.verbose)
        if self._is_print():
            print("Predict begin...")

    def on_predict_batch_begin(self, step: int, logs: dict | None = None) -> None:
        self._runs["predict"].batch_begin()

    def on_predict_batch_end(self, step: int, logs: dict | None = None) -> None:
        self._batch_end("predict", logs)

    def on_predict_end(self, logs: dict | None = None) -> None:
        run = self._runs["predict"]
        if self._is_print():
            if run.step % self.log_freq != 0 or self.verbose == 1:
                run.show(logs or {}, self.verbose)
            print(f"Predict samples: {run.samples}")


class ModelCheckpoint(Callback):
    """Saves the model to `save_dir/<epoch>` every `save_freq` epochs and to `save_dir/final` at the
    end of training; does nothing without `save_dir`."""

    def __init__(self, save_freq: int = 1, save_dir: str | None = None):
        super().__init__()
        self.save_freq = save_freq
        self.save_dir = save_dir

    def on_epoch_begin(self, epoch: int | None = None, logs: dict | None = None) -> None:
        self.epoch = epoch

    def _is_save(self) -> bool:
        return bool(self.model and self.save_dir and _is_rank0())

    def _save(self, name: str) -> None:
        path = f"{self.save_dir}/{name}"
        print(f"save checkpoint at {os.path.abspath(path)}")
        self.model.save(path)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self._is_save() and self.epoch % self.save_freq == 0:
            self._save(str(epoch))

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._is_save():
            self._save("final")


class LRScheduler(Callback):
    """Steps the optimizer's learning-rate scheduler after every training step (`by_step`, the
    default) or after every epoch (`by_epoch`)."""

    def __init__(self, by_step: bool = True, by_epoch: bool = False):
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("by_step option is mutually exclusive with by_epoch")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def _step(self) -> None:
        optimizer = getattr(self.model, "_optimizer", None)
        if optimizer and isinstance(getattr(optimizer, "_learning_rate", None), _Schedule):
            optimizer._learning_rate.step()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.by_epoch:
            self._step()

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        if self.by_step:
            self._step()


def _scalar(value: Any) -> float | None:
    """A logged value as one number (the first of a list), None if it is not a number."""
    if isinstance(value, (list, tuple)):
        return value[0]
    return value if isinstance(value, numbers.Number) else None


def _monitored(logs: dict | None, monitor: str, who: str) -> float | None:
    """The monitored value in `logs` (the first of a list); None, with a warning if it is missing."""
    if logs is None or monitor not in logs:
        warnings.warn(f"Monitor of {who} should be loss or metric name.")
        return None
    return _scalar(logs[monitor])


def _checked_mode(mode: str, what: str) -> str:
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{what} mode {mode} is unknown, fallback to auto mode.")
        return "auto"
    return mode


class EarlyStopping(Callback):
    """Stops training when the monitored eval value has not improved by `min_delta` for `patience`
    evaluations; with a save_dir (fit's) it saves the best model to `save_dir/best_model`. mode 'auto'
    maximises a monitor whose name holds 'acc' and minimises any other."""

    def __init__(self, monitor: str = "loss", mode: str = "auto", patience: int = 0, verbose: int = 1,
                 min_delta: float = 0, baseline: float | None = None, save_best_model: bool = True):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.wait_epoch = 0
        self.best_weights = None
        self.stopped_epoch = 0
        self.save_best_model = save_best_model
        self.save_dir: str | None = None  # set by config_callbacks from fit's save_dir
        mode = _checked_mode(mode, "EarlyStopping")
        maximise = mode == "max" or (mode == "auto" and "acc" in self.monitor)
        self.monitor_op = np.greater if maximise else np.less
        self.min_delta = abs(min_delta) if maximise else -abs(min_delta)

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.wait_epoch = 0
        if self.baseline is not None:
            self.best_value = self.baseline
        else:
            self.best_value = np.inf if self.monitor_op == np.less else -np.inf
            self.best_weights = None

    def on_eval_end(self, logs: dict | None = None) -> None:
        current = _monitored(logs, self.monitor, "EarlyStopping")
        if current is None:
            return
        best_path = os.path.join(self.save_dir, "best_model") if self.save_dir is not None else None
        if self.monitor_op(current - self.min_delta, self.best_value):
            self.best_value = current
            self.wait_epoch = 0
            if self.save_best_model and best_path is not None:
                self.model.save(best_path)
        else:
            self.wait_epoch += 1
        if self.wait_epoch >= self.patience:
            self.model.stop_training = True
            if self.verbose > 0:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.")
                if self.save_best_model and best_path is not None:
                    print(f"Best checkpoint has been saved at {os.path.abspath(best_path)}")
        self.stopped_epoch += 1


class ReduceLROnPlateau(Callback):
    """Multiplies a float learning rate by `factor` (not below `min_lr`) when the monitored eval value
    has not improved by `min_delta` for `patience` evaluations, then waits `cooldown` evaluations."""

    def __init__(self, monitor: str = "loss", factor: float = 0.1, patience: int = 10, verbose: int = 1,
                 mode: str = "auto", min_delta: float = 1e-4, cooldown: int = 0, min_lr: float = 0):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor = monitor
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.mode = mode
        self.epoch = 0
        self._reset()

    def _reset(self) -> None:
        self.mode = _checked_mode(self.mode, "Learning rate reduction")
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._reset()

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_eval_end(self, logs: dict | None = None) -> None:
        if logs is None or self.monitor not in logs:
            warnings.warn("Monitor of ReduceLROnPlateau should be loss or metric name.")
            return
        lr = getattr(getattr(self.model, "_optimizer", None), "_learning_rate", None)
        if not isinstance(lr, float):
            warnings.warn(f"Expected learning_rate be float, bug got {type(lr)}.")
            return
        current = _monitored(logs, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                self._reduce()
        self.epoch += 1

    def _reduce(self) -> None:
        optimizer = self.model._optimizer
        old_lr = optimizer.get_lr()
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            optimizer.set_lr(new_lr)
            if self.verbose > 0 and _is_rank0():
                print(f"\nEpoch {self.epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
            self.cooldown_counter = self.cooldown
            self.wait = 0


class _MetricWriter(Callback):
    """Shared by the callbacks that send train/eval metrics to a tracking package: the training step
    count, the eval metric names, and the values to write (tag 'train/<name>' per step, 'eval/<name>'
    per epoch)."""

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.epochs = self.params["epochs"]
        self.train_metrics = self.params["metrics"]
        self._is_fit = True
        self.train_step = 0

    def on_epoch_begin(self, epoch: int | None = None, logs: dict | None = None) -> None:
        self.steps = self.params["steps"]
        self.epoch = epoch

    def on_eval_begin(self, logs: dict | None = None) -> None:
        logs = logs or {}
        self.eval_steps = logs.get("steps")
        self.eval_metrics = logs.get("metrics", [])
        self.eval_step = 0
        self.evaled_samples = 0

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        self.train_step += 1
        if _is_rank0():
            self._updates(logs or {}, "train")

    def _values(self, logs: dict, mode: str) -> tuple[int, dict[str, float]]:
        step = self.train_step if mode == "train" else self.epoch
        values = {}
        for k in getattr(self, f"{mode}_metrics"):
            value = _scalar(logs[k]) if k in logs else None
            if value is not None:
                values[f"{mode}/{k}"] = value
        return step, values

    def _updates(self, logs: dict, mode: str) -> None:
        raise NotImplementedError


class VisualDL(_MetricWriter):
    """Writes the train and eval metrics to VisualDL logs in `log_dir` (needs the `visualdl` package)."""

    def __init__(self, log_dir: str):
        super().__init__()
        self.log_dir = log_dir
        self.epochs = None
        self.steps = None
        self.epoch = 0

    def _updates(self, logs: dict, mode: str) -> None:
        if not _is_rank0():
            return
        if not hasattr(self, "writer"):
            self.writer = try_import("visualdl").LogWriter(self.log_dir)
        step, values = self._values(logs, mode)
        for tag, value in values.items():
            self.writer.add_scalar(tag=tag, step=step, value=value)

    def on_train_end(self, logs: dict | None = None) -> None:
        if hasattr(self, "writer"):
            self.writer.close()
            delattr(self, "writer")

    def on_eval_end(self, logs: dict | None = None) -> None:
        if _is_rank0():
            self._updates(logs or {}, "eval")
            if not hasattr(self, "_is_fit") and hasattr(self, "writer"):
                self.writer.close()
                delattr(self, "writer")


class WandbCallback(_MetricWriter):
    """Logs the train and eval metrics to a Weights & Biases run (needs the `wandb` package; the
    ImportError is raised when the callback is created)."""

    def __init__(self, project: str | None = None, entity: str | None = None, name: str | None = None,
                 dir: str | None = None, mode: str | None = None, job_type: str | None = None,  # noqa: A002
                 **kwargs: Any):
        super().__init__()
        self.wandb = try_import("wandb", "You want to use `wandb` which is not installed yet install it with "
                                         "`pip install wandb`")
        self.wandb_args = {"project": project, "name": name, "entity": entity, "dir": dir, "mode": mode,
                           "job_type": job_type, **kwargs}
        self._run = None
        _ = self.run

    @property
    def run(self) -> Any:
        """The wandb run (one already in progress is reused, with a warning)."""
        if _is_rank0() and self._run is None:
            if self.wandb.run is not None:
                warnings.warn("There is a wandb run already in progress and newly created instances of "
                              "`WandbCallback` will reuse this run. If this is not desired, call `wandb.finish()` "
                              "before instantiating `WandbCallback`.")
                self._run = self.wandb.run
            else:
                self._run = self.wandb.init(**self.wandb_args)
        return self._run

    def on_train_begin(self, logs: dict | None = None) -> None:
        super().on_train_begin(logs)
        if _is_rank0():
            self.run.define_metric("train/step")
            self.run.define_metric("train/*", step_metric="train/step")
            self.run.define_metric("epoch")
            self.run.define_metric("eval/*", step_metric="epoch")

    def _updates(self, logs: dict, mode: str) -> None:
        if not _is_rank0():
            return
        step, values = self._values(logs, mode)
        self.run.log({("train/step" if mode == "train" else "epoch"): step, **values})

    def on_train_end(self, logs: dict | None = None) -> None:
        if _is_rank0():
            self.run.finish()

    def on_eval_end(self, logs: dict | None = None) -> None:
        if _is_rank0():
            self._updates(logs or {}, "eval")
            if not hasattr(self, "_is_fit"):
                self.run.finish()
