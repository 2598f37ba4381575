"""`sot report --format html -o DIR`: coverage for the JIT, in the manner of coverage.py's HTML.

`DIR/index.html` has the run's totals, one row per source file (its lines captured, run eagerly and
breaking, with the share captured; the table sorts on a header click or from the address, e.g.
`index.html#sort=files:-pct`) and one row per function linking its compile timeline
(`html_timeline`). One page per source file shows the source with each line of a translated function
marked `captured` (it ran inside a compiled graph, also as a callee inlined into one), `eager` (its
frame ran eagerly) or `break` (where a graph broke or a frame fell back), the reason written next to
it; the decorator and `def` lines of a function take the function's mark, and its `def` line says
when and why it recompiled. A user file whose code only ran inlined gets a page too; the library's
own files (runtime, sot) do not. Self-contained: inline CSS, one small inline script.
"""
from __future__ import annotations

import ast
import linecache
import os
from dataclasses import dataclass, field
from pathlib import Path

import runtime
import sot

from .formats import by_place, headline, readable, title
from .html_page import document, esc, summary, walk
from .html_timeline import miss_before, timeline_page
from .report import FunctionReport, Node, Report

__all__ = ["write_html", "line_marks", "LineMark", "function_headers", "inlined_lines"]

_RANK = {"eager": 0, "captured": 1, "break": 2}  # a line in several functions shows the strongest mark

# Sorts a table on a header click, and the files table from `#sort=TABLE:[-]COLUMN` in the address.
_SORT_SCRIPT = """(function(){
function sortBy(t,col,desc){var hs=t.tHead.rows[0].cells,i=0;
for(;i<hs.length&&hs[i].getAttribute('data-sort')!==col;i++);if(i===hs.length)return;
var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);
function key(r){var c=r.cells[i],v=c.getAttribute('data-v');return v===null?c.textContent.toLowerCase():parseFloat(v);}
rows.sort(function(x,y){var a=key(x),c=key(y);return (a<c?-1:a>c?1:0)*(desc?-1:1);});
rows.forEach(function(r){b.appendChild(r);});
for(var j=0;j<hs.length;j++)hs[j].removeAttribute('aria-sort');
hs[i].setAttribute('aria-sort',desc?'descending':'ascending');}
var ts=document.querySelectorAll('table.sortable');
Array.prototype.forEach.call(ts,function(t){Array.prototype.forEach.call(t.tHead.rows[0].cells,function(h){
if(!h.getAttribute('data-sort'))return;h.addEventListener('click',function(){
var desc=h.getAttribute('aria-sort')==='ascending';sortBy(t,h.getAttribute('data-sort'),desc);
history.replaceState(null,'','#sort='+t.id+':'+(desc?'-':'')+h.getAttribute('data-sort'));});});});
var m=/^#sort=([\\w-]+):(-?)([\\w-]+)$/.exec(location.hash),t=m&&document.getElementById(m[1]);
if(t)sortBy(t,m[3],m[2]==='-');})();"""


@dataclass
class LineMark:
    """How one source line shows: its class, the notes written next to it (break and fallback reasons,
    which function it belongs to) and, on a `def` line, why the function recompiled."""

    cls: str
    notes: list[str] = field(default_factory=list)
    recompiles: list[str] = field(default_factory=list)
    timeline: str | None = None  # the timeline anchor of the function defined on this line


