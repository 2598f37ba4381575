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
                    "ends_in_break": false,                   # its code breaks after the graph
                    "eager": false,                           # too small to compile: runs eagerly
                    "op_lines": ["/abs/train.py:13"]}],       # file:line of its ops' source (optional)
        "breaks": [EVENT], "fallbacks": [EVENT],
        "cache": {"limit": 8, "limit_reached": false, "eager_runs": 0,   # calls run eagerly past the limit
                  "entries": [{"id": 1, "kind": "graph" | "eager", "hits": 9,
                               "guards": ["isinstance(...)", ...]}],           # lookup order
                  "misses": [[{"entry": 0, "guard": "...", "expected": "...", "actual": "..."}]]},
        "made_dynamic": ["f_locals['x'] dim 0"],          # dims recompiles left dynamic
        # optional (older reports lack them): where it sits in `Report.tree()`
        "id": 0, "parent": null,             # its id, and that of the function whose break made it
        "kind": "function",                  # or "resume", "loop_body", "callee": see FunctionReport.kind
        "resumes_at": null,                  # a resume function's first line; a loop body's loop's line
        "break_at": null,                    # file:line of the break that made it (the parent's one break)
        "source": "",                        # the source line of break_at, or of a loop body's loop
        "carried": ["h", ""],                # a resume function's stack slots: the expression each holds
        "eager_calls": 3,                    # optional: calls of a generator function (all eager)
        "kept_static": [{"dim": "x dim 0", "why": "read as a Python int",   # dims a recompile would
                         "file": "/abs/train.py", "line": 13, "source": "n = x.shape[0]",  # have made
                         "needed_file": "/abs/train.py", "needed_line": 14,  # dynamic, kept static
                         "needed_source": "print(n)"}]}]}   # (needed_*: the line needing the value, if another)

    EVENT = {"code": "SOT-B003", "kind": "UNSPS", "reason": "...", "file": "...", "line": 14,
             "source": "print(x)"}

