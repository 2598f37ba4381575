"""The frame callback of `to_static`: translate a frame into a guarded, cached code object.

`Translator(code, fallback, cache_size_limit)` is called by the eval-frame hook with an unstarted
frame of `code`. It simulates the frame with the `OpcodeExecutor` (recording tensor work into a
SIR), compiles the SIR (`CompiledSIR`), builds a code object with the original's argument layout
that loads the tensor inputs from where their Trackers say they came from, calls the compiled SIR
and returns its result, and inserts it into the code's `CodeCache` (one per code object, shared by every Translator of that
code; the first one's `cache_size_limit` holds) under the executor's guards,
so the next call with matching inputs is served by the cache in C without calling back.
A frame that cannot be captured runs eagerly (`fallbacks` records why) or, with
`fallback=False`, raises `GraphBreakError(reason, where)`.

Threads: a code object is translated by one thread at a time (its cache's `translating` lock); a
thread that missed meanwhile waits, then looks in the cache again and translates only if the entry
it needs is still missing. Hits take no lock.
"""
from __future__ import annotations

import dataclasses
import inspect
import threading
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from sot import config
from sot.codegen.effects import raised_while_applying
from sot.codegen.frame import broken_frame, whole_frame
from sot.translation.dump import dump_translation
from sot.dynamic.shapes import Recompile, StaticDimNeeded, policy_of
from sot.dynamic.numbers import NumberNeeded
from sot.hook.eval_frame import CallWithCallback, CustomCode, get_code_cache, set_code_cache
from sot.guards import CodeCache
from sot.ir import CompiledSIR, EagerSIR
from sot.opcode_executor import FrameRaises, OpcodeExecutor, Unsupported
from sot.opcode_executor.breaks import GraphBreak
from sot.opcode_executor.calls import ReadsFrames
from sot.opcode_executor.live import frame_locals
from sot.opcode_executor.loops import hot_loop, loops_around, outermost_loop, plan_loop
from sot.opcode_executor.trackers import LocalTracker
from sot.opcode_executor.variables import Variable
from sot.pyversion import DecodeError
from sot.translation.reasons import REASONS, Event
from sot.codegen.break_code import NeedsClosure
from sot.codegen.loop_body import ITEM, loop_body
from sot.codegen.resume_code import CodeMap
from sot.tools import record

__all__ = ["GraphBreakError", "Fallback", "Translator"]

_TRANSLATED: "weakref.WeakKeyDictionary[types.FunctionType, Any]" = weakref.WeakKeyDictionary()
_RESUME_TRANSLATORS = CodeMap()  # resume code -> (its globals, a weak reference to its translator)
_SHARED_CODE_CACHE_LIMIT = 64  # entries for a callee translated on its own at a break, or a loop's body
_EAGER = CustomCode(None, True)  # the original code, with the hook off for its callees
# code whose frames next()/send() resume: the hook leaves them alone
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# what an op's meta function raises for a bad call (as eager code does); any other exception
# during translation is a gap of the JIT, which fallback=False must report, never hide
_USER_ERRORS = (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError)


class GraphBreakError(RuntimeError):
    """A frame could not be captured whole and `fallback=False` asked for no eager fallback."""

    def __init__(self, reason: str, where: str, code: str = "SOT-G001"):
        self.reason = reason
        self.where = where
        self.code = code
        super().__init__(f"cannot capture the frame: [{code}] {reason} ({where}); hint: {REASONS[code].hint}")


@dataclass(frozen=True)
class Fallback:
    """One frame that ran eagerly, and why (`code`: its entry in sot.translation.reasons.REASONS)."""

    reason: str
    where: str
    code: str = "SOT-G001"


@dataclass(frozen=True)
class _BreakOptions:
    """How a translation builds its break, set when a first simulation asks for another:
    `resume_inside` False: a break inside an inlined call breaks at the call (its frames could not
    be rebuilt); `loop_head`/`loop_end`: the FOR_ITER to break at and its loop's end, whose loop
    runs for real (`loop_cause`: the body's break and why the loop is hot); `no_loop`: that was
    tried and cannot be done (the rest runs eagerly, SOT-C002)."""

    resume_inside: bool = True
    loop_head: int | None = None
    loop_end: int | None = None
    loop_cause: tuple | None = None
    no_loop: bool = False


