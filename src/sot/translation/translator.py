"""The frame callback of `to_static`: translate a frame into a guarded, cached code object.

`Translator(code, fallback, cache_size_limit)` is called by the eval-frame hook with an unstarted
frame of `code` on a cache miss. It drives the stages: decode and simulate the frame with the
`OpcodeExecutor` (recording tensor work into a SIR), compile the SIR, generate the code object
that runs it (sot.codegen.frame; at a graph break, as sot.translation.break_plan decides), and
insert it into the code's cache under the executor's guards (sot.translation.hook_cache), so the
next call with matching inputs is served in C without calling back. A simulation may ask to be
run again with other options (a break built another way, a dynamic dim or number kept static):
`_translate` loops until one succeeds or gives up. A frame that cannot be captured runs eagerly
(`fallbacks` records why) or, with `fallback=False`, raises `GraphBreakError(reason, where)`.
Whoever watches (reports, SOT_LOG) hears of translators and translations through
sot.translation.events.

Threads: a code object is translated by one thread at a time (its cache's `translating` lock); a
thread that missed meanwhile waits, then looks in the cache again and translates only if the entry
it needs is still missing. Hits take no lock.
"""
from __future__ import annotations

import dataclasses
import inspect
import types
from dataclasses import dataclass
from functools import partial
from typing import Any, Iterable

from sot import config
from sot.codegen.frame import broken_frame, whole_frame
from sot.dynamic.numbers import NumberNeeded
from sot.dynamic.shapes import Recompile, StaticDimNeeded, policy_of
from sot.guards import Guard
from sot.guards.layer_tree import fold_layer_guards
from sot.guards.source import Scope
from sot.hook.eval_frame import CustomCode
from sot.ir import CompiledSIR, EagerSIR
from sot.opcode_executor import FrameRaises, OpcodeExecutor, Unsupported
from sot.opcode_executor.breaks import GraphBreak
from sot.opcode_executor.calls import ReadsFrames
from sot.opcode_executor.contexts import ContextlibForReal
from sot.opcode_executor.variables import Variable
from sot.pyversion import DecodeError
from sot.translation import events
from sot.translation.break_plan import (BreakOptions, Retranslate, break_event, check_frames, eager_rests, loops_of,
                                       needs_loop_item, unbuildable)
from sot.translation.children import as_it_is, resume_function, translated_callee
from sot.translation.dump import dump_translation
from sot.translation.hook_cache import EAGER, LIVE_CACHES, HookCache, cache_of
from sot.translation.outcomes import Fallback, GraphBreakError, rerun_after, where_defined
from sot.translation.reasons import Event
from sot.translation.source_text import saying, told

__all__ = ["GraphBreakError", "Fallback", "Translator", "reset_caches", "reset_all"]

# code whose frames next()/send() resume: the hook leaves them alone
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# what an op's meta function raises for a bad call (as eager code does) during the simulation; any
# other exception, and any raised while generating code, is a gap of the JIT, which fallback=False
# and SOT_STRICT must report, never hide
_USER_ERRORS = (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError)
_RESUMABLE_REASON = "a generator or coroutine function runs eagerly (a generator it calls is inlined)"


@dataclass(frozen=True)
class _Again:
    """A simulation asked to be run again with `options` (`why`: what it asked); `ex` is its executor."""

    options: BreakOptions
    why: str
    ex: OpcodeExecutor | None