Derived figures (`FunctionReport` properties): `runs` (calls of the code object served by a
graph or run eagerly: each entry's hits plus the translating call), `ops_captured` (each compiled
graph's ops times its runs), `eager_runs` (every frame that ran eagerly, and each break; see
`FunctionReport.eager_runs`), `captured_ratio` (see `captured_ratio`), `recompiles` (entries after
the first).
"""
from __future__ import annotations

import dataclasses
import json
import linecache
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sot.codegen.carried import carried_positions
from sot.codegen.loop_body import loop_keyword
from sot.codegen.resume_code import is_resume_code
from sot.dynamic.shapes import KeptStatic
from sot.ir import SirStatement, StatementIR, lower
from sot.translation.dump import disassembly
from sot.translation.reasons import REASONS

from . import record

__all__ = ["SCHEMA", "KINDS", "Event", "Graph", "Entry", "MissedGuard", "Cache", "FunctionReport", "Node", "Report",
           "report", "totals_of", "origin",
           "load", "disassembly", "captured_ratio", "counts_as_graph",
           "limit_fallback"]

SCHEMA = "sot-report/1"
KINDS = ("function", "resume", "loop_body", "callee")


def captured_ratio(ops_captured: int, eager_runs: int) -> float:
    """The share of the work the JIT captured: ops_captured / (ops_captured + eager_runs), where
    `ops_captured` counts each op run inside a compiled graph and `eager_runs` each frame that ran
    eagerly (a whole-frame fallback, a call past the cache limit, a graph too small to compile, a
    generator) and each break. 0.0 when both are 0: a run in which nothing was compiled (SOT_DISABLE,
    nothing decorated or called) captured nothing, and a CI gate must not read it as all captured."""
    total = ops_captured + eager_runs
    return ops_captured / total if total else 0.0


def counts_as_graph(ops: int, eager: bool) -> bool:
    """Whether a cache entry is one compiled graph in every count (`sot.explain`, `sot.report()`, the
    `sot` command): its SIR runs at least one op (`StatementIR.op_count`) and is compiled. An empty SIR (a frame that
    breaks before its first op) compiles nothing, and a graph below SOT_MIN_GRAPH_SIZE runs its ops
    eagerly (counted apart, as an eager graph); counting either as a graph made the views disagree."""
    return ops > 0 and not eager


def limit_fallback(limit: int, code: types.CodeType) -> tuple[str, str]:
    """Reason and file:line of the one SOT-L001 fallback a code object past its cache size limit counts
    as, in `sot.explain` and in the report alike (its calls past the limit are `Cache.eager_runs`)."""
    return f"cache_size_limit={limit} reached: runs eagerly", f"{code.co_filename}:{code.co_firstlineno}"


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
    eager: bool = False  # below SOT_MIN_GRAPH_SIZE: its ops ran through the eager API (SOT-C001)
    op_lines: list[str] = field(default_factory=list)  # file:line of each op's source, callees inlined included

    @property
    def compiled(self) -> bool:
        """`counts_as_graph`: the graph counts in the graph totals."""
        return counts_as_graph(self.ops, self.eager)


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
    eager_runs: int = 0  # calls run eagerly, with no entry, because the limit was reached (SOT-L001)


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
    # where the translator came from: the user's function ("function"), or made by a break of the
    # function `parent` names: the code after the break ("resume"), a loop's body run for real
    # ("loop_body"), a function called at the break, translated on its own ("callee")
    kind: str = "function"
    resumes_at: int | None = None
    break_at: str | None = None
    source: str = ""
    id: int | None = None
    parent: int | None = None
    carried: list[str] = field(default_factory=list)  # per stack slot it receives: its expression ("": unknown)
    eager_calls: int = 0  # calls the hook never saw (a generator function's), each run eagerly
    kept_static: list[KeptStatic] = field(default_factory=list)  # each new size of them translates again

    @property
    def where(self) -> str:
        """file:line of the definition."""
        return f"{self.file}:{self.line}"

    @property
    def graph_count(self) -> int:
        """Compiled graphs (`counts_as_graph`); `graphs` also lists empty and eager ones."""
        return sum(g.compiled for g in self.graphs)

    @property
    def runs(self) -> int:
        """Calls served by a cache entry or translated (each entry ran once when it was made)."""
        return sum(e.hits + 1 for e in self.cache.entries)

    @property
    def ops_captured(self) -> int:
        """Ops run inside compiled graphs: each graph's ops times its runs (a graph run eagerly: none)."""
        return sum(g.ops * g.runs for g in self.graphs if not g.eager)

    @property
    def eager_runs(self) -> int:
        """Frames run eagerly: runs of eager entries, of graphs too small to compile and calls past the
        cache limit; plus each run of a graph whose code then breaks (runs one instruction eagerly), and
        each call of a generator function (`eager_calls`, counted by its to_static wrapper). A function
        with a fallback and no cache entry or call counted (a report saved before calls were counted)
        counts as one."""
        eager = sum(e.hits + 1 for e in self.cache.entries if e.kind == "eager") + self.cache.eager_runs
        eager += sum(g.runs for g in self.graphs if g.eager or g.ends_in_break) + self.eager_calls
        return eager or int(bool(self.fallbacks) and not self.cache.entries)

    @property
    def captured_ratio(self) -> float:
        """`captured_ratio(ops_captured, eager_runs)`: 0.0 for a function that never ran compiled."""
        return captured_ratio(self.ops_captured, self.eager_runs)

    @property
    def recompiles(self) -> int:
        """Translations after the first that made a cache entry (each followed a miss)."""
        return max(len(self.cache.entries) - 1, 0)

    @property
    def idle(self) -> bool:
        """Made but never run: a resume function of a branch never taken (`Report.tree` leaves it out)."""
        return not (self.translations or self.cache.entries or self.breaks or self.fallbacks)