class _Retranslate(Exception):
    """Simulate the frame again with these `_BreakOptions` changes."""

    def __init__(self, **changes: Any):
        super().__init__(", ".join(changes))
        self.changes = changes


class _HookCache(CodeCache):
    """The code's CodeCache as the C hook reads it (once it gave up, the original code runs, its callees
    unhooked), with what every Translator of that code shares: the break each entry's code makes, and the
    translators its breaks made (resume functions, callees translated as frames of their own)."""

    gave_up = _EAGER

    def __init__(self, code: types.CodeType, cache_size_limit: int, on_limit: str):
        super().__init__(code, cache_size_limit, on_limit=on_limit)
        self.entry_breaks: dict[int, Event] = {}
        self.entry_eager_rest: dict[int, list[Fallback]] = {}  # SOT-C002: its break's resume runs eagerly
        self.entry_eager: set[int] = set()
        self.entry_prints: dict[int, list[str]] = {}  # file:line of the prints its code defers
        self.children: list[Translator] = []
        self.translating = threading.RLock()  # held while a thread translates this code
        LIVE_CACHES.add(self)


LIVE_CACHES: "weakref.WeakSet[_HookCache]" = weakref.WeakSet()  # every code cache installed (explain reads them)
_INSTALLING = threading.Lock()  # held while a Translator finds or installs its code's cache


