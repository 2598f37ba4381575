"""Every reason the JIT breaks a graph or runs a frame eagerly, in ONE registry with a stable code.

A `Reason` has a code (`SOT-B001`), a kind (DDCF, UNSPS, CDBL, UNIMP, SIDE, RAISE, USER, GAP,
COST, LIMIT), a one-line explanation and a hint for the user. Logs, `explain`, reports and the
`sot` command show the code; tests produce each code at least once (tests/test_sot_reasons.py).
The executor raises `Unsupported(..., code=...)` with the code of what it met; `Event` is one
break or fallback that happened, its detail in the user's terms, led by the expression of the user's
code it happened at (sot.translation.source_text). docs/reasons.md explains every code.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reason", "REASONS", "reason", "Event"]


@dataclass(frozen=True)
class Reason:
    """One kind of break or fallback: stable code, kind, what it means, what to do about it."""

    code: str
    kind: str
    summary: str
    hint: str


REASONS: dict[str, Reason] = {r.code: r for r in (
    Reason("SOT-B001", "DDCF", "a Python decision on a tensor's value (if/while/and/or/not on a tensor)",
           "compute both branches with paddle.where, or move the decision outside the compiled function"),
    Reason("SOT-B002", "DDCF", "a tensor's value read as a Python number or array (item(), numpy(), tolist(), "
           "int(t), float(t), iterating a tensor)",
           "keep the value a tensor; read it after the compiled function returns"),
    Reason("SOT-B003", "UNSPS", "a call the simulator cannot capture (print, I/O, NumPy on values, C functions, "
           "modules it does not know)",
           "move the call out of the hot path, or mark the function with sot.not_to_static"),
    Reason("SOT-B004", "CDBL", "a function on the user block list (sot.skip_function / sot.graph_break_on), "
           "marked sot.not_to_static, or of sot itself (sot.to_static called inside a compiled function)",
           "remove it from the block list if it can be captured"),
    Reason("SOT-B005", "CDBL", "an op whose output shape depends on tensor values (nonzero, masked_select, unique)",
           "use fixed-shape ops (paddle.where with a mask), or capture it with sot.graph_break_on(api, False)"),
    Reason("SOT-U001", "UNIMP", "an opcode the simulator has no handler for",
           "rewrite the construct (see docs/to_static.md) or report it"),
    Reason("SOT-S001", "SIDE", "a write visible outside the function (attribute, global, a container passed in, "
           "an argument tensor in place)",
           "return the new value instead of mutating, or keep the mutation outside the compiled function"),
    Reason("SOT-R001", "RAISE", "the function raises an exception of its own",
           "nothing to do: the call runs eagerly and raises what eager code raises"),
    Reason("SOT-E001", "USER", "a call eager code rejects (a shape or dtype error in the user's code)",
           "fix the call: eager code raises the same error"),
    Reason("SOT-G001", "GAP", "a construct the translation does not support yet (closures with cells of their "
           "own across a break, a value it cannot rebuild, a generator function decorated)",
           "report it; the frame runs eagerly meanwhile"),
    Reason("SOT-C001", "COST", "a subgraph below the minimum size worth compiling (SOT_MIN_GRAPH_SIZE): its ops "
           "run eagerly, its translation and breaks stay", "nothing to do; lower SOT_MIN_GRAPH_SIZE to compile it"),
    Reason("SOT-C002", "COST", "a break inside a loop with many or unknown iterations (more than "
           "SOT_MAX_LOOP_BREAKS) that cannot run for real with its body as a function (a local first assigned "
           "in the body read after it, a try around the loop): breaking in every iteration would nest a call per "
           "iteration, so the rest of the frame runs eagerly from that break", "move the breaking code out of the "
           "loop, keep the body's temporaries inside it, or raise SOT_MAX_LOOP_BREAKS for a loop known to be "
           "short"),
    Reason("SOT-C003", "COST", "a for loop of the translated function longer than SOT_MAX_UNROLL iterations: "
           "it runs as a loop for real (its body a compiled function; a body that needs the value of its item or "
           "of a number it carries, e.g. `if i % 2:`, runs eagerly instead of being translated once per iteration)",
           "nothing to do; raise SOT_MAX_UNROLL to unroll more (a bigger graph, a longer translation)"),
    Reason("SOT-L001", "LIMIT", "the function needed more translations than cache_size_limit",
           "keep Python arguments stable between calls, mark varying sizes dynamic, or raise the limit"),
)}


def reason(code: str) -> Reason:
    """The Reason registered under `code`."""
    try:
        return REASONS[code]
    except KeyError:
        raise KeyError(f"unknown reason code {code!r}; known: {', '.join(REASONS)}") from None


@dataclass(frozen=True)
class Event:
    """One break or fallback that happened: its Reason code, the detail and where (file:line)."""

    code: str
    detail: str
    where: str

    @property
    def reason(self) -> Reason:
        """The registered Reason of this event."""
        return REASONS[self.code]

    def __str__(self) -> str:
        return f"[{self.code}] {self.detail} ({self.where})"
