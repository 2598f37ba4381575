"""Thresholds that fail a CI build: `check(report, limits, baseline)` lists every violation.

Limits (None: not checked): `max_breaks` and `max_fallbacks` bound the totals over all
functions, `min_captured_ratio` the overall ratio (`report.captured_ratio`: a frame run eagerly counts
as not captured, and a run that compiled nothing is 0.0), `max_recompiles` each function's
recompiles. A baseline report fails any function that got worse than it was there: a break or
fallback (reason code at file:line) it did not have, or more recompiles. Functions match by
qualname and file name (not the directory, so a report from another checkout compares).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .report import Event, FunctionReport, Report

__all__ = ["Limits", "check"]


@dataclass(frozen=True)
class Limits:
    """The thresholds of `sot report`; None leaves one unchecked."""

    max_breaks: int | None = None
    max_fallbacks: int | None = None
    min_captured_ratio: float | None = None
    max_recompiles: int | None = None


def check(report: Report, limits: Limits, baseline: Report | None = None) -> list[str]:
    """Every threshold `report` exceeds and every function worse than in `baseline`, as messages."""
    t = report.totals
    out = []
    if limits.max_breaks is not None and t["breaks"] > limits.max_breaks:
        out.append(f"{t['breaks']} break(s) > --max-breaks {limits.max_breaks}")
    if limits.max_fallbacks is not None and t["fallbacks"] > limits.max_fallbacks:
        out.append(f"{t['fallbacks']} fallback(s) > --max-fallbacks {limits.max_fallbacks}")
    if limits.min_captured_ratio is not None and t["captured_ratio"] < limits.min_captured_ratio:
        out.append(f"captured ratio {t['captured_ratio']:.3f} < --min-captured-ratio {limits.min_captured_ratio}")
    if limits.max_recompiles is not None:
        out += [f"{f.qualname} ({f.where}): {f.recompiles} recompile(s) > --max-recompiles {limits.max_recompiles}"
                for f in report.functions if f.recompiles > limits.max_recompiles]
    if baseline is not None:
        out += _worse(report, baseline)
    return out


def _key(f: FunctionReport) -> tuple[str, str]:
    return f.qualname, os.path.basename(f.file)


def _event_keys(events: list[Event]) -> set[tuple[str, str, int]]:
    return {(e.code, os.path.basename(e.file), e.line) for e in events}


def _worse(report: Report, baseline: Report) -> list[str]:
    """Functions with a break, fallback or recompile the baseline did not have."""
    old: dict[tuple[str, str], list[FunctionReport]] = {}
    for f in baseline.functions:
        old.setdefault(_key(f), []).append(f)
    out = []
    for f in report.functions:
        before = old.get(_key(f), [])
        for kind, events in (("break", f.breaks), ("fallback", f.fallbacks)):
            known = set().union(*(_event_keys(getattr(b, kind + "s")) for b in before))
            out += [f"{f.qualname}: new {kind} [{e.code}] {e.reason} ({e.where})" for e in events
                    if (e.code, os.path.basename(e.file), e.line) not in known]
        was = max((b.recompiles for b in before), default=0)
        if f.recompiles > was:
            out.append(f"{f.qualname} ({f.where}): {f.recompiles} recompile(s), baseline {was}")
    return out
