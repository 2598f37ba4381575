"""The enums of `paddle.inference`, with Paddle's member values (a handle's `type()`, a Config's
precision and place), and the NumPy dtype of each data type."""
from __future__ import annotations

import enum

import numpy as np

__all__ = ["DataType", "PlaceType", "PrecisionType", "data_type_of", "get_num_bytes_of_data_type"]


class DataType(enum.IntEnum):
    """The element type of a Predictor's input or output (Paddle's `PaddleDType`)."""
    FLOAT32 = 0
    INT64 = 1
    INT32 = 2
    UINT8 = 3
    INT8 = 4
    FLOAT16 = 5
    BOOL = 6
    FLOAT64 = 7
    BFLOAT16 = 8


class PlaceType(enum.IntEnum):
    """Where a Predictor runs (Paddle's `PaddlePlace`)."""
    UNK = -1
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM = 4


class PrecisionType(enum.IntEnum):
    """The precision `Config.enable_use_gpu` asks for (only Float32 computes differently from nothing here)."""
    Float32 = 0
    Int8 = 1
    Half = 2
    Bfloat16 = 3


_BY_NUMPY = {np.dtype(np.float32): DataType.FLOAT32, np.dtype(np.int64): DataType.INT64,
             np.dtype(np.int32): DataType.INT32, np.dtype(np.uint8): DataType.UINT8,
             np.dtype(np.int8): DataType.INT8, np.dtype(np.float16): DataType.FLOAT16,
             np.dtype(np.bool_): DataType.BOOL, np.dtype(np.float64): DataType.FLOAT64}
_BYTES = {DataType.BFLOAT16: 2, **{t: d.itemsize for d, t in _BY_NUMPY.items()}}


def data_type_of(dtype: np.dtype) -> DataType:
    """The DataType of a NumPy dtype (a TypeError for one Paddle's inference has no name for)."""
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"paddle.inference: data type {np.dtype(dtype).name} has no inference DataType "
                        f"(supported: {', '.join(sorted(d.name for d in _BY_NUMPY))})") from None


def get_num_bytes_of_data_type(dtype: DataType) -> int:
    """The size in bytes of one element of `dtype`."""
    return _BYTES[DataType(dtype)]
