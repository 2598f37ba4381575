"""What a translation that did not capture its frame whole leaves behind: a Fallback, or GraphBreakError.

Kept apart from the driver so that the modules deciding how a break is built can record the parts of
a frame they leave to eager code without importing the driver; `rerun_after` records the calls whose
compiled graph failed at run time and ran again eagerly (sot.codegen.rerun asks it).
"""
from __future__ import annotations

import types
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from sot.codegen.effects import raised_while_applying
from sot.translation.reasons import REASONS

if TYPE_CHECKING:
    from sot.translation.translator import Translator

__all__ = ["GraphBreakError", "Fallback", "rerun_after", "where_defined"]


class GraphBreakError(RuntimeError):
    """A frame could not be captured whole and `fallback=False` asked for no eager fallback."""

    def __init__(self, reason: str, where: str, code: str = "SOT-G001"):
        self.reason = reason
        self.where = where
        self.code = code
        super().__init__(f"cannot capture the frame: [{code}] {reason} ({where}); hint: {REASONS[code].hint}")


@dataclass(frozen=True)
class Fallback:
    """One frame that ran eagerly, and why (`code`: its entry in sot.translation.reasons.REASONS)."""

    reason: str
    where: str
    code: str = "SOT-G001"


def rerun_after(translator: Translator) -> Callable[[Exception], bool]:
    """Whether a compiled call of `translator`'s code that raised runs again eagerly: yes, unless the
    recorded side effects were being made (some may be made already); a re-run is recorded on the
    translator (held weakly: the generated code lives in its cache), once for a failure repeated call
    after call."""
    ref = weakref.ref(translator)

    def decide(error: Exception) -> bool:
        if raised_while_applying(error):
            return False
        translator = ref()
        if translator is not None:
            fallback = Fallback(f"{type(error).__name__}: {error} (raised by the compiled graph at run time: the "
                                "call ran again eagerly)", where_defined(translator.code), "SOT-R001")
            if not translator.fallbacks or translator.fallbacks[-1] != fallback:
                translator.fallbacks.append(fallback)
        return True
    return decide


def where_defined(code: types.CodeType) -> str:
    """file:line of a code object's definition."""
    return f"{code.co_filename}:{code.co_firstlineno}"
