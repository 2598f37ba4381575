"""`SOT_LOG=breaks,guards,recompiles,bytecode,sir` (or `all`): what each translation did, through `logging`.

Messages go to the logger `sot` at INFO, one record per event, each naming file:line:

    breaks      a graph break or a frame run eagerly: [code] detail (file:line)
    guards      the guards a new cache entry is kept under (one line, `and`-joined)
    recompiles  a translation of a code object that already had entries: the guard that failed
    bytecode    a header line, then `dis` of the generated code
    sir         a header line, then the StatementIR text

When `SOT_LOG` is set a stderr handler is added to `sot`, so `SOT_LOG=breaks python train.py`
shows them without any logging setup in the script; it stays quiet while another handler up the
chain (`logging.basicConfig`, pytest's caplog) shows the records, so none is printed twice.
`SOT_LOG` is checked when this module is imported (by `import sot`): a typo fails there, not
inside the first compiled call.
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


class _StderrFallback(logging.StreamHandler):
    """Stderr output for `sot` records that no other handler would show: the user may configure
    logging (e.g. `logging.basicConfig`) after our handler is attached, and then theirs wins."""

    def emit(self, record: logging.LogRecord) -> None:
        if not _shown_elsewhere(self, record):
            super().emit(record)


def _shown_elsewhere(own: logging.Handler, record: logging.LogRecord) -> bool:
    """Whether a handler other than `own`, on `sot` or an ancestor it propagates to, takes `record`."""
    logger: logging.Logger | None = LOGGER
    while logger is not None:
        if any(h is not own and record.levelno >= h.level for h in logger.handlers):
            return True
        logger = logger.parent if logger.propagate else None
    return False


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
    """The `sot` logger at INFO with its stderr fallback handler (added once)."""
    if LOGGER.getEffectiveLevel() > logging.INFO:
        LOGGER.setLevel(logging.INFO)
    if not any(isinstance(h, _StderrFallback) for h in LOGGER.handlers):
        handler = _StderrFallback(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        LOGGER.addHandler(handler)


config.log_topics()  # a bad SOT_LOG fails `import sot`, not the first translation
