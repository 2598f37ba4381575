"""A Report as text for people (text, markdown), for CI (JUnit XML) and for programs (json).

`render(report, fmt)` returns the whole document as a string. The text and markdown forms show
per function its graphs, ops captured vs eager runs, breaks and fallbacks grouped by reason with
file:line, and its recompilations with the guard that failed; JUnit gives one test case per
function, failing where it broke or fell back (so a CI page lists them); `cache_text` is the guard
cache view of `sot cache`, `why_text` the last misses of `sot cache why`, `headline` the one-line totals.
"""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Callable

from sot.translation.reasons import REASONS

from .report import Event, FunctionReport, Report

__all__ = ["FORMATS", "render", "headline", "cache_text", "why_text"]


def _path(file: str) -> str:
    """`file` relative to the working directory when it lies under it (shorter lines), else as is."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def _where(file: str, line: int) -> str:
    return f"{_path(file)}:{line}"


def _summary(f: FunctionReport) -> str:
    return (f"{f.graph_count} graph(s), {len(f.breaks)} break(s), {len(f.fallbacks)} fallback(s), "
            f"{f.recompiles} recompile(s); ops captured {f.ops_captured}, eager runs {f.eager_runs} "
            f"(captured {f.captured_ratio:.0%}); {f.translations} translation(s) in {f.translate_seconds * 1e3:.1f} ms")


def _grouped(events: list[Event]) -> dict[str, list[Event]]:
    """Events by reason code, in order of first appearance."""
    out: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        out[e.code].append(e)
    return out


def _name(f: FunctionReport) -> str:
    return f"{f.qualname} (from a break in {f.resume_of})" if f.resume_of else f.qualname


def headline(report: Report) -> str:
    """One line of totals: functions, graphs, breaks, fallbacks, recompiles, the captured ratio."""
    t = report.totals
    return (f"{t['functions']} function(s), {t['graphs']} graph(s), {t['breaks']} break(s), "
            f"{t['fallbacks']} fallback(s), {t['recompiles']} recompile(s), captured {t['captured_ratio']:.0%}")


def _text(report: Report) -> str:
    lines = [f"sot report: {headline(report)}"]
    for f in report.functions:
        lines += ["", f"{_name(f)}  {_where(f.file, f.line)}", "  " + _summary(f)]
        for kind, events in (("break", f.breaks), ("eager", f.fallbacks)):
            for code, group in _grouped(events).items():
                lines.append(f"  {kind} [{code}] {REASONS[code].kind}: {REASONS[code].summary} ({len(group)}x)")
                lines += [f"    {_where(e.file, e.line)}: {e.reason}" + (f"    | {e.source}" if e.source else "") for e in group]
        for miss in f.cache.misses:
            lines.append("  recompiled: " + "; ".join(f"entry {m.entry} failed `{m.expected}` (got {m.actual})"
                                                      for m in miss))
        if f.made_dynamic:
            lines.append(f"  made dynamic: {', '.join(f.made_dynamic)}")
        if f.cache.limit_reached:
            lines.append(f"  [SOT-L001] cache limit {f.cache.limit} reached: runs eagerly from then on")
    return "\n".join(lines) + "\n"


def _markdown(report: Report) -> str:
    lines = ["# sot report", "", headline(report), "",
             "| function | where | graphs | breaks | fallbacks | recompiles | ops captured | eager runs | captured |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for f in report.functions:
        lines.append(f"| `{_name(f)}` | `{os.path.basename(f.file)}:{f.line}` | {f.graph_count} | {len(f.breaks)} "
                     f"| {len(f.fallbacks)} | {f.recompiles} | {f.ops_captured} | {f.eager_runs} "
                     f"| {f.captured_ratio:.0%} |")
    events = [(f, kind, e) for f in report.functions for kind, es in (("break", f.breaks), ("eager", f.fallbacks))
              for e in es]
    if events:
        lines += ["", "## Breaks and fallbacks", "", "| function | kind | code | where | reason |",
                  "|---|---|---|---|---|"]
        lines += [f"| `{f.qualname}` | {kind} | {e.code} | `{os.path.basename(e.file)}:{e.line}` "
                  f"| {e.reason.replace('|', '/')} |" for f, kind, e in events]
    return "\n".join(lines) + "\n"


def _junit(report: Report) -> str:
    t = report.totals
    failing = [f for f in report.functions if f.breaks or f.fallbacks]
    suite = ET.Element("testsuite", name="sot", tests=str(t["functions"]), failures=str(len(failing)),
                       errors="0", skipped="0", time=f"{t['translate_seconds']:.6f}")
    for f in report.functions:
        case = ET.SubElement(suite, "testcase", classname=f.file, name=_name(f), file=f.file, line=str(f.line),
                             time=f"{f.translate_seconds:.6f}")
        events = [("break", e) for e in f.breaks] + [("eager", e) for e in f.fallbacks]
        if events:
            failure = ET.SubElement(case, "failure", type=events[0][1].code,
                                    message=f"{len(f.breaks)} break(s), {len(f.fallbacks)} fallback(s)")
            failure.text = "\n".join(f"{kind} [{e.code}] {e.reason} ({e.where})" for kind, e in events)
        out = ET.SubElement(case, "system-out")
        out.text = _summary(f)
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def _json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=1) + "\n"


FORMATS: dict[str, Callable[[Report], str]] = {"text": _text, "json": _json, "junit": _junit,
                                               "markdown": _markdown}


def render(report: Report, fmt: str) -> str:
    """The report in format `fmt` (one of FORMATS)."""
    try:
        return FORMATS[fmt](report)
    except KeyError:
        raise ValueError(f"render: unknown format {fmt!r}; known: {', '.join(FORMATS)}") from None


def cache_text(functions: list[FunctionReport]) -> str:
    """The guard cache of each function: entries in lookup order, guards, hits, misses, the limit."""
    lines = []
    for f in functions:
        c = f.cache
        lines.append(f"{_name(f)}  {_where(f.file, f.line)}: {len(c.entries)}/{c.limit} entries"
                     + (", size limit reached (runs eagerly)" if c.limit_reached else "")
                     + f", {len(c.misses)} recorded miss(es)")
        for e in c.entries:
            lines.append(f"  entry {e.id} ({e.kind}): {e.hits} hit(s)")
            lines += [f"    {g}" for g in e.guards] or ["    (no guards)"]
    return "\n".join(lines) + "\n"


def why_text(functions: list[FunctionReport]) -> str:
    """For each function's last misses: per entry, the first guard that failed, expected and actual."""
    lines = []
    for f in functions:
        lines.append(f"{_name(f)}  {_where(f.file, f.line)}: {len(f.cache.misses)} miss(es) with entries to compare")
        for i, miss in enumerate(f.cache.misses):
            lines.append(f"  miss {i}:")
            lines += [f"    entry {m.entry}: first failing guard `{m.expected}`; got {m.actual}" for m in miss]
    return "\n".join(lines) + "\n"
