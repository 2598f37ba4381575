"""`explain(fn, *args, **kwargs)`: run `fn` once under the JIT and report what was captured and what was not.

The call is real (no copies). The report comes from the code caches of the function's translator
and of every translator its breaks made (resume functions, callees translated on their own):
entries whose hit count grew or that were inserted during the call ran. An entry holding a SIR
with statements is a compiled subgraph (`graph_count`, `sir_texts`), unless it is below SOT_MIN_GRAPH_SIZE and runs its ops eagerly
(`eager_graph_count`); an entry whose code breaks
adds its break (`break_count`, `breaks`, each an `Event` with code, detail and file:line); an entry
holding a `Fallback` is a frame that ran eagerly, just translated or served from the cache
(`fallbacks`, each with reason, file:line and code). A `print` made right after its graph instead
of breaking it is listed by file:line (`deferred_prints`). `sources` holds the generated code of
each translated entry that ran, as the Python SOT_DUMP writes to transformed.py. The dims of the
function's inputs kept static so far that a recompile would have made dynamic (a dim read as a
Python int, one `mark_static` kept) are listed with why and the line (`kept_static`): each new size
of them translates again.

Its text nests what each break made (resume functions, loop bodies, callees) under the function
whose break made it, each with its own breaks and fallbacks (`parts`), as `sot report` does.

A Layer is explained as its forward, called on the layer (its hooks are left out: they run eagerly
around a compiled forward anyway). The layer is not changed: a forward `to_static` did not
already convert is translated through a wrapper made for the call, not installed on the layer.
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from runtime.nn import Layer

from .api import to_static
from .dynamic.shapes import KeptStatic
from .tools.formats import title
from .tools.report import counts_as_graph, limit_fallback, origin
from .translation.dump import readable_source
from .translation.reasons import Event
from .translation.hook_cache import LIVE_CACHES
from .translation.translator import Fallback, Translator

__all__ = ["Explanation", "Part", "explain"]


@dataclass
class Part:
    """What one translator did in the call: the function's, or that of what one of its breaks made (a
    resume function, a loop body, a callee: `kind` and the other fields as in `FunctionReport`)."""

    qualname: str
    file: str
    line: int
    resume_of: str | None
    depth: int  # 0: the explained function; n: made by a break of the part above at depth n - 1
    kind: str = "function"
    resumes_at: int | None = None
    break_at: str | None = None
    source: str = ""
    breaks: list[Event] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)


@dataclass
class Explanation:
    """What one JIT call of a function did: graphs run, breaks, fallbacks, the SIRs."""

    name: str
    result: Any
    graph_count: int = 0
    eager_graph_count: int = 0  # subgraphs below SOT_MIN_GRAPH_SIZE: translated, their ops run eagerly
    break_count: int = 0
    fallbacks: list[Fallback] = field(default_factory=list)
    breaks: list[Event] = field(default_factory=list)
    sir_texts: list[str] = field(default_factory=list)
    translations: int = 0
    deferred_prints: list[str] = field(default_factory=list)  # file:line of each print made after its graph
    parts: list[Part] = field(default_factory=list)  # each translator that ran, depth first: the breaks nested
    sources: list[str] = field(default_factory=list)  # the generated code of each translation that ran, as Python
    # the function's translator: holding it keeps the one of a wrapper made for the call (a Layer's forward
    # not converted) and what it made listed in `sot.report()` while the explanation lives
    translator: Translator | None = field(default=None, repr=False, compare=False)
    kept_static: list[KeptStatic] = field(default_factory=list)  # dims kept static so far, with why and where

    def __str__(self) -> str:
        lines = [f"explain {self.name}: {self.graph_count} graph(s), {self.eager_graph_count} small graph(s) run "
                 f"eagerly, {self.break_count} break(s), "
                 f"{len(self.fallbacks)} fallback(s), {self.translations} new translation(s)"]
        for part in self.parts:
            indent = "  " + "    " * part.depth
            if part.depth:
                lines.append(f"{indent[:-4]}└ {title(part)}")
            lines += [f"{indent}break: {event}" for event in part.breaks]
            lines += [f"{indent}fallback: [{fb.code}] {fb.reason} ({fb.where})" for fb in part.fallbacks]
        lines += [f"  print deferred to after its graph ({where})" for where in self.deferred_prints]
        lines += [f"  {kept.text()}" for kept in self.kept_static]
        for i, text in enumerate(self.sir_texts):
            lines.append(f"  graph {i}:")
            lines += ["    " + line for line in text.splitlines()]
        return "\n".join(lines)


def _jit_of(fn: Callable) -> tuple[Callable, str]:
    """What to call under the JIT for `fn`, and the name the report gives it."""
    if isinstance(fn, Layer):
        forward = fn.forward
        if not hasattr(forward, "sot_translator"):  # (a bound method reads its function's attributes)
            forward = types.MethodType(to_static(type(fn).forward), fn)
        return forward, f"{type(fn).__qualname__}.forward"
    return (fn if hasattr(fn, "sot_translator") else to_static(fn)), getattr(fn, "__qualname__", repr(fn))


def _tree(translator: Translator) -> Iterator[tuple[Translator, Translator | None, int]]:
    """The translator and, depth first, those of its resume functions and translated callees; each with
    the translator whose break made it and its depth."""
    seen: set[int] = set()
    stack: list[tuple[Translator, Translator | None, int]] = [(translator, None, 0)]
    while stack:
        t, parent, depth = stack.pop()
        if id(t) not in seen:
            seen.add(id(t))
            yield t, parent, depth
            stack.extend((child, t, depth + 1) for child in reversed(t.children))


def explain(fn: Callable, *args: Any, **kwargs: Any) -> Explanation:
    """Call `fn(*args, **kwargs)` once under `to_static` and say what was compiled, broken and run eagerly;
    `fn` may be a function, a to_static wrapper or a Layer (its forward)."""
    jit, name = _jit_of(fn)
    translator = getattr(jit, "sot_translator", None)
    if translator is None:  # SOT_DISABLE or not_to_static: nothing is translated
        return Explanation(name, jit(*args, **kwargs))
    # every code cache, not only this function's: a translator made during the call (a resume function,
    # a callee) may share the cache of a code translated before, whose older entries did not run
    live = list(LIVE_CACHES)
    hits_before = {id(cache): ({id(e): e.hits for e in cache.entries}, cache.eager_runs) for cache in live}
    translations_before = {id(t): t.translations for t, _, _ in _tree(translator)}
    result = jit(*args, **kwargs)
    report = Explanation(name, result, translator=translator)
    seen: set[int] = set()
    for t, parent, depth in _tree(translator):
        report.translations += t.translations - translations_before.get(id(t), 0)
        if id(t.cache) in seen:
            continue  # translators of one code share its cache (and what each entry breaks and defers)
        seen.add(id(t.cache))
        part = Part(t.code.co_qualname, t.code.co_filename, t.code.co_firstlineno,
                    parent.code.co_qualname if parent is not None else None, depth,
                    **origin(t.code, [parent] if parent is not None else []))
        report.kept_static += t.shapes.kept_static()
        hits, eager_runs = hits_before.get(id(t.cache), ({}, 0))
        if t.cache.eager_runs > eager_runs:  # its cache gave up: the frame ran eagerly (SOT-L001)
            part.fallbacks.append(Fallback(*limit_fallback(t.cache.cache_size_limit, t.code), "SOT-L001"))
        ran = [e for e in sorted(t.cache.entries, key=lambda e: e.id) if id(e) not in hits or e.hits > hits[id(e)]]
        if ran or part.fallbacks:
            report.parts.append(part)
        for e in ran:
            if isinstance(e.payload, Fallback):
                part.fallbacks.append(e.payload)
                continue
            if e.id in t.entry_eager:
                report.eager_graph_count += 1
            elif counts_as_graph(t.cache.entry_ops.get(e.id, 0), eager=False):
                report.graph_count += 1
                if e.payload is not None:  # (released with the objects its guards named, once they died)
                    report.sir_texts.append(str(e.payload))
            report.deferred_prints += t.entry_prints.get(e.id, [])
            generated = getattr(e.code, "code", None)
            if generated is not None:
                report.sources.append(readable_source(t.code, e.payload, generated, e.guards,
                                                      t.entry_breaks.get(e.id), e.id))
            if e.id in t.entry_breaks:
                part.breaks.append(t.entry_breaks[e.id])
                part.fallbacks += t.entry_eager_rest.get(e.id, [])  # SOT-C002: the rest ran eagerly
    report.breaks = [event for part in report.parts for event in part.breaks]
    report.fallbacks = [fallback for part in report.parts for fallback in part.fallbacks]
    report.break_count = len(report.breaks)
    return report
