"""What a translation that did not capture its frame whole leaves behind: a Fallback, or GraphBreakError.

Kept apart from the driver so that the modules deciding how a break is built can record the parts of
a frame they leave to eager code without importing the driver.
"""
from __future__ import annotations

from dataclasses import dataclass

from sot.translation.reasons import REASONS

__all__ = ["GraphBreakError", "Fallback"]


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
