"""`SOT_LOG=breaks,guards,recompiles,bytecode,sir`: what each translation did, through `logging`.

Messages go to the logger `sot` at INFO, one record per event, each naming file:line:

    breaks      a graph break or a frame run eagerly: [code] detail (file:line)
    guards      the guards a new cache entry is kept under (one line, `and`-joined)
    recompiles  a translation of a code object that already had entries: the guard that failed
    bytecode    a header line, then `dis` of the generated code
    sir         a header line, then the StatementIR text

When `SOT_LOG` is set and nothing handles the `sot` logger yet, a stderr handler is added, so
`SOT_LOG=breaks python train.py` shows them without any logging setup in the script.
"""
from __future__ import annotations

import logging
import sys
from typing import Any

from sot import config
from sot.translation import events
from sot.translation.dump import disassembly

__all__ = ["LOGGER", "emit"]

LOGGER = logging.getLogger("sot")


def emit(translation: events.Translation) -> None:
    """Log what one translation added, for the topics `SOT_LOG` names."""
    topics = config.log_topics()
    if not topics:
        return
    _ensure_handler()
    translator = translation.translator
    code = translator.code
    name = f"{code.co_qualname} ({code.co_filename}:{code.co_firstlineno})"
    if "breaks" in topics:
        for event in translation.breaks:
            LOGGER.info("break %s in %s", event, name)
        for fallback in translation.fallbacks:
            LOGGER.info("eager [%s] %s (%s) in %s", fallback.code, fallback.reason, fallback.where, name)
    for entry in translation.entries:
        _entry(translator, entry, name, topics, recompile=translation.recompile)


def _entry(translator: Any, entry: Any, name: str, topics: frozenset[str], recompile: bool) -> None:
    """The log records of one new cache entry."""
    if "recompiles" in topics and recompile:
        misses = translator.cache.miss_reasons()
        why = "; ".join(f"entry {r.entry} failed `{r.expected}` (got {r.actual})"
                        for r in (misses[-1].reasons if misses else ()))
        LOGGER.info("recompile %s: entry %d: %s", name, entry.id, why or "no earlier entry matched")
    if "guards" in topics:
        LOGGER.info("guards %s entry %d: %s", name, entry.id,
                    " and ".join(str(g) for g in entry.guards) or "(none)")
    generated = getattr(entry.code, "code", None)
    if "bytecode" in topics and generated is not None:
        LOGGER.info("bytecode %s entry %d:\n%s", name, entry.id, disassembly(generated))
    if "sir" in topics and hasattr(entry.payload, "statements"):
        LOGGER.info("sir %s entry %d:\n%s", name, entry.id, entry.payload)


def _ensure_handler() -> None:
    """A stderr handler on `sot` when no handler would show its records (once)."""
    if LOGGER.getEffectiveLevel() > logging.INFO:
        LOGGER.setLevel(logging.INFO)
    if not LOGGER.hasHandlers():
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        LOGGER.addHandler(handler)
