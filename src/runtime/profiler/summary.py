"""`Profiler.summary()`: the recorded events as Paddle's text tables.

Overview (time per event type, overlapping events of one type counted once), Graph Summary
(each compiled graph or program run, with `op_detail` the ops it ran beneath it), Operator
Summary (every op by name, eager and in graphs together) and UserDefined Summary (RecordEvent
spans). Times are host times; the GPU sort keys sort by them too (no device timeline is recorded).
"""
from __future__ import annotations

import enum
from collections import defaultdict
from typing import Iterable

from .events import Event, TracerEventType
from .result import ProfilerResult

__all__ = ["SortedKeys", "SummaryView", "summary_text"]

_UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
_GRAPHS = (TracerEventType.Forward, TracerEventType.Backward)
_USER = (TracerEventType.PythonUserDefined, TracerEventType.UserDefined, TracerEventType.Dataloader)


class SortedKeys(enum.Enum):
    """The order of a summary table's rows (Paddle's values)."""
    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


class SummaryView(enum.Enum):
    """Which tables `summary(views=...)` prints (Paddle's values; views with nothing recorded here print nothing)."""
    DeviceView = 0
    OverView = 1
    ModelView = 2
    DistributedView = 3
    KernelView = 4
    OperatorView = 5
    MemoryView = 6
    MemoryManipulationView = 7
    UDFView = 8


class _Stats:
    def __init__(self):
        self.calls, self.total, self.max, self.min = 0, 0, 0, None

    def add(self, ns: int) -> None:
        self.calls += 1
        self.total += ns
        self.max = max(self.max, ns)
        self.min = ns if self.min is None else min(self.min, ns)

    def key(self, sorted_by: SortedKeys) -> float:
        which = sorted_by.value % 4
        return (self.total, self.total / self.calls, self.max, self.min)[which]


def _merged_ns(events: Iterable[Event]) -> int:
    """The time covered by `events`, overlaps counted once."""
    total, end = 0, None
    for e in sorted(events, key=lambda e: e.start):
        if end is None or e.start > end:
            total += e.end - e.start
            end = e.end
        elif e.end > end:
            total += e.end - end
            end = e.end
    return total


def _stats_by_name(events: Iterable[Event]) -> dict[str, _Stats]:
    table: dict[str, _Stats] = defaultdict(_Stats)
    for e in events:
        table[e.name].add(e.end - e.start)
    return table


class _Table:
    """One text table in Paddle's layout: a title rule, the time unit, column rules, rows."""

    def __init__(self, title: str, columns: list[str], widths: list[int], unit: str):
        self.widths = widths
        rule = "  ".join("-" * w for w in widths)
        self.lines = [f"{title:-^{len(rule)}}", f"Time unit: {unit}", rule, self._row(columns), rule]
        self.rule = rule

    def _row(self, cells: list[str]) -> str:
        return "  ".join(f"{c:<{w}}" for c, w in zip(cells, self.widths)).rstrip()

    def add(self, cells: list[str]) -> None:
        self.lines.append(self._row(cells))

    def section(self, title: str) -> None:
        self.lines.append(f"{title:-^{len(self.rule)}}")

    def text(self) -> str:
        return "\n".join(self.lines + [self.rule, ""])


def summary_text(result: ProfilerResult, sorted_by: SortedKeys = SortedKeys.CPUTotal, op_detail: bool = True,
                 thread_sep: bool = False, time_unit: str = "ms", views: object = None) -> str:
    """The summary tables of `result` as text."""
    if time_unit not in _UNITS:
        raise ValueError(f"Profiler.summary: argument 'time_unit' must be one of 's', 'ms', 'us', 'ns', got {time_unit!r}")
    sorted_by = SortedKeys(sorted_by)
    wanted = _views(views)
    events = result.events
    steps = [e for e in events if e.type is TracerEventType.ProfileStep]
    span = _merged_ns(steps) if steps else (max(e.end for e in events) - min(e.start for e in events) if events else 0)
    scale = _UNITS[time_unit]
    parts = []
    if SummaryView.OverView in wanted:
        parts.append(_overview(events, span, scale, time_unit))
    groups = _thread_groups(result, thread_sep)
    if SummaryView.ModelView in wanted and any(e.type in _GRAPHS for e in events):
        parts.append(_graph_table(groups, sorted_by, op_detail, scale, time_unit))
    for view, title, kinds in ((SummaryView.OperatorView, "Operator Summary", (TracerEventType.Operator,)),
                               (SummaryView.UDFView, "UserDefined Summary", _USER)):
        if view in wanted and any(e.type in kinds for e in events):
            parts.append(_name_table(title, groups, kinds, sorted_by, scale, time_unit))
    return "\n\n".join(parts)