@dataclass
class Node:
    """A function in `Report.tree()`: a user's function, or one a break made, and those its breaks made."""

    function: FunctionReport
    children: list[Node] = field(default_factory=list)

    def functions(self) -> list[FunctionReport]:
        """Its function and, depth first, its children's."""
        return [self.function, *(f for child in self.children for f in child.functions())]

    @property
    def totals(self) -> dict[str, float]:
        """`Report.totals` over the tree's functions: what the user's function costs with its resumes."""
        return totals_of(self.functions())


@dataclass
class Report:
    """Every translated function of the process (or of a loaded file)."""

    functions: list[FunctionReport]
    python: str = field(default_factory=lambda: sys.version.split()[0])

    def function(self, name: str) -> list[FunctionReport]:
        """The functions `name` designates and, transitively, those their breaks made (resume functions,
        callees translated on their own, and theirs): the same tree `sot.explain` counts."""
        picked = [f for f in self.functions if _matches(f.qualname, name)]
        names = {f.qualname for f in picked}
        while True:
            more = [f for f in self.functions if f not in picked and f.resume_of in names]
            if not more:
                return picked
            picked += more
            names |= {f.qualname for f in more}

    @property
    def totals(self) -> dict[str, float]:
        """Sums over functions: graphs, breaks, fallbacks, recompiles, ops, and the overall ratio."""
        return totals_of(self.functions)

    def tree(self) -> list[Node]:
        """The user's functions, each with the functions its breaks made nested under it (resume functions,
        loop bodies, callees translated on their own, and theirs), in report order; an idle function
        (`FunctionReport.idle`) with nothing under it is left out. Nesting follows `parent`; a report
        without ids (an older one) nests by `resume_of`, under a function of that name."""
        parents = self._parents()
        for i in range(len(parents)):
            if _in_cycle(parents, i):  # (a resume function resuming its parent): the cycle's first is a root
                parents[i] = None
        nodes = [Node(f) for f in self.functions]
        for i, p in enumerate(parents):
            if p is not None:
                nodes[p].children.append(nodes[i])
        return [n for n in (_pruned(nodes[i]) for i, p in enumerate(parents) if p is None) if n is not None]

    def _parents(self) -> list[int | None]:
        """Index in `functions` of each function's parent (None for a root)."""
        if all(f.id is not None for f in self.functions):
            index = {f.id: i for i, f in enumerate(self.functions)}
            return [index.get(f.parent) if f.parent is not None else None for f in self.functions]
        parents: list[int | None] = []
        for i, f in enumerate(self.functions):
            named = [j for j, g in enumerate(self.functions) if j != i and f.resume_of is not None
                     and g.qualname == f.resume_of]
            parents.append(min(named, key=lambda j: self.functions[j].resume_of is not None) if named else None)
        return parents

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of schema sot-report/1."""
        return {"schema": SCHEMA, "python": self.python,
                "functions": [dataclasses.asdict(f) for f in self.functions]}

    def save(self, path: str | Path) -> Path:
        """Write the report as JSON (schema sot-report/1) to `path`; the path written."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path


def totals_of(functions: list[FunctionReport]) -> dict[str, float]:
    """`Report.totals` of some functions (a user function and what its breaks made: `Node.totals`)."""
    captured = sum(f.ops_captured for f in functions)
    eager = sum(f.eager_runs for f in functions)
    return {"functions": len(functions), "graphs": sum(f.graph_count for f in functions),
            "breaks": sum(len(f.breaks) for f in functions),
            "fallbacks": sum(len(f.fallbacks) for f in functions),
            "recompiles": sum(f.recompiles for f in functions),
            "limit_reached": sum(f.cache.limit_reached for f in functions),
            "ops_captured": captured, "eager_runs": eager,
            "captured_ratio": captured_ratio(captured, eager),
            "translate_seconds": sum(f.translate_seconds for f in functions)}


