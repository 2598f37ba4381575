"""`paddle.Model`: training, evaluation and prediction loops around an nn.Layer, as Paddle's hapi.

A Model runs its network eagerly (a network compiled with `paddle.jit.to_static` runs compiled, with
the same results). `fit` turns a Dataset into a DataLoader over a DistributedBatchSampler, runs the
epochs and calls the callbacks (see callbacks.py) in Paddle's order; `evaluate` returns
{'loss': [float], <metric name>: value}; `predict` returns one tuple of per-batch arrays per output
(stacked into one array per output with stack_outputs=True). `save(path)` writes path.pdparams and,
when the optimizer has state, path.pdopt; `save(path, training=False)` exports for inference through
`paddle.jit.save`. Static-graph mode and AMP configurations are not supported."""
from __future__ import annotations

import inspect
import os
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from .. import jit, serialization
from ..autograd import no_grad
from ..io import DataLoader, Dataset, DistributedBatchSampler
from ..metric import Metric
from ..mode import in_dynamic_mode
from ..nn import Layer
from ..ops.math import add_n
from ..static import InputSpec
from ..tensor import Tensor, to_tensor
from .callbacks import Callback, CallbackList, EarlyStopping, config_callbacks
from .summary import summary

__all__ = ["Model"]

_POSTFIXES = ("", ".pdparams", ".pdopt", ".pdmodel")


def _to_list(value: Any) -> list | None:
    if value is None:
        return None
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _flatten(data: Any) -> list:
    """The leaves of nested lists/tuples, in order (a batch of (x, (y, z)) gives [x, y, z])."""
    if isinstance(data, (list, tuple)):
        return [leaf for item in data for leaf in _flatten(item)]
    return [data]


def _tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else to_tensor(value)


def _numpy(value: Tensor) -> np.ndarray:
    return np.asarray(value.numpy())


def _input_info(inputs: Any) -> tuple[list, list] | None:
    """(shapes, dtypes) of InputSpecs or tensors."""
    if isinstance(inputs, (InputSpec, Tensor)):
        inputs = [inputs]
    elif isinstance(inputs, dict):
        inputs = list(inputs.values())
    elif not isinstance(inputs, (list, tuple)):
        return None
    return [list(x.shape) for x in inputs], [x.dtype for x in inputs]


