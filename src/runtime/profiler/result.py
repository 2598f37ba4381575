"""A finished recording (`ProfilerResult`) and its Chrome trace file: `export(path)` writes the JSON
Trace Event Format that chrome://tracing and Perfetto open; `load_profiler_result(path)` reads such a
file back (the summary tables can be printed from it again).

Each event is a complete ("ph": "X") event: `ts` and `dur` in microseconds (host times from
`time.perf_counter_ns`, so `ts` counts from an arbitrary origin), `cat` its TracerEventType name,
`tid` its thread's native id, `args.graph` the compiled graph an op ran in; metadata ("ph": "M")
events name the process and the threads.
"""
from __future__ import annotations

import json
import os
from typing import Any

from .events import Event, TracerEventType

__all__ = ["ProfilerResult", "load_profiler_result"]

_SCHEMA = "1.0.2"


class ProfilerResult:
    """The events of one recording, the process id and the names of the threads they came from."""

    def __init__(self, events: list[Event], pid: int, thread_names: dict[int, str]):
        self.events = sorted(events, key=lambda e: (e.start, -e.end))
        self.pid = pid
        self.thread_names = dict(thread_names)

    def get_data(self) -> list[Event]:
        """The events, by start time (an enclosing event before the events it encloses)."""
        return list(self.events)

    def save(self, path: str, format: str = "json") -> None:
        """Write the Chrome trace to `path` (only format="json": Paddle's protobuf format is not written)."""
        if format != "json":
            raise ValueError(f"paddle.profiler: export format {format!r} is not supported: only 'json' (the Chrome "
                             "trace format that chrome://tracing and Perfetto open)")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_chrome(), f)

    def to_chrome(self) -> dict:
        """The Chrome trace as a JSON-ready dict."""
        meta: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": self.pid, "args": {"name": "runtime"}}]
        meta += [{"name": "thread_name", "ph": "M", "pid": self.pid, "tid": tid, "args": {"name": name}}
                 for tid, name in sorted(self.thread_names.items())]
        trace = [{"name": e.name, "ph": "X", "cat": e.type.name, "pid": self.pid, "tid": e.tid,
                  "ts": e.start / 1000, "dur": (e.end - e.start) / 1000,
                  "args": {"graph": e.graph} if e.graph else {}} for e in self.events]
        return {"displayTimeUnit": "ms", "schemaVersion": _SCHEMA, "traceEvents": meta + trace,
                "ExtraInfo": {str(tid): name for tid, name in self.thread_names.items()}}


def load_profiler_result(filename: str) -> ProfilerResult:
    """The result saved by `Profiler.export(filename)` (format "json")."""
    with open(filename, encoding="utf-8") as f:
        try:
            trace = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"load_profiler_result: '{filename}' is not a JSON Chrome trace written by "
                             "Profiler.export (Paddle's protobuf results cannot be read)") from e
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise ValueError(f"load_profiler_result: '{filename}' has no 'traceEvents' list")
    pid, threads, events = 0, {}, []
    for item in trace["traceEvents"]:
        if item.get("ph") == "M":
            pid = item.get("pid", pid)
            if item.get("name") == "thread_name":
                threads[item["tid"]] = item["args"]["name"]
        elif item.get("ph") == "X" and item.get("cat") in TracerEventType.__members__:
            start = round(item["ts"] * 1000)
            events.append(Event(item["name"], TracerEventType[item["cat"]], start, start + round(item["dur"] * 1000),
                                item["tid"], item.get("args", {}).get("graph", "")))
    return ProfilerResult(events, pid, threads)
