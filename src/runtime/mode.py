"""Which mode public APIs run in: dynamic (eager, the default) or static (append ops).

Lower layers (ops, nn) consult this module; the static package installs its hooks here
when `paddle.enable_static()` is called, so nothing below `static` imports it.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["in_dynamic_mode"]


class _Hooks:
    """What static mode replaces: op application and parameter creation."""

    static = False
    create_parameter: Callable[..., Any] | None = None


hooks = _Hooks()


def in_dynamic_mode() -> bool:
    """True unless `paddle.enable_static()` is in effect."""
    return not hooks.static
