"""Guards and the per-code-object cache: guards are data, checked by one generated function.

`Guard(source, kind, expected)` (kinds in `checks.CHECKS`), `CodeCache` (one per code object:
`insert`, `lookup`, `miss_reasons`, `guard_source`), `RUN_EAGERLY`, `FrameLike`, `TensorMeta`.
"""
from .cache import (RUN_EAGERLY, CacheEntry, CacheLimitError, CacheSizeLimitWarning, CodeCache, FrameLike, GuardCount,
                    Miss, MissReason)
from .checks import CHECKS, TensorMeta
from .guard import Guard, exclusive, tensor_guards

__all__ = ["RUN_EAGERLY", "CHECKS", "CacheEntry", "CacheLimitError", "CacheSizeLimitWarning", "CodeCache", "FrameLike",
           "Guard", "GuardCount", "Miss", "MissReason", "TensorMeta", "exclusive", "tensor_guards"]