def function_headers(source: str) -> dict[int, tuple[range, int]]:
    """First line of each function (its first decorator, or its `def`: a code object's first line) ->
    (the lines of its decorators and signature, its `def` line). {} for a source that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    headers = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            headers[first] = (range(first, max(node.body[0].lineno, node.lineno + 1)), node.lineno)
    return headers


def _recompile_notes(f: FunctionReport) -> list[str]:
    """One note per recompile of `f`: the guard of the entry before it that failed, and what it got."""
    notes = []
    entries = sorted(e.id for e in f.cache.entries)
    for previous, entry in zip(entries, entries[1:]):
        miss = miss_before(f.cache, entry)
        failed = next((m for m in miss or [] if m.entry == previous), None)
        why = f"`{readable(f, failed.guard)}` failed, got {failed.actual}" if failed else \
            "the miss is not recorded any more"
        notes.append(f"recompiled (entry {entry}): {why}")
    if f.cache.limit_reached:
        notes.append(f"cache limit {f.cache.limit} reached [SOT-L001]: runs eagerly from then on")
    return notes


def inlined_lines(report: Report) -> dict[str, dict[int, list[str]]]:
    """File -> line -> the functions whose compiled graphs ran an op of that line (`Graph.op_lines`): the
    lines of callees inlined into a graph, which belong to no translated code object of their own."""
    found: dict[str, dict[int, list[str]]] = {}
    for f in report.functions:
        for g in f.graphs:
            if not g.compiled:
                continue
            for where in g.op_lines:
                file, _, line = where.rpartition(":")
                if line.isdigit():
                    names = found.setdefault(file, {}).setdefault(int(line), [])
                    if f.qualname not in names:
                        names.append(f.qualname)
    return found


_LIBRARY = tuple(os.path.dirname(m.__file__) + os.sep for m in (runtime, sot))


def _is_library(file: str) -> bool:
    """A file of the runtime or of sot: its code inlined into a graph is not the user's to read."""
    return os.path.abspath(file).startswith(_LIBRARY)


def line_marks(functions: list[FunctionReport], headers: dict[int, tuple[range, int]] | None = None,
               anchors: dict[int, str] | None = None, inlined: dict[int, list[str]] | None = None
               ) -> dict[int, LineMark]:
    """Line -> `LineMark` for the functions of one source file. `headers` (`function_headers`) extends a
    function's mark to its decorator and signature lines; `anchors` maps id(function) to its timeline;
    `inlined` (`inlined_lines` of this file) marks captured the lines no function of the file marks whose
    ops ran inlined in a graph."""
    headers = headers or {}
    anchors = anchors or {}
    marks: dict[int, LineMark] = {}

    def mark(line: int, cls: str, note: str | None = None) -> LineMark:
        m = marks.setdefault(line, LineMark(cls))
        if _RANK[cls] > _RANK[m.cls]:
            m.cls = cls
        if note and note not in m.notes:
            m.notes.append(note)
        return m

    for f in functions:
        header, def_line = headers.get(f.line, (range(f.line, f.line + 1), f.line))
        if f.kind in ("resume", "loop_body") and f.resumes_at:
            # the code after a break (or a loop's body) is a copy of the whole function: only the lines
            # from where it resumes are its own, and its notes go there, not on the `def` line
            lines, at, prefix = [n for n in f.lines if n >= f.resumes_at], f.resumes_at, ""
        else:
            lines, at, prefix = sorted({*f.lines, *header}), def_line, "resume function: " if f.resume_of else ""
        if f.cache.entries or f.fallbacks or f.cache.eager_runs:
            cls = "captured" if f.ops_captured else "eager"  # a graph too small to compile runs eagerly
            for line in lines:
                mark(line, cls)
            top = mark(at, cls, f"{title(f)}: {cls} ({f.graph_count} graph(s), captured {f.captured_ratio:.0%})")
            top.recompiles += [prefix + n for n in _recompile_notes(f) if prefix + n not in top.recompiles]
            top.timeline = top.timeline or anchors.get(id(f))
        for kind, events in (("break", f.breaks), ("ran eagerly", f.fallbacks)):
            for group in by_place(events):
                e = group[0]
                if e.file == f.file:
                    times = f" ({len(group)}x)" if len(group) > 1 else ""
                    mark(e.line, "break", f"{kind} [{e.code}] {e.kind}: {readable(f, e.reason)}{times}")
    for line, names in sorted((inlined or {}).items()):
        if line not in marks:
            mark(line, "captured", f"inlined: ran inside the graph of {', '.join(names)}")
    return marks


