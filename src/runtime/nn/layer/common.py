"""Common layers: Linear, Embedding, Dropout, Flatten, Identity, Upsample, padding."""
from __future__ import annotations

from numbers import Number
from typing import Any

from ... import dtypes as _dt
from ...autograd import no_grad
from ...ops import shape as _shape_ops
from ...tensor import Tensor
from .. import functional as F
from ._validation import positive_int
from .layers import Layer

__all__ = ["Linear", "Identity", "Flatten", "Dropout", "Dropout2D", "Dropout3D", "AlphaDropout", "Embedding",
           "Upsample", "UpsamplingNearest2D", "UpsamplingBilinear2D", "Pad1D", "Pad2D", "Pad3D", "ZeroPad2D",
           "CosineSimilarity"]


def _name_suffix(name: str | None) -> str:
    return f", name={name}" if name else ""


class Linear(Layer):
    """y = x @ weight + bias, weight of shape [in_features, out_features] (Xavier-uniform, zero bias)."""

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None, bias_attr: Any = None,
                 name: str | None = None):
        super().__init__()
        positive_int("Linear", "in_features", in_features)
        positive_int("Linear", "out_features", out_features)
        self._dtype = _dt.get_default_dtype()
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self.weight = self.create_parameter(shape=[in_features, out_features], attr=weight_attr,
                                            dtype=self._dtype, is_bias=False)
        self.bias = self.create_parameter(shape=[out_features], attr=bias_attr, dtype=self._dtype, is_bias=True)
        self.name = name

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - Paddle's argument name
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.weight.shape[0]}, out_features={self.weight.shape[1]}, "
                f"dtype={self._dtype}{_name_suffix(self.name)}")


class Identity(Layer):
    """Returns its input (a placeholder that accepts and ignores any constructor arguments)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


class Flatten(Layer):
    """Merge the axes start_axis..stop_axis into one."""

    def __init__(self, start_axis: int = 1, stop_axis: int = -1):
        super().__init__()
        self.start_axis = start_axis
        self.stop_axis = stop_axis

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _shape_ops.flatten(input, start_axis=self.start_axis, stop_axis=self.stop_axis)

    def extra_repr(self) -> str:
        return f"start_axis={self.start_axis}, stop_axis={self.stop_axis}"


def _check_dropout(layer: str, p: Any) -> None:
    if isinstance(p, bool) or not isinstance(p, Number):
        raise TypeError(f"{layer}: argument 'p' must be a number, got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"{layer}: argument 'p' must be in [0, 1], got {p}")


class Dropout(Layer):
    """Zero elements with probability p in training (scaled by 1/(1-p) in 'upscale_in_train' mode)."""

    def __init__(self, p: float = 0.5, axis: Any = None, mode: str = "upscale_in_train", name: str | None = None):
        super().__init__()
        _check_dropout("Dropout", p)
        if mode not in ("upscale_in_train", "downscale_in_infer"):
            raise ValueError(f"Dropout: argument 'mode' must be 'upscale_in_train' or 'downscale_in_infer', "
                             f"got {mode!r}")
        self.p = p
        self.axis = axis
        self.mode = mode
        self.name = name

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(input, p=self.p, axis=self.axis, training=self.training, mode=self.mode)

    def extra_repr(self) -> str:
        return f"p={self.p}, axis={self.axis}, mode={self.mode}{_name_suffix(self.name)}"


class _ChannelDropout(Layer):
    """Drop whole channels (Dropout2D / Dropout3D)."""

    _fn: str
    _default_format: str

    def __init__(self, p: float = 0.5, data_format: str | None = None, name: str | None = None):
        super().__init__()
        _check_dropout(type(self).__name__, p)
        self.p = p
        self.data_format = self._default_format if data_format is None else data_format
        self.name = name

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return getattr(F, self._fn)(input, p=self.p, training=self.training, data_format=self.data_format)

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self.data_format}{_name_suffix(self.name)}"


class Dropout2D(_ChannelDropout):
    """Zero whole channels of an NCHW / NHWC input with probability p."""

    _fn, _default_format = "dropout2d", "NCHW"


class Dropout3D(_ChannelDropout):
    """Zero whole channels of an NCDHW / NDHWC input with probability p."""

    _fn, _default_format = "dropout3d", "NCDHW"


class AlphaDropout(Layer):
    """Dropout that keeps the mean and variance of SELU activations."""

    def __init__(self, p: float = 0.5, name: str | None = None):
        super().__init__()
        _check_dropout("AlphaDropout", p)
        self.p = p
        self.name = name

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.alpha_dropout(input, p=self.p, training=self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}{_name_suffix(self.name)}"


class Embedding(Layer):
    """A lookup table: row i of weight [num_embeddings, embedding_dim] for index i."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 sparse: bool = False, weight_attr: Any = None, name: str | None = None):
        super().__init__()
        positive_int("Embedding", "num_embeddings", num_embeddings)
        positive_int("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: argument 'padding_idx' must be within [{-num_embeddings}, "
                                 f"{num_embeddings}), got {padding_idx}")
            padding_idx = padding_idx % num_embeddings
        self._num_embeddings = num_embeddings
        self._embedding_dim = embedding_dim
        self._padding_idx = padding_idx
        self._sparse = sparse
        self._dtype = _dt.get_default_dtype()
        self._name = name
        self.weight = self.create_parameter(attr=weight_attr, shape=[num_embeddings, embedding_dim],
                                            dtype=self._dtype, is_bias=False)
        if padding_idx is not None:
            with no_grad():
                self.weight._data[padding_idx] = 0

    def forward(self, x: Tensor) -> Tensor:
        return F.embedding(x, weight=self.weight, padding_idx=self._padding_idx, sparse=self._sparse)

    def extra_repr(self) -> str:
        text = f"{self._num_embeddings}, {self._embedding_dim}"
        if self._padding_idx is not None:
            text += f", padding_idx={self._padding_idx}"
        if self._sparse:
            text += ", sparse=True"
        return text + _name_suffix(self._name)


