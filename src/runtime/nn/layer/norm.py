"""Normalisation layers: BatchNorm1D/2D/3D (and legacy BatchNorm, SyncBatchNorm), LayerNorm,
GroupNorm, InstanceNorm1D/2D/3D.

As in Paddle, BatchNorm's running statistics `_mean` / `_variance` are non-trainable Parameters
(trainable=False, stop_gradient=True): they appear in `state_dict()` under those names and are
updated in place by `F.batch_norm` in training mode.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from ... import dtypes as _dt
from ...parameter import Parameter
from ...tensor import Tensor
from .. import functional as F
from ...ops.grad_mode import no_grad
from ...ops.linalg import dot, matmul, mv
from ..initializer import Constant, Normal
from ..param_attr import ParamAttr
from ._validation import positive_int
from .layers import Layer

__all__ = ["BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "SyncBatchNorm", "LayerNorm", "GroupNorm",
           "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D", "LocalResponseNorm", "SpectralNorm"]


def _scale_and_shift(layer: Layer, weight_attr: Any, bias_attr: Any, shape: list[int],
                     false_means_frozen: bool) -> tuple[Parameter | None, Parameter | None]:
    """Weight (ones) and bias (zeros); an attr of False gives a frozen constant (BatchNorm) or None."""
    params = []
    for attr, is_bias, value in ((weight_attr, False, 1.0), (bias_attr, True, 0.0)):
        if attr is False and not false_means_frozen:
            params.append(None)
            continue
        p = layer.create_parameter(attr=None if attr is False else attr, shape=shape,
                                   default_initializer=Constant(value), is_bias=is_bias)
        if attr is False or p.optimize_attr["learning_rate"] == 0.0:
            p.stop_gradient = True
        params.append(p)
    return params[0], params[1]


def _running_stat(layer: Layer, name: str | None, value: float, shape: list[int]) -> Parameter:
    p = layer.create_parameter(attr=ParamAttr(name=name, initializer=Constant(value), trainable=False,
                                              do_model_average=True), shape=shape, dtype=layer._dtype)
    p.stop_gradient = True
    return p


class _BatchNormBase(Layer):
    """Normalise over the batch (and spatial axes) per channel; running stats for evaluation."""

    _ranks: tuple[int, ...] = ()
    _formats: dict[str, str] = {}

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCHW", use_global_stats: bool | None = None,
                 name: str | None = None):
        super().__init__()
        positive_int(type(self).__name__, "num_features", num_features, Integral)
        if self._formats and data_format not in self._formats:
            raise ValueError(f"{type(self).__name__}: argument 'data_format' must be one of "
                             f"{', '.join(self._formats)}, got {data_format!r}")
        self._num_features = num_features
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._use_global_stats = use_global_stats
        self._dtype = _dt.get_default_dtype()
        shape = [num_features]
        self.weight, self.bias = _scale_and_shift(self, weight_attr, bias_attr, shape, True)
        self._mean = _running_stat(self, None if name is None else name + "_mean", 0.0, shape)
        self._variance = _running_stat(self, None if name is None else name + "_variance", 1.0, shape)
        self._data_format = self._formats.get(data_format, data_format)
        self._user_data_format = data_format
        self._momentum = momentum
        self._epsilon = epsilon
        self._name = name

    def _check_input_dim(self, input: Tensor) -> None:
        if self._ranks and input.ndim not in self._ranks:
            ranks = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(f"{type(self).__name__}: expected {ranks} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        return F.batch_norm(input, self._mean, self._variance, weight=self.weight, bias=self.bias,
                            training=self.training, momentum=self._momentum, epsilon=self._epsilon,
                            data_format=self._data_format, use_global_stats=self._global_stats())

    def _global_stats(self) -> bool | None:
        """`use_global_stats` for `F.batch_norm`; None lets it follow `self.training`."""
        return self._use_global_stats

    def extra_repr(self) -> str:
        text = f"num_features={self._num_features}, momentum={self._momentum}, epsilon={self._epsilon}"
        if self._user_data_format != "NCHW":
            text += f", data_format={self._user_data_format}"
        if self._name is not None:
            text += f", name={self._name}"
        return text


class BatchNorm1D(_BatchNormBase):
    """Batch normalisation of [N, C] or [N, C, L] inputs (data_format 'NC', 'NCL' or 'NLC')."""

    _ranks = (2, 3)
    _formats = {"NC": "NCHW", "NCL": "NCHW", "NLC": "NHWC"}

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCL", use_global_stats: bool | None = None,
                 name: str | None = None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats,
                         name)


class BatchNorm2D(_BatchNormBase):
    """Batch normalisation of [N, C, H, W] (or NHWC) inputs."""

    _ranks = (4,)
    _formats = {"NCHW": "NCHW", "NHWC": "NHWC"}


class BatchNorm3D(_BatchNormBase):
    """Batch normalisation of [N, C, D, H, W] (or NDHWC) inputs."""

    _ranks = (5,)
    _formats = {"NCDHW": "NCHW", "NDHWC": "NHWC"}

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCDHW", use_global_stats: bool | None = None,
                 name: str | None = None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats,
                         name)


class SyncBatchNorm(_BatchNormBase):
    """Cross-device batch normalisation; on one device it is BatchNorm over any rank >= 2."""

    _formats = {"NCHW": "NCHW", "NHWC": "NHWC", "NCL": "NCHW", "NLC": "NHWC", "NCDHW": "NCHW", "NDHWC": "NHWC"}

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCHW", name: str | None = None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, None, name)

    @classmethod
    def convert_sync_batchnorm(cls, layer: Layer) -> Layer:
        """With a single device every BatchNorm already is synchronised: the layer is returned as is."""
        return layer


class BatchNorm(_BatchNormBase):
    """The legacy `paddle.nn.BatchNorm(num_channels, act=...)`: any rank >= 2, optional activation."""

    _formats = {"NCHW": "NCHW", "NHWC": "NHWC"}

    def __init__(self, num_channels: int, act: str | None = None, is_test: bool = False, momentum: float = 0.9,
                 epsilon: float = 1e-05, param_attr: Any = None, bias_attr: Any = None, dtype: Any = "float32",
                 data_layout: str = "NCHW", in_place: bool = False, moving_mean_name: str | None = None,
                 moving_variance_name: str | None = None, do_model_average_for_mean_and_var: bool = True,
                 use_global_stats: bool = False, trainable_statistics: bool = False):
        if act is not None and not hasattr(F, act):
            raise ValueError(f"BatchNorm: unknown activation act={act!r}")
        super().__init__(num_channels, momentum, epsilon, param_attr, bias_attr, data_layout, use_global_stats)
        for stat, name in (("_mean", moving_mean_name), ("_variance", moving_variance_name)):
            if name is not None:
                getattr(self, stat).name = name
        self._act = act
        self._trainable_statistics = trainable_statistics
        # as Paddle: is_test only sets the initial mode; train()/eval() switch it later
        self.training = not is_test

    def _global_stats(self) -> bool:
        """Paddle's batch_norm kernel rule: the running statistics are used in eval mode unless
        trainable_statistics asks for the batch ones, and always with use_global_stats."""
        return (not self.training and not self._trainable_statistics) or bool(self._use_global_stats)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        out = super().forward(input)
        return out if self._act is None else getattr(F, self._act)(out)


class LayerNorm(Layer):
    """Normalise over the trailing `normalized_shape` axes; weight/bias of size prod(normalized_shape)."""

    def __init__(self, normalized_shape: Any, epsilon: float = 1e-05, weight_attr: Any = None, bias_attr: Any = None,
                 name: str | None = None):
        super().__init__()
        if isinstance(normalized_shape, Integral):
            normalized_shape = [normalized_shape]
        if not isinstance(normalized_shape, (list, tuple)) or not normalized_shape or any(
                isinstance(d, bool) or not isinstance(d, Integral) or d <= 0 for d in normalized_shape):
            raise ValueError(f"LayerNorm: argument 'normalized_shape' must be a positive int or a list of them, "
                             f"got {normalized_shape!r}")
        self._normalized_shape = [int(d) for d in normalized_shape]
        self._epsilon = epsilon
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._name = name
        shape = [int(np.prod(self._normalized_shape))]
        self.weight, self.bias = _scale_and_shift(self, weight_attr, bias_attr, shape, False)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, normalized_shape=self._normalized_shape, weight=self.weight, bias=self.bias,
                            epsilon=self._epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Normalise each of `num_groups` channel groups per sample; per-channel weight and bias."""

    def __init__(self, num_groups: int, num_channels: int, epsilon: float = 1e-05, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCHW", name: str | None = None):
        super().__init__()
        for arg, v in (("num_groups", num_groups), ("num_channels", num_channels)):
            positive_int("GroupNorm", arg, v, Integral)
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        if data_format not in ("NCHW", "NHWC", "NCL", "NLC", "NCDHW", "NDHWC"):
            raise ValueError(f"GroupNorm: unsupported data_format {data_format!r}")
        self._num_groups = num_groups
        self._num_channels = num_channels
        self._epsilon = epsilon
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._data_format = data_format
        self._name = name
        self.weight, self.bias = _scale_and_shift(self, weight_attr, bias_attr, [num_channels], True)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.group_norm(input, num_groups=self._num_groups, epsilon=self._epsilon, weight=self.weight,
                            bias=self.bias, data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"num_groups={self._num_groups}, num_channels={self._num_channels}, epsilon={self._epsilon}"


class _InstanceNormBase(Layer):
    """Normalise each channel of each sample over its spatial axes."""

    _ranks: tuple[int, ...] = ()
    _default_format = "NCHW"

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str | None = None, name: str | None = None):
        super().__init__()
        if (weight_attr is False) != (bias_attr is False):
            raise ValueError(f"{type(self).__name__}: weight_attr and bias_attr must be False at the same time")
        self._num_features = num_features
        self._epsilon = epsilon
        self._momentum = momentum
        self._data_format = self._default_format if data_format is None else data_format
        self._name = name
        self.scale, self.bias = _scale_and_shift(self, weight_attr, bias_attr, [num_features], False)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim not in self._ranks:
            ranks = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(f"{type(self).__name__}: expected {ranks} input (got {input.ndim}D input)")
        return F.instance_norm(input, weight=self.scale, bias=self.bias, eps=self._epsilon,
                               data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance normalisation of [N, C, L] inputs."""

    _ranks, _default_format = (2, 3), "NCL"


class InstanceNorm2D(_InstanceNormBase):
    """Instance normalisation of [N, C, H, W] inputs."""

    _ranks, _default_format = (4,), "NCHW"


class InstanceNorm3D(_InstanceNormBase):
    """Instance normalisation of [N, C, D, H, W] inputs."""

    _ranks, _default_format = (5,), "NCDHW"


class LocalResponseNorm(Layer):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta (`F.local_response_norm`)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
                 data_format: str = "NCHW", name: str | None = None):
        super().__init__()
        self.size, self.alpha, self.beta, self.k, self.data_format = size, alpha, beta, k, data_format

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - Paddle's argument name
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k, self.data_format)

    def extra_repr(self) -> str:
        return f"size={self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}, data_format={self.data_format}"


class SpectralNorm(Layer):
    """forward(weight) = weight / sigma, sigma its largest singular value (rows along `dim`) estimated by
    `power_iters` power-iteration steps from the parameters `weight_u` and `weight_v` (random, not trained;
    as Paddle's op, the steps start from them on every call and do not update them)."""

    def __init__(self, weight_shape: Any, dim: int = 0, power_iters: int = 1, eps: float = 1e-12,
                 dtype: Any = "float32"):
        super().__init__()
        self._weight_shape = [int(d) for d in weight_shape]
        if not self._weight_shape or int(np.prod(self._weight_shape)) <= 0:
            raise ValueError(f"SpectralNorm: every dimension of 'weight_shape' must be positive, got {weight_shape}")
        if not 0 <= dim < len(self._weight_shape):
            raise ValueError(f"SpectralNorm: argument 'dim' must be in [0, {len(self._weight_shape)}), got {dim}")
        self._dim, self._power_iters, self._eps, self._dtype = dim, power_iters, eps, dtype
        h = self._weight_shape[dim]
        w = int(np.prod(self._weight_shape)) // h
        self.weight_u = self.create_parameter([h], attr=ParamAttr(), dtype=dtype, default_initializer=Normal(0.0, 1.0))
        self.weight_u.stop_gradient = True
        self.weight_v = self.create_parameter([w], attr=ParamAttr(), dtype=dtype, default_initializer=Normal(0.0, 1.0))
        self.weight_v.stop_gradient = True

    def forward(self, x: Tensor) -> Tensor:
        from ..utils.spectral_norm_hook import weight_matrix  # noqa: PLC0415 - nn.utils imports these layers
        mat = weight_matrix(x, self._dim)
        with no_grad():
            u, v = self.weight_u, self.weight_v
            for _ in range(self._power_iters):
                v = matmul(mat, u, transpose_x=True)
                v = v / (v.pow(2).sum().sqrt() + self._eps)
                u = matmul(mat, v)
                u = u / (u.pow(2).sum().sqrt() + self._eps)
        return x / dot(u, mv(mat, v))
