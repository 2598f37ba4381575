"""Which mode public APIs run in: dynamic (eager, the default) or static (append ops), per thread.

Lower layers (ops, nn) consult this module; the static package installs its hooks here
when `paddle.enable_static()` is called, so nothing below `static` imports it. The mode is
thread-local: a thread building a program (sot translating a function, or user code after
`enable_static()`) never turns another thread's eager ops into static ones.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["in_dynamic_mode"]


class _Hooks(threading.local):
    """What static mode replaces in this thread: op application and parameter creation."""

    static = False
    create_parameter: Callable[..., Any] | None = None


hooks = _Hooks()


def in_dynamic_mode() -> bool:
    """True unless `paddle.enable_static()` is in effect in this thread."""
    return not hooks.static
