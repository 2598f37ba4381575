"""`explain(fn, *args, **kwargs)`: run `fn` once under the JIT and report what was captured and what was not.

The call is real (no copies). The report comes from the code cache: its entries whose hit count
grew or that were inserted during the call ran. An entry holding a SIR is a compiled subgraph
(`graph_count`, `sir_texts`); an entry holding a `Fallback` is a frame that ran eagerly, either
just translated or served from the cache (`fallbacks`, each with reason and file:line). `break_count` and
`breaks` stay 0 and empty until subgraph breaks exist; these names stay when later issues enrich it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .api import to_static
from .translate import Fallback

__all__ = ["Explanation", "explain"]


@dataclass
class Explanation:
    """What one JIT call of a function did: graphs run, breaks, fallbacks, the SIRs."""

    name: str
    result: Any
    graph_count: int = 0
    break_count: int = 0
    fallbacks: list[Fallback] = field(default_factory=list)
    breaks: list[Fallback] = field(default_factory=list)
    sir_texts: list[str] = field(default_factory=list)
    translations: int = 0

    def __str__(self) -> str:
        lines = [f"explain {self.name}: {self.graph_count} graph(s), {self.break_count} break(s), "
                 f"{len(self.fallbacks)} fallback(s), {self.translations} new translation(s)"]
        for kind, items in (("break", self.breaks), ("fallback", self.fallbacks)):
            lines += [f"  {kind}: {item.reason} ({item.where})" for item in items]
        for i, text in enumerate(self.sir_texts):
            lines.append(f"  graph {i}:")
            lines += ["    " + line for line in text.splitlines()]
        return "\n".join(lines)


def explain(fn: Callable, *args: Any, **kwargs: Any) -> Explanation:
    """Call `fn(*args, **kwargs)` once under `to_static` and say what was compiled and what fell back."""
    jit = fn if hasattr(fn, "sot_translator") else to_static(fn)
    translator = getattr(jit, "sot_translator", None)
    name = getattr(fn, "__qualname__", repr(fn))
    if translator is None:  # SOT_DISABLE or not_to_static: nothing is translated
        return Explanation(name, jit(*args, **kwargs))
    hits = {id(e): e.hits for e in translator.cache.entries}
    n_translations = translator.translations
    result = jit(*args, **kwargs)
    ran = [e for e in translator.cache.entries if id(e) not in hits or e.hits > hits[id(e)]]
    graphs = [e.payload for e in ran if e.payload is not None and not isinstance(e.payload, Fallback)]
    return Explanation(name, result, graph_count=len(graphs),
                       fallbacks=[e.payload for e in ran if isinstance(e.payload, Fallback)],
                       sir_texts=[str(sir) for sir in graphs], translations=translator.translations - n_translations)
