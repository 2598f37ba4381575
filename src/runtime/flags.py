"""Global framework flags, read by name as Paddle's `set_flags`/`get_flags` do.

Every flag is declared here with its default and a one-line reason, so one module
documents all knobs (the executor's flags join this table when it lands).
"""
from __future__ import annotations

from typing import Any

__all__ = ["set_flags", "get_flags"]

_DEFAULTS: dict[str, tuple[Any, str]] = {
    "FLAGS_check_nan_inf": (False, "raise when an op produces NaN or Inf: every eager op, and every op of a "
                                   "static run (checked right after it ran, in every run mode)"),
    "FLAGS_new_executor_sequential_run": (False, "run static programs on one thread"),
    "FLAGS_enable_constant_folding": (True, "evaluate static ops whose inputs are all constants once, when the "
                                            "executor prepares the program"),
    "FLAGS_enable_dead_op_elimination": (True, "drop static ops that no fetch, persistable or side effect needs"),
    "FLAGS_enable_fusion": (True, "run chains of elementwise static ops as one fused_elementwise op"),
    "FLAGS_enable_inplace": (True, "let a static elementwise op write into a dead input's buffer"),
    "FLAGS_enable_epilogue_fusion": (True, "run a static conv/linear/matmul and the eval batch norm and "
                                           "elementwise ops on its output as one op, in its buffer"),
    "FLAGS_enable_dead_mask_elimination": (True, "a static max_pool whose mask nothing reads skips the argmax"),
    "FLAGS_fold_batch_norm": (False, "fold a static eval batch norm into the conv/linear before it (changes "
                                     "rounding; needs FLAGS_enable_epilogue_fusion)"),
    "FLAGS_executor_parallel": ("auto", "static runs: 'auto' (a cost estimate picks threads or one thread), "
                                        "'always', 'never'"),
    "FLAGS_executor_stream_policy": ("host", "where static kernels run: 'host' pool, 'single' device stream, "
                                             "'auto' streams for costly independent branches"),
    "FLAGS_executor_host_threads": (0, "threads of the executor's host pool; 0: one per core, 2 to 4"),
    "FLAGS_executor_record_stream": (True, "defer freeing a var until every other stream that used it passed "
                                           "the use (off only to show the hazard it prevents)"),
    "FLAGS_benchmark": (False, "static runs wait for each op to finish before the next starts (timing each op; "
                               "no two ops of a parallel run overlap)"),
    "FLAGS_cuda_graph": ("off", "static runs on a GPU: 'on' captures each feed signature's run as one CUDA graph "
                                "and replays it, 'auto' keeps a graph only where timed replays beat plain runs"),
    "FLAGS_cuda_graph_warmup": (3, "FLAGS_cuda_graph='auto': plain runs of a feed signature before its graph is "
                                   "captured and timed"),
    "FLAGS_executor_poison_freed": (False, "debug: the executor overwrites a freed buffer with NaN (or an integer "
                                           "sentinel) so a read after free gives wrong values"),
}
_values: dict[str, Any] = {k: v for k, (v, _) in _DEFAULTS.items()}


def set_flags(flags: dict[str, Any]) -> None:
    """Set flags from a dict; unknown names raise ValueError (a typo must not pass)."""
    if not isinstance(flags, dict):
        raise TypeError(f"set_flags: expected a dict of flag name to value, got {type(flags).__name__}")
    for name in flags:
        if name not in _DEFAULTS:
            raise ValueError(f"set_flags: unknown flag {name!r}; known flags: {sorted(_DEFAULTS)}")
    for name, value in flags.items():
        default = _DEFAULTS[name][0]
        _values[name] = type(default)(value)


def get_flags(flags: str | list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Return {name: value} for one flag name or a list of names."""
    names = [flags] if isinstance(flags, str) else list(flags)
    out = {}
    for name in names:
        if name not in _DEFAULTS:
            raise ValueError(f"get_flags: unknown flag {name!r}; known flags: {sorted(_DEFAULTS)}")
        out[name] = _values[name]
    return out


def flag(name: str) -> Any:
    """Fast internal read of one flag."""
    return _values[name]
