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

from runtime import Tensor
from sot import config
from sot.translation.dump import dump_translation
from sot.dynamic.shapes import Recompile, StaticDimNeeded, check_gradient, policy_of, with_eager_errors
from sot.dynamic.numbers import NumberNeeded
from sot.hook.eval_frame import CallWithCallback, CustomCode, get_code_cache, set_code_cache
from sot.guards import CodeCache
from sot.ir import ApiStatement, CompiledSIR, EagerSIR, MethodStatement, Statement, StatementIR, Symbol
from sot.ir.eager import run_eagerly
from sot.opcode_executor import (ConstantVariable, DictVariable, FrameRaises, ListVariable, ObjectVariable,
                                 OpcodeExecutor, TensorVariable, TupleVariable, Unsupported)
from sot.opcode_executor.breaks import GraphBreak
from sot.opcode_executor.calls import ReadsFrames
from sot.opcode_executor.live import frame_locals, live_values, needed_outputs
from sot.opcode_executor.loops import hot_loop, loops_around, outermost_loop, plan_loop
from sot.opcode_executor.trackers import LocalTracker
from sot.opcode_executor.side_effects import Print, SetAttr, SetGlobal, WriteBack
from sot.opcode_executor.variables import NumberVariable, SetVariable, Variable
from sot.pyversion import DecodeError, Instruction, NormalisedCode, encode, with_null
from sot.translation.reasons import REASONS, Event
from sot.codegen.break_code import NeedsClosure, break_code
from sot.codegen.loop_body import ITEM, loop_body
from sot.codegen.resume_code import CodeMap
from sot.codegen.rerun import guarded_call, rerun_handler
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
# Tensor methods / runtime functions whose eager result may share memory with their tensor argument
_VIEWS = frozenset({"reshape", "flatten", "squeeze", "unsqueeze", "transpose", "detach"})


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
        outputs = needed_outputs(ex, live_values(brk))
        passed: list[Variable] = []  # dynamic numbers the side effects store (loaded after their targets)
        plan, targets = _effects_plan(ex, outputs, brk.barrier, passed)
        ex.builder.set_outputs(outputs)
        compiled = self._compile(ex) if outputs else None
        if isinstance(compiled, CompiledSIR):
            check_gradient(compiled, ex.inputs)
        prefix = compiled.tuple_runner() if isinstance(compiled, CompiledSIR) else compiled.run_checked if compiled \
            else None
        run_prefix = with_eager_errors(prefix, compiled.sir) if compiled else None
        # a Program that fails at run time: the call runs again eagerly (as in `_codegen`), so the user's
        # own `except` around the failing op sees eager's exception
        guarded = isinstance(compiled, CompiledSIR)
        if plan:
            run_prefix = _with_effects(run_prefix, plan, len(ex.inputs), len(targets), reprint=not guarded)
        rerun = (lambda call: rerun_handler(call, self.code, _rerun_after(self))) if guarded else None
        try:
            # a callee that reads its caller's frame runs as it is: eager frames are what it must see
            translated = _as_it_is if isinstance(brk.cause, ReadsFrames) else self._translated
            code = break_code(ex, brk, run_prefix, outputs, translated, self._resume, [*targets, *passed],
                              frozenset(hot), loop, rerun, lambda symbol: _view_maker(ex, symbol))
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
        """A code object with the original layout: load the tensor inputs, call the SIR runner, return."""
        outputs: list[Symbol] = []
        passed: list[Variable] = []  # dynamic numbers returned or stored as they came in
        template = _template(ex, returned, outputs, passed)
        plan, targets = _effects_plan(ex, outputs, passed=passed)
        ex.builder.set_outputs(outputs)
        compiled = self._compile(ex) if outputs else None
        if isinstance(compiled, CompiledSIR):  # with dynamic dims: gradient rules that need sizes specialise
            check_gradient(compiled, ex.inputs)
        runner = _runner(compiled, template, len(ex.inputs)) if not plan else \
            _runner_with_effects(compiled, template, plan, len(ex.inputs), len(targets))
        if compiled is not None:  # with dynamic dims, a size eager code rejects raises eager's error
            runner = with_eager_errors(runner, compiled.sir)
        line = self.code.co_firstlineno
        free = self.code.co_freevars  # a closure's tensors are loaded with LOAD_DEREF: copy the cells in first
        body = [Instruction("COPY_FREE_VARS", arg=len(free), argval=len(free))] if free else []
        body += [Instruction("RESUME", arg=0, argval=0)]
        call = with_null([Instruction("LOAD_CONST", argval=runner)])
        loaded = [*ex.inputs, *targets, *passed]  # the side effects' targets after the tensor inputs, then numbers
        for var in loaded:
            call += var.tracker.load()
        call += [Instruction("CALL", arg=len(loaded), argval=len(loaded))]
        if isinstance(compiled, CompiledSIR):  # a Program that fails at run time: the call runs again eagerly
            guarded, table = guarded_call(call, self.code, _rerun_after(self))
        else:  # ops run eagerly one by one (EagerSIR) may have updated bound tensors: no second run
            guarded, table = [*call, Instruction("RETURN_VALUE")], ()
        body += guarded
        for ins in body:
            ins.lineno = line
        body[0].starts_line = True
        generated = encode(NormalisedCode(tuple(body), table, ex.normalised.meta), template=self.code)
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
        tb = error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code is _apply.__code__:
                return False
            tb = tb.tb_next
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


