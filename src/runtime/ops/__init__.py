"""The op library. Importing it registers every op; `registry.all_ops()` lists them."""
from . import dispatch  # noqa: F401 - installs eager dispatch before any op runs
from . import (activation, common, conv, creation, detection, fused, gather, indexing, interpolate, linalg,  # noqa: F401
               loss, math, norm, operators, optimizer_ops, padding, pool, random, reduction, sampling, search,
               shape)
from . import fused_conv  # noqa: F401 - fused_epilogue and max_pool_values
from . import complex, fft, signal  # noqa: F401 - complex tensors, paddle.fft, paddle.signal
from .registry import OpDef, Sample, TensorSpec, all_ops, get_op

__all__ = ["OpDef", "Sample", "TensorSpec", "all_ops", "get_op"]