class Translator:
    """The eval-frame callback for one code object (the decorated function's)."""

    def __init__(self, code: types.CodeType, fallback: bool = True, cache_size_limit: int = 8,
                 on_cache_limit: str = "eager"):
        self.code = code
        self.fallback = fallback
        self.cache = installed = cache_of(code, cache_size_limit, on_cache_limit)  # shared per code object
        installed.translators.add(self)
        self.children = installed.children  # translators of the resume functions and callees its breaks made
        self.entry_breaks = installed.entry_breaks  # cache entry id -> the break its code makes on every run
        self.entry_eager_rest = installed.entry_eager_rest  # cache entry id -> its SOT-C002 decisions
        self.entry_eager = installed.entry_eager  # ids of entries whose graph runs eagerly (too small)
        self.entry_prints = installed.entry_prints  # cache entry id -> file:line of the prints it defers
        self.shapes = policy_of(code)  # which input dims its translations leave dynamic (shared per code)
        # a generator's frames never reach the hook: its to_static wrapper counts its calls (all eager)
        self.resumable = bool(code.co_flags & _RESUMABLE)
        if self.resumable and not fallback:
            raise GraphBreakError(_RESUMABLE_REASON, where_defined(code))
        self._forget()
        events.made(self)  # (reports and SOT_LOG watch the pipeline's events)

    def _forget(self) -> None:
        """Start the records afresh (when made, and on `reset`); a generator's fallback is its code's, not
        a translation's, so it stays."""
        self.fallbacks: list[Fallback] = [Fallback(_RESUMABLE_REASON, where_defined(self.code))] \
            if self.resumable else []
        self.breaks: list[Event] = []  # graph breaks of its translations, each with its reason code
        self.small_graphs: list[Event] = []  # SOT-C001 decisions of its translations
        self.translations = 0
        self.recompiles: list[Recompile] = []  # why each translation after the first was needed
        self.eager_calls = 0  # calls the hook never saw (a generator function's), all run eagerly

    def reset(self) -> None:
        """Forget every translation of this code and of the resume functions and callees its breaks made:
        their cache entries, the limit reached, the dims and numbers made dynamic, the recorded breaks and
        fallbacks. The next call translates again."""
        reset_caches([self.cache])

    def __call__(self, frame: Any) -> Any:
        """Translates a frame of our code on a cache miss; other frames run untouched. One thread at a
        time: a thread that waited for another's translation runs what that one cached, if it fits."""
        if frame.f_code is not self.code:
            return None
        with self.cache.translating:
            cached = self.cache.lookup_quietly(frame)
            if cached is not None:
                return cached
            with events.translating(self):  # its time and what it added, to whoever watches
                return self._translate(frame)

    def _translate(self, frame: Any) -> CustomCode:
        """Translate a frame of our code, under the code's lock: simulate it, and again while a simulation
        asks for other options. Each try must change what the next one sees (its options or the dims and
        numbers left dynamic); one that would repeat an earlier try gives up instead of spinning."""
        options, tried, outcome = BreakOptions(), set(), None
        while True:
            recompile = self.shapes.on_miss(frame, self.cache)
            if recompile is not None:
                self.recompiles.append(recompile)
            state = (options, self.shapes.describe())
            if state in tried:
                return self._give_up(outcome.ex, Fallback(f"the translation asked to simulate the frame again with "
                                                          f"nothing changed ({outcome.why})", self._where(outcome.ex)))
            tried.add(state)
            outcome = self._attempt(frame, options)
            if not isinstance(outcome, _Again):
                return outcome
            options = outcome.options

    def _attempt(self, frame: Any, options: BreakOptions) -> CustomCode | _Again:
        """One simulation of the frame with `options`, and the code it generates, cached; or why not."""
        ex = brk = None
        simulated = False  # past the simulation: an error now is the code generation's, never the user's
        self._eager_graph = False
        n_fallbacks = len(self.fallbacks)
        try:
            ex = OpcodeExecutor(self.code, dict(frame.f_locals), frame.f_globals, frame.f_builtins,
                                getattr(frame, "f_closure", None))  # (None: an extension built before it had it)
            ex.may_break = self.fallback
            ex.translation.virtual_frames = options.resume_inside
            ex.translation.loop_head = options.loop_head
            ex.translation.real_managers = options.real_managers
            try:
                returned = ex.run()
            except GraphBreak as graph_break:  # its resume functions switch the hook on for themselves
                brk = graph_break
            simulated = True
            custom = CustomCode(self._codegen(ex, returned) if brk is None else self._codegen_break(ex, brk, options),
                                True)
        except Retranslate as e:
            return _Again(dataclasses.replace(options, **e.changes), f"a break built with {e}", ex)
        except (StaticDimNeeded, NumberNeeded) as e:  # a dynamic dim or number's value was needed: keep it static
            if isinstance(e, NumberNeeded) and needs_loop_item(self.code, e):
                # kept static, they would make one translation per iteration's values: the body runs eagerly
                said = "needs the value of the loop's item or of a number it carries at translation time: the " \
                       "loop's body runs eagerly rather than being translated once per iteration"
                return self._run_eagerly(ex, Fallback(saying(self._at(ex), said), self._where(ex), "SOT-C003"))
            self.shapes.keep_static(e, self._where(ex))
            return _Again(options, str(e), ex)
        except FrameRaises as e:  # the frame raises its own exception: eager code raises it, in any mode
            return self._run_eagerly(ex, Fallback(told(e), e.where, e.code), disposable=True)  # (as below)
        except (Unsupported, DecodeError) as e:
            return self._cannot_capture(ex, e)
        except _USER_ERRORS as e:  # a meta function rejected the user's call: eager code raises it as it should
            if self.shapes.keep_static_after(ex.inputs if ex is not None else (), e, self._where(ex)):  # or a -1 dim did
                return _Again(options, f"{type(e).__name__}: {e}", ex)
            if simulated:  # raised while generating code: a gap of the JIT, as below
                if config.strict():
                    raise
                return self._cannot_capture(ex, e)
            # cached so the next such call is not simulated again, but disposable: calls that raise,
            # however many, never push the function past its cache size limit
            return self._run_eagerly(ex, Fallback(saying(self._at(ex), f"raises {type(e).__name__}: {e}, as eager "
                                                                       "code does"),
                                                  self._where(ex), "SOT-E001"), disposable=True)
        except Exception as e:  # noqa: BLE001 - a gap of the translation itself (NotImplementedError, ...)
            if config.strict():  # a bug of the JIT: shown where it happened, not hidden as an eager fallback
                raise
            return self._cannot_capture(ex, e)
        return self._insert(ex, custom, brk, self.fallbacks[n_fallbacks:])

    def _insert(self, ex: OpcodeExecutor, custom: CustomCode, brk: GraphBreak | None,
                eager_rest: list[Fallback]) -> CustomCode:
        """Cache the generated code under the simulation's guards, with what reports say of its entry."""
        self.translations += 1
        sir = ex.builder.build()
        entry = self.cache.insert(_cached_guards(ex), custom, payload=sir)
        self.cache.entry_ops[entry.id] = sir.op_count()
        if brk is not None:
            self.entry_breaks[entry.id] = self.breaks[-1]
            if eager_rest:
                self.entry_eager_rest[entry.id] = eager_rest
        if self._eager_graph:
            self.entry_eager.add(entry.id)
        prints = ex.translation.effects.deferred_prints(None if brk is None else brk.barrier)
        if prints:
            self.entry_prints[entry.id] = prints
        return custom

    def _codegen(self, ex: OpcodeExecutor, returned: Variable) -> types.CodeType:
        """The code object of a frame simulated to its return (see sot.codegen.frame), dumped for SOT_DUMP."""
        generated, compiled = whole_frame(ex, returned, self._compile, rerun_after(self))
        self._dump(ex, compiled, generated)
        return generated

    def _dump(self, ex: OpcodeExecutor, compiled: CompiledSIR | EagerSIR | None, generated: types.CodeType,
              brk: Event | None = None) -> None:
        """Write the translation for SOT_DUMP: the SIR up to the return (or the break), its Program if
        compiled, the generated code, the guards and the break's reason."""
        dump_translation(self.code, ex.builder.build(),
                         compiled.lowered.program if isinstance(compiled, CompiledSIR) else None, generated,
                         ex.guards(), brk)

    def _codegen_break(self, ex: OpcodeExecutor, brk: GraphBreak, options: BreakOptions) -> types.CodeType:
        """The code object of a frame that breaks (see sot.codegen.frame), built as sot.translation.break_plan
        decides (which may ask to simulate again); the break and the rests that run eagerly are recorded."""
        check_frames(brk, options)
        make_resume = partial(resume_function, self)
        loop, hot = loops_of(ex, brk, options, make_resume)
        # a callee that reads its caller's frame runs as it is: eager frames are what it must see (and
        # contextlib's code making a manager for real is not the user's to translate)
        as_is = isinstance(brk.cause, (ReadsFrames, ContextlibForReal))
        translated = as_it_is if as_is else partial(translated_callee, self)
        prefix: list[CompiledSIR | EagerSIR] = []  # the graph before the break, kept for SOT_DUMP

        def compile_prefix(sim: OpcodeExecutor) -> CompiledSIR | EagerSIR:
            compiled = self._compile(sim)
            if sim is ex:
                prefix.append(compiled)
            return compiled

        try:
            code = broken_frame(ex, brk, compile_prefix, rerun_after(self), translated, make_resume,
                                frozenset(hot), loop)
        except Unsupported as e:
            raise unbuildable(brk, loop, e) from e
        event = break_event(brk, options, loop)
        self.breaks.append(event)
        self.fallbacks += eager_rests(brk, hot)
        self._dump(ex, prefix[-1] if prefix else None, code, event)
        return code

    def _compile(self, ex: OpcodeExecutor) -> CompiledSIR | EagerSIR:
        """The SIR as a compiled Program, or, below the minimum graph size, run through the eager API
        (the decision recorded: SOT-C001)."""
        sir = ex.builder.build()
        if len(sir.statements) >= config.min_graph_size():
            return CompiledSIR(sir, ex.builder.place)
        self.small_graphs.append(Event("SOT-C001", f"{len(sir.statements)} op(s) < SOT_MIN_GRAPH_SIZE="
                                                   f"{config.min_graph_size()}: run eagerly", ex.where()))
        self._eager_graph = True
        return EagerSIR(sir)

    def _cannot_capture(self, ex: OpcodeExecutor | None, error: Exception) -> CustomCode:
        """The frame cannot be captured whole (`error` says why): see `_give_up`."""
        if isinstance(error, Unsupported):
            return self._give_up(ex, Fallback(told(error), error.where, error.code), error)
        said = f"meets a gap of sot: {type(error).__name__}: {error}"
        return self._give_up(ex, Fallback(saying(self._at(ex), said), self._where(ex)), error)

    def _give_up(self, ex: OpcodeExecutor | None, fallback: Fallback, error: Exception | None = None) -> CustomCode:
        """GraphBreakError in full-graph mode, else run the frame eagerly."""
        if not self.fallback:
            raise GraphBreakError(fallback.reason, fallback.where, fallback.code) from error
        return self._run_eagerly(ex, fallback)

    def _where(self, ex: OpcodeExecutor | None) -> str:
        """file:line of the instruction the simulation stopped at (the definition before it started)."""
        return ex.where() if ex is not None else where_defined(self.code)

    def _at(self, ex: OpcodeExecutor | None) -> tuple[types.CodeType, Any] | None:
        """The code and instruction the simulation stopped at, whose source a reason quotes (None: not started)."""
        return (ex.code, ex.current) if ex is not None and ex.current is not None else None

    def _run_eagerly(self, ex: OpcodeExecutor | None, fallback: Fallback, disposable: bool = False) -> CustomCode:
        """Record why the frame runs eagerly, and cache that decision under the guards the simulation
        relied on up to its failure, so the next such call is not simulated again."""
        self.fallbacks.append(fallback)
        self.cache.insert(_cached_guards(ex) if ex is not None else (), EAGER, payload=fallback, disposable=disposable)
        return EAGER


def reset_caches(caches: Iterable[HookCache]) -> None:
    """Empty `caches` and those of the children their breaks made, transitively, and start their
    translators' records and dynamic-shape decisions afresh (each code under its translating lock)."""
    pending, done = list(caches), set()
    while pending:
        cache = pending.pop()
        code = cache.code
        if id(cache) in done or code is None:  # (None: its code died, the cache awaits the collector)
            continue
        done.add(id(cache))
        with cache.translating:
            pending += [child.cache for child in cache.children]
            cache.children.clear()
            cache.clear()
            policy_of(code).clear()
            for translator in list(cache.translators):
                translator._forget()
                events.forgotten(translator)


def reset_all() -> None:
    """`sot.reset()`: every code cache the JIT installed, as `reset_caches` does."""
    reset_caches(list(LIVE_CACHES))


def _cached_guards(ex: OpcodeExecutor) -> list[Guard]:
    """The simulation's guards, with those about each Layer tree it read folded into one (`guards.layer_tree`)."""
    return fold_layer_guards(ex.guards(), Scope(ex.f_locals, ex.f_globals, ex.f_builtins))
