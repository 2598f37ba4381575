"""What the pages of `sot report --format html` share: the document frame, the stylesheet, the summary
cards and the walk through a function of `Report.tree()`.

Every page is self-contained (inline CSS, at most one small inline script, no external asset) so a CI
artifact opens anywhere; every piece of text from the report or the source goes through `esc`.
"""
from __future__ import annotations

import html
from typing import Iterator

from .report import FunctionReport, Node

__all__ = ["CSS", "document", "esc", "summary", "walk"]

CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}h1{font-size:1.4em}h2{font-size:1.15em}
a{color:#1a5fb4}table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}
td.name,th.name{text-align:left}th{background:#f3f3f3}th[data-sort]{cursor:pointer}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:0.8em 0}
.card{border:1px solid #ccc;border-radius:4px;padding:4px 10px}
.card b{display:block;font-size:1.3em}.bar{display:inline-flex;width:120px;height:10px;background:#eee;
vertical-align:middle}.bar span{height:100%}.bar .captured{background:#4caf50}.bar .eager{background:#f0a030}
.bar .break{background:#e05050}th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"}
.legend span{padding:1px 6px;margin-right:6px}.captured{background:#d4f7d4}.eager{background:#fde8c0}
.break{background:#f9c0c0}.src{width:100%}.src td{text-align:left;border:none;padding:0 6px;vertical-align:top}
.src td.n{color:#888;text-align:right;width:3em}.src td.code{font-family:monospace;white-space:pre}
.src td.note{font-size:0.85em;white-space:normal;max-width:45em;color:#333}.note span{display:block}
.note .recompiled,.legend .recompiled{font-weight:bold;color:#8a3b00}
.src tr.recompiled td.n{border-left:4px solid #e08000}
pre{background:#f7f7f7;border:1px solid #ddd;padding:6px;overflow-x:auto;margin:4px 0}
.entry{border-left:4px solid #1a5fb4;padding-left:10px;margin:12px 0}.entry.eager{border-color:#e08000;background:none}
tr.child td.name:first-child{padding-left:calc(8px + var(--depth) * 1.2em)}.miss{color:#8a3b00}"""


def esc(text: object) -> str:
    """`text` as HTML text or attribute value (quotes escaped too)."""
    return html.escape(str(text), quote=True)


def document(title: str, body: str, script: str = "") -> str:
    """A complete page; `script` is inline JavaScript, for progressive enhancement only (the page reads
    the same without it)."""
    tail = f"<script>{script}</script>" if script else ""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>\n{body}\n{tail}</body></html>\n")


def summary(totals: dict[str, float]) -> str:
    """Cards with `totals` (`Report.totals`, `Node.totals`: the figures `headline` and the gate use,
    never counted again here)."""
    cards = [("functions", totals["functions"]), ("graphs", totals["graphs"]), ("breaks", totals["breaks"]),
             ("fallbacks", totals["fallbacks"]), ("recompiles", totals["recompiles"]),
             ("captured", f"{totals['captured_ratio']:.0%}")]
    return "<div class=\"cards\">" + "".join(
        f"<div class=\"card\" data-total=\"{name}\">{esc(name)}<b>{esc(value)}</b></div>"
        for name, value in cards) + "</div>"


def walk(node: Node, depth: int = 0) -> Iterator[tuple[FunctionReport, int]]:
    """The functions of `node`'s tree, depth first, with their depth (0: the user's function)."""
    yield node.function, depth
    for child in node.children:
        yield from walk(child, depth + 1)
