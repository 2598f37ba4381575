"""Loss layers: each holds its settings and calls the functional loss (`F.cross_entropy`...)."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .layers import Layer

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "CrossEntropyLoss", "BCEWithLogitsLoss", "BCELoss", "NLLLoss",
           "KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss"]


class _Loss(Layer):
    """Shared: the `reduction` setting, checked when the layer is built."""

    _reductions = ("sum", "mean", "none")

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        if reduction not in self._reductions:
            raise ValueError(f"The value of 'reduction' in {type(self).__name__} should be "
                             f"{', '.join(repr(r) for r in self._reductions)}, "
                             f"but received {reduction!r}, which is not allowed.")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction}"


class MSELoss(_Loss):
    """Mean squared error: reduce((input - label)^2)."""

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002 - Paddle's argument name
        return F.mse_loss(input, label, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error: reduce(|input - label|)."""

    def __init__(self, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, label, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Huber loss with threshold `delta`."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0, name: str | None = None):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, label, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_Loss):
    """Softmax cross entropy with hard (class index) or soft labels, class weights and label smoothing."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
                 soft_label: bool = False, axis: int = -1, use_softmax: bool = True, label_smoothing: float = 0.0,
                 name: str | None = None):
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index
        self.soft_label = soft_label
        self.axis = axis
        self.use_softmax = use_softmax
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, label, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, soft_label=self.soft_label, axis=self.axis,
                               use_softmax=self.use_softmax, label_smoothing=self.label_smoothing)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy on logits (sigmoid folded in, numerically stable)."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean", pos_weight: Tensor | None = None,
                 name: str | None = None):
        super().__init__(reduction)
        self.weight = weight
        self.pos_weight = pos_weight

    def forward(self, logit: Tensor, label: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(logit, label, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class BCELoss(_Loss):
    """Binary cross entropy on probabilities."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, label, weight=self.weight, reduction=self.reduction)


class NLLLoss(_Loss):
    """Negative log likelihood of log-probabilities at the label indices."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
                 name: str | None = None):
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, label, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence: label * (log(label) - input), input given as log-probabilities."""

    _reductions = ("sum", "mean", "none", "batchmean")

    def __init__(self, reduction: str = "mean", log_target: bool = False):
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.kl_div(input, label, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    """reduce(max(0, -label * (input - other) + margin))."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input: Tensor, other: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.margin_ranking_loss(input, other, label, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """reduce(input where label == 1, max(0, margin - input) where label == -1)."""

    def __init__(self, margin: float = 1.0, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.hinge_embedding_loss(input, label, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """reduce(log(1 + exp(-label * input))) for labels in {-1, 1}."""

    def __init__(self, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.soft_margin_loss(input, label, reduction=self.reduction)
