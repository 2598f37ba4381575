"""`sot.report()`: everything the JIT recorded so far, as plain data, and its JSON file format.

A `Report` is built from the live translators (`sot.tools.record`), one `FunctionReport` per
translated code object (translators of one code share its cache, so they are merged), resume
functions included (`resume_of` names the function whose break made them). Nothing in it refers
to a live object: it can be saved, loaded in another process and compared with another run.

JSON schema `sot-report/1` (`Report.save(path)`, `load(path)`); stable keys, new optional keys
may be added without a version change, a removed or changed key bumps the version:

    {"schema": "sot-report/1", "python": "3.12.1",
     "functions": [{
        "qualname": "step", "file": "/abs/train.py", "line": 12,   # the def line
        "lines": [13, 14, 15],               # the lines the code object runs
        "resume_of": null,                   # qualname of the function whose break made its translator
                                             # (a resume function, or a callee translated on its own)
        "translations": 2, "translate_seconds": 0.031,
        "graphs": [{"entry": 0, "ops": 7, "runs": 10, "sir": "StatementIR: ...",
                    "bytecode": null, "program": null,        # these two with details=True
                    "ends_in_break": false}],                 # its code breaks after the graph
        "breaks": [EVENT], "fallbacks": [EVENT],
        "cache": {"limit": 8, "limit_reached": false,
                  "entries": [{"id": 1, "kind": "graph" | "eager", "hits": 9,
                               "guards": ["isinstance(...)", ...]}],           # lookup order
                  "misses": [[{"entry": 0, "guard": "...", "expected": "...", "actual": "..."}]]},
        "made_dynamic": ["f_locals['x'] dim 0"]}]}          # dims recompiles left dynamic

    EVENT = {"code": "SOT-B003", "kind": "UNSPS", "reason": "...", "file": "...", "line": 14,
             "source": "print(x)"}

Derived figures (`FunctionReport` properties): `runs` (calls of the code object served by a
graph or run eagerly: each entry's hits plus the translating call), `ops_captured` (each graph's
ops times its runs), `eager_runs` (runs of eager entries plus each run of a graph whose code breaks
after it; the unit "an eager frame or a break"), `captured_ratio` = ops_captured /
(ops_captured + eager_runs), `recompiles` (entries after the first).
"""
from __future__ import annotations

import dataclasses
import json
import linecache
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sot.ir import SirStatement, StatementIR, lower
from sot.translation.dump import disassembly
from sot.translation.reasons import REASONS

from . import record

__all__ = ["SCHEMA", "Event", "Graph", "Entry", "MissedGuard", "Cache", "FunctionReport", "Report", "report",
           "load", "disassembly"]

SCHEMA = "sot-report/1"


@dataclass
class Event:
    """A graph break or a frame run eagerly: reason code and kind, detail, where, the source line."""

    code: str
    kind: str
    reason: str
    file: str
    line: int
    source: str

    @property
    def where(self) -> str:
        """file:line."""
        return f"{self.file}:{self.line}"


@dataclass
class Graph:
    """One compiled subgraph (a cache entry holding a SIR)."""

    entry: int
    ops: int
    runs: int
    sir: str
    bytecode: str | None = None
    program: str | None = None
    ends_in_break: bool = False


@dataclass
class Entry:
    """One cache entry: compiled ("graph") or an eager decision ("eager"), its guards and hits."""

    id: int
    kind: str
    hits: int
    guards: list[str]


@dataclass
class MissedGuard:
    """For one lookup that missed: the first guard of one entry that failed."""

    entry: int
    guard: str
    expected: str
    actual: str


@dataclass
class Cache:
    """A code object's guard cache: entries in lookup order, the last misses, the size limit."""

    limit: int
    limit_reached: bool
    entries: list[Entry] = field(default_factory=list)
    misses: list[list[MissedGuard]] = field(default_factory=list)


@dataclass
class FunctionReport:
    """What the JIT did with one code object."""

    qualname: str
    file: str
    line: int
    lines: list[int]
    resume_of: str | None
    translations: int
    translate_seconds: float
    graphs: list[Graph]
    breaks: list[Event]
    fallbacks: list[Event]
    cache: Cache
    made_dynamic: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        """file:line of the definition."""
        return f"{self.file}:{self.line}"

    @property
    def runs(self) -> int:
        """Calls served by a cache entry or translated (each entry ran once when it was made)."""
        return sum(e.hits + 1 for e in self.cache.entries)

    @property
    def ops_captured(self) -> int:
        """Ops run inside compiled graphs: each graph's ops times its runs."""
        return sum(g.ops * g.runs for g in self.graphs)

    @property
    def eager_runs(self) -> int:
        """Runs of eager entries, plus each run of a graph whose code then breaks (runs one instruction eagerly)."""
        eager = sum(e.hits + 1 for e in self.cache.entries if e.kind == "eager")
        return eager + sum(g.runs for g in self.graphs if g.ends_in_break)

    @property
    def captured_ratio(self) -> float:
        """ops_captured / (ops_captured + eager_runs); 1.0 for a function that never ran."""
        total = self.ops_captured + self.eager_runs
        return self.ops_captured / total if total else 1.0

    @property
    def recompiles(self) -> int:
        """Translations after the first that made a cache entry (each followed a miss)."""
        return max(len(self.cache.entries) - 1, 0)