def _views(views: object) -> set[SummaryView]:
    if views is None:
        return set(SummaryView)
    items = [views] if isinstance(views, SummaryView) else list(views)  # type: ignore[call-overload]
    if not all(isinstance(v, SummaryView) for v in items):
        raise TypeError(f"Profiler.summary: argument 'views' must be a SummaryView or a list of them, got {views!r}")
    return set(items)


def _thread_groups(result: ProfilerResult, thread_sep: bool) -> list[tuple[str, list[Event]]]:
    if not thread_sep:
        return [("All threads merged", result.events)]
    by_tid: dict[int, list[Event]] = defaultdict(list)
    for e in result.events:
        by_tid[e.tid].append(e)
    return [(f"{result.thread_names.get(tid, 'thread')} ({tid})", evs) for tid, evs in sorted(by_tid.items())]


def _fmt(stats: _Stats, scale: float, whole: int) -> str:
    ratio = 100.0 * stats.total / whole if whole else 0.0
    return (f"{stats.total / scale:.2f} / {stats.total / stats.calls / scale:.2f} / {stats.max / scale:.2f} / "
            f"{(stats.min or 0) / scale:.2f} / {ratio:.2f}")


def _overview(events: list[Event], span: int, scale: float, unit: str) -> str:
    table = _Table("Overview Summary", ["Event Type", "Calls", "CPU Time", "Ratio (%)"], [25, 10, 15, 10], unit)
    by_type: dict[TracerEventType, list[Event]] = defaultdict(list)
    for e in events:
        by_type[e.type].append(e)
    for kind in sorted(by_type, key=lambda k: (k is not TracerEventType.ProfileStep, -_merged_ns(by_type[k]))):
        ns = _merged_ns(by_type[kind])
        name = kind.name if kind is TracerEventType.ProfileStep else "  " + kind.name
        table.add([name, str(len(by_type[kind])), f"{ns / scale:.2f}", f"{100.0 * ns / span if span else 0.0:.2f}"])
    return table.text()


def _name_table(title: str, groups: list, kinds: tuple, sorted_by: SortedKeys, scale: float, unit: str) -> str:
    names = {e.name for _, evs in groups for e in evs if e.type in kinds}
    table = _Table(title, ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)"],
                   [max(20, *(len(n) + 2 for n in names)), 8, 45], unit)
    for thread, evs in groups:
        chosen = [e for e in evs if e.type in kinds]
        if not chosen:
            continue
        table.section(f"Thread: {thread}")
        stats = _stats_by_name(chosen)
        whole = sum(s.total for s in stats.values())
        for name, s in sorted(stats.items(), key=lambda kv: -kv[1].key(sorted_by)):
            table.add([name, str(s.calls), _fmt(s, scale, whole)])
    return table.text()


def _graph_table(groups: list, sorted_by: SortedKeys, op_detail: bool, scale: float, unit: str) -> str:
    names = {e.name for _, evs in groups for e in evs if e.type in _GRAPHS or e.graph}
    table = _Table("Graph Summary", ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)"],
                   [max(20, *(len(n) + 4 for n in names)), 8, 45], unit)
    for thread, evs in groups:
        graphs = _stats_by_name(e for e in evs if e.type in _GRAPHS)
        if not graphs:
            continue
        table.section(f"Thread: {thread}")
        whole = sum(s.total for s in graphs.values())
        for name, s in sorted(graphs.items(), key=lambda kv: -kv[1].key(sorted_by)):
            table.add([name, str(s.calls), _fmt(s, scale, whole)])
            if op_detail:
                ops = _stats_by_name(e for e in evs if e.graph == name and e.type is TracerEventType.Operator)
                for op, o in sorted(ops.items(), key=lambda kv: -kv[1].key(sorted_by)):
                    table.add(["  " + op, str(o.calls), _fmt(o, scale, s.total)])
    return table.text()
