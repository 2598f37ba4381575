"""`paddle.metric.accuracy` and the Metric classes, with Paddle's semantics.

`accuracy` is built from public ops, so it computes eagerly in dynamic mode and appends the same ops
to the program in static mode (`paddle.static.accuracy` is this function). The Metric classes keep
their running counts in Python and NumPy, as Paddle's do: `compute` runs on tensors (inside the
model's step), `update` takes its result and returns the batch's value."""
from __future__ import annotations

import abc
from typing import Any, Sequence

import numpy as np

from ..ops import creation, indexing, math, reduction, search, shape
from ..tensor import Tensor

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "accuracy"]


def _positive_int(api: str, arg: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{api}: argument '{arg}' must be a positive int, got {value!r}")
    return int(value)


def _require_tensor(api: str, arg: str, value: Any) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{api}: argument '{arg}' must be a Tensor, got {type(value).__name__}")


def accuracy(input: Tensor, label: Tensor, k: int = 1, correct: Tensor | None = None,  # noqa: A002
             total: Tensor | None = None, name: str | None = None) -> Tensor:
    """The fraction of rows of `input` ([N, C] scores) whose `label` ([N, 1] or [N] ints) is among
    the row's top `k` scores, as a float32 scalar. `correct` and `total`, when given, receive the
    number of hits and N (written in place, keeping their shapes)."""
    _require_tensor("accuracy", "input", input)
    _require_tensor("accuracy", "label", label)
    k = _positive_int("accuracy", "k", k)
    if input.ndim != 2:
        raise ValueError(f"accuracy: argument 'input' must be 2-D [samples, classes], got shape {input.shape}")
    if label.dtype.name not in ("int32", "int64"):
        raise TypeError(f"accuracy: argument 'label' must be int32 or int64, got {label.dtype.name}")
    if label.dtype.name == "int32":
        label = math.cast(label, "int64")
    _, top = search.topk(input, k)
    hit = reduction.any(math.equal(top, shape.reshape(label, [-1, 1])), axis=1)
    if correct is not None:
        _write_count(correct, reduction.sum(math.cast(hit, "int32")))
    if total is not None:
        _write_count(total, creation.shape(input)[0])
    return reduction.mean(math.cast(hit, "float32"))


def _write_count(out: Tensor, value: Tensor) -> None:
    """Write the scalar count `value` into `out` in place, keeping out's shape and dtype."""
    creation.assign(shape.reshape(math.cast(value, out.dtype), out.shape), output=out)


class Metric(abc.ABC):
    """Base of the streaming metrics: `reset`, `update`, `accumulate`, `name`; `compute` (optional)
    turns a step's outputs into what `update` takes."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget every update."""

    @abc.abstractmethod
    def update(self, *args: Any) -> Any:
        """Add one batch."""

    @abc.abstractmethod
    def accumulate(self) -> Any:
        """The metric over every batch since the last reset."""

    @abc.abstractmethod
    def name(self) -> Any:
        """The metric's name(s), for logs."""

    def compute(self, *args: Any) -> Any:
        """Preprocess a step's tensors for `update` (default: pass them through)."""
        return args


def _as_numpy(api: str, arg: str, value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    raise ValueError(f"{api}: argument '{arg}' must be a numpy ndarray or Tensor, got {type(value).__name__}")


class Accuracy(Metric):
    """Top-k accuracy for each k of `topk`; names `acc` or `acc_top<k>` (with a prefix `name`)."""

    def __init__(self, topk: Sequence[int] = (1,), name: str | None = None):
        if not isinstance(topk, (list, tuple)) or not topk:
            raise ValueError(f"Accuracy: argument 'topk' must be a non-empty list or tuple of ints, got {topk!r}")
        self.topk = topk
        self.maxk = max(_positive_int("Accuracy", "topk", k) for k in topk)
        prefix = name or "acc"
        self._name = [f"{prefix}_top{k}" for k in topk] if self.maxk != 1 else [prefix]
        self.reset()

    def compute(self, pred: Tensor, label: Tensor, *args: Any) -> Tensor:
        """float32 [N, maxk]: whether the i-th best class of each row is its label (`label` is [N],
        [N, 1] or one-hot [N, C])."""
        top = indexing.slice(search.argsort(pred, descending=True), [pred.ndim - 1], [0], [self.maxk])
        if label.ndim == 1 or (label.ndim == 2 and label.shape[-1] == 1):
            label = shape.reshape(label, [-1, 1])
        else:
            label = reduction.argmax(label, axis=-1, keepdim=True)
        return math.cast(math.equal(top, math.cast(label, top.dtype)), "float32")

    def update(self, correct: Any, *args: Any) -> float | list[float]:
        """Add a batch of `compute`'s output; returns this batch's accuracy (a list for several k)."""
        correct = np.asarray(correct.numpy() if isinstance(correct, Tensor) else correct)
        num_samples = int(np.prod(correct.shape[:-1]))
        accs = []
        for i, k in enumerate(self.topk):
            num_corrects = correct[..., :k].sum()
            accs.append(float(num_corrects) / num_samples)
            self.total[i] += num_corrects
            self.count[i] += num_samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self) -> None:
        """Zero the running counts."""
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self) -> float | list[float]:
        """Accuracy over every update since the last reset (0.0 before any)."""
        res = [float(t) / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self) -> list[str]:
        """The names, one per k."""
        return self._name


class Precision(Metric):
    """Binary precision tp / (tp + fp); a prediction counts as positive when it rounds to 1."""

    def __init__(self, name: str = "precision"):
        self._name = name
        self.reset()

    def update(self, preds: Any, labels: Any) -> None:
        """Add a batch of probabilities `preds` and 0/1 `labels` (NumPy arrays or Tensors)."""
        preds = np.floor(_as_numpy("Precision.update", "preds", preds) + 0.5).astype("int32").reshape(-1)
        labels = _as_numpy("Precision.update", "labels", labels).reshape(-1)
        positive = preds == 1
        self.tp += int(np.sum(positive & (labels == 1)))
        self.fp += int(np.sum(positive & (labels != 1)))

    def reset(self) -> None:
        """Zero the counts."""
        self.tp = 0
        self.fp = 0

    def accumulate(self) -> float:
        """Precision so far (0.0 with no positive prediction)."""
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0

    def name(self) -> str:
        """The metric's name."""
        return self._name


class Recall(Metric):
    """Binary recall tp / (tp + fn); a prediction counts as positive when it rounds to 1."""

    def __init__(self, name: str = "recall"):
        self._name = name
        self.reset()

    def update(self, preds: Any, labels: Any) -> None:
        """Add a batch of probabilities `preds` and 0/1 `labels` (NumPy arrays or Tensors)."""
        preds = np.rint(_as_numpy("Recall.update", "preds", preds)).astype("int32").reshape(-1)
        labels = _as_numpy("Recall.update", "labels", labels).reshape(-1)
        actual = labels == 1
        self.tp += int(np.sum(actual & (preds == 1)))
        self.fn += int(np.sum(actual & (preds != 1)))

    def reset(self) -> None:
        """Zero the counts."""
        self.tp = 0
        self.fn = 0

    def accumulate(self) -> float:
        """Recall so far (0.0 with no positive label)."""
        actual = self.tp + self.fn
        return float(self.tp) / actual if actual != 0 else 0.0

    def name(self) -> str:
        """The metric's name."""
        return self._name