def _template(ex: OpcodeExecutor, var: Variable, outputs: list[Symbol], passed: list[Variable] | None = None) -> Any:
    """The returned value's shape: an index into the SIR outputs per tensor, tuples, lists, dicts, constants.
    A dynamic number is an index into `passed`, the values the generated code loads for the runner (None:
    it cannot load them, so the number's value is read: NumberNeeded keeps it static); so is a list or dict
    from the frame, returned or stored as the very object eager code would (its own writes are replayed
    into it; with `passed` None a copy of its items)."""
    if passed is not None and (isinstance(var, NumberVariable) or (
            isinstance(var, (ListVariable, DictVariable)) and ex.reloadable(var))):
        if all(var is not p for p in passed):
            passed.append(var)
        return _Passed(next(i for i, p in enumerate(passed) if p is var))
    if isinstance(var, TensorVariable) and var.bound:
        return var.value  # a parameter returned as is
    if isinstance(var, TensorVariable) and any(var is v for v in ex.inputs):
        return _In(next(i for i, v in enumerate(ex.inputs) if v is var))  # returned as is, like eager
    if isinstance(var, TensorVariable) and (view := _view_of_input(ex, var.symbol)) is not None:
        return view
    if isinstance(var, TensorVariable):
        if var.symbol not in outputs:  # a tensor returned twice is one object twice, as in eager
            outputs.append(var.symbol)
        return _Out(outputs.index(var.symbol))
    if isinstance(var, TupleVariable):
        items = [_template(ex, v, outputs, passed) for v in var.items]
        return items if isinstance(var, ListVariable) else tuple(items)
    if isinstance(var, DictVariable):
        return {k: _template(ex, v, outputs, passed) for k, v in var.items.items()}
    if isinstance(var, SetVariable) and var.copied_in_order():
        return _NewSet(var.items)
    if isinstance(var, ConstantVariable) or (isinstance(var, ObjectVariable) and var.tracker.source is None
                                             and type(var.value).__module__ == "runtime.dtypes"):
        return var.value
    ex.unsupported(f"returning {var!r}")


@dataclass(frozen=True)
class _Out:
    """Position of a returned tensor among the SIR's outputs."""

    index: int


@dataclass(frozen=True)
class _In:
    """Position of a returned tensor among the inputs (returned itself, not a copy)."""

    index: int


@dataclass(frozen=True)
class _View:
    """A returned tensor made from an input by ops that may return a view (`x.reshape(...)`): made again
    by the same op on the eager input after the graph ran, so it shares memory with the input exactly
    where eager's does (a later in-place write through either is seen through the other)."""

    source: Any  # the template of its tensor argument: an `_In`, another `_View`, or a bound tensor itself
    statement: Statement

    def make(self, source: Any) -> Any:
        st = self.statement
        if isinstance(st, MethodStatement):
            return getattr(source, st.method)(*st.args[1:], **st.kwargs)
        return st.fn(source, *st.args[1:], **st.kwargs)


def _view_of_input(ex: OpcodeExecutor, symbol: Symbol) -> _View | None:
    """The `_View` of `symbol` if the SIR makes it from an input or a bound tensor (a parameter) by a chain
    of `_VIEWS` ops with constant arguments, recorded in the caller's grad mode (None otherwise: the
    graph's output is returned)."""
    made = next((st for st in ex.builder.build().statements if symbol in st.output_symbols()), None)
    if not isinstance(made, (MethodStatement, ApiStatement)) or made.grad is not None or not made.args:
        return None
    name = made.method if isinstance(made, MethodStatement) else getattr(made.fn, "__name__", "")
    if name not in _VIEWS or len(made.output_symbols()) != 1 or not isinstance(made.args[0], (Symbol, Tensor)):
        return None
    if not all(_is_constant(a) for a in (*made.args[1:], *made.kwargs.values())):
        return None
    if isinstance(made.args[0], Tensor):  # a bound tensor: pinned by the translation's guards
        return _View(made.args[0], made)
    inputs = [i for i, v in enumerate(ex.inputs) if v.symbol is made.args[0]]
    source = _In(inputs[0]) if inputs else _view_of_input(ex, made.args[0])
    return None if source is None else _View(source, made)


