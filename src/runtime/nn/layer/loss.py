"""Loss layers: each holds its settings and calls the functional loss (`F.cross_entropy`...)."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .layers import Layer

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "CrossEntropyLoss", "BCEWithLogitsLoss", "BCELoss", "NLLLoss",
           "KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "CTCLoss", "TripletMarginLoss",
           "CosineEmbeddingLoss", "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiMarginLoss",
           "TripletMarginWithDistanceLoss"]


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


class CTCLoss(_Loss):
    """Connectionist temporal classification (`F.ctc_loss`: softmax over unnormalised logits inside)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, labels: Tensor, input_lengths: Tensor, label_lengths: Tensor,
                norm_by_times: bool = False) -> Tensor:
        return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, blank=self.blank,
                          reduction=self.reduction, norm_by_times=norm_by_times, zero_infinity=self.zero_infinity)


class TripletMarginLoss(_Loss):
    """reduce(max(0, d(input, positive) - d(input, negative) + margin)), d the p-norm distance."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, epsilon: float = 1e-6, swap: bool = False,
                 reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.margin, self.p, self.epsilon, self.swap = margin, p, epsilon, swap

    def forward(self, input: Tensor, positive: Tensor, negative: Tensor) -> Tensor:  # noqa: A002
        return F.triplet_margin_loss(input, positive, negative, margin=self.margin, p=self.p, epsilon=self.epsilon,
                                     swap=self.swap, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos where label == 1, max(0, cos - margin) where label == -1, reduced."""

    def __init__(self, margin: float = 0, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, label: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, label, margin=self.margin, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Per-sample mean over classes of the sigmoid cross-entropy, optionally class-weighted."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.multi_label_soft_margin_loss(input, label, weight=self.weight, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of a Poisson target (rate given as log-rate by default)."""

    def __init__(self, log_input: bool = True, full: bool = False, epsilon: float = 1e-8, reduction: str = "mean",
                 name: str | None = None):
        super().__init__(reduction)
        self.log_input, self.full, self.epsilon = log_input, full, epsilon

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.poisson_nll_loss(input, label, log_input=self.log_input, full=self.full, epsilon=self.epsilon,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of a Gaussian target with predicted mean and variance."""

    def __init__(self, full: bool = False, epsilon: float = 1e-6, reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.full, self.epsilon = full, epsilon

    def forward(self, input: Tensor, label: Tensor, variance: Tensor) -> Tensor:  # noqa: A002
        return F.gaussian_nll_loss(input, label, variance, full=self.full, epsilon=self.epsilon,
                                   reduction=self.reduction)


class MultiMarginLoss(_Loss):
    """Multi-class hinge loss: mean over other classes of w[y] max(0, margin - x[y] + x[j])^p."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, reduction: str = "mean",
                 name: str | None = None):
        super().__init__(reduction)
        self.p, self.margin, self.weight = p, margin, weight

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.multi_margin_loss(input, label, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet margin loss under any distance function (default: pairwise L2)."""

    def __init__(self, distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean", name: str | None = None):
        super().__init__(reduction)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, input: Tensor, positive: Tensor, negative: Tensor) -> Tensor:  # noqa: A002
        return F.triplet_margin_with_distance_loss(input, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)
