"""`sot report --format html -o DIR`: coverage for the JIT, in the manner of coverage.py's HTML.

`DIR/index.html` lists the functions (graphs, breaks, fallbacks, captured ratio, recompiles) and
links one page per source file, which shows the source with each line of a translated function
marked `captured` (it ran inside a compiled graph), `eager` (its frame ran eagerly) or `break`
(where a graph broke or a frame fell back; the reason code and text on hover, in `title`). A line
in no translated function has no class. Self-contained: inline CSS, no scripts, no external assets.
"""
from __future__ import annotations

import html
import linecache
import os
from pathlib import Path

from .formats import headline
from .report import FunctionReport, Report

__all__ = ["write_html", "line_marks"]

_CSS = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}table.src{width:100%}
td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}td.name,th.name{text-align:left}
pre{margin:0}.src td{text-align:left;border:none;padding:0 6px;font-family:monospace;white-space:pre}
.src td.n{color:#888;text-align:right}tr.captured{background:#d4f7d4}tr.eager{background:#fde8c0}
tr.break{background:#f9c0c0}.legend span{padding:0 6px;margin-right:6px}
.legend .captured{background:#d4f7d4}.legend .eager{background:#fde8c0}.legend .break{background:#f9c0c0}"""
_RANK = {"eager": 0, "captured": 1, "break": 2}  # a line in several functions shows the strongest mark


def line_marks(functions: list[FunctionReport]) -> dict[int, tuple[str, str]]:
    """Line -> (class, hover text) for the functions of one source file."""
    marks: dict[int, tuple[str, str]] = {}

    def mark(line: int, cls: str, title: str) -> None:
        if line not in marks or _RANK[cls] > _RANK[marks[line][0]]:
            marks[line] = (cls, title)
        elif cls == "break" and title not in marks[line][1]:
            marks[line] = (cls, marks[line][1] + "\n" + title)

    for f in functions:
        if f.graphs or any(e.kind == "eager" for e in f.cache.entries):
            cls = "captured" if f.ops_captured else "eager"  # a graph too small to compile runs eagerly
            for line in f.lines:
                mark(line, cls, f"{f.qualname}: {cls}")
        for kind, events in (("break", f.breaks), ("ran eagerly", f.fallbacks)):
            for e in events:
                if e.file == f.file:
                    mark(e.line, "break", f"{kind} [{e.code}] {e.reason}")
    return marks


def write_html(report: Report, folder: str | Path) -> Path:
    """Write index.html and one page per source file into `folder`; the index's path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = sorted({f.file for f in report.functions})
    pages = {file: f"file{i}.html" for i, file in enumerate(files)}
    for file, page in pages.items():
        (folder / page).write_text(_file_page(file, [f for f in report.functions if f.file == file]),
                                   encoding="utf-8")
    index = folder / "index.html"
    index.write_text(_index(report, pages), encoding="utf-8")
    return index


def _document(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n")


def _index(report: Report, pages: dict[str, str]) -> str:
    rows = "".join(
        f"<tr><td class=\"name\"><a href=\"{pages[f.file]}#L{f.line}\">{html.escape(f.qualname)}</a>"
        f"{' (from a break in ' + html.escape(f.resume_of) + ')' if f.resume_of else ''}</td>"
        f"<td class=\"name\">{html.escape(os.path.basename(f.file))}:{f.line}</td><td>{f.graph_count}</td>"
        f"<td>{len(f.breaks)}</td><td>{len(f.fallbacks)}</td><td>{f.captured_ratio:.0%}</td>"
        f"<td>{f.recompiles}</td></tr>\n" for f in report.functions)
    body = (f"<h1>sot: what the JIT captured</h1><p>{html.escape(headline(report))}</p>\n<table class=\"index\"><tr><th class=\"name\">function</th>"
            f"<th class=\"name\">where</th><th>graphs</th><th>breaks</th><th>fallbacks</th><th>captured</th>"
            f"<th>recompiles</th></tr>\n{rows}</table>")
    return _document("sot report", body)


def _file_page(file: str, functions: list[FunctionReport]) -> str:
    marks = line_marks(functions)
    lines = linecache.getlines(file)
    legend = ("<p class=\"legend\"><span class=\"captured\">captured</span><span class=\"eager\">run eagerly</span>"
              "<span class=\"break\">break / fallback (hover for the reason)</span></p>")
    if not lines:
        return _document(file, f"<h1>{html.escape(file)}</h1><p>source not available</p>")
    rows = []
    for n, text in enumerate(lines, 1):
        cls, title = marks.get(n, ("", ""))
        attrs = (f" class=\"{cls}\" title=\"{html.escape(title)}\"" if cls else "")
        rows.append(f"<tr id=\"L{n}\"{attrs}><td class=\"n\">{n}</td><td>{html.escape(text.rstrip())}</td></tr>")
    return _document(file, f"<h1>{html.escape(file)}</h1>{legend}<p><a href=\"index.html\">index</a></p>\n"
                           f"<table class=\"src\">\n" + "\n".join(rows) + "\n</table>")