class Translator:
    """The eval-frame callback for one code object (the decorated function's)."""

    def __init__(self, code: types.CodeType, fallback: bool = True, cache_size_limit: int = 8,
                 on_cache_limit: str = "eager"):
        self.code = code
        self.fallback = fallback
        with _INSTALLING:  # two threads making translators of one code must share one cache
            installed = get_code_cache(code)
            if not isinstance(installed, _HookCache):  # the cache is per code object: share it
                installed = _HookCache(code, cache_size_limit, on_cache_limit)
                set_code_cache(code, installed)
        self.cache = installed
        self.fallbacks: list[Fallback] = []
        self.breaks: list[Event] = []  # graph breaks of its translations, each with its reason code
        self.children = installed.children  # translators of the resume functions and callees its breaks made
        self.entry_breaks = installed.entry_breaks  # cache entry id -> the break its code makes on every run
        self.entry_eager_rest = installed.entry_eager_rest  # cache entry id -> its SOT-C002 decisions
        self.entry_eager = installed.entry_eager  # ids of entries whose graph runs eagerly (too small)
        self.entry_prints = installed.entry_prints  # cache entry id -> file:line of the prints it defers
        self.small_graphs: list[Event] = []  # SOT-C001 decisions of its translations
        self.translations = 0
        self.shapes = policy_of(code)  # which input dims its translations leave dynamic (shared per code)
        self.recompiles: list[Recompile] = []  # why each translation after the first was needed
        record.register(self)
        if code.co_flags & _RESUMABLE:
            reason = "a generator or coroutine function runs eagerly (a generator it calls is inlined)"
            if not fallback:
                raise GraphBreakError(reason, _where(code))
            self.fallbacks.append(Fallback(reason, _where(code)))

    def __call__(self, frame: Any) -> Any:
        """Translates a frame of our code on a cache miss; other frames run untouched. One thread at a
        time: a thread that waited for another's translation runs what that one cached, if it fits."""
        if frame.f_code is not self.code:
            return None
        with self.cache.translating:
            cached = self.cache.lookup_quietly(frame)
            if cached is not None:
                return cached
            return self._translate(frame)

    @record.observed  # time spent translating, SOT_LOG events
    def _translate(self, frame: Any, options: _BreakOptions | None = None) -> Any:
        """Translate a frame of our code, under the code's lock. `options`: how a break is built, when a
        first simulation asked to simulate again (see _BreakOptions)."""
        options = options or _BreakOptions()
        recompile = self.shapes.on_miss(frame, self.cache)
        if recompile is not None:
            self.recompiles.append(recompile)
        ex = None
        self._eager_graph = False
        n_fallbacks = len(self.fallbacks)
        try:
            ex = OpcodeExecutor(self.code, dict(frame.f_locals), frame.f_globals, frame.f_builtins,
                                getattr(frame, "f_closure", None))  # (None: an extension built before it had it)
            ex.may_break = self.fallback
            ex.translation.virtual_frames = options.resume_inside
            ex.translation.loop_head = options.loop_head
            brk = None
            try:
                custom = CustomCode(self._codegen(ex, ex.run()), True)
            except GraphBreak as graph_break:  # its resume functions switch the hook on for themselves
                brk = graph_break
                custom = CustomCode(self._codegen_break(ex, brk, options), True)
        except _Retranslate as e:
            return Translator._translate.__wrapped__(self, frame, dataclasses.replace(options, **e.changes))
        except (StaticDimNeeded, NumberNeeded) as e:  # a dynamic dim or number's value was needed: keep it static
            if isinstance(e, NumberNeeded) and _needs_loop_item(self.code, e):
                # kept static, they would make one translation per iteration's values: the body runs eagerly
                return self._run_eagerly(ex, Fallback(f"the loop body needs the value of its item or of a number "
                                                      f"it carries at translation time "
                                                      f"({e.why}): it runs eagerly rather than being translated "
                                                      "once per iteration", self._where(ex), "SOT-C003"))
            self.shapes.keep_static(e)
            return Translator._translate.__wrapped__(self, frame, options)
        except FrameRaises as e:  # the frame raises its own exception: eager code raises it, in any mode
            return self._run_eagerly(ex, Fallback(e.reason, e.where, e.code))
        except (Unsupported, DecodeError) as e:
            return self._cannot_capture(ex, e)
        except _USER_ERRORS as e:  # a meta function rejected the user's call: eager code raises it as it should
            if self.shapes.keep_static_after(ex.inputs if ex is not None else (), e):  # or a dynamic dim's -1 did
                return Translator._translate.__wrapped__(self, frame, options)
            return self._run_eagerly(ex, Fallback(f"{type(e).__name__}: {e}", self._where(ex), "SOT-E001"))
        except Exception as e:  # noqa: BLE001 - a gap of the translation itself (NotImplementedError, ...)
            if config.strict():  # a bug of the JIT: shown where it happened, not hidden as an eager fallback
                raise
            return self._cannot_capture(ex, e)
        self.translations += 1
        entry = self.cache.insert(ex.guards(), custom, payload=ex.builder.build())
        if brk is not None:
            self.entry_breaks[entry.id] = self.breaks[-1]
            if len(self.fallbacks) > n_fallbacks:
                self.entry_eager_rest[entry.id] = self.fallbacks[n_fallbacks:]
        if self._eager_graph:
            self.entry_eager.add(entry.id)
        prints = ex.translation.effects.deferred_prints(None if brk is None else brk.barrier)
        if prints:
            self.entry_prints[entry.id] = prints
        return custom

    def _codegen_break(self, ex: OpcodeExecutor, brk: GraphBreak, options: _BreakOptions) -> types.CodeType:
        """The compiled prefix, the breaking instruction run for real, resume functions after it; a
        break that cannot be built runs the frame eagerly for the reason of the break. A break in a
        hot loop of the frame asks to simulate again, breaking at the loop's head, whose loop then
        runs for real with its body as a function (see opcode_executor.loops). A call that reads its
        caller's frame (`sys._getframe`, `locals()`, `warnings.warn`) inside an inlined callee breaks at the
        outermost call instead, whose callee then runs eagerly: frames as eager code has them, with no
        resume function between them, are what such a call must see."""
        if len(brk.frames) > 1 and options.resume_inside and isinstance(brk.cause, ReadsFrames):
            raise _Retranslate(resume_inside=False)
        loop, hot = self._loops_of(ex, brk, options)
        try:
            # a callee that reads its caller's frame runs as it is: eager frames are what it must see
            translated = _as_it_is if isinstance(brk.cause, ReadsFrames) else self._translated
            code = broken_frame(ex, brk, self._compile, _rerun_after(self), translated, self._resume,
                                frozenset(hot), loop)
        except Unsupported as e:
            if len(brk.frames) > 1:  # a frame inside could not be rebuilt: break at the outermost call instead
                raise _Retranslate(resume_inside=False) from e
            if loop is not None:
                raise _Retranslate(loop_head=None, no_loop=True) from e
            cause = brk.cause
            raise Unsupported(cause.opname, cause.where, f"{cause.detail}; {e.detail}", cause.code) from e
        cause = brk.cause
        reason = cause.reason
        at = brk.frames[0].executor
        if loop is not None:  # the break the loop's body makes, reported where it is
            cause, why = options.loop_cause
            reason = f"{cause.reason} (in {why}: the loop runs for real, its body as a translated function)"
        elif cause.where != at.where():  # it broke inside a call that cannot resume inside its callee: say why
            why = brk.call_site or "the callee cannot be resumed at that point"
            reason += f" (inside the call at {at.where()}: {why}; the caller breaks at the call, the callee " \
                      "runs as a translated frame of its own)"
        self.breaks.append(Event(cause.code, reason, cause.where))
        for i, why in hot.items():
            self.fallbacks.append(Fallback(f"a break inside {why} (more than SOT_MAX_LOOP_BREAKS="
                                           f"{config.max_loop_breaks()}): the rest of the frame runs eagerly",
                                           brk.frames[i].executor.where(), "SOT-C002"))
        return code

    def _loops_of(self, ex: OpcodeExecutor, brk: GraphBreak, options: _BreakOptions) -> tuple[tuple | None, dict]:
        """The loop a break at its head runs for real (`loops.LoopPlan`, its body function), and the frames
        of the break (by index) whose resume functions run eagerly, with why (SOT-C002: a break in loops
        too long to nest a call per iteration). A break in a hot loop of the translated frame itself asks
        to simulate again, breaking at the loop's head (`_Retranslate`)."""
        root = brk.frames[-1]
        loop = None
        if options.loop_head is not None and root.instruction is ex.normalised.instructions[options.loop_head]:
            plan = plan_loop(ex.normalised, options.loop_head, options.loop_end, frame_locals(ex)[1])
            if plan is None:
                raise _Retranslate(loop_head=None, no_loop=True)
            body = loop_body(ex.code, ex.normalised, plan, len(root.stack))
            loop = (plan, self._resume(body, ex.f_globals, shared=True))
        hot = {i: why for i, frame in enumerate(brk.frames)
               if (why := hot_loop(frame, config.max_loop_breaks())) is not None}
        if loop is not None:  # its exits nest only where the loop sits in another loop
            hot.pop(len(brk.frames) - 1, None)
            if len(loops_around(ex.normalised, options.loop_head)) > 1:
                hot[len(brk.frames) - 1] = "a loop around a loop run for real"
        elif len(brk.frames) - 1 in hot and not options.no_loop:
            span = outermost_loop(ex.normalised, ex.normalised.index(root.instruction))
            if span is not None:
                raise _Retranslate(loop_head=span[0], loop_end=span[1],
                                   loop_cause=(brk.cause, hot[len(brk.frames) - 1]))
        return loop, hot

    def _compile(self, ex: OpcodeExecutor) -> CompiledSIR | EagerSIR:
        """The SIR as a compiled Program, or, below the minimum graph size, run through the eager API
        (the decision recorded: SOT-C001)."""
        sir = ex.builder.build()
        if len(sir.statements) >= config.min_graph_size():
            return CompiledSIR(sir)
        self.small_graphs.append(Event("SOT-C001", f"{len(sir.statements)} op(s) < SOT_MIN_GRAPH_SIZE="
                                                   f"{config.min_graph_size()}: run eagerly", ex.where()))
        self._eager_graph = True
        return EagerSIR(sir)

    def _resume(self, code: types.CodeType, f_globals: dict, eager: bool = False, shared: bool = False) -> Callable:
        """A resume function, translated when it runs (its translator is a child of this one); one
        per resume code and globals, so a break met again (a loop's next iteration) reuses it.
        `eager`: a plain function, run as it is; `shared`: its calls see many objects (a loop body
        over Layers, each binding its own parameters), so it keeps as many entries as a callee
        translated on its own."""
        if eager:
            if code.co_freevars:
                return NeedsClosure(code, lambda cells: types.FunctionType(code, f_globals, code.co_name, None, cells))
            return types.FunctionType(code, f_globals, code.co_name)
        known = _RESUME_TRANSLATORS.get(code)
        child = known[1]() if known is not None and known[0] is f_globals else None
        if child is None:
            limit = max(self.cache.cache_size_limit, _SHARED_CODE_CACHE_LIMIT) if shared else \
                self.cache.cache_size_limit
            child = Translator(code, fallback=True, cache_size_limit=limit)
            _RESUME_TRANSLATORS.set(code, (f_globals, weakref.ref(child)))  # (the break code holds it)
        if child is not self and child not in self.children:
            self.children.append(child)
        if code.co_freevars:  # a closure's: made on each call with the frame's cells
            return NeedsClosure(code, lambda cells: CallWithCallback(
                types.FunctionType(code, f_globals, code.co_name, None, cells), child))
        return CallWithCallback(types.FunctionType(code, f_globals, code.co_name), child)

    def _translated(self, fn: types.FunctionType) -> Callable:
        """`fn` translated as a frame of its own when called (one wrapper per function)."""
        wrapper = _TRANSLATED.get(fn)
        if wrapper is None:  # its code may be shared by many objects (Layer.__call__: one entry per layer)
            limit = max(self.cache.cache_size_limit, _SHARED_CODE_CACHE_LIMIT)
            child = Translator(fn.__code__, fallback=True, cache_size_limit=limit)
            wrapper = _TRANSLATED[fn] = CallWithCallback(fn, child)
        if wrapper.callback not in self.children:
            self.children.append(wrapper.callback)
        return wrapper

    def _cannot_capture(self, ex: OpcodeExecutor | None, error: Exception) -> CustomCode:
        """The frame cannot be captured whole: GraphBreakError in full-graph mode, else run it eagerly."""
        if isinstance(error, Unsupported):
            reason, where, code = error.reason, error.where, error.code
        else:
            reason, where, code = f"{type(error).__name__}: {error}", self._where(ex), "SOT-G001"
        if not self.fallback:
            raise GraphBreakError(reason, where, code) from error
        return self._run_eagerly(ex, Fallback(reason, where, code))

    def _where(self, ex: OpcodeExecutor | None) -> str:
        """file:line of the instruction the simulation stopped at (the definition before it started)."""
        return ex.where() if ex is not None else _where(self.code)

    def _run_eagerly(self, ex: OpcodeExecutor | None, fallback: Fallback) -> CustomCode:
        """Record why the frame runs eagerly, and cache that decision under the guards the simulation
        relied on up to its failure, so the next such call is not simulated again."""
        self.fallbacks.append(fallback)
        self.cache.insert(ex.guards() if ex is not None else (), _EAGER, payload=fallback)
        return _EAGER

    def _codegen(self, ex: OpcodeExecutor, returned: Variable) -> types.CodeType:
        """The code object of a frame simulated to its return (see sot.codegen.frame), dumped for SOT_DUMP."""
        generated, compiled = whole_frame(ex, returned, self._compile, _rerun_after(self))
        dump_translation(self.code, ex.builder.build(),
                         compiled.lowered.program if isinstance(compiled, CompiledSIR) else None, generated,
                         ex.guards())
        return generated


