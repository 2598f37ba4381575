"""sot: a bytecode-level JIT for eager `runtime` model code, with subgraph fallback.

`to_static(fn)` translates the frame of `fn` into a cached static program (see
docs/sot-internals.md, "to_static (first slice)"); `symbolic_translate(fn)` is the same with
fallback; `GraphBreakError` is raised by `to_static(fn, fallback=False)` for a frame that cannot be
captured whole.
"""
__version__ = "0.1.0"

from .api import symbolic_translate, to_static  # noqa: E402
from .translate import GraphBreakError  # noqa: E402

__all__ = ["to_static", "symbolic_translate", "GraphBreakError"]
