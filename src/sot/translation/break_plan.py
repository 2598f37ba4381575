"""How a translation builds its graph break, and when it must simulate the frame again to build it another way.

A first simulation breaks where it met something it cannot capture. Some breaks are built better
after simulating again with other `BreakOptions` (`Retranslate` asks for them): a break inside
inlined calls whose frames cannot be rebuilt breaks at the outermost call instead; a break in a hot
loop of the frame breaks at the loop's head, the loop then running for real with its body as a
translated function (opcode_executor.loops); a loop that cannot run so is not tried again (the rest
of the frame runs eagerly, SOT-C002). A break in a `with` block over a contextlib manager the
translation simulates (its generator's state lives in the simulation only) simulates again with
those managers made and entered for real. A call that reads its caller's frame (`sys._getframe`,
`locals()`, `warnings.warn`) inside an inlined callee breaks at the outermost call, whose callee then
runs eagerly: frames as eager code has them are what such a call must see.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable

from sot import config
from sot.codegen.loop_body import ITEM, loop_body
from sot.dynamic.numbers import NumberNeeded
from sot.opcode_executor import OpcodeExecutor, Unsupported
from sot.opcode_executor.breaks import GraphBreak
from sot.opcode_executor.calls import ReadsFrames
from sot.opcode_executor.contexts import holds_simulated_context
from sot.opcode_executor.live import frame_locals
from sot.opcode_executor.loops import hot_loop, loops_around, outermost_loop, plan_loop
from sot.opcode_executor.trackers import LocalTracker
from sot.translation.outcomes import Fallback
from sot.translation.reasons import Event
from sot.translation.source_text import said, saying, told

__all__ = ["BreakOptions", "Retranslate", "check_frames", "loops_of", "unbuildable", "break_event",
           "eager_rests", "needs_loop_item"]


@dataclass(frozen=True)
class BreakOptions:
    """How a translation builds its break, set when a first simulation asks for another:
    `resume_inside` False: a break inside an inlined call breaks at the call (its frames could not
    be rebuilt); `loop_head`/`loop_end`: the FOR_ITER to break at and its loop's end, whose loop
    runs for real (`loop_cause`: the body's break and why the loop is hot); `no_loop`: that was
    tried and cannot be done (the rest runs eagerly, SOT-C002); `real_managers`: contextlib's managers
    are made and entered for real, not simulated (a simulated one's state cannot cross a break)."""

    resume_inside: bool = True
    loop_head: int | None = None
    loop_end: int | None = None
    loop_cause: tuple | None = None
    no_loop: bool = False
    real_managers: bool = False


class Retranslate(Exception):
    """Simulate the frame again with these `BreakOptions` changes."""

    def __init__(self, **changes: Any):
        super().__init__(", ".join(changes))
        self.changes = changes


def check_frames(brk: GraphBreak, options: BreakOptions) -> None:
    """Ask to break at the outermost call when a call inside an inlined callee reads its caller's frame."""
    if len(brk.frames) > 1 and options.resume_inside and isinstance(brk.cause, ReadsFrames):
        raise Retranslate(resume_inside=False)


def loops_of(ex: OpcodeExecutor, brk: GraphBreak, options: BreakOptions,
             make_resume: Callable[..., Callable]) -> tuple[tuple | None, dict[int, str]]:
    """The loop a break at its head runs for real (`loops.LoopPlan`, its body function), and the frames
    of the break (by index) whose resume functions run eagerly, with why (SOT-C002: a break in loops
    too long to nest a call per iteration). A break in a hot loop of the translated frame itself asks
    to simulate again, breaking at the loop's head (`Retranslate`)."""
    root = brk.frames[-1]
    loop = None
    if options.loop_head is not None and root.instruction is ex.normalised.instructions[options.loop_head]:
        plan = plan_loop(ex.normalised, options.loop_head, options.loop_end, frame_locals(ex)[1])
        if plan is None:
            raise Retranslate(loop_head=None, no_loop=True)
        body = loop_body(ex.code, ex.normalised, plan, len(root.stack))
        loop = (plan, make_resume(body, ex.f_globals, shared=True))
    hot = {i: why for i, frame in enumerate(brk.frames)
           if (why := hot_loop(frame, config.max_loop_breaks())) is not None}
    if loop is not None:  # its exits nest only where the loop sits in another loop
        hot.pop(len(brk.frames) - 1, None)
        if len(loops_around(ex.normalised, options.loop_head)) > 1:
            hot[len(brk.frames) - 1] = "a loop around a loop run for real"
    elif len(brk.frames) - 1 in hot and not options.no_loop:
        span = outermost_loop(ex.normalised, ex.normalised.index(root.instruction))
        if span is not None:
            raise Retranslate(loop_head=span[0], loop_end=span[1], loop_cause=(brk.cause, hot[len(brk.frames) - 1]))
    return loop, hot


def unbuildable(brk: GraphBreak, loop: tuple | None, error: Unsupported) -> Exception:
    """What to raise when the break's code cannot be built (`error`): simulate again breaking at the
    outermost call, or without running the loop for real; else the break's own reason, with why."""
    if any(holds_simulated_context([*frame.stack, *frame.executor.locals.values()]) for frame in brk.frames):
        return Retranslate(real_managers=True)  # (before breaking at the call: the callee may resume then)
    if len(brk.frames) > 1:  # a frame inside could not be rebuilt: break at the outermost call instead
        return Retranslate(resume_inside=False)
    if loop is not None:
        return Retranslate(loop_head=None, no_loop=True)
    cause = brk.cause
    combined = Unsupported(cause.opname, cause.where, f"{said(cause)}; {error.detail}", cause.code)
    if cause.at is not None:
        combined.locate(*cause.at)
    return combined


def break_event(brk: GraphBreak, options: BreakOptions, loop: tuple | None) -> Event:
    """The graph break a translation records, reported where it is: in a loop's body, or inside a call."""
    cause = brk.cause
    reason = told(cause)
    at = brk.frames[0].executor
    if loop is not None:  # the break the loop's body makes, reported where it is
        cause, why = options.loop_cause
        reason = f"{told(cause)} (in {why}: the loop runs for real, its body as a translated function)"
    elif cause.where != at.where():  # it broke inside a call that cannot resume inside its callee: say why
        why = brk.call_site or "the callee cannot be resumed at that point"
        reason += f" (inside the call at {at.where()}: {why}; the caller breaks at the call, the callee " \
                  "is translated as a function of its own)"
    return Event(cause.code, reason, cause.where)


def eager_rests(brk: GraphBreak, hot: dict[int, str]) -> list[Fallback]:
    """The SOT-C002 decisions of a break: the frames (by index) in hot loops whose rest runs eagerly."""
    return [Fallback(saying((brk.frames[i].executor.code, brk.frames[i].instruction),
                            f"breaks the graph inside {why} (more than "
                            f"SOT_MAX_LOOP_BREAKS={config.max_loop_breaks()}): the rest of the function runs eagerly "
                            "from there"),
                     brk.frames[i].executor.where(), "SOT-C002") for i, why in hot.items()]


def needs_loop_item(code: types.CodeType, error: NumberNeeded) -> bool:
    """Whether `code` is a loop's body function (see opcode_executor.loops) and `error` needs the value of
    one of its parameters: the loop's item or a number it carries, which change in every iteration."""
    if code.co_argcount == 0 or code.co_varnames[0] != ITEM:
        return False
    params = {LocalTracker(name).source.text for name in code.co_varnames[:code.co_argcount]}
    return not params.isdisjoint(error.sources)