class Upsample(Layer):
    """Resize by `size` or `scale_factor` (F.interpolate)."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool = False, align_mode: int = 0, data_format: str = "NCHW",
                 name: str | None = None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode.lower()
        self.align_corners = align_corners
        self.align_mode = align_mode
        self.data_format = data_format
        self.name = name

    def forward(self, x: Tensor) -> Tensor:
        return F.interpolate(x, size=self.size, scale_factor=self.scale_factor, mode=self.mode,
                             align_corners=self.align_corners, align_mode=self.align_mode,
                             data_format=self.data_format)

    def extra_repr(self) -> str:
        main = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{main}, data_format={self.data_format}{_name_suffix(self.name)}"


class UpsamplingNearest2D(Upsample):
    """Nearest-neighbour 2-D upsampling."""

    def __init__(self, size: Any = None, scale_factor: Any = None, data_format: str = "NCHW",
                 name: str | None = None):
        super().__init__(size, scale_factor, "nearest", False, 0, data_format, name)


class UpsamplingBilinear2D(Upsample):
    """Bilinear 2-D upsampling with align_corners=True."""

    def __init__(self, size: Any = None, scale_factor: Any = None, data_format: str = "NCHW",
                 name: str | None = None):
        super().__init__(size, scale_factor, "bilinear", True, 0, data_format, name)


class _PadNd(Layer):
    """Pad the spatial axes (F.pad) by a fixed amount."""

    _ndim: int
    _default_format: str

    def __init__(self, padding: Any, mode: str = "constant", value: float = 0.0, data_format: str | None = None,
                 name: str | None = None):
        super().__init__()
        if isinstance(padding, int):
            padding = [padding] * (2 * self._ndim)
        elif isinstance(padding, Tensor):
            padding = padding.tolist()
        if not isinstance(padding, (list, tuple)) or len(padding) != 2 * self._ndim:
            raise ValueError(f"{type(self).__name__}: argument 'padding' must be an int or {2 * self._ndim} ints, "
                             f"got {padding!r}")
        self._pad = list(padding)
        self._mode = mode
        self._value = value
        self._data_format = self._default_format if data_format is None else data_format
        self._name = name

    def forward(self, x: Tensor) -> Tensor:
        return F.pad(x, pad=self._pad, mode=self._mode, value=self._value, data_format=self._data_format)

    def extra_repr(self) -> str:
        return (f"padding={self._pad}, mode={self._mode}, value={self._value}, "
                f"data_format={self._data_format}{_name_suffix(self._name)}")


class Pad1D(_PadNd):
    """Pad the last axis of an NCL / NLC input: padding = [left, right]."""

    _ndim, _default_format = 1, "NCL"


class Pad2D(_PadNd):
    """Pad H and W of an NCHW / NHWC input: padding = [left, right, top, bottom]."""

    _ndim, _default_format = 2, "NCHW"


class Pad3D(_PadNd):
    """Pad D, H and W: padding = [left, right, top, bottom, front, back]."""

    _ndim, _default_format = 3, "NCDHW"


class ZeroPad2D(Pad2D):
    """Pad H and W with zeros."""

    def __init__(self, padding: Any, data_format: str = "NCHW", name: str | None = None):
        super().__init__(padding, "constant", 0.0, data_format, name)


class CosineSimilarity(Layer):
    """Cosine similarity of x1 and x2 along `axis`."""

    def __init__(self, axis: int = 1, eps: float = 1e-8):
        super().__init__()
        self._axis = axis
        self._eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, axis=self._axis, eps=self._eps)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, eps={self._eps}"