def _forward_arg_names(network: Layer) -> list[str]:
    """The names of forward's positional parameters (after self)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(network.forward).parameters.values() if p.kind in kinds]


class Model:
    """Wraps `network` with the loops of Paddle's high-level API. `inputs`/`labels` (InputSpecs) say
    how many leading fields of a batch feed the network (the rest are labels) and give the shapes an
    inference export uses; without `inputs`, forward's positional parameters are counted."""

    def __init__(self, network: Layer, inputs: Any = None, labels: Any = None):
        if not in_dynamic_mode():
            raise NotImplementedError("paddle.Model: static graph mode is not supported; call "
                                      "paddle.disable_static() first")
        self.mode = "train"
        self.network = network
        self._loss: Any = None
        self._optimizer: Any = None
        self._metrics: list[Metric] = []
        self._input_info = _input_info(inputs) if inputs else None
        self._is_shape_inferred = False
        self._test_dataloader: Any = None
        self._accumulate = 1
        self._logs: dict = {}
        self.stop_training = False
        self._inputs = self._verify_spec(inputs, is_input=True)
        self._labels = self._verify_spec(labels)

    # ----------------------------------------------------------- one batch
    def train_batch(self, inputs: Any, labels: Any = None, update: bool = True) -> Any:
        """One training step; `update=False` only accumulates gradients. Returns [loss arrays], or
        ([loss arrays], [metric values]) when the model has metrics."""
        if not self._optimizer:
            raise RuntimeError("model not ready, please call `model.prepare()` first")
        self.network.train()
        self.mode = "train"
        outputs, labels = self._forward(inputs, labels)
        losses = _to_list(self._loss(*(_to_list(outputs) + labels)))
        final_loss = add_n(losses)
        final_loss.backward()
        if update:
            self._optimizer.minimize(final_loss)
            self.network.clear_gradients()
        metrics = self._update_metrics(outputs, labels)
        result = [_numpy(loss) for loss in losses]
        return (result, metrics) if metrics else result

    @no_grad()
    def eval_batch(self, inputs: Any, labels: Any = None) -> Any:
        """One evaluation step: [loss arrays], ([loss arrays], [metric values]) or [metric values]."""
        self.network.eval()
        self.mode = "eval"
        outputs, labels = self._forward(inputs, labels)
        losses = _to_list(self._loss(*(_to_list(outputs) + labels))) if self._loss else []
        metrics = self._update_metrics(outputs, labels)
        result = [_numpy(loss) for loss in losses]
        if self._loss:
            return (result, metrics) if metrics else result
        return metrics

    @no_grad()
    def predict_batch(self, inputs: Any) -> list[np.ndarray]:
        """The network's outputs on one batch, as arrays."""
        self.network.eval()
        self.mode = "test"
        outputs, _ = self._forward(inputs, None)
        return [_numpy(o) for o in _to_list(outputs)]

    def _forward(self, inputs: Any, labels: Any) -> tuple[Any, list[Tensor]]:
        inputs = [_tensor(x) for x in _to_list(inputs)]
        if self._input_info is None:  # no `inputs` spec: remember the shapes an inference export will use
            self._input_info = _input_info(inputs)
            self._inputs = self._verify_spec(None, *self._input_info, is_input=True)
            self._is_shape_inferred = True
        labels = [] if labels is None else [_tensor(y) for y in _to_list(labels)]
        return self.network(*inputs), labels

    def _update_metrics(self, outputs: Any, labels: list[Tensor]) -> list:
        values = []
        for metric in self._metrics:
            computed = metric.compute(*(_to_list(outputs) + labels))
            values.append(metric.update(*[_numpy(m) if isinstance(m, Tensor) else m for m in _to_list(computed)]))
        return values

    # ----------------------------------------------------------- setup and state
    def prepare(self, optimizer: Any = None, loss: Layer | Callable | None = None,
                metrics: Metric | Sequence[Metric] | None = None, amp_configs: Any = None) -> None:
        """Set the optimizer (needed to train), the loss (a Layer or callable; None: no loss) and the
        metrics. `amp_configs` other than None/'O0' is not supported."""
        if amp_configs not in (None, "O0") and not (isinstance(amp_configs, dict)
                                                     and amp_configs.get("level", "O0") == "O0"):
            raise NotImplementedError("paddle.Model.prepare: amp_configs is not supported (train in float32, or "
                                      "use paddle.amp in a custom loop)")
        if loss is not None and not isinstance(loss, Layer) and not callable(loss):
            raise TypeError("'loss' must be sub classes of `paddle.nn.Layer` or any callable function.")
        metrics = _to_list(metrics) or []
        for metric in metrics:
            if not isinstance(metric, Metric):
                raise TypeError(f"{type(metric).__name__} is not sub class of Metric")
        self._optimizer = optimizer
        self._loss = loss
        self._metrics = metrics

    def parameters(self, *args: Any, **kwargs: Any) -> list:
        """The network's parameters."""
        return self.network.parameters()

    def save(self, path: str, training: bool = True) -> None:
        """training=True: path.pdparams (the network's state_dict) and path.pdopt (the optimizer's, if
        it has any); training=False: an inference export through paddle.jit.save."""
        if not training:
            self._save_inference_model(path)
            return
        serialization.save(self.network.state_dict(), path + ".pdparams")
        if self._optimizer is not None:
            state = self._optimizer.state_dict()
            if state:
                serialization.save(state, path + ".pdopt")

    def _save_inference_model(self, path: str) -> None:
        if self._input_info is None:
            raise RuntimeError("Saving inference model needs 'inputs' or running before saving. Please specify "
                               "'inputs' in Model initialization or input training data and perform a training "
                               "for shape derivation.")
        if self._is_shape_inferred:
            warnings.warn("'inputs' was not specified when Model initialization, so the input shape to be saved "
                          f"will be the shape derived from the user's actual inputs. The input shape to be saved is "
                          f"{self._input_info[0]}. For saving correct input shapes, please provide 'inputs' for "
                          "Model initialization.")
        jit.save(self.network, path, input_spec=self._inputs)

    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False) -> None:
        """Restore parameters from path.pdparams (by structured name) and, unless `reset_optimizer`,
        the optimizer from path.pdopt when it exists. A missing or misshaped parameter raises, or is
        skipped with a warning (and the optimizer reset) when `skip_mismatch`."""
        path, ext = os.path.splitext(path)
        if ext not in _POSTFIXES:
            path += ext
        if not os.path.exists(path + ".pdparams"):
            raise ValueError(f"Failed to load parameters, please check path: {path}.pdparams does not exist")
        param_state = serialization.load(path + ".pdparams")
        matched = []
        for key, param in self.network.state_dict().items():
            state = param_state.get(key)
            if state is None:
                problem = f"{key} is not found in the providing file."
            elif list(state.shape) != list(param.shape):
                problem = (f"{key} receives a shape {list(state.shape)}, but the expected shape is "
                           f"{list(param.shape)}.")
            else:
                matched.append((param, state))
                continue
            if not skip_mismatch:
                raise ValueError(problem)
            warnings.warn(f"Skip loading for {key}. {problem}")
            reset_optimizer = True
        for param, state in matched:
            param.set_value(state)
        if self._optimizer and not reset_optimizer and os.path.exists(path + ".pdopt"):
            self._optimizer.set_state_dict(serialization.load(path + ".pdopt"))

    def summary(self, input_size: Any = None, dtype: Any = None) -> dict:
        """paddle.summary of the network, on `input_size` or the model's input specs."""
        if input_size is None and self._inputs is None:
            raise ValueError("'input_size' or 'self._input' must be set")
        return summary(self.network, input_size if input_size is not None else self._inputs, dtypes=dtype)

    # ----------------------------------------------------------- loops
    def _loader(self, data: Any, batch_size: int, shuffle: bool = False, drop_last: bool = False,
                num_workers: int = 0) -> Any:
        """A DataLoader over a Dataset; any other iterable is used as it is."""
        if not isinstance(data, Dataset):
            return data
        sampler = DistributedBatchSampler(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
        return DataLoader(data, batch_sampler=sampler, num_workers=num_workers, return_list=True)

    def fit(self, train_data: Any = None, eval_data: Any = None, batch_size: int | Sequence[int] = 1,
            epochs: int = 1, eval_freq: int = 1, log_freq: int = 10, save_dir: str | None = None, save_freq: int = 1,
            verbose: int = 2, drop_last: bool = False, shuffle: bool = True, num_workers: int = 0,
            callbacks: Sequence[Callback] | Callback | None = None, accumulate_grad_batches: int = 1,
            num_iters: int | None = None) -> None:
        """Train for `epochs` epochs, evaluating on `eval_data` every `eval_freq` epochs; `batch_size`
        may be [train, eval]. Stops early when a callback sets `model.stop_training` or after
        `num_iters` steps."""
        if train_data is None:
            raise ValueError("train_data must be given!")
        if isinstance(batch_size, (tuple, list)):
            if len(batch_size) != 2:
                raise ValueError("batch_size length error, expected train_batch_size and eval_batch_size.")
            train_batch_size, eval_batch_size = batch_size
        else:
            train_batch_size = eval_batch_size = batch_size
        train_loader = self._loader(train_data, train_batch_size, shuffle, drop_last, num_workers)
        eval_loader = self._loader(eval_data, eval_batch_size, num_workers=num_workers) if eval_data is not None \
            else None
        self._test_dataloader = eval_loader
        self._accumulate = accumulate_grad_batches
        steps = self._len_data_loader(train_loader)
        self.num_iters = num_iters
        if isinstance(num_iters, int) and isinstance(steps, int):
            if num_iters <= 0:
                raise ValueError("num_iters must be greater than 0!")
            epochs = num_iters // steps + 1
            steps = min(num_iters, steps)
        cbks = config_callbacks(callbacks, model=self, epochs=epochs, steps=steps, log_freq=log_freq,
                                save_freq=save_freq, save_dir=save_dir, verbose=verbose, metrics=self._metrics_name())
        if eval_loader is None and any(isinstance(k, EarlyStopping) for k in cbks):
            warnings.warn("EarlyStopping needs validation data.")
        cbks.on_begin("train")
        logs = self._logs
        for epoch in range(epochs):
            cbks.on_epoch_begin(epoch)
            logs = self._run_one_epoch(train_loader, cbks, "train")
            cbks.on_epoch_end(epoch, logs)
            if eval_loader is not None and epoch % eval_freq == 0:
                cbks.on_begin("eval", {"steps": self._len_data_loader(eval_loader), "metrics": self._metrics_name()})
                eval_logs = self._run_one_epoch(eval_loader, cbks, "eval")
                cbks.on_end("eval", eval_logs)
            if self.stop_training:
                break
        cbks.on_end("train", logs)
        self._test_dataloader = None

    def evaluate(self, eval_data: Any, batch_size: int = 1, log_freq: int = 10, verbose: int = 2,
                 num_workers: int = 0, callbacks: Sequence[Callback] | Callback | None = None,
                 num_iters: int | None = None) -> dict[str, Any]:
        """The loss (a list: one float per loss) and each metric's value over `eval_data`."""
        eval_loader = self._loader(eval_data, batch_size, num_workers=num_workers)
        self._test_dataloader = eval_loader
        cbks = config_callbacks(callbacks, model=self, log_freq=log_freq, verbose=verbose,
                                metrics=self._metrics_name())
        eval_steps = self._len_data_loader(eval_loader)
        self.num_iters = num_iters
        if isinstance(num_iters, int) and isinstance(eval_steps, int):
            if num_iters <= 0:
                raise ValueError("num_iters must be greater than 0!")
            eval_steps = self.num_iters = min(num_iters, eval_steps)
        cbks.on_begin("eval", {"steps": eval_steps, "metrics": self._metrics_name()})
        logs = self._run_one_epoch(eval_loader, cbks, "eval")
        cbks.on_end("eval", logs)
        self._test_dataloader = None
        return {k: logs[k] for k in self._metrics_name()}

    def predict(self, test_data: Any, batch_size: int = 1, num_workers: int = 0, stack_outputs: bool = False,
                verbose: int = 1, callbacks: Sequence[Callback] | Callback | None = None) -> list:
        """The network's outputs over `test_data`: per output, a tuple of per-batch arrays, or one
        array of every sample with `stack_outputs`."""
        test_loader = self._loader(test_data, batch_size, num_workers=num_workers)
        self._test_dataloader = test_loader
        cbks = config_callbacks(callbacks, model=self, verbose=verbose)
        cbks.on_begin("predict", {"steps": self._len_data_loader(test_loader)})
        logs, outputs = self._run_one_epoch(test_loader, cbks, "predict")
        outputs = list(zip(*outputs))
        if stack_outputs:
            outputs = [np.vstack(outs) for outs in outputs]
        self._test_dataloader = None
        cbks.on_end("predict", logs)
        return outputs

    def _run_one_epoch(self, data_loader: Any, callbacks: CallbackList, mode: str) -> Any:
        """One pass over `data_loader` in `mode`, calling the batch hooks; the logs (and, predicting,
        the per-batch outputs)."""
        logs = self._logs
        outputs = []
        for step, data in enumerate(data_loader):
            data = _flatten(data)
            batch_size = data[0].shape[0]
            callbacks.on_batch_begin(mode, step, logs)
            if mode == "predict":
                outputs.append(self.predict_batch(data[:len(self._inputs)] if self._inputs is not None else data))
            else:
                self._run_batch(data, step, mode, data_loader)
            logs["step"] = step
            logs["batch_size"] = batch_size
            callbacks.on_batch_end(mode, step, logs)
            if getattr(self, "num_iters", None) is not None:
                self.num_iters -= 1
                if self.num_iters <= 0:
                    self.stop_training = True
                    del self.num_iters
                    break
        for metric in self._metrics:
            metric.reset()
        return (logs, outputs) if mode == "predict" else logs

    def _run_batch(self, data: list, step: int, mode: str, data_loader: Any) -> None:
        """Train or evaluate one batch and write its loss and the running metrics into the logs."""
        split = len(self._inputs)
        if mode == "train":
            last = step + 1 == self._len_data_loader(data_loader)
            outs = self.train_batch(data[:split], data[split:], (step + 1) % self._accumulate == 0 or last)
        else:
            outs = self.eval_batch(data[:split], data[split:])
        if self._loss:
            values = [[float(loss) for loss in (outs[0] if self._metrics else outs)]]
        else:
            values = []
        for metric in self._metrics:
            values.extend(_to_list(metric.accumulate()))
        self._logs.update(zip(self._metrics_name(), values))

    # ----------------------------------------------------------- helpers
    def _verify_spec(self, specs: Any, shapes: list | None = None, dtypes: list | None = None,
                     is_input: bool = False) -> list[InputSpec] | None:
        """The specs as a list of named InputSpecs; for inputs without specs, one per forward argument
        (with the given shapes and dtypes, else shape [None])."""
        if specs is None:
            if not is_input:
                return None
            names = _forward_arg_names(self.network)
            if shapes is not None and dtypes is not None:
                return [InputSpec(shapes[i], dtypes[i], n) for i, n in enumerate(names)]
            return [InputSpec([None], name=n) for n in names]
        if isinstance(specs, dict):
            if is_input:
                raise TypeError("paddle.Model: 'inputs' must be an InputSpec or a list of them, not a dict (as in "
                                "Paddle)")
            specs = [specs[n] for n in _forward_arg_names(self.network)]
        specs = _to_list(specs)
        for i, spec in enumerate(specs):
            if not isinstance(spec, InputSpec):
                raise TypeError(f"paddle.Model: expected InputSpec, got {type(spec).__name__}")
            if spec.name is None:
                raise ValueError(f"Requires Input[{i}].name != None, but receive `None` with {spec}.")
        return specs

    def _metrics_name(self) -> list[str]:
        names = ["loss"] if self._loss else []
        for metric in self._metrics:
            names.extend(_to_list(metric.name()))
        return names

    @staticmethod
    def _len_data_loader(data_loader: Any) -> int | None:
        try:
            return len(data_loader)
        except Exception:  # noqa: BLE001 - an iterable without a length has unknown steps
            return None