def write_html(report: Report, folder: str | Path) -> Path:
    """Write index.html, one page per source file and one compile timeline per user function into
    `folder`; the index's path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    inlined = inlined_lines(report)
    files = sorted({f.file for f in report.functions} | {f for f in inlined if not _is_library(f)})
    pages = {file: f"file{i}.html" for i, file in enumerate(files)}
    trees = report.tree()
    anchors: dict[int, str] = {}
    for j, node in enumerate(trees):
        for n, (f, _) in enumerate(walk(node)):
            anchors[id(f)] = f"timeline{j}.html#f{n}"
        (folder / f"timeline{j}.html").write_text(timeline_page(node, pages.get(node.function.file)),
                                                  encoding="utf-8")
    rows = []
    for file, page in pages.items():
        functions = [f for node in trees for f, _ in walk(node) if f.file == file]  # a user's function first
        source = "".join(linecache.getlines(file))
        marks = line_marks(functions, function_headers(source), anchors, inlined.get(file))
        (folder / page).write_text(_file_page(file, functions, source, marks), encoding="utf-8")
        rows.append(_file_row(file, page, functions, marks))
    index = folder / "index.html"
    index.write_text(_index(report, rows, trees, pages, anchors), encoding="utf-8")
    return index


def _line_counts(marks: dict[int, LineMark]) -> dict[str, int]:
    counts = dict.fromkeys(_RANK, 0)
    for m in marks.values():
        counts[m.cls] += 1
    return counts


def _share(counts: dict[str, int]) -> float:
    """Captured lines over marked lines; 0.0 for a file with no marked line."""
    marked = sum(counts.values())
    return counts["captured"] / marked if marked else 0.0


def _bar(counts: dict[str, int]) -> str:
    """The marked lines as one bar: captured, eager and breaking parts in proportion."""
    marked = sum(counts.values()) or 1
    parts = "".join(f"<span class=\"{cls}\" style=\"width:{counts[cls] / marked * 100:.0f}%\"></span>"
                    for cls in ("captured", "eager", "break") if counts[cls])
    return f"<span class=\"bar\" title=\"{_share(counts):.0%} captured\">{parts}</span>"


def _num(value: float, shown: str | None = None) -> str:
    """A number cell: the sort script reads `data-v`, the reader `shown` (the value itself by default)."""
    return f"<td data-v=\"{value:g}\">{esc(value if shown is None else shown)}</td>"


def _th(key: str, title: str, text: bool = False) -> str:
    """A header the sort script sorts on by `key` (none when empty); `text` aligns a text column left."""
    cls = " class=\"name\"" if text else ""
    sort = f" data-sort=\"{key}\"" if key else ""
    return f"<th{cls}{sort}>{esc(title)}</th>"


def _sortable(table: str, headers: list[str], rows: list[str]) -> str:
    return (f"<table class=\"sortable\" id=\"{table}\"><thead><tr>{''.join(headers)}</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody></table>")


def _file_row(file: str, page: str, functions: list[FunctionReport], marks: dict[int, LineMark]) -> str:
    counts = _line_counts(marks)
    share = _share(counts)
    return (f"<tr><td class=\"name\" title=\"{esc(file)}\"><a href=\"{page}\">{esc(os.path.basename(file))}</a></td>"
            + _num(len(functions)) + "".join(_num(counts[cls]) for cls in ("captured", "eager", "break"))
            + _num(share, f"{share:.0%}") + f"<td class=\"name\">{_bar(counts)}</td></tr>")


def _function_row(f: FunctionReport, depth: int, page: str, timeline: str) -> str:
    tr = f"<tr class=\"child\" style=\"--depth:{depth}\">" if depth else "<tr>"
    name = f"{'&#8627; ' if depth else ''}{esc(title(f))}"
    line = f.resumes_at or f.line
    return (f"{tr}<td class=\"name\"><a href=\"{timeline}\">{name}</a></td>"
            f"<td class=\"name\"><a href=\"{page}#L{line}\">{esc(os.path.basename(f.file))}:{line}</a></td>"
            + "".join(_num(v) for v in (f.graph_count, len(f.breaks), len(f.fallbacks), f.recompiles))
            + _num(f.captured_ratio, f"{f.captured_ratio:.0%}") + "</tr>")


def _index(report: Report, file_rows: list[str], trees: list[Node], pages: dict[str, str],
           anchors: dict[int, str]) -> str:
    files = _sortable("files", [_th("file", "file", True), _th("functions", "functions"),
                                _th("captured", "captured lines"), _th("eager", "eager lines"),
                                _th("break", "break lines"), _th("pct", "lines captured"), _th("", "", True)],
                      file_rows)
    functions = _sortable("functions", [_th("function", "function (its compile timeline)", True),
                                        _th("where", "where", True), _th("graphs", "graphs"),
                                        _th("breaks", "breaks"), _th("fallbacks", "fallbacks"),
                                        _th("recompiles", "recompiles"), _th("captured", "captured")],
                          [_function_row(f, depth, pages[f.file], anchors[id(f)])
                           for node in trees for f, depth in walk(node)])
    body = (f"<h1>sot: what the JIT captured</h1>{summary(report.totals)}"
            f"<p class=\"headline\">{esc(headline(report))}</p>\n"
            "<p>captured: the share of ops run inside compiled graphs (each frame run eagerly and each break counts "
            "against it). Lines: a file's lines of translated functions, by how they ran.</p>\n"
            f"<h2>Files</h2>\n{files}\n<h2>Functions</h2>\n{functions}")
    return document("sot report", body, _SORT_SCRIPT)


_LEGEND = ("<p class=\"legend\"><span class=\"captured\">captured: ran inside a compiled graph</span>"
           "<span class=\"eager\">run eagerly</span><span class=\"break\">break or fallback: the reason is next to "
           "the line</span><span class=\"recompiled\">&#8635; recompiled: the guard that failed</span></p>")


def _note(m: LineMark) -> str:
    notes = [f"<span>{esc(n)}</span>" for n in m.notes]
    notes += [f"<span class=\"recompiled\">&#8635; {esc(n)}</span>" for n in m.recompiles]
    if m.timeline:
        notes.append(f"<span><a href=\"{m.timeline}\">compile timeline</a></span>")
    return "".join(notes)


def _file_page(file: str, functions: list[FunctionReport], source: str, marks: dict[int, LineMark]) -> str:
    head = f"<p><a href=\"index.html\">index</a></p><h1>{esc(file)}</h1>"
    if not source:
        return document(file, f"{head}<p>source not available</p>")
    counts = _line_counts(marks)
    lines_summary = (f"<p>lines: {counts['captured']} captured, {counts['eager']} run eagerly, {counts['break']} "
                     f"breaking; {_share(counts):.0%} of the marked lines captured</p>")
    rows = []
    for n, text in enumerate(source.splitlines(), 1):
        m = marks.get(n)
        if m is None:
            rows.append(f"<tr id=\"L{n}\"><td class=\"n\">{n}</td><td class=\"code\">{esc(text.rstrip())}</td>"
                        "<td class=\"note\"></td></tr>")
            continue
        cls = m.cls + (" recompiled" if m.recompiles else "")
        title = "\n".join(m.notes + m.recompiles)
        rows.append(f"<tr id=\"L{n}\" class=\"{cls}\" title=\"{esc(title)}\"><td class=\"n\">{n}</td>"
                    f"<td class=\"code\">{esc(text.rstrip())}</td><td class=\"note\">{_note(m)}</td></tr>")
    body = (f"{head}{summary(Report(functions).totals)}{lines_summary}{_LEGEND}\n"
            "<table class=\"src\">\n" + "\n".join(rows) + "\n</table>")
    return document(file, body)
