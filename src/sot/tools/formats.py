"""A Report as text for people (text, markdown), for CI (JUnit XML) and for programs (json).

`render(report, fmt)` returns the whole document as a string. The text and markdown forms show
per user function (`Report.tree`: what its breaks made nested under it, each named by what it is)
its graphs, ops captured vs eager runs, breaks and fallbacks grouped by reason and by file:line
(a break met on every translation is one line with its count), and its recompilations with the
guard that failed; JUnit gives one test case per function, failing where it broke or fell back (so
a CI page lists them); `cache_text` is the guard cache view of `sot cache`, `why_text` the last
misses of `sot cache why`, `headline` the one-line totals. Names generated code gives a resume
function's parameters are shown as what they hold (`readable`).
"""
from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Callable

from sot.codegen.loop_body import ITEM
from sot.codegen.resume_code import stack_slot
from sot.translation.reasons import REASONS

from .report import Event, FunctionReport, Node, Report, totals_of

__all__ = ["FORMATS", "render", "headline", "cache_text", "why_text", "readable", "title", "name_of", "by_place"]


def _path(file: str) -> str:
    """`file` relative to the working directory when it lies under it (shorter lines), else as is."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def _where(file: str, line: int) -> str:
    return f"{_path(file)}:{line}"


def _summary(functions: list[FunctionReport]) -> str:
    """The counts of `functions` together (a function alone, or a user function with what its breaks made)."""
    t = totals_of(functions)
    translations = sum(f.translations for f in functions)
    return (f"{t['graphs']} graph(s), {t['breaks']} break(s), {t['fallbacks']} fallback(s), "
            f"{t['recompiles']} recompile(s); ops captured {t['ops_captured']}, eager runs {t['eager_runs']} "
            f"(captured {t['captured_ratio']:.0%}); {translations} translation(s) in {t['translate_seconds'] * 1e3:.1f} ms")


def _grouped(events: list[Event]) -> dict[str, list[Event]]:
    """Events by reason code, in order of first appearance."""
    out: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        out[e.code].append(e)
    return out


def by_place(events: list[Event]) -> list[list[Event]]:
    """Events by (code, file, line), in order of first appearance: a break met on every translation is
    one group (its texts may differ by generated names: the first stands for all)."""
    out: dict[tuple[str, str, int], list[Event]] = defaultdict(list)
    for e in events:
        out[e.code, e.file, e.line].append(e)
    return list(out.values())


def _times(n: int) -> str:
    return f" ({n}x)" if n > 1 else ""


def title(f: FunctionReport) -> str:
    """What `f` is, for its line under the function it came from: a resume function or loop body is
    named by where it starts (its code has its user function's name), a callee by its own name."""
    own = "" if f.qualname == f.resume_of else f"{f.qualname}: "
    if f.kind == "resume":
        after = f" after the break at {_where_text(f.break_at)}" + (f" `{f.source}`" if f.source else "") \
            if f.break_at else ""
        return f"{own}resume at {_where(f.file, f.resumes_at or f.line)}{after}"
    if f.kind == "loop_body":
        loop = f"`{f.source}`" if f.source else "the loop"
        return f"{own}body of {loop} at {_where(f.file, f.resumes_at or f.line)}, run as a loop"
    if f.kind == "callee" and f.break_at:
        return f"{f.qualname}, called at the break at {_where_text(f.break_at)}, translated on its own"
    return f.qualname


def name_of(f: FunctionReport) -> str:
    """`f` named on its own (a list of functions, a test case): its qualname and, nested, what it is."""
    return f.qualname if f.kind == "function" or f.resume_of is None else f"{f.resume_of} > {title(f)}"


def _where_text(where: str) -> str:
    file, _, line = where.rpartition(":")
    return _where(file, int(line)) if line.isdigit() else where


_GENERATED = re.compile(r"f_locals\[['\"](__sot_\w+)['\"]\]|\b__sot_\w+")
_FRAME_NAME = re.compile(r"\bf_(?:locals|globals|builtins)\[(['\"])([^\W\d]\w*)\1\]")


def readable(f: FunctionReport, text: str) -> str:
    """`text` (a guard, a miss, a dim made dynamic, a reason) as the user's code names things: a frame
    variable read as `f_locals['x']` (or `f_globals`, `f_builtins`) shown as `x`, and the local names
    generated code gives a resume function's or loop body's parameters replaced by what they hold:
    users never wrote them."""
    def what(match: re.Match) -> str:
        name = match.group(1) or match.group(0)
        slot = stack_slot(name)
        if slot is not None and slot < len(f.carried) and f.carried[slot]:
            return f"<the value of `{f.carried[slot]}` carried across the break>"
        if slot is not None:
            where = _where_text(f.break_at) if f.break_at else _where(f.file, f.resumes_at or f.line)
            return f"<stack slot {slot} at the break ({where})>"
        return "<the loop's item>" if name == ITEM else "<a value the JIT passes along>"
    return _FRAME_NAME.sub(lambda m: m.group(2), _GENERATED.sub(what, text))


def headline(report: Report) -> str:
    """One line of totals: functions, graphs, breaks, fallbacks, recompiles, the captured ratio."""
    return f"{report.totals['functions']} function(s), {_counts(report.totals)}"


def _counts(t: dict[str, float]) -> str:
    return (f"{t['graphs']} graph(s), {t['breaks']} break(s), {t['fallbacks']} fallback(s), "
            f"{t['recompiles']} recompile(s), captured {t['captured_ratio']:.0%}")


def _text(report: Report) -> str:
    lines = [f"sot report: {headline(report)}"]
    for root in report.tree():
        f = root.function
        in_all = f"  in all: {_counts(root.totals)}" if root.children else ""
        lines += ["", f"{f.qualname}  {_where(f.file, f.line)}{in_all}", "  " + _summary([f])]
        lines += _own_text(f, "  ")
        for child in root.children:
            lines += _child_text(child, "  ")
    return "\n".join(lines) + "\n"


def _child_text(node: Node, indent: str) -> list[str]:
    """A function a break made, under its parent: what it is, its own counts, then what its breaks made."""
    lines = [f"{indent}└ {title(node.function)}", f"{indent}    {_summary([node.function])}"]
    lines += _own_text(node.function, indent + "    ")
    for child in node.children:
        lines += _child_text(child, indent + "    ")
    return lines


def _own_text(f: FunctionReport, indent: str) -> list[str]:
    """A function's own breaks and fallbacks (one line per place, with its count), recompiles, dims."""
    lines = []
    for kind, events in (("break", f.breaks), ("eager", f.fallbacks)):
        for code, group in _grouped(events).items():
            lines.append(f"{indent}{kind} [{code}] {REASONS[code].kind}: {REASONS[code].summary} ({len(group)}x; "
                         f"see docs/reasons.md#{code.lower()})")
            lines += [f"{indent}  {_where(same[0].file, same[0].line)}{_times(len(same))}: {readable(f, same[0].reason)}"
                      + (f"    | {same[0].source}" if same[0].source else "") for same in by_place(group)]
    for miss in f.cache.misses:
        lines.append(f"{indent}recompiled: " + "; ".join(
            f"entry {m.entry} failed `{readable(f, m.expected)}` (got {m.actual})" for m in miss))
    if f.made_dynamic:
        lines.append(f"{indent}made dynamic: {', '.join(readable(f, d) for d in f.made_dynamic)}")
    lines += [f"{indent}{kept.text(_path)}" for kept in f.kept_static]
    if f.cache.limit_reached:
        lines.append(f"{indent}[SOT-L001] cache limit {f.cache.limit} reached: runs eagerly from then on")
    return lines


def _flat(nodes: list[Node], depth: int = 0) -> list[tuple[int, Node]]:
    """The tree's nodes depth first, each with its depth."""
    return [item for n in nodes for item in [(depth, n), *_flat(n.children, depth + 1)]]


def _markdown(report: Report) -> str:
    lines = ["# sot report", "", headline(report), "",
             "A function's row counts it with what its breaks made; the rows under it (└) count their own part.", "",
             "| function | where | graphs | breaks | fallbacks | recompiles | ops captured | eager runs | captured |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    flat = _flat(report.tree())
    for depth, node in flat:
        f = node.function
        t = totals_of(node.functions() if depth == 0 else [f])
        name = f"`{f.qualname}`" if depth == 0 else "&nbsp;&nbsp;" * depth + f"└ {title(f).replace('|', '/')}"
        lines.append(f"| {name} | `{os.path.basename(f.file)}:{f.line}` | {t['graphs']} | {t['breaks']} "
                     f"| {t['fallbacks']} | {t['recompiles']} | {t['ops_captured']} | {t['eager_runs']} "
                     f"| {t['captured_ratio']:.0%} |")
    events = [(node.function, kind, same) for _, node in flat
              for kind, es in (("break", node.function.breaks), ("eager", node.function.fallbacks))
              for same in by_place(es)]
    if events:
        lines += ["", "## Breaks and fallbacks", "", "| function | kind | code | where | times | reason |",
                  "|---|---|---|---|---:|---|"]
        lines += [f"| {name_of(f).replace('|', '/')} | {kind} | {same[0].code} | `{os.path.basename(same[0].file)}:"
                  f"{same[0].line}` | {len(same)} | {readable(f, same[0].reason).replace('|', '/')} |"
                  for f, kind, same in events]
    kept = [(node.function, k) for _, node in flat for k in node.function.kept_static]
    if kept:
        lines += ["", "## Dims kept static", "", "| function | dim | why | where | source |", "|---|---|---|---|---|"]
        lines += [f"| {name_of(f).replace('|', '/')} | {k.dim} | {k.why.replace('|', '/')} "
                  f"| `{os.path.basename(k.file)}:{k.line}` | `{k.source.replace('|', '/')}` |" for f, k in kept]
    return "\n".join(lines) + "\n"


def _junit(report: Report) -> str:
    t = report.totals
    functions = [node.function for _, node in _flat(report.tree())]
    failing = [f for f in functions if f.breaks or f.fallbacks]
    suite = ET.Element("testsuite", name="sot", tests=str(len(functions)), failures=str(len(failing)),
                       errors="0", skipped="0", time=f"{t['translate_seconds']:.6f}")
    for f in functions:
        case = ET.SubElement(suite, "testcase", classname=f.file, name=name_of(f), file=f.file, line=str(f.line),
                             time=f"{f.translate_seconds:.6f}")
        events = [("break", same) for same in by_place(f.breaks)] + [("eager", same) for same in by_place(f.fallbacks)]
        if events:
            failure = ET.SubElement(case, "failure", type=events[0][1][0].code,
                                    message=f"{len(f.breaks)} break(s), {len(f.fallbacks)} fallback(s)")
            failure.text = "\n".join(f"{kind} [{same[0].code}] {readable(f, same[0].reason)} ({same[0].where})"
                                     f"{_times(len(same))}" for kind, same in events)
        out = ET.SubElement(case, "system-out")
        out.text = _summary([f])
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
    for f in (f for f in functions if not f.idle):  # (a resume function of a branch never taken)
        c = f.cache
        lines.append(f"{name_of(f)}  {_where(f.file, f.line)}: {len(c.entries)}/{c.limit} entries"
                     + (", size limit reached (runs eagerly)" if c.limit_reached else "")
                     + f", {len(c.misses)} recorded miss(es)")
        for e in c.entries:
            lines.append(f"  entry {e.id} ({e.kind}): {e.hits} hit(s)")
            lines += [f"    {readable(f, g)}" for g in e.guards] or ["    (no guards)"]
    return "\n".join(lines) + "\n"


def why_text(functions: list[FunctionReport]) -> str:
    """For each function's last misses: per entry, the first guard that failed, expected and actual;
    then the dims kept static (a new size of one misses by design), with why and the line."""
    lines = []
    for f in (f for f in functions if not f.idle):
        lines.append(f"{name_of(f)}  {_where(f.file, f.line)}: {len(f.cache.misses)} miss(es) with entries to compare")
        for i, miss in enumerate(f.cache.misses):
            lines.append(f"  miss {i}:")
            lines += [f"    entry {m.entry}: first failing guard `{readable(f, m.expected)}`; got {m.actual}"
                      for m in miss]
        lines += [f"  {kept.text(_path)}" for kept in f.kept_static]
    return "\n".join(lines) + "\n"