def _view_maker(ex: OpcodeExecutor, symbol: Symbol) -> tuple[Callable, Any] | None:
    """`(make, source)` if `symbol` is a `_View`: `make(source)` makes it from the input's Variable or the
    bound tensor `source` (for a break's generated code, which passes it on as eager's view)."""
    chain, node = [], _view_of_input(ex, symbol)
    while isinstance(node, _View):
        chain.append(node)
        node = node.source
    if not chain:
        return None

    def make(source: Any) -> Any:
        for view in reversed(chain):
            source = view.make(source)
        return source
    return make, ex.inputs[node.index] if isinstance(node, _In) else node


def _is_constant(value: Any) -> bool:
    """A plain Python constant argument (numbers, strings, None, and tuples/lists of them)."""
    if isinstance(value, (tuple, list)):
        return all(_is_constant(v) for v in value)
    return value is None or type(value) in (int, float, bool, str)


@dataclass(frozen=True)
class _Passed:
    """Position of a dynamic number among the numbers the generated code passes in (returned as it is)."""

    index: int


@dataclass(frozen=True)
class _NewSet:
    """A set (or frozenset) the frame made: a copy of the simulated one per call (its iteration order)."""

    items: set | frozenset


def _runner(compiled: CompiledSIR | EagerSIR | None, template: Any, n_inputs: int) -> Callable:
    """The function the generated code calls (with the tensor inputs, then the passed numbers): run the
    SIR and rebuild the returned structure."""
    # the cache's guards already checked every input's shape, dtype and stop_gradient
    if isinstance(template, _Out):  # one tensor returned: the common case, one Python frame per call
        return compiled.output_runner(template.index)

    def run(*args: Any) -> Any:
        tensors = args[:n_inputs]
        return _fill(template, compiled.run_checked(*tensors) if compiled is not None else (), tensors,
                     args[n_inputs:])
    return run


def _fill(node: Any, values: tuple, inputs: tuple, passed: tuple = ()) -> Any:
    """A template (see `_template`) with the run's outputs, inputs and passed numbers in place."""
    if isinstance(node, _Out):
        return values[node.index]
    if isinstance(node, _In):
        return inputs[node.index]
    if isinstance(node, _Passed):
        return passed[node.index]
    if isinstance(node, _View):
        return node.make(_fill(node.source, values, inputs, passed))
    if isinstance(node, _NewSet):
        return node.items.copy()
    if isinstance(node, (tuple, list)):
        return type(node)(_fill(n, values, inputs, passed) for n in node)
    if isinstance(node, dict):
        return {k: _fill(n, values, inputs, passed) for k, n in node.items()}
    return node


def _effects_plan(ex: OpcodeExecutor, outputs: list[Symbol], barrier: int | None = None,
                  passed: list[Variable] | None = None) -> tuple[list[tuple], list[Variable]]:
    """The recorded side effects as (kind, target index or globals or `_Reprint`, name or print
    options, value template), and the targets the generated code loads for them (tensors they write
    or print join the SIR's `outputs`, dynamic numbers `passed`: see `_template`). At a break, the
    prints the breaking instruction's own simulation recorded (from `barrier` on) are left out: that
    instruction runs for real after the replay."""
    effects = ex.translation.effects
    targets = effects.targets()
    index = {id(t): i for i, t in enumerate(targets)}
    plan = []
    for effect in effects.settled(barrier) if barrier is not None else effects.records:
        if isinstance(effect, Print):
            args = TupleVariable(effect.args)
            plan.append(("print", _reprint(ex, args, effect.position), effect.options,
                         _template(ex, args, outputs, passed)))
        elif isinstance(effect, SetGlobal):
            plan.append(("global", effect.f_globals, effect.name, _template(ex, effect.value, outputs, passed)))
        elif isinstance(effect, SetAttr):
            plan.append(("attr", index[id(effect.target)], effect.name, _template(ex, effect.value, outputs, passed)))
        elif isinstance(effect, WriteBack):
            plan.append(("write", index[id(effect.target)], effect.count, _template(ex, effect.value, outputs, passed)))
        elif isinstance(effect.target, ListVariable) and effect.target.unread:  # it only appended: append
            plan.append(("extend", index[id(effect.target)], None,
                         _template(ex, ListVariable(effect.target.appended), outputs, passed)))
        else:
            contents = effect.target.items
            value = _template(ex, DictVariable(contents) if isinstance(contents, dict) else ListVariable(contents),
                              outputs, passed)
            plan.append(("refill", index[id(effect.target)], None, value))
    return plan, targets


