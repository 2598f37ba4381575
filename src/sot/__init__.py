"""sot: a bytecode-level JIT for eager `runtime` model code, with subgraph fallback.

`to_static(fn)` translates the frame of `fn` into a cached static program (see
docs/to_static.md and docs/sot-internals.md); `symbolic_translate(fn)` is the same with
fallback; `GraphBreakError` is raised by `to_static(fn, fallback=False)` for a frame that cannot be
captured whole. `disable()` / `not_to_static` leave code untouched; `explain(fn, ...)` reports
what one JIT call captured; `mark_dynamic(t, dim)` / `mark_static(t, dim)` force a dim of an input
dynamic (-1, any size) or specialised; `report()` all the JIT recorded (the `sot` command's data);
`sot.testing.assert_same` checks JIT == eager; `graph_break_on(api)` / `skip_function(fn)` are the
user's block list (also as context managers); `reset()` forgets every translation (the next calls
translate again).
"""
__version__ = "0.1.0"

from . import testing  # noqa: E402
from .api import disable, not_to_static, reset, symbolic_translate, to_static  # noqa: E402
from .opcode_executor.blocklist import graph_break_on, skip_function  # noqa: E402
from .dynamic.shapes import mark_dynamic, mark_static  # noqa: E402
from .explain import Explanation, explain  # noqa: E402
from .guards import CacheLimitError  # noqa: E402
from .tools.report import report  # noqa: E402
from . import paddle_jit  # noqa: E402,F401  (registers sot as the JIT of paddle.jit)
from .translation.translator import GraphBreakError  # noqa: E402

__all__ = ["to_static", "symbolic_translate", "GraphBreakError", "disable", "not_to_static", "explain",
           "Explanation", "testing", "report",
           "mark_dynamic", "mark_static", "graph_break_on", "skip_function", "CacheLimitError", "reset"]