def _needs_loop_item(code: types.CodeType, error: NumberNeeded) -> bool:
    """Whether `code` is a loop's body function (see opcode_executor.loops) and `error` needs the value of
    one of its parameters: the loop's item or a number it carries, which change in every iteration."""
    if code.co_argcount == 0 or code.co_varnames[0] != ITEM:
        return False
    params = {LocalTracker(name).source.text for name in code.co_varnames[:code.co_argcount]}
    return not params.isdisjoint(error.sources)


def _as_it_is(fn: types.FunctionType) -> types.FunctionType:
    """A callee run for real at a break as eager code runs it (not translated as a frame of its own)."""
    return fn


def _rerun_after(translator: Translator) -> Callable[[Exception], bool]:
    """Whether a compiled call that raised runs again eagerly: yes, unless the recorded side effects were
    being made (some may be made already); a re-run is recorded on the translator (held weakly: the
    generated code lives in its cache), once for a failure repeated call after call."""
    ref = weakref.ref(translator)

    def rerun_after(error: Exception) -> bool:
        if raised_while_applying(error):
            return False
        translator = ref()
        if translator is not None:
            fallback = Fallback(f"{type(error).__name__}: {error} (raised by the compiled graph at run time: the "
                                "call ran again eagerly)", _where(translator.code), "SOT-R001")
            if not translator.fallbacks or translator.fallbacks[-1] != fallback:
                translator.fallbacks.append(fallback)
        return True
    return rerun_after


def _where(code: types.CodeType) -> str:
    """file:line of a code object's definition."""
    return f"{code.co_filename}:{code.co_firstlineno}"
