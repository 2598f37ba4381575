"""Stream analysis (Paddle's StreamAnalyzer).

Every instruction gets an execution context `Context(kind, stream)`:
- `cpu`: a CPU kernel, run to completion on a host thread (stream "default");
- `gpu`: a device kernel, launched onto its device stream (a CuPy stream, `cuda_streams.py`; on
  a CPU place an emulated one, `streams.py`) and finished later in that stream's order;
- `h2d` / `d2h`: copies into / out of the device. An h2d copy is launched like a device kernel;
  a d2h copy is a host waiter (fetch ops are d2h: they hand the value to the caller).

Placement (`place`): feeds are cpu, fetches d2h, the build's copies (executor/transfer.py)
h2d on the copy stream "h2d" and d2h; a kernel op carrying the attribute
`execution_stream` (Paddle's name) runs on that device stream; the others follow the policy
(`FLAGS_executor_stream_policy`): "host" (the CPU default: CPU kernels on the host pool),
"single" (one compute stream; what "host" means on a CuPy device, `device_policy`), "auto"
(independent branches whose ops cost at least the break-even of a thread hand-off get streams of
their own; a chain stays on its stream). Stream assignment is a decision of the build, never of the runtime (TFRT's rule).

`StreamAnalyzer.schedule` classifies each successor edge as Paddle's StreamAnalyzer does:
- direct: run on the current thread with no sync — CPU->CPU, CPU->H2D, D2H->CPU and any
  edge out of a host-completed op (cpu, d2h), and device->device on the same stream;
- event: the producer records an event the consumer's stream waits on — H2D->GPU,
  GPU->GPU on another stream;
- sync: a device producer and a host waiter (GPU->D2H, GPU->CPU): a blocking wait, moved to
  a host thread.
Events are kept only for the vars the producer writes and the consumer reads (GetNeedEventVarIds);
an ordering edge that carries no such var (write-after-read, random or side-effect chains) still
needs the producer finished, so it waits on the producer's completion with no var attached.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

__all__ = ["Context", "HOST", "FETCH_CTX", "STREAM_ATTR", "POLICIES", "edge_kind", "StreamAnalyzer",
           "StreamSchedule", "place", "on_device", "device_policy", "kernel_streams"]

STREAM_ATTR = "execution_stream"
POLICIES = ("host", "single", "auto")
CPU, GPU, H2D, D2H = "cpu", "gpu", "h2d", "d2h"
_HOST_DONE = (CPU, D2H)        # the op's results exist when its host thread moves on
_HOST_WAITERS = (CPU, D2H)     # the op runs on a host thread: waiting on a device blocks it


class Context(NamedTuple):
    """Where an instruction runs: its kind (cpu, gpu, h2d, d2h) and stream name."""

    kind: str
    stream: str

    @property
    def is_device(self) -> bool:
        """Launched asynchronously onto a stream (gpu kernels and h2d copies)."""
        return self.kind not in _HOST_DONE


HOST = Context(CPU, "default")
FETCH_CTX = Context(D2H, "default")
COMPUTE = Context(GPU, "compute")
H2D_CTX = Context(H2D, "h2d")          # copies into the device get a copy stream (TF's H2D stream)
D2H_CTX = Context(D2H, "default")      # copies out of it are host waiters, as fetches are


def device_policy(policy: str, real_device: bool) -> str:
    """The policy a build places by: with CuPy (a real device) kernels never run on the host
    pool, so "host" means one compute stream there ("single")."""
    return "single" if real_device and policy == "host" else policy


def kernel_streams(contexts: Sequence[Context]) -> frozenset[str]:
    """The streams the placement put device kernels on (copy streams not counted)."""
    return frozenset(c.stream for c in contexts if c.kind == GPU)


def on_device(annotation: str | None, policy: str) -> bool:
    """Whether a kernel op runs on a device stream: annotated, or placed there by the policy."""
    return annotation is not None or policy != "host"


def edge_kind(producer: Context, consumer: Context) -> str:
    """"direct", "event" or "sync" for an edge producer -> consumer, by Paddle's StreamAnalyzer rules."""
    if producer.kind in _HOST_DONE:
        return "direct"
    if consumer.kind in _HOST_WAITERS:
        return "sync"
    return "direct" if producer.stream == consumer.stream else "event"