@dataclass
class Report:
    """Every translated function of the process (or of a loaded file)."""

    functions: list[FunctionReport]
    python: str = field(default_factory=lambda: sys.version.split()[0])

    def function(self, name: str) -> list[FunctionReport]:
        """The functions `name` designates: a qualname, its last part, or `qualname` of a resume's parent."""
        return [f for f in self.functions if _matches(f.qualname, name) or
                (f.resume_of is not None and _matches(f.resume_of, name))]

    @property
    def totals(self) -> dict[str, float]:
        """Sums over functions: graphs, breaks, fallbacks, recompiles, ops, and the overall ratio."""
        captured = sum(f.ops_captured for f in self.functions)
        eager = sum(f.eager_runs for f in self.functions)
        return {"functions": len(self.functions), "graphs": sum(len(f.graphs) for f in self.functions),
                "breaks": sum(len(f.breaks) for f in self.functions),
                "fallbacks": sum(len(f.fallbacks) for f in self.functions),
                "recompiles": sum(f.recompiles for f in self.functions),
                "limit_reached": sum(f.cache.limit_reached for f in self.functions),
                "ops_captured": captured, "eager_runs": eager,
                "captured_ratio": captured / (captured + eager) if captured + eager else 1.0,
                "translate_seconds": sum(f.translate_seconds for f in self.functions)}

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of schema sot-report/1."""
        return {"schema": SCHEMA, "python": self.python,
                "functions": [dataclasses.asdict(f) for f in self.functions]}

    def save(self, path: str | Path) -> Path:
        """Write the report as JSON (schema sot-report/1) to `path`; the path written."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path


def load(path: str | Path) -> Report:
    """Read a report `save` wrote; a file of another schema is an error naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"sot report: cannot read {path}: {e}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"sot report: {path} is not a {SCHEMA} report (schema: {found!r})")
    return Report([_function(f) for f in data["functions"]], data.get("python", ""))


def report(details: bool = False) -> Report:
    """Everything recorded so far; `details` adds each graph's generated bytecode and Program text."""
    by_code: dict[types.CodeType, list[Any]] = {}
    parents: dict[types.CodeType, str] = {}
    for t in record.translators():
        by_code.setdefault(t.code, []).append(t)
        for child in t.children:
            parents[child.code] = t.code.co_qualname
    functions = [_collect(code, ts, parents.get(code), details) for code, ts in by_code.items()]
    functions.sort(key=lambda f: (f.file, f.line, f.qualname))
    return Report(functions)


def _collect(code: types.CodeType, translators: list[Any], resume_of: str | None, details: bool) -> FunctionReport:
    cache = translators[0].cache
    breaking = translators[0].entry_breaks  # shared by the translators of one code, like the cache
    graphs, entries = [], []
    for e in cache.entries:
        is_graph = isinstance(e.payload, StatementIR)
        entries.append(Entry(e.id, "graph" if is_graph else "eager", e.hits, [str(g) for g in e.guards]))
        if is_graph:
            generated = getattr(e.code, "code", None)
            graphs.append(Graph(e.id, _ops(e.payload), e.hits + 1, str(e.payload),
                                disassembly(generated) if details and generated is not None else None,
                                lower(e.payload).program.to_string() if details else None, e.id in breaking))
    graphs.sort(key=lambda g: g.entry)
    misses = [[MissedGuard(r.entry, str(r.guard), r.expected, r.actual) for r in m.reasons]
              for m in cache.miss_reasons() if m.reasons]
    return FunctionReport(
        qualname=code.co_qualname, file=code.co_filename, line=code.co_firstlineno,
        lines=sorted({line for _, _, line in code.co_lines() if line is not None}), resume_of=resume_of,
        translations=sum(t.translations for t in translators),
        translate_seconds=sum(record.translate_seconds(t) for t in translators),
        graphs=graphs,
        breaks=[_event(b.code, b.detail, b.where) for t in translators for b in t.breaks],
        fallbacks=[_event(f.code, f.reason, f.where) for t in translators for f in t.fallbacks],
        cache=Cache(cache.cache_size_limit, cache.eager, entries, misses),
        made_dynamic=sorted({dim for t in translators for r in t.recompiles for dim in r.dynamic}))


def _ops(sir: StatementIR) -> int:
    """Ops a SIR runs: its statements and those of the SIRs it calls, not counting the calls."""
    return sum(not isinstance(st, SirStatement) for s in (sir, *sir.called_sirs()) for st in s.statements)


def _event(code: str, detail: str, where: str) -> Event:
    file, _, line = where.rpartition(":")
    number = int(line) if line.isdigit() else 0
    return Event(code, REASONS[code].kind, detail, file or where, number,
                 linecache.getline(file, number).strip() if number else "")


def _matches(qualname: str, name: str) -> bool:
    return qualname == name or qualname.rsplit(".", 1)[-1] == name or qualname.endswith("." + name)


def _function(d: dict[str, Any]) -> FunctionReport:
    """A FunctionReport from its JSON object."""
    c = d["cache"]
    cache = Cache(c["limit"], c["limit_reached"], [Entry(**e) for e in c["entries"]],
                  [[MissedGuard(**r) for r in m] for m in c["misses"]])
    fields = {k: v for k, v in d.items() if k in {f.name for f in dataclasses.fields(FunctionReport)}}
    fields.update(graphs=[Graph(**g) for g in d["graphs"]], breaks=[Event(**b) for b in d["breaks"]],
                  fallbacks=[Event(**f) for f in d["fallbacks"]], cache=cache)
    return FunctionReport(**fields)