@dataclass(frozen=True)
class _Reprint:
    """How a deferred print is made when the run of its subgraph raises: `sir` is the statements
    recorded before the print, with the tensors it prints as outputs, `template` its arguments."""

    sir: StatementIR
    template: Any


def _reprint(ex: OpcodeExecutor, args: Variable, position: int) -> _Reprint:
    """The `_Reprint` of a print of `args` made after the first `position` statements of the SIR."""
    printed: list[Symbol] = []
    template = _template(ex, args, printed)
    sir = ex.builder.build()
    return _Reprint(StatementIR(sir.name, sir.inputs, printed, sir.statements[:position]), template)


def _apply(plan: list[tuple], values: tuple, inputs: tuple, targets: tuple, passed: tuple = ()) -> None:
    """Make the recorded writes and prints, in order, with the values of this run."""
    for kind, where, name, template in plan:
        value = _fill(template, values, inputs, passed)
        if kind == "print":
            print(*value, **name)
        elif kind == "global":
            where[name] = value
        elif kind == "attr":
            setattr(targets[where], name, value)
        elif kind == "write":  # (`name`: how many in-place updates eager makes, each a version step)
            targets[where].set_value(value)
            targets[where]._version += name - 1
        elif kind == "extend":
            targets[where].extend(value)
        elif isinstance(targets[where], dict):
            targets[where].clear()
            targets[where].update(value)
        else:
            targets[where][:] = value


def _print_before_failure(plan: list[tuple], inputs: tuple) -> None:
    """The subgraph's run raised: make the prints eager code makes before it fails. Each print's
    statements run again through the eager API; the first print that comes after the failing op
    raises that op's eager error instead. The other recorded effects are not made."""
    for kind, reprint, options, _ in plan:
        if kind == "print":
            values = run_eagerly(reprint.sir, inputs)
            print(*_fill(reprint.template, values, inputs), **options)


def _run_and_apply(run: Callable | None, plan: list[tuple], args: tuple, n_inputs: int,
                   n_targets: int | None = None, reprint: bool = True) -> tuple:
    """`run` on the tensor inputs, then the side effects of `plan` (in `args`: the inputs, the
    effects' targets (`n_targets`; None: all the rest), then the passed numbers). `reprint`: if
    `run` raises, make the prints eager makes before the failure (not where the whole call then
    runs again eagerly, see sot.codegen.rerun, which prints them itself)."""
    tensors = args[:n_inputs]
    end = len(args) if n_targets is None else n_inputs + n_targets
    try:
        values = run(*tensors) if run is not None else ()
    except Exception:
        if reprint:
            _print_before_failure(plan, tensors)
        raise
    _apply(plan, values, tensors, args[n_inputs:end], args[end:])
    return values


def _with_effects(run_prefix: Callable | None, plan: list[tuple], n_inputs: int, n_targets: int,
                  reprint: bool = True) -> Callable:
    """A break's prefix runner that also makes the side effects recorded before the break (arguments: the
    tensor inputs, the effects' targets, the passed numbers; `reprint`: see `_run_and_apply`)."""
    def run(*args: Any) -> tuple:
        return _run_and_apply(run_prefix, plan, args, n_inputs, n_targets, reprint=reprint)
    return run


def _runner_with_effects(compiled: CompiledSIR | EagerSIR | None, template: Any, plan: list[tuple],
                         n_inputs: int, n_targets: int) -> Callable:
    """Run the SIR, make the recorded side effects, rebuild the returned structure (arguments: the tensor
    inputs, the effects' targets, the passed numbers)."""
    run_sir = compiled.run_checked if compiled is not None else None
    reprint = not isinstance(compiled, CompiledSIR)  # a failing Program's call runs again eagerly (_codegen)

    def run(*args: Any) -> Any:
        values = _run_and_apply(run_sir, plan, args, n_inputs, n_targets, reprint)
        return _fill(template, values, args[:n_inputs], args[n_inputs + n_targets:])
    return run