@dataclass(frozen=True)
class StreamSchedule:
    """The analyzer's result: the kind of every edge and the vars each non-direct edge waits for."""

    next_kind: dict[tuple[int, int], str]
    events: dict[tuple[int, int], tuple[int, ...]]   # non-direct edge -> var ids (may be empty)
    output_event: tuple[bool, ...]                    # per op: records a completion event


class StreamAnalyzer:
    """Classifies the successor edges of one placed instruction list (Paddle's StreamAnalyzer)."""

    def __init__(self, contexts: Sequence[Context], reads: Sequence[frozenset[int]],
                 writes: Sequence[frozenset[int]]):
        if not (len(contexts) == len(reads) == len(writes)):
            raise ValueError(f"StreamAnalyzer: {len(contexts)} contexts, {len(reads)} read sets and "
                             f"{len(writes)} write sets; expected one of each per op")
        self.contexts = tuple(contexts)
        self._reads, self._writes = reads, writes
        self._kinds: dict[tuple[int, int], str] = {}
        self._events: dict[tuple[int, int], tuple[int, ...]] = {}

    def schedule(self, op_index: int, downstream_ops: Sequence[int]) -> None:
        """Classify the edges out of `op_index` and note the event vars of the non-direct ones."""
        cur = self.contexts[op_index]
        for nxt in downstream_ops:
            kind = edge_kind(cur, self.contexts[nxt])
            self._kinds[(op_index, nxt)] = kind
            if kind != "direct":
                self._events[(op_index, nxt)] = tuple(sorted(self._writes[op_index] & self._reads[nxt]))

    def analyse(self, downstream: Sequence[frozenset[int]]) -> StreamSchedule:
        """`schedule` every op; the frozen result."""
        for i, ds in enumerate(downstream):
            self.schedule(i, sorted(ds))
        records = [False] * len(self.contexts)
        for i, _ in self._events:
            records[i] = True
        return StreamSchedule(dict(self._kinds), dict(self._events), tuple(records))


def place(kinds: Sequence[str], annotations: Sequence[str | None], policy: str,
          upstream: Sequence[frozenset[int]], cost: Sequence[float], break_even_us: float,
          max_streams: int) -> list[Context]:
    """The context of every op: `kinds[i]` is "feed", "fetch", "memcpy_h2d", "memcpy_d2h", "host"
    (an op that runs on a host thread whatever the policy: control flow) or "kernel"; an annotation names a stream; the policy places the other kernels (see the module
    docstring)."""
    if policy not in POLICIES:
        raise ValueError(f"place: argument 'policy' must be one of {POLICIES}, got {policy!r}")
    out: list[Context] = []
    claimed: set[int] = set()   # ops whose stream one successor already continues
    next_new = 1
    for i, kind in enumerate(kinds):
        if kind in ("feed", "host"):
            out.append(HOST)
        elif kind == "fetch":
            out.append(FETCH_CTX)
        elif kind == "memcpy_h2d":
            out.append(H2D_CTX)
        elif kind == "memcpy_d2h":
            out.append(D2H_CTX)
        elif annotations[i] is not None:
            out.append(Context(GPU, annotations[i]))
        elif not on_device(None, policy):
            out.append(HOST)
        elif policy == "single":
            out.append(COMPUTE)
        else:
            # a root hangs off a virtual op -1 on "compute": the first root continues it
            preds = sorted(p for p in upstream[i] if out[p].kind == GPU) or [-1]
            free = [p for p in preds if p not in claimed]
            if free:
                claimed.add(free[0])
                out.append(COMPUTE if free[0] == -1 else out[free[0]])
            elif cost[i] >= break_even_us and max_streams > 1:
                out.append(Context(GPU, f"compute{next_new}"))
                next_new = next_new % (max_streams - 1) + 1
            else:
                out.append(COMPUTE if preds[0] == -1 else out[preds[0]])
    return out