def _in_cycle(parents: list[int | None], i: int) -> bool:
    """Whether following parents from `i` comes back to `i` (a resume function that resumes its parent)."""
    seen, p = set(), parents[i]
    while p is not None and p not in seen:
        if p == i:
            return True
        seen.add(p)
        p = parents[p]
    return False


def _pruned(node: Node) -> Node | None:
    children = [n for n in map(_pruned, node.children) if n is not None]
    return None if node.function.idle and not children else Node(node.function, children)


def load(path: str | Path) -> Report:
    """Read a report `save` wrote; a file of another schema, or with a missing or mistyped key, is a ValueError naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path} is not a {SCHEMA} report (schema: {found!r})")
    try:
        if "functions" not in data:
            raise ValueError("missing key 'functions'")
        return Report(_from_json(list[FunctionReport], data["functions"], "functions"),
                      _from_json(str, data.get("python", ""), "python"))
    except ValueError as e:
        raise ValueError(f"{path} is not a valid {SCHEMA} report: {e}") from None


def report(details: bool = False) -> Report:
    """Everything recorded so far; `details` adds each graph's generated bytecode and Program text."""
    # keyed by id: code objects compare by value, and two copies of one function (a notebook cell run
    # again, `code.replace()`) are two functions with caches of their own (the translators keep them alive)
    codes: dict[int, types.CodeType] = {}
    by_code: dict[int, list[Any]] = {}
    parents: dict[int, int] = {}
    for t in record.translators():
        codes[id(t.code)] = t.code
        by_code.setdefault(id(t.code), []).append(t)
        for child in t.children:
            parents.setdefault(id(child.code), id(t.code))  # the first break that made it (its tree's parent)
    functions = {key: _collect(codes[key], ts, codes[parents[key]].co_qualname if key in parents else None,
                               details)
                 for key, ts in by_code.items()}
    for key, f in functions.items():
        for name, value in origin(codes[key], by_code.get(parents.get(key), [])).items():
            setattr(f, name, value)
    order = sorted(functions.values(), key=lambda f: (f.file, f.line, f.qualname, f.kind != "function",
                                                      f.resumes_at or 0))
    for i, f in enumerate(order):
        f.id = i
    for key, f in functions.items():
        f.parent = functions[parents[key]].id if parents.get(key) in functions else None
    return Report(order)


def origin(code: types.CodeType, parent: list[Any]) -> dict[str, Any]:
    """Where the translator of `code` comes from, as FunctionReport's `kind`, `resumes_at`, `break_at` and
    `source` (`parent`: the translators of the function whose break made it, none for a user's function).
    `break_at` is the parent's break where the parent broke at one place only."""
    keyword = loop_keyword(code)
    out: dict[str, Any] = {"kind": "callee" if parent else "function"}
    if is_resume_code(code) or keyword is not None:
        out["kind"] = "resume" if keyword is None else "loop_body"
        out["resumes_at"] = next((line for _, _, line in code.co_lines() if line is not None), None)
    breaks = {b.where for t in parent for b in t.breaks}
    if keyword is not None:
        out["source"] = linecache.getline(code.co_filename, out["resumes_at"] or 0).strip()
    elif len(breaks) == 1:
        out["break_at"] = breaks.pop()
        out["source"] = _event("SOT-B001", "", out["break_at"]).source
    return out


_RETIRED = "(SIR released: an object its guards named was freed, so the entry can never run again)"


def _collect(code: types.CodeType, translators: list[Any], resume_of: str | None, details: bool) -> FunctionReport:
    cache = translators[0].cache
    breaking = translators[0].entry_breaks  # shared by the translators of one code, like the cache
    graphs, entries = [], []
    for e in cache.entries:
        sir = e.payload  # read once: an entry retired meanwhile (an object its guards name died) loses it
        retired_ops = cache.entry_ops.get(e.id) if sir is None else None
        if sir is None and retired_ops is None and e.code is None:  # a retired eager decision: nothing ran compiled
            continue
        is_graph = isinstance(sir, StatementIR) or retired_ops is not None
        entries.append(Entry(e.id, "graph" if is_graph else "eager", e.hits, [str(g) for g in e.guards]))
        if isinstance(sir, StatementIR):
            generated = getattr(e.code, "code", None)
            graphs.append(Graph(e.id, sir.op_count(), e.hits + 1, str(sir),
                                disassembly(generated) if details and generated is not None else None,
                                lower(sir).program.to_string() if details else None, e.id in breaking,
                                e.id in translators[0].entry_eager, op_lines=_op_lines(sir)))
        elif retired_ops is not None:  # its counts stay; its SIR went with the objects it named
            graphs.append(Graph(e.id, retired_ops, e.hits + 1, _RETIRED, ends_in_break=e.id in breaking,
                                eager=e.id in translators[0].entry_eager))
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
        fallbacks=[_event(f.code, f.reason, f.where) for t in translators for f in t.fallbacks] +
                  ([_event("SOT-L001", *limit_fallback(cache.cache_size_limit, code))] if cache.eager else []),
        cache=Cache(cache.cache_size_limit, cache.eager, entries, misses, cache.eager_runs),
        made_dynamic=sorted({dim for t in translators for r in t.recompiles for dim in r.dynamic}),
        carried=[_segment(code.co_filename, p) for p in carried_positions(code)] if is_resume_code(code) else [],
        eager_calls=sum(t.eager_calls for t in translators),
        kept_static=translators[0].shapes.kept_static())  # (a policy per code, like the cache)


def _op_lines(sir: StatementIR) -> list[str]:
    """The file:line each op of `sir` (and of the SIRs it calls) was recorded at: the lines a graph ran,
    callees inlined into it included, which its function's own lines do not show."""
    return sorted({st.where for s in (sir, *sir.called_sirs()) for st in s.statements
                   if not isinstance(st, SirStatement) and st.where})


def _segment(file: str, positions: Any) -> str:
    """The source text at `positions` (dis.Positions) of `file` when it lies on one line, else ""."""
    if positions is None or positions.lineno != positions.end_lineno or positions.col_offset is None:
        return ""
    line = linecache.getline(file, positions.lineno).encode()  # (column offsets count UTF-8 bytes)
    return line[positions.col_offset:positions.end_col_offset].decode(errors="replace")


def _event(code: str, detail: str, where: str) -> Event:
    file, _, line = where.rpartition(":")
    number = int(line) if line.isdigit() else 0
    return Event(code, REASONS[code].kind, detail, file or where, number,
                 linecache.getline(file, number).strip() if number else "")


def _matches(qualname: str, name: str) -> bool:
    return qualname == name or qualname.rsplit(".", 1)[-1] == name or qualname.endswith("." + name)


def _from_json(tp: Any, value: Any, where: str) -> Any:
    """`value` (parsed JSON) checked against type `tp` and built into its dataclasses.

    A hand-edited or truncated report fails here with the key's path, not later inside a formatter.
    Unknown keys are ignored: newer reports may add optional ones.
    """
    origin, params = typing.get_origin(tp), typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in params:
            return None
        (tp,) = [p for p in params if p is not type(None)]
        return _from_json(tp, value, where)
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, got {_json_type(value)}")
        return [_from_json(params[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object, got {_json_type(value)}")
        hints = typing.get_type_hints(tp)
        fields = {}
        for f in dataclasses.fields(tp):
            if f.name in value:
                fields[f.name] = _from_json(hints[f.name], value[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where}: missing key {f.name!r}")
        return tp(**fields)
    numeric = (int, float) if tp is float else tp  # JSON writes 1.0 as 1
    if not isinstance(value, numeric) or (isinstance(value, bool) and tp is not bool):
        raise ValueError(f"{where}: expected {tp.__name__}, got {_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    return "null" if value is None else type(value).__name__
